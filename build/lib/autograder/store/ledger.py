"""The gradebook with its exactly-once ledger: the ONE object that writes grades.

Table ``autograder_done`` lives in the same database as nbgrader's gradebook, one row per
(student, assignment) holding the fingerprint (hash of what decides the grade: grader logic,
assignment source and the submitted bytes) and the full result JSON.  :meth:`Store.record` writes a
submission's nbgrader scores, its comment and its ledger row in ONE transaction, so after a crash
(SIGKILL at any point) the ledger says exactly which submissions are in the gradebook: a rerun skips
those whose fingerprint matches and regrades the rest.  Re-recording a submission overwrites its grade
rows (nbgrader keeps one row per grade cell), so nothing is ever doubled.

Transient database errors (SQLite "database is locked", a PostgreSQL restart) are retried with
back-off for ``wait`` seconds by every method; after that :class:`DatabaseUnavailable` is raised.
"""

from __future__ import annotations

import json
import time
from typing import Callable, TypeVar

import sqlalchemy as sa
from sqlalchemy.exc import DBAPIError, OperationalError

from ..model import SubmissionResult
from . import gradebook

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


class Store:
    """The nbgrader gradebook at ``db_url`` and its ledger table; close it with :meth:`close`.

    Parameters
    ----------
    db_url : str
        SQLAlchemy URL of the gradebook (SQLite or PostgreSQL).
    wait : float
        Seconds to keep retrying while the database is unavailable.
    log : callable
        Receives one Chinese line when the database goes away and when it comes back.
    """

    def __init__(self, db_url: str, *, wait: float, log: Callable[[str], None]) -> None:
        self.wait = wait
        self.log = log
        self._gb = None
        self._gb = self._retry(lambda: gradebook.open_gradebook(db_url), "打开成绩库")
        self._retry(lambda: META.create_all(self._gb.engine, checkfirst=True), "建立评分记录表")

    def _retry(self, fn: Callable[[], T], what: str) -> T:
        """Run ``fn``; on a transient database error roll back, wait (0.5, 1, 2 ... 8 s) and retry for ``wait`` s."""
        deadline = time.monotonic() + self.wait
        delay = 0.5
        announced = False
        while True:
            try:
                out = fn()
                if announced:
                    self.log(f"成绩库已恢复，继续{what}")
                return out
            except Exception as exc:  # noqa: BLE001 - classified below
                if not _transient_chain(exc):
                    raise
                if self._gb is not None:
                    try:
                        self._gb.db.rollback()
                    except Exception:  # noqa: BLE001 - the database is down; the next attempt will tell
                        pass
                if time.monotonic() + delay > deadline:
                    first = str(exc).splitlines()[0][:300] if str(exc) else type(exc).__name__
                    raise DatabaseUnavailable(f"成绩库在 {self.wait:g} 秒内一直不可用（{what}）：{first}") from None
                if not announced:
                    self.log(f"警告：成绩库暂时不可用（{str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__}），"
                             f"{what}将重试，最多等待 {self.wait:g} 秒")
                    announced = True
                time.sleep(delay)
                delay = min(delay * 2, 8.0)

    def fingerprints(self, assignments: list[str]) -> dict[tuple[str, str], str]:
        """(student, assignment) -> fingerprint of every committed submission."""
        def read() -> dict[tuple[str, str], str]:
            with self._gb.engine.connect() as con:
                rows = con.execute(sa.select(DONE.c.student_id, DONE.c.assignment, DONE.c.fingerprint)
                                   .where(DONE.c.assignment.in_(assignments))).all()
            return {(r[0], r[1]): r[2] for r in rows}

        return self._retry(read, "读取评分记录")

    def results(self, assignments: list[str]) -> list[SubmissionResult]:
        """Every committed result of these assignments, by student then assignment."""
        def read() -> list[str]:
            with self._gb.engine.connect() as con:
                return [r[0] for r in con.execute(sa.select(DONE.c.result_json).where(DONE.c.assignment.in_(assignments))
                                                  .order_by(DONE.c.student_id, DONE.c.assignment)).all()]

        return [SubmissionResult.from_json(json.loads(text)) for text in self._retry(read, "读取评分记录")]

    def record(self, result: SubmissionResult, notebook: str, comment: str) -> None:
        """nbgrader scores + comment + ledger row of one submission, committed together."""
        text = json.dumps(result.to_json(), ensure_ascii=False)

        def mark(session) -> None:
            key = (DONE.c.student_id == result.student) & (DONE.c.assignment == result.assignment)
            session.execute(sa.delete(DONE).where(key))
            session.execute(sa.insert(DONE).values(student_id=result.student, assignment=result.assignment,
                                                   fingerprint=result.fingerprint, score=result.score,
                                                   max_score=result.max_score, result_json=text, graded_at=time.time()))

        self._retry(lambda: gradebook.record(self._gb, notebook, result, comment, before_commit=mark),
                    f"写入 {result.student}/{result.assignment} 的成绩")

    def export_csv(self, path) -> None:
        """nbgrader's CSV export of the whole gradebook."""
        self._retry(lambda: gradebook.export_csv(self._gb, path), "导出 grades.csv")

    def close(self) -> None:
        gb, self._gb = self._gb, None
        if gb is not None:
            try:
                gb.close()
            except Exception:  # noqa: BLE001 - closing a connection to a database that went away
                pass
