"""Retry policy of the grading pools: counted per job key, the same for the local and the Dask pool."""

from __future__ import annotations


from . import pool_work
from .processes import outlived

from autograder.batch import pools
from autograder.batch.jobs import Job


def _job(student: str, tmp_path, fingerprint: str = "fp") -> Job:
    return Job(student, "a", fingerprint, scratch=str(tmp_path))


def test_policy_counts_per_job_key_not_per_object(tmp_path):
    policy = pools.RetryPolicy(attempts=3)
    assert policy.after_error(_job("s1", tmp_path)) == 2
    assert policy.after_error(_job("s1", tmp_path)) == 3  # a new object of the same job: the same count
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
    assert [(j.student, p, e) for j, p, e in events] == [("s1", None, "总是失败（测试）")]
    assert sum("重试" in m for m in logged) == 2


def test_local_pool_hands_back_results_while_an_endless_source_is_idle(tmp_path):
    """The service's queue: a source that has nothing now yields IDLE; finished jobs still come back at once,
    and a job that arrives later is graded by the same pool."""
    results: list[str] = []

    def source():
        yield _job("s1", tmp_path)
        idles = 0
        while not results:  # s1's result must arrive while the source is idle
            idles += 1
            yield pools.IDLE
        assert idles >= 1
        yield _job("s2", tmp_path)

    pool = pools.LocalPool(1, lambda msg: None, work=pool_work.slow)
    for job, payload, error in pool.run(source()):
        assert error is None
        results.append(payload["result"]["student"])
    assert results == ["s1", "s2"]


def test_dask_pool_hands_back_results_while_an_endless_source_is_idle(monkeypatch):
    """The same for the Dask pool (an in-process cluster; the work function replaced by a trivial one)."""
    from distributed import LocalCluster

    monkeypatch.setattr(pools, "grade_job", lambda job: {"result": {"student": job["student"]}})
    results: list[str] = []

    def source():
        yield Job("s1", "a", "fp")
        while not results:
            yield pools.IDLE
        yield Job("s2", "a", "fp")

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None) as cluster:
        for _, payload, error in pools.DaskPool(cluster.scheduler_address, lambda msg: None).run(source()):
            assert error is None
            results.append(payload["result"]["student"])
    assert results == ["s1", "s2"]


def test_a_worker_whose_grader_died_while_it_started_leaves(tmp_path):
    """The grader (here: a process that starts a pool and exits at once) dies while its worker still imports;
    the worker must not live on as an orphan (it found that out only after setting its death signal)."""
    import subprocess
    import sys

    script = (
        "import multiprocessing, os, sys\n"
        "from concurrent.futures import ProcessPoolExecutor\n"
        "from autograder.batch.jobs import worker_init\n"
        "if __name__ == '__main__':\n"
        "    ex = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context('spawn'), initializer=worker_init)\n"
        "    ex.submit(os.getpid)\n"
        "    open(sys.argv[1], 'w').write(' '.join(map(str, ex._processes)))\n"
        "    os._exit(0)\n")
    (tmp_path / "grader.py").write_text(script)
    with open(tmp_path / "err", "w") as err:  # not a pipe: an orphan holding it would keep run() waiting
        subprocess.run([sys.executable, str(tmp_path / "grader.py"), str(tmp_path / "pids")], stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=err, timeout=60)
    pids = [int(p) for p in (tmp_path / "pids").read_text().split()]
    assert pids, (tmp_path / "err").read_text()
    assert not outlived(pids), "the worker outlived its grader"


def test_a_job_crosses_to_a_worker_as_explicit_json():
    """Bytes in base64, limits and sandbox settings by their own JSON: what arrives is the job that was sent, and the
    JSON is plain data."""
    import json

    from autograder.model import Limits, SandboxSettings

    job = Job("s1", "a", "fp", "nb", b"\x00\xffnotebook", b"source", sandbox=SandboxSettings(False, "/autograder@x", "grader", warm=False),
              limits=Limits(call_timeout=2.5, memory_bytes=1 << 28, submission_timeout=60), scratch="/tmp/x", tag="sid")
    data = json.loads(json.dumps(job.to_json()))
    assert Job.from_json(data) == job and data["submission"] == "AP9ub3RlYm9vaw=="
    assert Job.from_json(Job("s2", "a", "fp").to_json()).submission is None


def test_the_dask_pool_runs_the_work_function_it_is_given():
    """Not only grade_job: the service's work function (a lower CPU priority) runs on Dask too."""
    from distributed import LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None) as cluster:
        pool = pools.DaskPool(cluster.scheduler_address, lambda msg: None, work=pool_work.echo)
        events = list(pool.run([Job("s1", "a", "fp", tag="t1")]))
    assert [(j.tag, p, e) for j, p, e in events] == [("t1", {"result": {"student": "s1"}, "work": "echo"}, None)]
