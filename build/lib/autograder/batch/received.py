"""What a grading worker sent back, as the process that records it takes it.

:func:`received` reads the worker's result and checks that it is the job's (student, assignment and the
fingerprint of the graded bytes); when that fails - or the result cannot be stored - :func:`unusable` is what is
recorded in its place: every case 0 and a note saying why.  ``autograder grade`` and the service's grading loop
both record results this way, so a result that cannot be used is a graded outcome of that submission in both,
never the end of a batch or of the grading loop.
"""

from __future__ import annotations

from ..check.specs import Assignment
from ..check.grade import unjudged
from ..model import SubmissionResult, clip
from .jobs import Job


def received(job: Job, payload: dict) -> SubmissionResult:
    """The worker's result for ``job``; raises if it cannot be read or is not this job's."""
    result = SubmissionResult.from_json(payload["result"])
    if (result.student, result.assignment, result.fingerprint) != job.key:
        raise ValueError("结果与评分任务不符")
    return result


def unusable(job: Job, assignment: Assignment, exc: Exception) -> SubmissionResult:
    """The result recorded for ``job`` when the worker's result could not be used or stored (``exc``): every case
    0 (:func:`autograder.check.grade.unjudged`) and why, as text that can be stored (a lone surrogate that came
    with the result is replaced)."""
    why = f"评分结果无法读取或写入（{type(exc).__name__}: {clip(str(exc), 200)}）；请联系教师"
    result = unjudged(assignment, job.student, why.encode("utf-8", "replace").decode("utf-8"))
    result.fingerprint = job.fingerprint
    return result
