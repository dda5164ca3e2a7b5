"""Fixtures for the scale tests: a throwaway PostgreSQL server, a small corpus, gradebook snapshots.

PostgreSQL comes from Debian's packages (``scripts/install-system-deps.sh``); the fixture starts its own
server on 127.0.0.1 with a random port in a temporary directory and never uses the system cluster.
If PostgreSQL is not installed the tests FAIL: CI installs it.

The corpus slice and its reference grading are made once per test run and shared by the pytest-xdist workers
(:func:`once_per_run`): the modules that use them (tests/batch/test_faults.py, test_resume.py, test_dask.py,
tests/service/test_scale.py) are separate units of the parallel run, each worker with a PostgreSQL of its own.
"""

from __future__ import annotations

import glob
import json
import os
import pickle
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import sqlalchemy as sa

from tests.file_lock import file_lock

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
AUTOGRADER = str(REPO / ".venv" / "bin" / "autograder")
sys.path.insert(0, str(REPO / "tests" / "autograder"))

# The slice of the sample corpus used here: quick notebooks of assignments 1 and 2 (correct, wrong,
# hostile), each submitted by COPIES students, so that a run lasts long enough to be killed half way.
SLICE = ["instructor_solution_ps1_threshold_metrics", "untouched_student_version_ps1_threshold_metrics",
         "wrong_strict_threshold", "wrong_labels_coerced", "attack_exit_and_kill", "attack_monkeypatch_builtins",
         "instructor_solution_ps2_roc_auc", "wrong_roc_no_tie_groups", "wrong_pairwise_ties_count_zero",
         "forbidden_reference_import", "attack_eq_always_true", "attack_not_json_notebook"]
COPIES = 2


