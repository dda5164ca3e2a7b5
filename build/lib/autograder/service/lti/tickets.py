"""One-time tickets of the LTI flows, in the site's database (only their SHA-256 is stored).

* a **handoff** turns a verified launch into a session of one course on the tool's own site (two minutes).  It is
  bound to the browser that started the launch (the hash of its launch cookie): redeemed there, it signs in at
  once; anywhere else - the new window opened from an LMS frame, whose browser keeps the frame's launch cookie
  partitioned under the LMS's site, or a link someone else sent - it only shows whose session it would start,
  and needs that person's click on the tool's own page (:func:`peek`, then :func:`take`);
* a **held launch** keeps a verified launch on the server (one hour) while its person chooses on a page of the
  tool: an instructor's deep-linking choice, a teacher's request to bind their LMS course, a student's first
  link to the roster with an access code.  Its ticket travels in the page's form and works once, for its kind,
  and only from the browser that launched (its launch cookie): a ticket posted from another browser - a form
  on another site that makes a victim's browser link the poster's launch and sign in as it - is refused.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import time
from dataclasses import dataclass
from enum import Enum
from typing import Any

import sqlalchemy as sa

from ..database import Database
from . import registry
from .launch import Launch, LaunchRefused, browser_hash, launch_of
from ..lms_tables import HANDOFFS, PENDING

HANDOFF_SECONDS = 120
HOLD_SECONDS = 3600
MAX_TICKET = 100


class PendingKind(str, Enum):
    DEEP_LINK = "deep_link"
    BIND_REQUEST = "bind_request"
    LINK_ACCOUNT = "link_account"


@dataclass(frozen=True)
class Handoff:
    course_id: str
    account_id: int
    target: str
    same_browser: bool  # redeemed in the browser that launched


def _digest(ticket: str) -> str:
    return hashlib.sha256(ticket.encode()).hexdigest()


def handoff(site: Database, course_id: str, account_id: int, target: str, browser: str | None,
            now: float | None = None) -> str:
    """A ticket for a session of ``account_id`` in ``course_id``, bound to the launch cookie ``browser``."""
    now = now or time.time()
    ticket = secrets.token_urlsafe(32)
    with site.write() as con:
        con.execute(sa.delete(HANDOFFS).where(HANDOFFS.c.expires < now))
        con.execute(sa.insert(HANDOFFS).values(token=_digest(ticket), course_id=course_id, account_id=account_id,
                                               browser=browser_hash(browser or ""), target=target[:300],
                                               expires=now + HANDOFF_SECONDS))
    return ticket


def _handoff(row, browser: str | None) -> Handoff:
    same = browser is not None and secrets.compare_digest(row.browser, browser_hash(browser))
    return Handoff(row.course_id, row.account_id, row.target, same)


def peek(site: Database, ticket: str, browser: str | None, now: float | None = None) -> Handoff:
    """The handoff of ``ticket`` without using it (LaunchRefused when unknown, used or expired)."""
    if not ticket or len(ticket) > MAX_TICKET:
        raise LaunchRefused("这个链接已经用过或已过期：请回到课程平台重新打开作业")
    with site.read() as con:
        row = con.execute(sa.select(HANDOFFS).where(HANDOFFS.c.token == _digest(ticket))).first()
    if row is None or row.expires < (now or time.time()):
        raise LaunchRefused("这个链接已经用过或已过期：请回到课程平台重新打开作业")
    return _handoff(row, browser)


def take(site: Database, ticket: str, browser: str | None, now: float | None = None) -> Handoff:
    """The handoff of ``ticket``, used up (LaunchRefused when unknown, used or expired)."""
    if not ticket or len(ticket) > MAX_TICKET:
        raise LaunchRefused("这个链接已经用过或已过期：请回到课程平台重新打开作业")
    with site.write() as con:
        row = con.execute(sa.select(HANDOFFS).where(HANDOFFS.c.token == _digest(ticket))).first()
        if row is not None:
            con.execute(sa.delete(HANDOFFS).where(HANDOFFS.c.token == row.token))
    if row is None or row.expires < (now or time.time()):
        raise LaunchRefused("这个链接已经用过或已过期：请回到课程平台重新打开作业")
    return _handoff(row, browser)


def hold(site: Database, kind: PendingKind, launch: Launch, browser: str | None, now: float | None = None) -> str:
    """Keep a verified launch for a page's choice of ``kind``; the ticket for its form."""
    now = now or time.time()
    ticket = secrets.token_urlsafe(32)
    with site.write() as con:
        con.execute(sa.delete(PENDING).where(PENDING.c.expires < now))
        con.execute(sa.insert(PENDING).values(token=_digest(ticket), kind=kind.value, platform_id=launch.platform.id,
                                              claims=json.dumps(launch.claims, ensure_ascii=False),
                                              browser=browser_hash(browser or ""), expires=now + HOLD_SECONDS))
    return ticket


def held(site: Database, ticket: str, kind: PendingKind, browser: str | None, now: float | None = None, *,
         use: bool = True) -> Launch:
    """The launch held with ``ticket`` for ``kind``, posted from the browser whose launch cookie is ``browser``
    (``use``: once; LaunchRefused when unknown, used, expired, or posted from another browser)."""
    if not ticket or len(ticket) > MAX_TICKET:
        raise LaunchRefused("这个页面已过期或已用过：请回到课程平台重新打开")
    with site.write() as con:
        row = con.execute(sa.select(PENDING).where((PENDING.c.token == _digest(ticket)) & (PENDING.c.kind == kind.value))).first()
        if row is not None and (browser is None or not secrets.compare_digest(row.browser, browser_hash(browser))):
            raise LaunchRefused("这个页面不是在打开它的浏览器中提交的：请回到课程平台重新打开", 403)
        if row is not None and use:
            con.execute(sa.delete(PENDING).where(PENDING.c.token == row.token))
    platform = registry.get(site, row.platform_id) if row is not None else None
    if row is None or row.expires < (now or time.time()) or platform is None:
        raise LaunchRefused("这个页面已过期或已用过：请回到课程平台重新打开")
    claims: dict[str, Any] = json.loads(row.claims)
    return launch_of(platform, claims)
