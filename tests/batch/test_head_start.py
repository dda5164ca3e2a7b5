"""LocalPool's head start: jobs started before the ledger is read are kept only when wanted, and never twice."""

from __future__ import annotations

from pathlib import Path

import pytest

from autograder.batch import pools as scheduler
from autograder.batch.jobs import make_job
from autograder.model import Limits
from autograder.check.specs import get_assignment


pytestmark = pytest.mark.slow  # real sandboxed grading

REPO = Path(__file__).resolve().parents[2]


def _job(student: str, fingerprint: str):
    a = get_assignment("ps1_threshold_metrics")
    src = REPO / "solutions" / a.name / f"{a.notebook}.ipynb"
    return make_job(student, a.name, a.notebook, src, src, fingerprint, sandbox=True, limits=Limits())


def test_head_start_jobs_are_taken_over_or_dropped():
    pool = scheduler.LocalPool(2, lambda msg: None)
    early = [_job("s1", "f1"), _job("s2", "f2"), _job("s3", "old")]
    pool.head_start(early)
    # the ledger says: s1 is already committed, s3 changed since the head start began, s4 is new
    later = [_job("s2", "f2"), _job("s3", "new"), _job("s4", "f4")]
    seen = []
    for job, payload, error in pool.run(later, wanted={scheduler.job_key(j) for j in later}):
        assert error is None and payload["result"]["score"] == payload["result"]["max_score"] > 0
        seen.append(scheduler.job_key(job))
    assert sorted(seen) == [("s2", "ps1_threshold_metrics", "f2"), ("s3", "ps1_threshold_metrics", "new"),
                            ("s4", "ps1_threshold_metrics", "f4")]


# That a head start which is never taken over stops at once: tests/batch/test_pools.py.
