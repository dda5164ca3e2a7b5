"""A handful of student-style notebooks through the real ``autograder grade`` (sandboxed): the diagnoses reach the
result JSON, the feedback pages (read in Debian's chromium at 375 px) and the instructor summary."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import nbformat
import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]

import make_corpus  # noqa: E402
from .diagnosis_students import HONEST, STUDENTS, TWO, WALKER  # noqa: E402

from autograder.check.specs import get_assignment  # noqa: E402

pytestmark = pytest.mark.slow  # the real autograder grade, sandboxed, and chromium

ARTIFACTS = REPO / "artifacts"
#: student id -> (assignment, appended code, {function: misconception} the grade must name)
CLASS = {
    "walker": ("ps2_roc_auc", WALKER, {"roc_auc": "roc_ties_split"}),
    "two_mistakes": (TWO[0], TWO[1], TWO[2]),
    "honest_quadratic": (*HONEST["pairwise_auc_quadratic"], {}),
    "strict": (*STUDENTS["threshold_strict"], {"binary_metrics": "threshold_strict"}),
    "interpolated": (*STUDENTS["ap_interpolated"], {"average_precision": "ap_interpolated"}),
    "left_closed": (*STUDENTS["calibration_left_closed"], {"calibration_curve": "calibration_left_closed"}),
}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    root = tmp_path_factory.mktemp("diagnosis")
    for student, (name, code, _) in CLASS.items():
        a = get_assignment(name)
        target = root / "in" / student / name / f"{a.notebook}.ipynb"
        target.parent.mkdir(parents=True)
        nbformat.write(make_corpus.append(make_corpus.solution(name), code), target)
    out = root / "out"
    proc = subprocess.run([str(REPO / ".venv" / "bin" / "autograder"), "grade", str(root / "in"), "--out", str(out)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


def _result(out: Path, student: str) -> dict:
    return json.loads((out / "results" / student / f"{CLASS[student][0]}.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("student", sorted(CLASS))
def test_result_json_names_exactly_the_planted_mistakes(graded, student):
    data = _result(graded, student)
    assert {d["function"]: d["misconception"] for d in data["diagnoses"]} == CLASS[student][2]
    failed = {c["id"] for c in data["cases"] if not c["passed"]}
    for d in data["diagnoses"]:
        assert set(d["cases"]) <= failed and len(d["cases"]) >= 2
    if not CLASS[student][2]:
        assert data["score"] == data["max_score"]


def test_walker_feedback_in_the_browser_at_375px(graded):
    from playwright.sync_api import sync_playwright

    page_file = graded / "feedback" / "walker" / "ps2_roc_auc" / "roc_auc.html"
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=["--no-sandbox", "--disable-gpu"])
        for width in (375, 1280):
            page = browser.new_page(viewport={"width": width, "height": 900})
            page.goto(page_file.as_uri())
            block = page.locator("section.diagnosis")
            assert block.count() == 1
            text = block.inner_text()
            assert "roc_auc：并列得分被拆成多个点" in text and "提示：" in text and "课本中的讲解" in text
            assert block.locator("a").get_attribute("href").endswith("book/binary/roc.html#binary-roc-construction")
            body = page.inner_text("body")
            assert body.index("错误诊断") < body.index("未通过的用例")
            # one mistake (ties split) and right on its basic cases: the validation points count, nothing voided
            assert "个检查非法输入的用例" not in body and "函数拒绝了这个非法输入" not in body
            assert "第 1 次调用（未通过）" in body and "第 2 次调用（未运行）" in body  # property.negated_auc
            if width == 375:  # nothing wider than the phone's screen
                assert page.evaluate("document.documentElement.scrollWidth") <= 375
            page.screenshot(path=str(ARTIFACTS / f"diagnosis-feedback-{width}.png"), full_page=False)
            page.close()
        browser.close()


def test_summary_counts_students_per_misconception(graded):
    data = json.loads((graded / "summary.json").read_text(encoding="utf-8"))
    a2 = data["ps2_roc_auc"]
    assert a2["misconceptions"]["roc_ties_split"]["students"] == ["walker"]
    assert set(a2["misconceptions"]) == {"roc_ties_split", "roc_no_origin", "auc_ties_one"}
    assert all(0 <= c["difficulty"] <= 1 for c in a2["cases"].values())
    html = (graded / "summary.html").read_text(encoding="utf-8")
    assert '<a href="feedback/walker/ps2_roc_auc/roc_auc.html">walker</a>' in html
