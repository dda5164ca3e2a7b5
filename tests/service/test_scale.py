"""The grading service under faults: SIGKILL and restart (SQLite and PostgreSQL), two service processes on one
PostgreSQL (one grading on this machine, one on a Dask LocalCluster), grading that keeps failing.

The corpus slice of the scale tests is uploaded through the API; the gradebook must then equal the
reference that ``autograder grade`` produced from the same notebooks (grades, ledger rows with their
fingerprints, scores and case results): nothing lost, nothing doubled.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import sqlalchemy as sa

from tests.service.server import Server, make_course, submit, wait_done

from ..grading_runs import Postgres, committed, snapshot

pytestmark = pytest.mark.slow  # the corpus slice and its reference grading: once per run (tests/grading_runs.py)
ASSIGNMENTS = {"ps1_threshold_metrics": {}, "ps2_roc_auc": {}}
CONFIG = {"assignments": {n: {"attempts_per_24h": 50} for n in ASSIGNMENTS}}


def _notebooks(corpus: Path, pattern: str = "*") -> list[tuple[str, str, bytes]]:
    """(student, assignment, notebook) of the students of the slice whose folder matches ``pattern``."""
    return [(nb.parent.parent.name, nb.parent.name, nb.read_bytes()) for nb in sorted(corpus.glob(f"{pattern}/*/*.ipynb"))]


def _upload_all(server: Server, codes: dict, notebooks, servers: list[Server] | None = None) -> dict[str, tuple[str, str]]:
    """Upload every notebook (alternating between ``servers``); accepted id -> (student, assignment)."""
    accepted = {}
    for i, (student, assignment, data) in enumerate(notebooks):
        target = (servers or [server])[i % len(servers or [server])]
        with target.client(codes[student]) as c:
            r = submit(c, assignment, data)
        if r.status_code == 202:
            accepted[r.json()["id"]] = (student, assignment)
        else:  # the service refuses what is not a readable notebook; the batch grades it 0
            assert r.status_code == 400, r.text
    return accepted


def _rows(url: str) -> list:
    eng = sa.create_engine(Postgres.engine_url(url))
    try:
        with eng.connect() as con:
            return con.execute(sa.text("SELECT id, student_id, assignment, status, tries, graded_by, error "
                                       "FROM service_submissions")).all()
    finally:
        eng.dispose()


def _graded(url: str) -> int:
    try:
        return sum(1 for r in _rows(url) if r.status == "graded")
    except sa.exc.DBAPIError:
        return 0


def _wait_in_gradebook(url: str, n: int, timeout: float = 180) -> None:
    """The API says ``graded`` once a result is recorded; the gradebook follows when the counting attempt is
    settled, a moment later (and at the next start if the process stops in between): wait for its ``n`` rows."""
    deadline = time.monotonic() + timeout
    while committed(url) < n:
        assert time.monotonic() < deadline, f"the gradebook holds {committed(url)} of {n} results after {timeout} s"
        time.sleep(0.1)


def _assert_matches_reference(url: str, accepted: dict, reference: dict) -> None:
    pairs = set(accepted.values())
    assert len(pairs) == len(accepted), "one attempt per student and assignment in these tests"
    snap = snapshot(url)
    want_grades = {k: v for k, v in reference["grades"].items() if (k[0], k[1]) in pairs}
    assert snap["ledger"] == {k: v for k, v in reference["ledger"].items() if k in pairs}
    assert snap["grades"] == want_grades and snap["n_grades"] == len(want_grades)
    assert snap["n_submissions"] == len(pairs)


def _start(tmp_path: Path, postgres, kind: str, name: str, *extra: str, corpus: Path):
    data = tmp_path / name
    url = postgres.url(f"svc_{name}") if kind == "postgresql" else None
    students = sorted({p.name for p in corpus.iterdir() if p.is_dir()})
    codes = make_course(data, students, db=url, config=CONFIG)
    db_url = url or f"sqlite:///{data / 'gradebook.db'}"
    return data, url, db_url, codes


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_sigkill_while_grading_and_restart(kind, corpus, reference, tmp_path, request):
    postgres = request.getfixturevalue("postgres") if kind == "postgresql" else None
    data, url, db_url, codes = _start(tmp_path, postgres, kind, f"kill_{kind}", corpus=corpus)
    server = Server(data, "--jobs", "2", "--lease", "4", db=url).start()
    try:
        # one copy of each notebook of the slice (12): enough to kill the service with some graded, two in
        # flight and the rest queued
        accepted = _upload_all(server, codes, _notebooks(corpus, "*_0"))
        deadline = time.monotonic() + 180
        while _graded(db_url) < 3:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        server.kill()  # in the middle of grading: some graded, some claimed, some queued
        graded_at_kill = _graded(db_url)
        assert graded_at_kill < len(accepted), "killed too late to test anything"
        server.start()
        with server.client(codes["instructor"]) as c:
            docs = wait_done(c, list(accepted))
        _wait_in_gradebook(db_url, len(accepted))
    finally:
        server.stop()
    assert {d["status"] for d in docs.values()} == {"graded"}
    rows = _rows(db_url)
    assert len(rows) == len(accepted) and all(r.graded_by for r in rows)
    assert max(r.tries for r in rows) == 2  # the ones in flight at the kill were claimed again, once
    _assert_matches_reference(db_url, accepted, reference)


def test_two_service_processes_on_one_postgresql_one_grading_on_dask(corpus, reference, tmp_path, postgres):
    from distributed import LocalCluster

    data, url, db_url, codes = _start(tmp_path, postgres, "postgresql", "two", corpus=corpus)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      host="127.0.0.1") as cluster:
        local = Server(data, "--jobs", "1", db=url).start()
        dask = Server(data, "--scheduler", cluster.scheduler_address, db=url).start()
        try:
            # one copy of each notebook of the slice (12), uploaded to each process in turn: each is woken by its own
            # uploads and claims from the shared queue (the whole slice, 24, showed nothing more)
            accepted = _upload_all(local, codes, _notebooks(corpus, "*_0"), servers=[local, dask])
            with dask.client(codes["instructor"]) as c:
                docs = wait_done(c, list(accepted))
            _wait_in_gradebook(db_url, len(accepted))
        finally:
            local.stop()
            dask.stop()
    assert {d["status"] for d in docs.values()} == {"graded"}
    rows = _rows(db_url)
    assert [r.tries for r in rows] == [1] * len(rows)  # no submission was claimed twice
    assert len({r.graded_by for r in rows}) == 2  # both processes graded
    _assert_matches_reference(db_url, accepted, reference)
    assert "Dask 集群" in dask.log.read_text()


def test_grading_that_keeps_failing_ends_failed_with_the_reason(tmp_path):
    """The instructor reads the reason (the scratch folder's path among it); the student that the grading system
    failed, without it."""
    from tests.service.server import notebook_bytes
    import make_corpus

    from autograder.service.queue import STUDENT_SYSTEM_FAILED, SYSTEM_FAILED

    data = tmp_path / "failing"
    codes = make_course(data, ["s1"], config=CONFIG)
    not_a_folder = tmp_path / "scratch-is-a-file"
    not_a_folder.write_text("")
    server = Server(data, "--jobs", "1", "--scratch", str(not_a_folder)).start()
    try:
        with server.client(codes["s1"]) as c:
            sid = submit(c, "ps1_threshold_metrics", notebook_bytes(make_corpus.solution("ps1_threshold_metrics"))).json()["id"]
            doc = wait_done(c, [sid], timeout=120)[sid]
        with server.client(codes["instructor"]) as c:
            full = c.get(f"/api/v1/submissions/{sid}").json()["error"]
    finally:
        server.stop()
    assert doc["status"] == "failed" and doc["score"] is None
    assert full.startswith(SYSTEM_FAILED) and "临时目录" in full and str(not_a_folder) in full
    assert doc["error"] == STUDENT_SYSTEM_FAILED
    assert "重试" in server.log.read_text()  # the pool's retries came first
