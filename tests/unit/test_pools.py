"""Retry policy of the grading pools: counted per job key, the same for the local and the Dask pool."""

from __future__ import annotations

import time
from pathlib import Path

import pool_work

from autograder.batch import pools


def _job(student: str, tmp_path, fingerprint: str = "fp") -> dict:
    return {"student": student, "assignment": "a", "fingerprint": fingerprint, "dir": str(tmp_path)}


def test_policy_counts_per_job_key_not_per_object(tmp_path):
    policy = pools.RetryPolicy(attempts=3)
    assert policy.after_error(_job("s1", tmp_path)) == 2
    assert policy.after_error(_job("s1", tmp_path)) == 3  # a new dict of the same job: the same count
    assert policy.after_error(_job("s1", tmp_path)) is None
    assert policy.after_error(_job("s2", tmp_path)) == 2  # another job starts from zero
    assert policy.after_error(_job("s1", tmp_path, "changed")) == 2  # changed bytes: another job


def test_policy_gives_jobs_of_a_lost_worker_two_more_tries(tmp_path):
    policy = pools.RetryPolicy(attempts=3)
    assert [policy.after_lost_worker(_job("s", tmp_path)) for _ in range(6)] == [True] * 4 + [False] * 2


def test_local_pool_retries_every_job_once_even_when_job_objects_are_recycled(tmp_path):
    """Jobs come from a generator and are dropped after use, so CPython reuses their ids; with retries
    counted per ``id(job)`` a later job inherited an earlier one's count and was given up."""
    pool = pools.LocalPool(2, lambda msg: None, attempts=2, work=pool_work.flaky_once)
    jobs = (_job(f"s{i:03d}", tmp_path) for i in range(40))
    events = list(pool.run(jobs))
    assert [e for _, _, e in events if e is not None] == []
    assert sorted(p["result"]["student"] for _, p, _ in events) == [f"s{i:03d}" for i in range(40)]


def test_local_pool_gives_up_after_its_attempts(tmp_path):
    logged = []
    pool = pools.LocalPool(1, logged.append, attempts=3, work=pool_work.always_fails)
    events = list(pool.run([_job("s1", tmp_path)]))
    assert [(j["student"], p, e) for j, p, e in events] == [("s1", None, "总是失败（测试）")]
    assert sum("重试" in m for m in logged) == 2


def _ended(pid: int) -> bool:
    """The process is gone or a zombie (dead, waiting to be reaped)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] in ("Z", "X")
    except OSError:
        return True


def test_close_without_run_stops_the_head_start(tmp_path):
    """A head start that is never taken over: its workers end at once instead of grading every queued job."""
    pool = pools.LocalPool(1, lambda msg: None, work=pool_work.slow)
    pool.head_start([_job(f"s{i}", tmp_path) for i in range(6)])
    pids = list(pool._executor._processes)
    time.sleep(1.0)  # the worker has started a job
    pool.close()
    deadline = time.monotonic() + 10
    while not all(_ended(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert pids and all(_ended(pid) for pid in pids)
    time.sleep(3.0)
    assert len(list(tmp_path.glob("*.started"))) <= 2  # without the stop, all 6 jobs (0.5 s each) would run
    assert list(pool.run([])) == []  # a run after close starts from nothing
