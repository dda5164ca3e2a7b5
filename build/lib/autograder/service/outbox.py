"""The grade outbox: in the transaction that changes a counting score, a row for every LMS line it must reach.

Deciding where a score goes is the course's own data - which LMS people an account is, which bound LMS courses
they are active members of, where each assignment is linked (:mod:`.lms_tables`) - so it happens here, in the
core, inside the caller's transaction (:func:`.counting.choose_in`); posting the rows to the LMSs is the LTI
layer's (:mod:`.lti.passback`).
"""

from __future__ import annotations

import time
from datetime import datetime, timezone

import sqlalchemy as sa

from .database import ACCOUNTS
from .lms_tables import CONTEXTS, LINEITEMS, LINKS, MEMBERSHIPS, PASSBACK, USERS
from .roles import Role


def iso_ms(t: float) -> str:
    return datetime.fromtimestamp(t, timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def enqueue(con: sa.Connection, student: str, assignment: str, submission_id: str, score: float, max_score: float,
            now: float | None = None) -> int:
    """Queue the new counting score of ``student`` for every LMS course they are an active member of where
    ``assignment`` is linked (inside the caller's transaction, in the course's database); the number of rows
    queued (0 for a student who never came through LTI, or when each line already holds this submission's score:
    a settle that changed nothing the LMS shows posts nothing).

    The line's own row is the comparison, not the counting row: a regrade changes the counting submission's
    score in place, and that change must go over."""
    now = now or time.time()
    places = con.execute(
        sa.select(MEMBERSHIPS.c.platform_id, MEMBERSHIPS.c.context_id, MEMBERSHIPS.c.sub)
        .join(USERS, (USERS.c.platform_id == MEMBERSHIPS.c.platform_id) & (USERS.c.sub == MEMBERSHIPS.c.sub)
              & (USERS.c.role == MEMBERSHIPS.c.role))
        .join(ACCOUNTS, ACCOUNTS.c.id == USERS.c.account_id)
        .join(LINKS, (LINKS.c.platform_id == MEMBERSHIPS.c.platform_id) & (LINKS.c.context_id == MEMBERSHIPS.c.context_id)
              & (LINKS.c.assignment == assignment))
        .where((ACCOUNTS.c.login == student) & (ACCOUNTS.c.role == Role.STUDENT.value)
               & (MEMBERSHIPS.c.role == Role.STUDENT.value) & MEMBERSHIPS.c.active)).all()
    queued = 0
    for p in places:
        ctx = con.execute(sa.select(CONTEXTS.c.lineitems_url).where((CONTEXTS.c.platform_id == p.platform_id)
                                                                    & (CONTEXTS.c.context_id == p.context_id))).first()
        known = con.execute(sa.select(LINEITEMS.c.url).where((LINEITEMS.c.platform_id == p.platform_id) & (LINEITEMS.c.context_id == p.context_id)
                                                             & (LINEITEMS.c.assignment == assignment))).first()
        if (ctx is None or not ctx.lineitems_url) and known is None:
            continue  # the LMS course did not grant grade passback
        line = (PASSBACK.c.platform_id == p.platform_id) & (PASSBACK.c.context_id == p.context_id) \
            & (PASSBACK.c.sub == p.sub) & (PASSBACK.c.assignment == assignment)
        values = dict(student_id=student, submission_id=submission_id, score=score, max_score=max_score, timestamp=iso_ms(now),
                      status="pending", tries=0, next_at=now, error=None)
        row = con.execute(sa.select(PASSBACK.c.id, PASSBACK.c.version, PASSBACK.c.submission_id, PASSBACK.c.score,
                                    PASSBACK.c.max_score).where(line)).first()
        if row is not None and (row.submission_id, row.score, row.max_score) == (submission_id, score, max_score):
            continue  # the line already holds this score (settle rewrites the gradebook more often than the score changes)
        if row is None:
            con.execute(sa.insert(PASSBACK).values(platform_id=p.platform_id, context_id=p.context_id, sub=p.sub,
                                                   assignment=assignment, version=1, **values))
        else:
            con.execute(sa.update(PASSBACK).where(PASSBACK.c.id == row.id).values(version=row.version + 1, **values))
        queued += 1
    return queued
