"""The submission queue, in the database: claim, renew, finish - each a short transaction.

A submission is claimed by one service process (``claimed_by``) for ``lease`` seconds, renewed while it is
being graded; a claim whose lease ran out (its process was killed) can be claimed again.  On PostgreSQL the
claim reads with ``FOR UPDATE SKIP LOCKED``, so processes claiming at the same moment take different rows;
on SQLite the claim is one ``BEGIN IMMEDIATE`` transaction.  Finishing is guarded by the claim (``status =
'grading' AND claimed_by = me``): a process that lost its lease cannot record a result over another's.  Recording a result also chooses
the counting attempt and queues its grade passback, in the same transaction (:func:`.counting.choose_in`).

Every claim counts a try; a submission claimed :data:`MAX_TRIES` times without a result (its grading kept
killing the service, or the service kept being killed while grading it) ends ``failed`` with that reason.

A submission that had a result before (an instructor's regrade put it back into the queue) never loses it to
a failure of the grading: it goes back to ``graded`` with its previous result, which keeps counting, and the
failure recorded beside it (:func:`finish_failed`), shown with that result (:data:`REGRADE_FAILED`) and counted in
the regrade's progress.  A failure of the grading system is not the student's: it must not lower (or raise) a grade.

A failure is stored as its kind (:class:`.failures.Failure`, the ``failure`` column) and the kind's detail (the
``error`` column).  What a reader sees is rendered from them (:func:`error_for`): an instructor the whole reason;
a student the reasons written for them (:data:`FILE_LOST`, :data:`NOT_CONFIGURED`, :data:`GAVE_UP`) as they are,
and in place of the grading system's own failure (:data:`SYSTEM_FAILED` and the pool's error: a worker's host
name, a grader's exception, a sandbox's or a scratch folder's details) :data:`STUDENT_SYSTEM_FAILED`, or on an
attempt that keeps its previous result :data:`STUDENT_REGRADE_FAILED`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

import sqlalchemy as sa

from . import counting
from .database import SUBMISSIONS as S
from .database import Database
from .failures import Failure

MAX_TRIES = 3
# The reasons of the failures written for the student (:attr:`.Failure.told_to_students`), shown as they are.
GAVE_UP = "评分在完成之前反复中断（服务进程在评分这份提交时退出了 {n} 次），已放弃；请联系教师"
FILE_LOST = "提交的文件在服务器上丢失或已损坏，请重新提交"
NOT_CONFIGURED = "作业 {assignment} 已不在课程配置中，无法评分"
#: The start of the reason of the grading system's own failure (:attr:`.Failure.SYSTEM`); the pool's error
#: follows (it can name the worker's host, a sandbox's or a scratch folder's state, a grader's exception): for
#: instructors only.
SYSTEM_FAILED = "评分系统未能完成评分："
#: The note on an attempt whose regrade could not finish (it keeps its previous result).
REGRADE_FAILED = "重新评分没有完成（{reason}），这次提交保留并沿用上一次的评分结果"
#: What a student reads in place of a reason not written for them: a new attempt that could not be graded ...
STUDENT_SYSTEM_FAILED = ("评分系统出了故障，没能完成这次提交的评分；这不是你的代码的问题。故障的详细情况已经记录，"
                         "教师可以查看并为这次提交重新评分。这样因故障失败的提交，24 小时内最多有与每日次数上限"
                         "相同的次数不占用你的提交次数，剩余次数以作业页面上显示的为准；请稍后再提交，"
                         "如果仍然失败，请联系教师。")
#: ... and an attempt whose regrade could not finish.
STUDENT_REGRADE_FAILED = ("重新评分没有完成：评分系统出了故障（这不是你的代码的问题）。"
                          "这次提交保留并沿用上一次的评分结果，你不需要做什么。")


_REASONS: dict[Failure, Callable[[str | None], str]] = {
    Failure.GAVE_UP: lambda detail: GAVE_UP.format(n=detail),
    Failure.FILE_LOST: lambda detail: FILE_LOST,
    Failure.NOT_CONFIGURED: lambda detail: NOT_CONFIGURED.format(assignment=detail),
    Failure.SYSTEM: lambda detail: SYSTEM_FAILED + (detail or ""),
}


def error_for(status: str, failure: Failure | None, detail: str | None, *, instructor: bool) -> str | None:
    """What a finished submission row's failure says to its reader.

    Parameters
    ----------
    status
        The row's status: ``failed`` (no result), or ``graded`` (with a failure: it kept its previous result).
    failure, detail
        The row's ``failure`` and ``error`` columns (:class:`.failures.Failure`); None when there is none.
    instructor
        Whether an instructor reads it (then the whole reason, with the detail).

    Returns
    -------
    str or None
        The kind's reason, inside :data:`REGRADE_FAILED` on a ``graded`` row, for an instructor or when the
        kind's reason is written for the student (:attr:`.Failure.told_to_students`); else
        :data:`STUDENT_REGRADE_FAILED` on a ``graded`` row and :data:`STUDENT_SYSTEM_FAILED` on a failed one,
        neither naming the reason.
    """
    if failure is None:
        return None
    kept = status == "graded"
    if instructor or failure.told_to_students:
        reason = _REASONS[failure](detail)
        return REGRADE_FAILED.format(reason=reason) if kept else reason
    return STUDENT_REGRADE_FAILED if kept else STUDENT_SYSTEM_FAILED


def finish_failed(con: sa.Connection, where, failure: Failure, detail: str | None, now: float, table: sa.Table = S) -> int:
    """Record in ``con`` that grading the submission ``where`` selects failed with ``failure`` (its ``detail``, cut to
    2,000 characters): back to ``graded`` with its previous result (and that result's ``graded_at``) if it had one,
    else ``failed`` at ``now``; either way with the failure, its grading ended (``finished_at``) at ``now``; rows
    changed.  ``table``: the queue's (a check's never has a previous result)."""
    ended = dict(failure=failure, error=None if detail is None else detail[:2000], finished_at=now, claimed_by=None,
                 lease_until=None)
    done = con.execute(sa.update(table).where(where & table.c.result_json.isnot(None)).values(status="graded", **ended)).rowcount
    # (the row restored above no longer matches ``where``, which names its status)
    return done + con.execute(sa.update(table).where(where & table.c.result_json.is_(None)).values(
        status="failed", graded_at=now, **ended)).rowcount


@dataclass(frozen=True)
class Claim:
    id: str
    student_id: str
    assignment: str
    path: str
    sha256: str
    tries: int


class Queue:
    """Claims and results of service process ``instance`` in the queue ``table``: the submissions (default), or
    the checks before an attempt (:mod:`.checks`, whose results are recorded by :meth:`.checks.CheckQueue.done`)."""

    def __init__(self, db: Database, instance: str, lease: float, table: sa.Table = S) -> None:
        self.db, self.instance, self.lease, self.table = db, instance, lease, table

    def claim(self, now: float | None = None) -> Claim | None:
        """The oldest claimable submission, now claimed by this process (None if there is none)."""
        S = self.table
        while True:
            now = time.time() if now is None else now
            claimable = (S.c.status == "queued") | ((S.c.status == "grading") & (S.c.lease_until < now))
            query = sa.select(S.c.id, S.c.student_id, S.c.assignment, S.c.path, S.c.sha256, S.c.tries, S.c.status) \
                .where(claimable).order_by(S.c.created_at).limit(1)
            if not self.db.sqlite:
                query = query.with_for_update(skip_locked=True)
            with self.db.write() as con:
                row = con.execute(query).first()
                if row is None:
                    return None
                mine = (S.c.id == row.id) & (S.c.status == row.status)
                if row.tries >= MAX_TRIES:
                    finish_failed(con, mine, Failure.GAVE_UP, str(row.tries), now, S)
                    continue
                done = con.execute(sa.update(S).where(mine).values(
                    status="grading", claimed_by=self.instance, lease_until=now + self.lease, tries=row.tries + 1,
                    started_at=now)).rowcount
            if done == 1:
                return Claim(row.id, row.student_id, row.assignment, row.path, row.sha256, row.tries + 1)

    def _mine(self, submission_id: str | None = None):
        S = self.table
        cond = (S.c.status == "grading") & (S.c.claimed_by == self.instance)
        return cond if submission_id is None else cond & (S.c.id == submission_id)

    def renew(self) -> int:
        """Extend the lease of every submission this process is grading."""
        with self.db.write() as con:
            return con.execute(sa.update(self.table).where(self._mine()).values(lease_until=time.time() + self.lease)).rowcount

    def graded(self, submission_id: str, *, score: float, max_score: float, fingerprint: str, result_json: str,
               counts: str) -> bool:
        """Record the result and, in the same transaction, the pair's counting attempt under the rule ``counts``
        and its grade passback (:func:`.counting.choose_in`): the submission is never seen ``graded`` beside the
        previous counting score.  The gradebook copy follows (:func:`.counting.write_gradebook`).  False if this
        process no longer holds the claim (then nothing is written)."""
        with self.db.write() as con:
            pair = con.execute(sa.select(S.c.student_id, S.c.assignment).where(S.c.id == submission_id)).first()
            if pair is None:
                return False
            counting.lock_pair(self.db, con, pair.student_id, pair.assignment)
            now = time.time()
            if con.execute(sa.update(S).where(self._mine(submission_id)).values(
                    status="graded", score=score, max_score=max_score, fingerprint=fingerprint, result_json=result_json,
                    graded_at=now, finished_at=now, graded_by=self.instance, claimed_by=None, lease_until=None, settled=False,
                    error=None, failure=None)).rowcount != 1:
                return False
            counting.choose_in(con, pair.student_id, pair.assignment, counts, now)
            return True

    def failed(self, submission_id: str, failure: Failure, detail: str | None = None) -> bool:
        """Record that grading failed with ``failure`` and its ``detail`` (:func:`finish_failed`: a regraded
        submission keeps its previous result); False if this process no longer holds the claim."""
        with self.db.write() as con:
            return finish_failed(con, self._mine(submission_id), failure, detail, time.time(), self.table) == 1

    def release(self) -> int:
        """Give back this process's claims without counting the try (a graceful stop)."""
        S = self.table
        with self.db.write() as con:
            return con.execute(sa.update(S).where(self._mine()).values(
                status="queued", claimed_by=None, lease_until=None, tries=sa.func.max(S.c.tries - 1, 0)
                if self.db.sqlite else sa.func.greatest(S.c.tries - 1, 0))).rowcount

    def orphans_now(self) -> int:
        """Make every claim claimable at once (SQLite: the only service process starts, so no claim is alive)."""
        with self.db.write() as con:
            return con.execute(sa.update(self.table).where(self.table.c.status == "grading").values(lease_until=0.0)).rowcount
