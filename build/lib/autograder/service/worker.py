"""The service's local grading work: :func:`autograder.batch.jobs.grade_job` at a lower CPU priority.

The service process answers students while its workers grade on the same cores; a worker lowers its own
priority (``nice`` :data:`NICE`, inherited by the sandbox it starts) before its first job, so that status
requests do not queue behind grading.  The workers still get every cycle the service does not use.
"""

from __future__ import annotations

import os

from ..batch.jobs import grade_job

NICE = 10
_NICED = False


def grade(job: dict) -> dict:
    """``grade_job(job)`` in a worker process that has lowered its priority once."""
    global _NICED
    if not _NICED:
        _NICED = True
        try:
            os.nice(NICE)
        except OSError:
            pass
    return grade_job(job)
