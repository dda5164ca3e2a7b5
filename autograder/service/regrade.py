"""Regrading on an instructor's request: one submission, one student's attempts, or a whole assignment.

A regrade puts graded (or failed) submissions back into the queue (``queued``, tries reset); the grading
loop grades them again like new uploads and the counting attempt is settled again afterwards, so the
gradebook follows (for example after a corrected hidden test and a restart of the service).  Submissions
still queued or being graded are left alone: they are graded anyway.  A submission whose regrade fails keeps
its previous result (:func:`.queue.finish_failed`) and counts as ``failed`` in the progress.  Each request is recorded in
``service_regrades`` with the submissions it put back, so its progress can be shown.
"""

from __future__ import annotations

import json
import secrets
import time
from dataclasses import dataclass

import sqlalchemy as sa

from .database import REGRADES as R
from .database import SUBMISSIONS as S
from .database import Database


@dataclass(frozen=True)
class Progress:
    """How far a regrade is: ``done`` of ``total`` graded again (``failed`` of them could not be graded)."""

    id: str
    assignment: str
    student_id: str | None
    requested_at: float
    total: int
    done: int
    failed: int

    @property
    def finished(self) -> bool:
        return self.done >= self.total


def request(db: Database, assignment: str, by: str, *, student: str | None = None, submission_id: str | None = None) -> Progress:
    """Put the finished submissions of ``assignment`` (of ``student``, or the one ``submission_id``) back into the queue."""
    where = (S.c.assignment == assignment) & S.c.status.in_(("graded", "failed"))
    if student is not None:
        where = where & (S.c.student_id == student)
    if submission_id is not None:
        where = where & (S.c.id == submission_id)
    now = time.time()
    rid = secrets.token_urlsafe(12)
    with db.write() as con:
        ids = con.execute(sa.select(S.c.id).where(where)).scalars().all()
        if ids:
            con.execute(sa.update(S).where(S.c.id.in_(ids)).values(status="queued", tries=0, claimed_by=None,
                                                                   lease_until=None, started_at=None, error=None,
                                                                   failure=None))
        con.execute(sa.insert(R).values(id=rid, assignment=assignment, student_id=student, submission_ids=json.dumps(ids),
                                        requested_at=now, requested_by=by))
    return Progress(rid, assignment, student, now, len(ids), 0, 0)


def _progress(con: sa.Connection, row) -> Progress:
    ids = json.loads(row.submission_ids)
    done = failed = 0
    for start in range(0, len(ids), 500):
        chunk = ids[start:start + 500]
        rows = con.execute(sa.select(S.c.failure).where(S.c.id.in_(chunk) & S.c.status.in_(("graded", "failed"))
                                                      & (S.c.finished_at >= row.requested_at))).scalars().all()
        done += len(rows)
        failed += sum(1 for failure in rows if failure is not None)  # (a regrade that failed keeps the previous result, graded)
    return Progress(row.id, row.assignment, row.student_id, row.requested_at, len(ids), done, failed)


def latest(db: Database, assignment: str, student: str | None = None) -> Progress | None:
    """The progress of the most recent regrade of ``assignment`` (a whole-assignment one, or ``student``'s)."""
    cond = (R.c.assignment == assignment) & (R.c.student_id.is_(None) if student is None else R.c.student_id == student)
    with db.read() as con:
        row = con.execute(sa.select(R).where(cond).order_by(R.c.requested_at.desc()).limit(1)).first()
        return None if row is None else _progress(con, row)
