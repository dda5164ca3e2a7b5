"""Fault tests: a worker crash, the database briefly unavailable, a full scratch disk.  Each ends with a correct,
complete gradebook and a clear log line.  (A submission that never ends, next to others: the corpus's
``attack_infinite_loop`` in tests/autograder/test_grade_e2e.py.)

Only the database fault runs against both SQLite and PostgreSQL: in the others the database plays no
role beyond what test_resume.py already checks on both (committed rows survive, nothing twice).
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from ..grading_runs import (FEW, ONE_COPY, assert_no_scratch_left, assert_same, copy_students, grade_cmd, restricted, run, scratch_dir, snapshot,
                            wait_busy, wait_committed)

pytestmark = pytest.mark.slow  # the corpus slice and its reference grading: once per run (tests/grading_runs.py)
SQLITE_ONLY = pytest.mark.parametrize("backend", ["sqlite"], indirect=True)


def _children(pid: int) -> list[tuple[int, str]]:
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) == pid:
                cmdline = (stat.parent / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                out.append((int(stat.parent.name), cmdline))
        except (OSError, IndexError, ValueError):
            continue
    return out


@SQLITE_ONLY
def test_worker_crash(corpus, reference, backend, tmp_path):
    corpus, reference = copy_students(corpus, tmp_path / "one", ONE_COPY), restricted(reference, ONE_COPY)
    scratch = scratch_dir(tmp_path)
    cmd = grade_cmd(corpus, backend.out, *backend.args(), "--scratch", str(scratch))
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    # both workers inside a job: the killed one and the one the pool ends with it (not after the first commits:
    # the workers grade on while the command imports its gradebook, and on a busy machine they were done by then)
    wait_busy(scratch, 2)
    # the local workers are spawned children of the command
    workers = [pid for pid, cmdline in _children(proc.pid) if "spawn_main" in cmdline]
    assert workers, "no worker process found"
    os.kill(workers[0], signal.SIGKILL)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err[-3000:]
    assert "一个评分工作进程意外退出" in err and "重新评分未完成的" in err
    assert_same(snapshot(backend.url), reference)
    assert_no_scratch_left(scratch)  # the killed worker's folder, and those of the workers the pool ended with it


def test_database_briefly_unavailable(corpus, reference, backend, request, tmp_path):
    # the outage must come while results are still to record: one copy of each notebook (12) on one worker, graded
    # and recorded one at a time
    corpus, reference = copy_students(corpus, tmp_path / "one", ONE_COPY), restricted(reference, ONE_COPY)
    cmd = grade_cmd(corpus, backend.out, *backend.args(), "--jobs", "1")
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wait_committed(backend.url, 2, proc)
    if backend.kind == "sqlite":  # another process holds the write lock longer than SQLite's 5 s busy timeout
        con = sqlite3.connect(str(backend.out / "gradebook.db"), timeout=30, isolation_level=None)
        con.execute("BEGIN EXCLUSIVE")
        time.sleep(7)
        con.execute("ROLLBACK")
        con.close()
    else:  # the PostgreSQL server goes down for a few seconds
        pg = request.getfixturevalue("postgres")
        pg.stop()
        time.sleep(4)
        pg.start()
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err[-3000:]
    assert "成绩库暂时不可用" in err and "成绩库已恢复" in err, err[-3000:]
    assert_same(snapshot(backend.url), reference)


@SQLITE_ONLY
def test_scratch_disk_full(corpus, reference, backend, tmp_path):
    if os.geteuid() != 0:
        pytest.skip("mounting a tiny tmpfs needs root")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(scratch)], check=True)
    try:
        fd = os.open(scratch / "filler", os.O_WRONLY | os.O_CREAT)
        try:
            while os.write(fd, b"\0" * 4096):
                pass
        except OSError:
            pass
        finally:
            os.close(fd)
        few = copy_students(corpus, tmp_path / "few", FEW)  # nothing here needs a run long enough to be interrupted
        cmd = grade_cmd(few, backend.out, *backend.args(), "--scratch", str(scratch))
        full = run(cmd)
        assert full.returncode == 1, full.stderr[-3000:]
        assert "评分临时目录已满" in full.stderr and "未能评分" in full.stderr
        assert snapshot(backend.url)["ledger"] == {}, "nothing half-written"
        (scratch / "filler").unlink()
        ok = run(cmd)
        assert ok.returncode == 0, ok.stderr[-3000:]
        assert_same(snapshot(backend.url), restricted(reference, FEW))
    finally:
        subprocess.run(["umount", "-l", str(scratch)], check=False)
