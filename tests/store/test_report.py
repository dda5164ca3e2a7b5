"""Feedback and summary pages: escaped student text, phone viewport, true median, atomic writes."""

from __future__ import annotations

import json

from autograder.model import CaseRecord, CaseResult, CellError, CellScore, SubmissionResult
from autograder.store import report
from autograder.store.outputs import OutputFolder


def _result(student="s1", score=1.0, hostile="<script>alert(1)</script>") -> SubmissionResult:
    cases = [CaseRecord("edge.a", "c_hidden", 1, "f", f"描述 {hostile}", True, CaseResult(True)),
             CaseRecord("edge.b", "c_hidden", 1, "f", "描述", True,
                        CaseResult(False, f"f({hostile})", "1", hostile, "原因", f"Traceback {hostile}"))]
    return SubmissionResult(student, "ps", score, 2.0, {"c_hidden": CellScore(score, 2.0)}, cases, [f"说明 {hostile}"],
                            [CellError(3, "RuntimeError", hostile)], 0.1, "fp")


def test_feedback_escapes_everything_a_student_controls():
    page = report.feedback_html("作业 <1>", _result(student="<b>me</b>"))
    assert "<script>" not in page and "<b>me</b>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "作业 &lt;1&gt;" in page
    assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in page
    assert "未通过的用例（1 个）" in page and "edge.b" in page and "通过的用例" in page


def test_result_json_round_trip():
    r = _result()
    assert SubmissionResult.from_json(json.loads(json.dumps(r.to_json()))) == r


def test_summary_median_of_an_even_class_is_the_mean_of_the_middle_two():
    data = report.summary({"ps": "作业"}, [_result(f"s{i}", float(s)) for i, s in enumerate([0, 1, 2, 2])])
    assert data["ps"]["median"] == 1.5 and data["ps"]["students"] == 4 and sum(data["ps"]["histogram"]) == 4
    assert data["ps"]["hidden_case_failure"]["edge.b"]["failed"] == 4


def test_outputs_are_written_atomically(tmp_path):
    out = OutputFolder(tmp_path)
    out.write_summary({"ps": "作业 <x>"}, [_result()])
    out.write_result(_result(), title="作业", notebook="nb")
    assert "作业 &lt;x&gt;" in (tmp_path / "summary.html").read_text(encoding="utf-8")
    assert out.has_current(_result())
    assert not [p for p in tmp_path.rglob("*") if p.name.endswith(".tmp")]


def test_under_score_nothing_that_depends_on_the_hidden_inputs_is_shown():
    """The total and what was found in the notebook itself; no grade cells' scores, no run notes (a restart count
    tells how many hidden inputs crashed the student's code), no case."""
    r = _result()
    r.run_notes = ["学生进程因崩溃或超时重启了 3 次（每次只影响当时正在运行的用例）。"]
    page = report.feedback_html("作业", r, "score")
    assert "1 / 2" in page and "说明 &lt;script&gt;" in page
    assert "测试单元" not in page and "c_hidden" not in page and "重启了" not in page and "edge." not in page
    for policy in ("cases", "full"):
        shown = report.feedback_html("作业", r, policy)
        assert "c_hidden" in shown and "重启了 3 次" in shown and "说明 &lt;script&gt;" in shown
