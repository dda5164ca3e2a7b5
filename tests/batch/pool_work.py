"""Work functions for the pool tests (module level: spawned worker processes import them by name).

Each gets a job's JSON (:meth:`autograder.batch.jobs.Job.to_json`); the tests put their folder in ``scratch``."""

from __future__ import annotations

from pathlib import Path

from autograder.batch.jobs import JobError


def flaky_once(job: dict) -> dict:
    """Fail the first attempt of every job (an infrastructure error), succeed on the second."""
    marker = Path(job["scratch"]) / f"{job['student']}.tried"
    if not marker.exists():
        marker.write_text("1")
        raise JobError("第一次尝试失败（测试）")
    return {"result": {"student": job["student"]}, "timing": {}}


def always_fails(job: dict) -> dict:
    raise JobError("总是失败（测试）")


def slow(job: dict) -> dict:
    """Half a second of work, announced by a marker file when it starts."""
    import time

    (Path(job["scratch"]) / f"{job['student']}.started").write_text("1")
    time.sleep(0.5)
    return {"result": {"student": job["student"]}, "timing": {}}


def echo(job: dict) -> dict:
    """Names itself, so a test sees which work function ran."""
    return {"result": {"student": job["student"]}, "work": "echo"}
