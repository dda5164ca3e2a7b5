"""End-to-end: the real ``autograder grade`` on the sample corpus (see make_corpus.py)."""

from __future__ import annotations

import json
import sqlite3
import subprocess

import nbformat
import pytest

from autograder.sandbox.payload import wire
from autograder.check.compare import compare, field_differences
from autograder.check.expected import expected_for
from autograder.check.scoring import score
from autograder.check.specs import all_assignments
from autograder.model import CaseResult

pytestmark = pytest.mark.slow
A = all_assignments()


def oracle(nb_path, assignment) -> tuple[set[str], float]:
    """The cases the notebook's answer gets wrong, by calling it directly (corpus code is ours, not a student's), and
    the score the course's rules (autograder/check/scoring.py) give those outcomes."""
    nb = nbformat.read(nb_path, as_version=4)
    ns: dict = {}
    for cell in nb.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell.cell_type == "code" and not meta.get("grade"):
            exec(cell.source, ns)  # noqa: S102
    results = {}
    for case in assignment.cases:
        calls = [(case.args, case.kwargs)] if case.kind == "ref" else case.calls
        outcome = CaseResult(True)
        for args, kwargs in calls:
            exp, exc = expected_for(case.function, args, kwargs)
            fn = ns.get(case.function)
            try:
                got, gexc = fn(*args, **kwargs), None
            except Exception as e:  # noqa: BLE001
                got, gexc = None, e
            if fn is None:
                ok, wrong = False, None
            elif exc is not None:
                ok, wrong = isinstance(gexc, ValueError), None
            else:
                decoded = wire.decode(wire.encode(got)) if gexc is None else None
                ok = gexc is None and compare(exp, decoded) is None
                wrong = field_differences(exp, decoded) if gexc is None and case.kind == "ref" else None
            if not ok:
                outcome = CaseResult(False, wrong_fields=tuple(wrong or ()))
                break
        results[case.id] = outcome
    scores = score(assignment, results)
    failed = {cid for cid, r in results.items() if not r.passed} | set(scores.voided)
    return failed, round(sum(scores.earned.values()), 6)


def test_command_succeeds(graded):
    assert graded["proc"].returncode == 0, graded["proc"].stderr[-3000:]
    assert "[1/" in graded["proc"].stderr  # progress is shown


def test_every_submission_graded(graded):
    assert set(graded["expected"]) == {s for s, _ in graded["results"]}


@pytest.mark.parametrize("student", sorted(__import__("make_corpus").build()))
def test_expected_score(graded, student):
    exp = graded["expected"][student]
    name = exp["assignment"]
    result = graded["results"][(student, name)]
    failed = {c["id"] for c in result["cases"] if not c["passed"]}
    expect = exp["expect"]
    if expect == "oracle":
        want, points = oracle(graded["corpus"] / student / name / f"{A[name].notebook}.ipynb", A[name])
        assert want, "a wrong answer must get something wrong"
        assert failed == want
        assert result["score"] == pytest.approx(points)
    elif "failed" in expect:
        assert failed == set(expect["failed"])
    else:
        assert result["score"] == expect["score"], sorted(failed)[:10]


def test_untouched_student_version_gets_no_hidden_points(graded):
    for (student, name), r in graded["results"].items():
        if student.startswith("untouched_student_version"):
            assert all(not c["passed"] for c in r["cases"])


def test_grades_csv(graded):
    rows = {(r["student_id"], r["assignment"]): r for r in graded["rows"]}
    for (student, name), r in graded["results"].items():
        assert float(rows[(student, name)]["score"]) == r["score"]
        assert float(rows[(student, name)]["max_score"]) == A[name].max_score()


def test_a_cell_that_never_ends_is_stopped_and_the_rest_of_the_notebook_counts(graded):
    """The corpus's endless cell (``attack_infinite_loop``: ``while True: pass`` after the answer, next to every other
    notebook of the batch) is stopped by its CPU-time limit: said on its progress line and in its result, and its
    grade rows are in the gradebook; the functions defined before it count (:func:`test_expected_score`), and the
    batch goes on (:func:`test_every_submission_graded`)."""
    from nbgrader.api import Gradebook, Grade

    line = next(x for x in graded["proc"].stderr.splitlines() if "attack_infinite_loop/ps2_roc_auc" in x)
    assert "超时" in line, line
    result = graded["results"][("attack_infinite_loop", "ps2_roc_auc")]
    assert any(e["type"] == "_CellTimeout" for e in result["cell_errors"]), result["cell_errors"]
    with Gradebook(f"sqlite:///{graded['out'] / 'gradebook.db'}") as gb:
        rows = [g for g in gb.db.query(Grade) if g.student.id == "attack_infinite_loop"]
    assert rows and sum(g.auto_score for g in rows) == result["score"]


