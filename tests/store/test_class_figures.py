"""Instructor figures on constructed classes, against values worked out by hand."""

from __future__ import annotations

import math

import pytest

from autograder.model import CaseRecord, CaseResult, CellScore, Diagnosis, SubmissionResult
from autograder.store import report
from autograder.store.class_figures import assignment_figures, point_biserial
from autograder.store.outputs import OutputFolder


def _result(student: str, passes: list[int], got: dict[str, str] | None = None,
            diagnoses: list[Diagnosis] | None = None) -> SubmissionResult:
    cases = [CaseRecord(f"c{i + 1}", "h", 1, "roc_auc", f"用例 {i + 1}", True,
                        CaseResult(bool(p), got=(got or {}).get(f"c{i + 1}", "" if p else "0.1")))
             for i, p in enumerate(passes)]
    score = float(sum(passes))
    return SubmissionResult(student, "ps2_roc_auc", score, float(len(passes)), {"h": CellScore(score, len(passes))}, cases,
                            diagnoses=diagnoses or [])


SMALL = [_result("s1", [1, 1, 1, 1, 1, 1]), _result("s2", [1, 1, 1, 1, 1, 0]), _result("s3", [1, 0, 0, 0, 0, 0]),
         _result("s4", [0, 0, 0, 0, 0, 1])]


def test_difficulty_and_point_biserial_discrimination_against_the_rest_score():
    cases = assignment_figures(SMALL)["cases"]
    # c1: passed by s1-s3, rest scores 5, 4, 0 | 1: (3 - 1) / sqrt(4.25) * sqrt(0.75 * 0.25)
    assert cases["c1"]["difficulty"] == 0.75
    assert cases["c1"]["discrimination"] == pytest.approx(2 * math.sqrt(3 / 68), abs=1e-12)
    # c2: passed by s1, s2 (rest 5, 4), failed by s3, s4 (rest 1, 1): (4.5 - 1) / sqrt(3.1875) * 0.5
    assert cases["c2"]["discrimination"] == pytest.approx(1.75 / math.sqrt(3.1875), abs=1e-12)
    assert not cases["c2"]["flagged"] and (cases["c2"]["strong_students"], cases["c2"]["strong_failed"]) == (1, 0)
    # c6: passed by s1 and the weakest s4: negative, and one of the two strong students (rest 5) fails it
    assert cases["c6"]["discrimination"] == pytest.approx(-0.25 / math.sqrt(5.1875), abs=1e-12)
    assert cases["c6"]["flagged"] and (cases["c6"]["strong_students"], cases["c6"]["strong_failed"]) == (2, 1)


def test_point_biserial_is_undefined_without_variation():
    assert point_biserial([True, True], [1.0, 2.0]) is None
    assert point_biserial([True, False], [3.0, 3.0]) is None


def _class() -> list[SubmissionResult]:
    same = {f"c{i}": "0.5" for i in range(1, 6)}
    ties = [Diagnosis("roc_auc", "auc_ties_zero", ["c1", "c2"], "并列的正负样本对计 0", link="book/ap_auc/auc.html#apauc-auc-pairs")]
    return ([_result(f"s{i}", [1] * 7) for i in range(1, 5)]
            + [_result("s5", [0, 0, 0, 0, 0, 1, 1], same, ties), _result("s6", [0, 0, 0, 0, 0, 1, 1], same, ties),
               _result("s7", [0, 0, 0, 0, 0, 1, 0], {**same, "c5": "0.7"},
                       [Diagnosis("roc_curve", "roc_no_origin", ["c1", "c2"], "ROC 缺少起点 (0, 0)")])])


def test_students_per_misconception_and_identical_wrong_results_worth_a_look():
    fig = assignment_figures(_class())
    assert list(fig["misconceptions"]) == ["auc_ties_zero", "roc_no_origin"]
    assert fig["misconceptions"]["auc_ties_zero"]["students"] == ["s5", "s6"]
    assert fig["misconceptions"]["roc_no_origin"] == {"title": "ROC 缺少起点 (0, 0)", "link": "", "students": ["s7"],
                                                      "functions": ["roc_curve"]}
    # s5 and s6 return the same wrong value on c1-c5 (passed by 4 of 7); s7 agrees with them on 4 cases only
    assert fig["worth_a_look"] == [{"students": ["s5", "s6"], "cases": ["c1", "c2", "c3", "c4", "c5"]}]


def test_summary_page_and_json_show_the_figures_with_links_to_the_students(tmp_path):
    out = OutputFolder(tmp_path)
    for r in _class():
        out.write_feedback(r, title="作业 2", notebook="roc_auc")
    data = out.write_summary({"ps2_roc_auc": "作业 2"}, _class())
    assert data["ps2_roc_auc"]["worth_a_look"][0]["students"] == ["s5", "s6"]
    html = (tmp_path / "summary.html").read_text(encoding="utf-8")
    assert '<a href="feedback/s5/ps2_roc_auc/roc_auc.html">s5</a>' in html
    assert "并列的正负样本对计 0" in html and "值得一看" in html and "不是结论" in html
    assert report.summary({"x": "X"}, []) == {}


def test_the_live_dashboard_shows_the_same_figures_with_links_to_the_students_pages():
    """The service's dashboard renders the class figures of the counting attempts (instructor/_class_figures.html)."""
    import re

    from autograder.service.web.render import environment

    summary = report.summary({"ps2_roc_auc": "作业 2"}, _class())["ps2_roc_auc"]
    html = environment().get_template("instructor/_class_figures.html").render(f={"summary": summary}, root="/c/")
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))
    assert "并列的正负样本对计 0 auc_ties_zero roc_auc 2： s5 、 s6" in text
    assert '<a href="/c/instructor/students/s7">s7</a>' in html
    assert "s5 、 s6 ：5 个用例（c1、c2、c3、c4、c5）" in text and "不是结论" in text
    small = report.summary({"ps2_roc_auc": "作业 2"}, SMALL)["ps2_roc_auc"]
    flags = re.sub(r"<[^>]+>", "", environment().get_template("instructor/_class_figures.html").render(f={"summary": small}, root="/"))
    assert "⚑ c6" in flags and "⚑ c2" not in flags and "其中 1 个标记 ⚑" in flags  # c6: a strong student fails it
    empty = environment().get_template("instructor/_class_figures.html").render(
        f={"summary": report.summary({"ps2_roc_auc": "作业 2"}, [_result("s1", [1, 1])])["ps2_roc_auc"]}, root="/")
    assert "没有学生的错误与课程已知的常见错误相符" in empty and "没有这样的学生组" in empty
