"""Grade passback: the durable queue of :mod:`..outbox` posted to the LMSs, exactly once per score change.

How "exactly once" is reached against an LMS that cannot take part in our transactions:

* **one row per (platform, course, person, assignment)** holds the LATEST counting score: :func:`..outbox.enqueue` runs
  in the same transaction as the change of the counting attempt (``service_counting``), so a score change and
  its passback are recorded together or not at all; a newer change overwrites the row (version + 1) instead of
  queueing a second post, so a burst of attempts posts the final score, not every intermediate one;
* **the score carries the time of the change** (``timestamp``, fixed when enqueued): AGS platforms keep the
  score with the latest timestamp and a repeated post of the same timestamp changes nothing, so the one case
  we cannot rule out (the platform stored the score, then the service was killed before it recorded that) is
  a harmless repeat of the same score, and a late retry can never overwrite a newer score;
* **a claim with a lease** (like the grading queue): a killed service's claims expire and another start takes
  them; a row is marked sent only if its version did not change while it was being posted.

Retries: no connection, timeouts, 429 and 5xx wait with exponential backoff (``Retry-After`` honoured) up to
:data:`MAX_TRIES`; other refusals fail at once.  Failed rows are listed (:func:`summary`) and can be retried.

A row is posted only while its LMS course is still a place for it (:meth:`Passback._place_gone`): bound, active,
to this worker's course, with the student an active member there.  A binding moved to another course or
removed, or a student gone from that LMS course since the score was queued, fails the row with the reason.
"""

from __future__ import annotations

import random
import threading
import time
from typing import Callable

import httpx
import sqlalchemy as sa

from ..courses import UPGRADED
from ..database import Database
from ..roles import Role
from . import bindings, registry
from .ags import SCOPE_LINEITEM, SCOPE_SCORE, AgsError, Tokens, find_or_create_lineitem, post_score
from .keys import ToolKeys
from ..lms_tables import CONTEXTS, MEMBERSHIPS, PASSBACK

MAX_TRIES = 12
BACKOFF_BASE = 2.0
BACKOFF_MAX = 600.0
LEASE = 60.0
BATCH = 20


def backoff(tries: int) -> float:
    """Seconds before try ``tries + 1``: 2, 4, 8 ... up to :data:`BACKOFF_MAX`, with 20 % jitter."""
    return min(BACKOFF_MAX, BACKOFF_BASE ** tries) * random.uniform(0.8, 1.2)  # noqa: S311 (jitter, not secrecy)


