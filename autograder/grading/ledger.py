"""The "done" ledger: exactly-once recording of grades in the gradebook database.

Table ``autograder_done`` lives in the same database as nbgrader's gradebook, one row per
(student, assignment) holding the fingerprint (hash of grader version, assignment source and the
submitted bytes) and the full result JSON.  A submission's nbgrader scores, its comment and its ledger
row are written in ONE transaction (:func:`record`), so after a crash (SIGKILL at any point) the ledger
says exactly which submissions are in the gradebook: a rerun skips those whose fingerprint matches and
regrades the rest.  Re-recording a submission overwrites its grade rows (nbgrader keeps one row per
grade cell), so nothing is ever doubled.

The trusted parent is the only writer; transient database errors (SQLite "database is locked", a
PostgreSQL restart) are retried with back-off for ``wait`` seconds (:func:`with_retry`).
"""

from __future__ import annotations

import json
import time
from typing import Callable, TypeVar

import sqlalchemy as sa
from sqlalchemy.exc import DBAPIError, OperationalError

from . import nbgrader_glue
from .engine import SubmissionResult
from .specs import Assignment

T = TypeVar("T")
META = sa.MetaData()
DONE = sa.Table(
    "autograder_done", META,
    sa.Column("student_id", sa.String(128), primary_key=True),
    sa.Column("assignment", sa.String(128), primary_key=True),
    sa.Column("fingerprint", sa.String(64), nullable=False),
    sa.Column("score", sa.Float, nullable=False),
    sa.Column("max_score", sa.Float, nullable=False),
    sa.Column("result_json", sa.Text, nullable=False),
    sa.Column("graded_at", sa.Float, nullable=False),
)


class DatabaseUnavailable(RuntimeError):
    """The gradebook stayed unreachable for longer than the allowed wait."""


def ensure_table(engine: sa.engine.Engine) -> None:
    META.create_all(engine, checkfirst=True)


def fingerprints(engine: sa.engine.Engine, assignments: list[str]) -> dict[tuple[str, str], str]:
    """(student, assignment) -> fingerprint of every committed submission."""
    with engine.connect() as con:
        rows = con.execute(sa.select(DONE.c.student_id, DONE.c.assignment, DONE.c.fingerprint)
                           .where(DONE.c.assignment.in_(assignments))).all()
    return {(r[0], r[1]): r[2] for r in rows}


def results(engine: sa.engine.Engine, assignments: list[str]) -> list[dict]:
    """Result JSON of every committed submission of these assignments."""
    with engine.connect() as con:
        rows = con.execute(sa.select(DONE.c.result_json).where(DONE.c.assignment.in_(assignments))
                           .order_by(DONE.c.student_id, DONE.c.assignment)).all()
    return [json.loads(r[0]) for r in rows]


def record(gb, assignment: Assignment, result: SubmissionResult, comment: str) -> None:
    """nbgrader scores + comment + ledger row, committed together."""
    data = result.to_json()

    def mark(session) -> None:
        key = (DONE.c.student_id == result.student) & (DONE.c.assignment == result.assignment)
        session.execute(sa.delete(DONE).where(key))
        session.execute(sa.insert(DONE).values(student_id=result.student, assignment=result.assignment,
                                               fingerprint=result.fingerprint, score=result.score,
                                               max_score=result.max_score,
                                               result_json=json.dumps(data, ensure_ascii=False), graded_at=time.time()))

    nbgrader_glue.record(gb, assignment, result, comment, before_commit=mark)


def transient(exc: BaseException) -> bool:
    """A database error worth retrying (lost connection, locked database, server restarting)."""
    if isinstance(exc, OperationalError):
        return True
    return isinstance(exc, DBAPIError) and bool(getattr(exc, "connection_invalidated", False))


def _transient_chain(exc: BaseException | None) -> bool:
    """Also look behind wrappers: nbgrader turns database errors into ``InvalidEntry``."""
    seen = 0
    while exc is not None and seen < 10:
        if transient(exc):
            return True
        exc = exc.__cause__ or exc.__context__
        seen += 1
    return False


def with_retry(fn: Callable[[], T], *, wait: float, log: Callable[[str], None], what: str,
               reset: Callable[[], None] | None = None) -> T:
    """Run ``fn``; on a transient database error roll back, wait (1, 2, 4 ... s) and retry for ``wait`` s."""
    deadline = time.monotonic() + wait
    delay = 0.5
    announced = False
    while True:
        try:
            out = fn()
            if announced:
                log(f"成绩库已恢复，继续{what}")
            return out
        except Exception as exc:  # noqa: BLE001 - classified below
            if not _transient_chain(exc):
                raise
            if reset is not None:
                try:
                    reset()
                except Exception:  # noqa: BLE001 - the database is down; the next attempt will tell
                    pass
            if time.monotonic() + delay > deadline:
                raise DatabaseUnavailable(f"成绩库在 {wait:g} 秒内一直不可用（{what}）：{str(exc).splitlines()[0][:300]}") from None
            if not announced:
                log(f"警告：成绩库暂时不可用（{str(exc).splitlines()[0][:200]}），{what}将重试，最多等待 {wait:g} 秒")
                announced = True
            time.sleep(delay)
            delay = min(delay * 2, 8.0)
