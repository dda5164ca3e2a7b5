"""Scale-out: the same grading jobs on a Dask distributed cluster (a LocalCluster of worker processes),
with a worker killed half way; the gradebook must equal the reference.  Run against PostgreSQL, the
database a course that grades on a cluster uses (what the database does under faults is tested on both
databases in test_resume.py and test_faults.py).
"""

from __future__ import annotations

import os
import signal
import subprocess

import pytest

from ..grading_runs import assert_no_scratch_left, assert_same, grade_cmd, scratch_dir, snapshot, wait_busy, wait_committed

pytestmark = pytest.mark.slow  # the corpus slice and its reference grading: once per run (tests/grading_runs.py)


@pytest.fixture(scope="module")
def cluster():
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=3, threads_per_worker=1, processes=True, dashboard_address=None,
                      host="127.0.0.1") as lc, Client(lc) as client:
        yield lc, client


@pytest.mark.parametrize("backend", ["postgresql"], indirect=True)
def test_dask_cluster_with_a_worker_killed(corpus, reference, backend, cluster, tmp_path):
    lc, client = cluster
    client.wait_for_workers(3, timeout=60)
    scratch = scratch_dir(tmp_path)
    cmd = grade_cmd(corpus, backend.out, *backend.args(), "--scheduler", lc.scheduler_address, "--scratch", str(scratch))
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wait_committed(backend.url, 2, proc)
    wait_busy(scratch, 3)  # every worker inside a job, the killed one too
    pids = client.run(os.getpid)
    os.kill(next(iter(pids.values())), signal.SIGKILL)  # the nanny restarts it; Dask reruns only its task
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err[-3000:]
    assert "Dask 集群" in err
    assert "已断开；Dask 会在其他工作进程上重新运行" in err  # the lost worker is announced
    assert_same(snapshot(backend.url), reference)
    assert_no_scratch_left(scratch)