class Passback:
    """Posts the queued scores (:meth:`run_once`; :meth:`start` runs it in a thread every ``poll`` seconds)."""

    def __init__(self, db: Database, site: Database, keys: ToolKeys, instance: str, *, course_id: str = UPGRADED.id,
                 titles: Callable[[str], str] = lambda a: a, feedback_url: Callable[[str], str | None] = lambda sid: None,
                 client: httpx.Client | None = None, clock=time.time, poll: float = 1.0,
                 log: Callable[[str], None] = lambda m: None) -> None:
        """``db``: the course's database (its queue); ``site``: the site's (the registered platforms and bindings);
        ``course_id``: the course whose queue this is."""
        self.db, self.site, self.instance, self.titles, self.feedback_url = db, site, instance, titles, feedback_url
        self.course_id = course_id
        self.client = client or httpx.Client(timeout=20.0)
        self.tokens = Tokens(keys, self.client, clock)
        self.clock, self.poll, self.log = clock, poll, log
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None

    def release_orphans(self) -> None:
        """At start with SQLite (one process per data folder): claims of an earlier, killed process are free now."""
        with self.db.write() as con:
            con.execute(sa.update(PASSBACK).where(PASSBACK.c.claimed_by.is_not(None)).values(claimed_by=None, lease_until=None))

    def _claim(self, now: float) -> list:
        free = PASSBACK.c.claimed_by.is_(None) | (PASSBACK.c.lease_until < now)
        with self.db.write() as con:
            q = sa.select(PASSBACK).where((PASSBACK.c.status == "pending") & (PASSBACK.c.next_at <= now) & free) \
                .order_by(PASSBACK.c.next_at).limit(BATCH)
            if not self.db.sqlite:
                q = q.with_for_update(skip_locked=True)
            rows = con.execute(q).all()
            if rows:
                con.execute(sa.update(PASSBACK).where(PASSBACK.c.id.in_([r.id for r in rows]))
                            .values(claimed_by=self.instance, lease_until=now + LEASE))
        return rows

    def run_once(self) -> int:
        """Post every due score once; the number posted."""
        sent = 0
        for row in self._claim(self.clock()):
            try:
                self._post(row)
            except AgsError as exc:
                self._failed(row, exc)
            else:
                sent += self._done(row)
        return sent

    def _place_gone(self, row, ctx) -> str | None:
        """Why ``row``'s LMS course (``ctx``, its ``lti_contexts`` row) takes no more scores from this course, or
        None: it is bound, active, to this course, and the student is an active member there."""
        found = bindings.find(self.site, row.platform_id, ctx.deployment_id, row.context_id) if ctx is not None else None
        if found is None or not found.active or found.course_id != self.course_id:
            return "课程平台上的这门课已不再绑定到本课程，成绩不再回传到那里"
        with self.db.read() as con:
            member = con.execute(sa.select(MEMBERSHIPS.c.active).where(
                (MEMBERSHIPS.c.platform_id == row.platform_id) & (MEMBERSHIPS.c.context_id == row.context_id)
                & (MEMBERSHIPS.c.sub == row.sub) & (MEMBERSHIPS.c.role == Role.STUDENT.value))).first()
        if member is None or not member.active:
            return "这名学生已不在课程平台上的这门课中，成绩不再回传到那里"
        return None

    def _post(self, row) -> None:
        platform = registry.get(self.site, row.platform_id)
        if platform is None:
            raise AgsError("课程平台已被移除", False)
        with self.db.read() as con:
            ctx = con.execute(sa.select(CONTEXTS).where((CONTEXTS.c.platform_id == row.platform_id)
                                                        & (CONTEXTS.c.context_id == row.context_id))).first()
        gone = self._place_gone(row, ctx)
        if gone is not None:
            raise AgsError(gone, False)
        token = self.tokens.get(platform, [SCOPE_LINEITEM, SCOPE_SCORE])
        try:
            lineitem = find_or_create_lineitem(self.db, self.client, token, platform, row.context_id,
                                               ctx.lineitems_url if ctx is not None else "", row.assignment,
                                               self.titles(row.assignment), row.max_score)
            score = {"userId": row.sub, "scoreGiven": row.score, "scoreMaximum": row.max_score,
                     "activityProgress": "Completed", "gradingProgress": "FullyGraded", "timestamp": row.timestamp}
            link = self.feedback_url(row.submission_id)
            score["comment"] = f"自动评分：{row.score:g}/{row.max_score:g}" + (f"；评分详情：{link}" if link else "")
            post_score(self.client, token, lineitem, score)
        except AgsError as exc:
            if "HTTP 401" in exc.message:
                self.tokens.forget(platform)  # revoked or expired early: a new token on the next try
            raise

    def _done(self, row) -> int:
        with self.db.write() as con:
            done = con.execute(sa.update(PASSBACK).where((PASSBACK.c.id == row.id) & (PASSBACK.c.version == row.version))
                               .values(status="sent", sent_at=self.clock(), sent_version=row.version, claimed_by=None,
                                       lease_until=None, error=None)).rowcount
            if not done:  # a newer score arrived while this one was posted: it stays pending
                con.execute(sa.update(PASSBACK).where(PASSBACK.c.id == row.id).values(claimed_by=None, lease_until=None))
        return 1

    def _failed(self, row, exc: AgsError) -> None:
        tries = row.tries + 1
        give_up = not exc.transient or tries >= MAX_TRIES
        wait = max(backoff(tries), exc.retry_after or 0.0)
        with self.db.write() as con:
            con.execute(sa.update(PASSBACK).where((PASSBACK.c.id == row.id) & (PASSBACK.c.version == row.version))
                        .values(status="failed" if give_up else "pending", tries=tries, next_at=self.clock() + wait,
                                error=exc.message[:1000], claimed_by=None, lease_until=None))
            con.execute(sa.update(PASSBACK).where(PASSBACK.c.id == row.id).values(claimed_by=None, lease_until=None))
        self.log(f"autograder: 成绩回传 {row.student_id}/{row.assignment}：{exc.message}" + ("（放弃）" if give_up else f"（{wait:.0f} 秒后重试）"))

    # ---- the thread

    def wake(self) -> None:
        self._wake.set()

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self.run_once()
            except Exception as exc:  # noqa: BLE001 (a database hiccup must not end passback for the process's life)
                self.log(f"autograder: 成绩回传出错：{type(exc).__name__}: {exc}")
            self._wake.wait(self.poll)
            self._wake.clear()

    def start(self) -> "Passback":
        self._thread = threading.Thread(target=self._loop, name="lti-passback", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=30)


def retry_failed(db: Database, now: float | None = None) -> int:
    """Put every failed passback back in the queue; how many."""
    with db.write() as con:
        return con.execute(sa.update(PASSBACK).where(PASSBACK.c.status == "failed")
                           .values(status="pending", tries=0, next_at=now or time.time(), error=None)).rowcount


def summary(db: Database) -> dict[str, int]:
    with db.read() as con:
        rows = con.execute(sa.select(PASSBACK.c.status, sa.func.count()).group_by(PASSBACK.c.status)).all()
    return {"pending": 0, "sent": 0, "failed": 0, **{r[0]: r[1] for r in rows}}


def for_course(db: Database, site: Database, data, titles: dict[str, str], feedback_base: str,
               log: Callable[[str], None], course_id: str = UPGRADED.id) -> Passback:
    """The passback worker of course ``course_id`` in an ``autograder serve`` process (its claims of a killed
    predecessor freed on SQLite); ``feedback_base``: the course's public address, which the grade comment links to."""
    import os
    import socket

    worker = Passback(db, site, ToolKeys(data), f"{socket.gethostname()}:{os.getpid()}", course_id=course_id,
                      titles=lambda a: titles.get(a, a),
                      feedback_url=lambda sid: f"{feedback_base}/submissions/{sid}", log=log)
    if db.sqlite:
        worker.release_orphans()
    return worker