class Postgres:
    """A PostgreSQL server of our own: ``url(name)`` creates a fresh database; ``stop``/``start``."""

    def __init__(self) -> None:
        bins = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
        if not bins:
            pytest.fail("PostgreSQL 未安装（Debian 包 postgresql；scripts/install-system-deps.sh 会安装）")
        self.bin = Path(bins[-1]).parent
        self.dir = Path(tempfile.mkdtemp(prefix="autograder-pg-"))
        self.data = self.dir / "data"
        self.as_user: list[str] = []
        if os.geteuid() == 0:  # postgres refuses to run as root
            shutil.chown(self.dir, "postgres", "postgres")
            self.as_user = ["runuser", "-u", "postgres", "--"]
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self._run(self.bin / "initdb", "-D", self.data, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-sync")
        self.start()

    def _run(self, *cmd) -> None:
        r = subprocess.run(self.as_user + [str(c) for c in cmd], capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            pytest.fail(f"{cmd[0]} 失败：{r.stdout[-2000:]}{r.stderr[-2000:]}")

    def start(self) -> None:
        self._run(self.bin / "pg_ctl", "-D", self.data, "-l", self.dir / "log", "-w", "-t", "60", "-o",
                  f"-c listen_addresses=127.0.0.1 -p {self.port} -c unix_socket_directories={self.dir}", "start")

    def stop(self) -> None:
        self._run(self.bin / "pg_ctl", "-D", self.data, "-m", "fast", "-w", "stop")

    def url(self, name: str) -> str:
        admin = sa.create_engine(f"postgresql+psycopg2://postgres@127.0.0.1:{self.port}/postgres", isolation_level="AUTOCOMMIT")
        with admin.connect() as con:
            con.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}"'))
            con.execute(sa.text(f'CREATE DATABASE "{name}"'))
        admin.dispose()
        return f"postgresql://postgres@127.0.0.1:{self.port}/{name}"  # as an instructor types it

    @staticmethod
    def engine_url(url: str) -> str:
        return url.replace("postgresql://", "postgresql+psycopg2://", 1)

    def close(self) -> None:
        try:
            self.stop()
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres():
    pg = Postgres()
    yield pg
    pg.close()


def run_folder(tmp_path_factory) -> Path:
    """The folder that every pytest-xdist worker of this run shares (the run's own base folder without xdist)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") is not None else base


def once_per_run(tmp_path_factory, name: str, make):
    """``make(folder)`` run once per test run, by the first worker that asks, in a folder ``name`` that every
    worker shares; later callers (other workers) wait for it and get its result (pickled beside the folder).
    If ``make`` fails, nothing is kept and the next caller runs it again (and fails the same way)."""
    shared = run_folder(tmp_path_factory)
    folder, saved = shared / name, shared / f"{name}.pickle"
    with file_lock(shared / f"{name}.lock"):
        if saved.is_file():
            return pickle.loads(saved.read_bytes())
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir()
        result = make(folder)
        saved.write_bytes(pickle.dumps(result))
        return result


def _write_corpus(folder: Path) -> Path:
    import make_corpus

    built = make_corpus.build()
    root = folder / "corpus"
    full = folder / "full"
    make_corpus.write(full)
    for sid in SLICE:
        name = built[sid][0]
        for k in range(COPIES):
            shutil.copytree(full / sid / name, root / f"{sid}_{k}" / name)
    shutil.rmtree(full)
    return root


@pytest.fixture(scope="session")
def corpus(tmp_path_factory) -> Path:
    """The slice of the sample corpus (read only: a test that changes it works on a copy)."""
    return once_per_run(tmp_path_factory, "scale-corpus", _write_corpus)


class Backend:
    """Where a test's gradebook lives: ``sqlite`` (OUT/gradebook.db) or ``postgresql`` (a fresh database)."""

    def __init__(self, kind: str, out: Path, postgres: Postgres | None, name: str) -> None:
        self.kind = kind
        self.out = out
        self.url = postgres.url(name) if postgres else f"sqlite:///{out / 'gradebook.db'}"

    def args(self) -> list[str]:
        return ["--db", self.url]


@pytest.fixture(params=["sqlite", "postgresql"])
def backend(request, tmp_path):
    pg = request.getfixturevalue("postgres") if request.param == "postgresql" else None
    name = "t_" + "".join(ch if ch.isalnum() else "_" for ch in request.node.name.lower())[:50]
    return Backend(request.param, tmp_path / "out", pg, name)


def grade_cmd(corpus: Path, out: Path, *extra: str) -> list[str]:
    only = [] if "--assignment" in extra else ["--assignment", "ps1_threshold_metrics", "--assignment", "ps2_roc_auc"]
    return [AUTOGRADER, "grade", str(corpus), "--out", str(out), "--jobs", "2", *only, *extra]


def run(cmd: list[str], timeout: float = 300, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """``cmd`` to its end; ``env``: variables set for it on top of this process's environment."""
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env={**os.environ, **(env or {})})


def committed(url: str) -> int:
    """Rows of the done ledger (0 while the table does not exist yet or the database is busy)."""
    eng = sa.create_engine(Postgres.engine_url(url), connect_args={"timeout": 0.2} if url.startswith("sqlite") else {"connect_timeout": 2})
    try:
        with eng.connect() as con:
            return int(con.execute(sa.text("SELECT count(*) FROM autograder_done")).scalar() or 0)
    except sa.exc.DBAPIError:
        return 0
    finally:
        eng.dispose()


def wait_committed(url: str, k: int, proc: subprocess.Popen, timeout: float = 300) -> int:
    """Wait until ``k`` results are committed; ``timeout`` is a backstop for a hung run, not a speed check."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        n = committed(url)
        if n >= k:
            return n
        if proc.poll() is not None:
            raise AssertionError(f"grading ended before {k} results were committed: {proc.stderr.read()[-3000:]}")
        time.sleep(0.05)
    raise AssertionError(f"{k} results not committed in {timeout} s")


def snapshot(url: str) -> dict:
    """Everything that must be identical between runs: nbgrader grades, ledger rows, row counts."""
    from nbgrader.api import Gradebook, Grade, SubmittedAssignment

    with Gradebook(Postgres.engine_url(url)) as gb:
        grades = {(g.student.id, g.assignment.name, g.notebook.name, g.name): g.auto_score for g in gb.db.query(Grade)}
        n_subs = gb.db.query(SubmittedAssignment).count()
        n_grades = gb.db.query(Grade).count()
        rows = gb.db.execute(sa.text("SELECT student_id, assignment, fingerprint, score, result_json FROM autograder_done")).all()
    ledger = {}
    for r in rows:
        data = json.loads(r[4])
        ledger[(r[0], r[1])] = (r[2], r[3], tuple((c["id"], c["passed"]) for c in data["cases"]))
    return {"grades": grades, "ledger": ledger, "n_submissions": n_subs, "n_grades": n_grades}


@pytest.fixture(scope="session")
def reference(corpus, tmp_path_factory) -> dict:
    """The slice graded once per test run, uninterrupted, with SQLite."""

    def grade(folder: Path) -> dict:
        out = folder / "out"
        proc = run(grade_cmd(corpus, out))
        assert proc.returncode == 0, proc.stderr[-3000:]
        return snapshot(f"sqlite:///{out / 'gradebook.db'}")

    snap = once_per_run(tmp_path_factory, "scale-reference", grade)
    n = sum(1 for _ in corpus.glob("*/*"))
    assert len(snap["ledger"]) == n == snap["n_submissions"]
    assert any(v[1] > 0 for v in snap["ledger"].values()) and any(v[1] == 0 for v in snap["ledger"].values())
    return snap


def kill(proc: subprocess.Popen) -> None:
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)


def scratch_dir(tmp_path: Path) -> Path:
    """A scratch folder of the test's own (``--scratch``): what a run leaves in it is visible, and no other run's."""
    d = tmp_path / "scratch"
    d.mkdir(exist_ok=True)
    return d


def wait_busy(scratch: Path, n: int, timeout: float = 60) -> None:
    """Wait until ``n`` jobs are inside their scratch folders (so a kill now interrupts them)."""
    deadline = time.monotonic() + timeout
    while sum(1 for p in scratch.iterdir() if p.name.startswith("autograder-job-")) < n and time.monotonic() < deadline:
        time.sleep(0.01)


def assert_no_scratch_left(scratch: Path) -> None:
    """No job folder (it holds the instructor's solution) survives a run, whatever was killed during it."""
    left = sorted(p.name for p in scratch.iterdir())
    assert left == [], f"job folders left behind: {left}"


#: A few submissions of the slice, for the faults that need no run long enough to be interrupted (a full scratch
#: disk, the regrade of one slice): grading the whole slice again there showed nothing more.
FEW = ["instructor_solution_ps1_threshold_metrics_0", "wrong_strict_threshold_0", "instructor_solution_ps2_roc_auc_0"]


#: One copy of each notebook of the slice (12 submissions), for a fault that needs only both workers inside a job (a
#: worker killed), or results still to record after the first ones on one worker without extra ones (the database
#: away: its head start is at most 2 x 4 jobs).  A kill timed by the number of committed results on 2 + 2 workers
#: needs the whole slice: their head start grades ahead of the first record, and on 12 it recorded them all at once
#: (measured).
ONE_COPY = [f"{sid}_0" for sid in SLICE]


def copy_students(corpus: Path, dest: Path, students: list[str]) -> Path:
    """``dest`` holding only these students' folders of ``corpus``."""
    for student in students:
        shutil.copytree(corpus / student, dest / student)
    return dest


def restricted(reference: dict, students: list[str]) -> dict:
    """The reference snapshot of these students alone (what grading only their submissions must give)."""
    assert reference["n_grades"] == len(reference["grades"]), "one grade row per key in the reference"
    grades = {k: v for k, v in reference["grades"].items() if k[0] in students}
    ledger = {k: v for k, v in reference["ledger"].items() if k[0] in students}
    assert {k[0] for k in ledger} == set(students), "every chosen student is in the reference"
    return {"grades": grades, "ledger": ledger, "n_submissions": len(ledger), "n_grades": len(grades)}


def assert_same(snap: dict, reference: dict) -> None:
    assert snap["n_submissions"] == reference["n_submissions"], "submissions lost or doubled"
    assert snap["n_grades"] == reference["n_grades"], "grade rows lost or doubled"
    assert snap["grades"] == reference["grades"]
    assert snap["ledger"] == reference["ledger"]
