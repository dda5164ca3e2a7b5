"""A grading run's start and end: a self-test that fails, workers that die with their grader, no cgroup left behind."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from .processes import outlived

REPO = Path(__file__).resolve().parents[2]

BROKEN_CHECK = r"""
import sys
if __name__ == "__main__":  # only this process: its spawned workers import a working sandbox
    from autograder.sandbox import command
    from autograder.sandbox.session import Session
    # the run's self-test meets a child that cannot isolate itself (as on a kernel without nested namespaces)
    Session._kept_paths = lambda self: command.python_paths() + ["/tmp/ag-missing-kept-path/x"]
    from autograder.cli import run
    sys.argv = ["autograder", *sys.argv[1:]]
    run()
"""


@pytest.mark.slow
def test_a_run_whose_sandbox_check_fails_grades_and_records_nothing(tmp_path):
    """When the run's self-test finds no working sandbox the run stops with the reason (exit 2) before anything is
    graded or recorded (its workers would have a working sandbox: only the command's self-test sees the broken one)."""
    import sqlite3

    _solutions_as_submissions(tmp_path / "subs", ("s1", "s2", "s3"))
    (tmp_path / "grader.py").write_text(BROKEN_CHECK)
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, str(tmp_path / "grader.py"), "grade", str(tmp_path / "subs"), "--out", str(out),
                           "--jobs", "1"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert "沙箱无法隔离学生进程" in proc.stderr and "拒绝在没有沙箱的情况下运行学生代码" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not list(out.glob("results/*/*.json")) and not (out / "grades.csv").exists()
    if (out / "gradebook.db").exists():
        with sqlite3.connect(out / "gradebook.db") as db:
            tables = {r[0] for r in db.execute("select name from sqlite_master where type = 'table'")}
            assert "autograder_done" not in tables or not db.execute("select count(*) from autograder_done").fetchone()[0]


def sleeps_long(job: dict) -> dict:
    """A job that keeps its worker busy (module level: the worker imports it by name)."""
    import time

    (Path(job["scratch"]) / "started").write_text("1")
    time.sleep(120)
    return {"result": {}}


KILLED_GRADER = r"""
import os, signal, sys, time
sys.path.insert(0, sys.argv[3])
from autograder.batch import pools
from autograder.batch.jobs import Job
from autograder.sandbox.cgroup import process_tree
from tests.batch.test_startup import sleeps_long
if __name__ == "__main__":
    import threading
    pool = pools.LocalPool(2, lambda msg: None, work=sleeps_long)
    jobs = [Job(f"s{i}", "a", "fp", scratch=os.path.join(sys.argv[2], f"s{i}")) for i in (1, 2)]
    for job in jobs:
        os.mkdir(job.scratch)
    threading.Thread(target=lambda: list(pool.run(jobs)), daemon=True).start()
    while not all(os.path.exists(os.path.join(job.scratch, "started")) for job in jobs):
        time.sleep(0.05)
    pids = [p for p, _ in process_tree(os.getpid())]  # the workers, their sandboxes, multiprocessing's helper
    open(sys.argv[1], "w").write(" ".join(map(str, pids)))
    os.kill(os.getpid(), signal.SIGKILL)
"""


@pytest.mark.slow
def test_workers_die_with_their_grader(tmp_path):
    """The grader is SIGKILLed while its two workers grade: the workers and everything they started end too."""
    (tmp_path / "grader.py").write_text(KILLED_GRADER)
    subprocess.run([sys.executable, str(tmp_path / "grader.py"), str(tmp_path / "pids"), str(tmp_path), str(REPO)],
                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
    pids = [int(p) for p in (tmp_path / "pids").read_text().split()]
    assert len(pids) >= 2
    assert not outlived(pids), "a worker outlived its grader"


@pytest.mark.slow
def test_a_grading_run_leaves_no_cgroup_behind(tmp_path):
    """A whole ``autograder grade`` (its self-test's zygote in the command, each worker's warm sandbox, every run)
    under a cgroup parent of its own: when it has ended, the parent holds no cgroup.  The command ends with
    ``os._exit`` (which skips ``atexit``): the self-test's idle zygote left its cgroups behind in every
    hierarchy, one set per run, until a later process's hourly sweep."""
    import os
    import uuid

    from autograder.sandbox import delegation

    if os.geteuid() != 0 or not delegation.parents("/"):
        pytest.skip("needs root and a cgroup hierarchy")
    name = f"ag-leak-test-{uuid.uuid4().hex[:8]}"
    made = [root / name for root in {p.resolve() for p in delegation.parents("/").values()}]  # each hierarchy once
    for parent in made:
        parent.mkdir()
    _solutions_as_submissions(tmp_path / "subs", ("s1", "s2"))
    try:
        proc = subprocess.run([str(Path(sys.executable).parent / "autograder"), "grade", str(tmp_path / "subs"),
                               "--out", str(tmp_path / "out"), "--jobs", "2", "--quiet", "--cgroup-parent", f"/{name}"],
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert (tmp_path / "out" / "grades.csv").read_text().count("\n") == 3
        left = [str(p) for parent in made for p in parent.iterdir() if p.is_dir()]
        assert left == []
    finally:
        for parent in made:
            for p in parent.iterdir():
                if p.is_dir():
                    p.rmdir()
            parent.rmdir()


def _solutions_as_submissions(folder: Path, students: tuple[str, ...]) -> None:
    """``folder/<student>/ps1_threshold_metrics/``: the instructor solution of assignment 1, once per student."""
    import shutil

    src = REPO / "solutions" / "ps1_threshold_metrics" / "threshold_metrics.ipynb"
    for student in students:
        dest = folder / student / "ps1_threshold_metrics" / src.name
        dest.parent.mkdir(parents=True)
        shutil.copy(src, dest)