def test_gradebook_not_writable_by_students(graded):
    con = sqlite3.connect(graded["out"] / "gradebook.db")
    assert con.execute("select max(auto_score) from grade").fetchone()[0] <= 40
    con.close()


def test_feedback_explains_failures_without_test_code(graded):
    fb = (graded["out"] / "feedback" / "wrong_strict_threshold" / "ps1_threshold_metrics" / "threshold_metrics.html").read_text(encoding="utf-8")
    assert "edge.constant_scores" in fb and "参考实现的结果" in fb and "你的函数" in fb
    assert "binary_metrics(" in fb  # the input is shown
    assert "def _check_call" not in fb and "ref(" not in fb
    fb = (graded["out"] / "feedback" / "attack_read_hidden_tests_and_gradebook" / "ps1_threshold_metrics" /
          "threshold_metrics.html").read_text(encoding="utf-8")
    assert "specs" not in fb and "gradebook.db" not in fb and "solutions" not in fb
    assert "RuntimeError" in fb  # the student's own traceback is shown
    fb = (graded["out"] / "feedback" / "forbidden_reference_import" / "ps2_roc_auc" / "roc_auc.html").read_text(encoding="utf-8")
    assert "参考实现" in fb


def test_summary(graded):
    data = json.loads((graded["out"] / "summary.json").read_text(encoding="utf-8"))
    a1 = data["ps1_threshold_metrics"]
    assert sum(a1["histogram"]) == a1["students"]
    assert 0 < a1["hidden_case_failure"]["edge.constant_scores"]["share"] < 1
    assert (graded["out"] / "summary.html").exists()


def test_rerun_grades_only_changes(graded, tmp_path):
    # the ledger is read before any job starts: only the changed notebook is graded again
    cmd = [str(graded["proc"].args[0]), "grade", str(graded["corpus"]), "--out", str(graded["out"]), "--jobs", "1"]
    nb = graded["corpus"] / "instructor_solution_ps3_pr_ap" / "ps3_pr_ap" / "pr_ap.ipynb"
    nb.write_text(nb.read_text(encoding="utf-8").replace("作业 3", "作业 3 ", 1), encoding="utf-8")
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    (tmp_path.parent / "rerun.log").write_text(proc.stderr)
    assert proc.returncode == 0
    assert "需要评分 1 份" in proc.stderr, proc.stderr[-2000:]


def test_refuses_missing_input(graded, tmp_path):
    proc = subprocess.run([str(graded["proc"].args[0]), "grade", str(tmp_path / "nope"), "--out", str(tmp_path / "o")],
                          capture_output=True, text=True)
    assert proc.returncode != 0


#: The corpus's wrong answers whose mistake is in the catalogue of known misconceptions, and what is named
CORPUS_DIAGNOSES = {
    "wrong_ap_interpolated": {"average_precision": "ap_interpolated"},
    "wrong_brier_baseline_half": {"brier_baseline": "brier_baseline_half"},
    "wrong_calibration_left_closed_bins": {"calibration_curve": "calibration_left_closed"},
    "wrong_epsilon_denominator": {"binary_metrics": "zero_division_zero"},
    "wrong_pairwise_ties_count_zero": {"pairwise_auc": "auc_ties_zero"},
    "wrong_roc_missing_start_point": {"roc_curve": "roc_no_origin"},
    "wrong_roc_no_tie_groups": {"roc_curve": "roc_ties_split", "roc_auc": "roc_ties_split"},
    "wrong_strict_threshold": {"binary_metrics": "threshold_strict"},
}


def test_corpus_diagnoses_name_the_known_mistakes_and_nothing_else(graded):
    """Every other notebook (solutions, stubs, attacks, mistakes outside the catalogue such as coerced labels or
    any zero_division accepted) gets no diagnosis: matching never guesses."""
    for (student, _), r in graded["results"].items():
        named = {d["function"]: d["misconception"] for d in r["diagnoses"]}
        assert named == CORPUS_DIAGNOSES.get(student, {}), student
    fb = (graded["out"] / "feedback" / "wrong_roc_missing_start_point" / "ps2_roc_auc" / "roc_auc.html").read_text(encoding="utf-8")
    assert "ROC 缺少起点 (0, 0)" in fb and fb.index("错误诊断") < fb.index("未通过的用例")
