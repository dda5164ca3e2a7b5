"""What a grading worker sent back, as the process that records it takes it: :func:`take_in`, the one way in.

``autograder grade`` and the service's grading loop both record a worker's result through :func:`take_in`, so a result
that cannot be used is a graded outcome of that submission in both, never the end of a batch or of the grading loop:
every case 0 and a note saying why (:func:`unusable`).  The only such results seen came from the student's side (a
cell that forged a runner message), and a regrade must not let a notebook that breaks its result keep an earlier grade.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from ..check.specs import Assignment
from ..check.grade import unjudged
from ..model import SubmissionResult, clip
from .jobs import Job


@dataclass(frozen=True)
class Intake:
    """The result to record for a job, and why the worker's own could not be used (None: it is the worker's)."""

    result: SubmissionResult
    refused: str | None = None


def take_in(job: Job, payload: dict, assignment: Assignment) -> Intake:
    """The result to record for ``job`` from its worker's ``payload``: the worker's result when it reads as a result of
    this job (student, assignment and the fingerprint of the graded bytes) and can be stored (its JSON text is valid
    UTF-8: a lone surrogate is not), else :func:`unusable` with the reason."""
    try:
        result = received(job, payload)
        json.dumps(result.to_json(), ensure_ascii=False).encode("utf-8")
        return Intake(result)
    except Exception as exc:  # noqa: BLE001 - whatever is wrong with it, this submission's outcome is recorded
        result = unusable(job, assignment, exc)
        return Intake(result, result.notes[0])


def unusable(job: Job, assignment: Assignment, exc: Exception) -> SubmissionResult:
    """The result recorded for ``job`` when the worker's result could not be used or stored (``exc``): every case
    0 (:func:`autograder.check.grade.unjudged`) and why, as text that can be stored (a lone surrogate that came
    with the result is replaced)."""
    why = f"评分结果无法读取或写入（{type(exc).__name__}: {clip(str(exc), 200)}）；请联系教师"
    result = unjudged(assignment, job.student, why.encode("utf-8", "replace").decode("utf-8"))
    result.fingerprint = job.fingerprint
    return result


def received(job: Job, payload: dict) -> SubmissionResult:
    """The worker's result for ``job``; raises if it cannot be read or is not this job's."""
    result = SubmissionResult.from_json(payload["result"])
    if (result.student, result.assignment, result.fingerprint) != job.key:
        raise ValueError("结果与评分任务不符")
    return result
