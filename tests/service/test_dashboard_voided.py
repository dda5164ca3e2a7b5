"""The dashboard's 「每个用例的未通过比例」 counts what students got wrong: a validation case voided by the basic-case
rule (its input was rejected, the function just did not compute yet) is no failure of that case."""

from __future__ import annotations

import json
import time

import sqlalchemy as sa

from autograder.model import CaseRecord, CaseResult, CellScore, SubmissionResult
from autograder.service import dashboard
from autograder.service.database import COUNTING, SUBMISSIONS
from autograder.store import report

FP = "voided-fp"  # the dashboard caches parsed results by (id, fingerprint) for the process: ids and fingerprint of their own


def _result(student: str, voided: bool) -> SubmissionResult:
    cases = [CaseRecord("random.f", "a_hidden_random", 1, "f", "随机数据", True, CaseResult(not voided)),
             CaseRecord("invalid.f.empty", "a_hidden_validation", 1, "f", "空数组", True,
                        CaseResult(False, reason="函数拒绝了这个非法输入，但……") if voided else CaseResult(True),
                        voided=voided, voided_by=("random.f",) if voided else ())]
    score = 0.0 if voided else 2.0
    return SubmissionResult(student, "a", score, 2.0, {"a_hidden_random": CellScore(score / 2, 1.0),
                                                      "a_hidden_validation": CellScore(score / 2, 1.0)}, cases, fingerprint=FP)


def test_voided_validation_cases_are_not_counted_as_failures(db):
    now = time.time()
    with db.write() as con:
        for i, voided in enumerate([True, True, False]):
            sid, student = f"voided{i}", f"s{i}"
            r = _result(student, voided)
            con.execute(sa.insert(SUBMISSIONS).values(
                id=sid, student_id=student, assignment="a", status="graded", created_at=now - 30 + i, filename="x.ipynb",
                path="p", sha256="0" * 64, size=1, late=False, penalty=1.0, tries=1, settled=True, score=r.score,
                max_score=2, graded_at=now - 20, finished_at=now - 20, fingerprint=FP, result_json=json.dumps(r.to_json())))
            con.execute(sa.insert(COUNTING).values(student_id=student, assignment="a", submission_id=sid, updated_at=now))
    f = dashboard.assignment_figures(db, "a", "作业", now)
    shares = {c["id"]: (c["failed"], c["share"]) for c in f["cases"]}
    assert shares["invalid.f.empty"] == (0, 0.0)
    assert shares["random.f"] == (2, 2 / 3)  # the students' real failures still count
    summary = report.summary({"a": "作业"}, [_result(f"s{i}", v) for i, v in enumerate([True, True, False])])["a"]
    assert summary["hidden_case_failure"]["invalid.f.empty"]["failed"] == 0
    assert summary["cases"]["invalid.f.empty"]["passed"] == 3 and summary["cases"]["random.f"]["passed"] == 1
