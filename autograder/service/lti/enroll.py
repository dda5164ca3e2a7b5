"""What a verified launch does to the service's accounts: sign the person in, enrolling them if needed.

A person is (platform, ``sub``, role).  A student's first launch links them to the roster entry that already
names them (``lis.person_sourcedid`` equal to a student id, else the same email), if that entry is not linked
to another LTI person yet; otherwise a new student account is made (login ``lti-`` + 12 hex digits of a
hash of issuer and ``sub``).  An instructor gets an instructor account of their own: a teaching role never
turns a student's account into an instructor's, and a student launch never reaches an instructor account.
A new account's access code is drawn and thrown away (``autograder roster import --reset`` issues one).

The launch's course (``context``) is remembered with its AGS and NRPS endpoints, for grade passback and roster
sync, and the line item the platform names for the link (a deep-linked resource) is kept for the assignment.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from typing import Any

import sqlalchemy as sa

from .. import codes
from ..codes import Account
from ..counting import counting_rows, effective_score
from ..database import ACCOUNTS, Database
from ..roster import STUDENT_ID
from . import passback
from .launch import Launch
from .tables import CONTEXTS, HANDOFFS, LINEITEMS, USERS

HANDOFF_SECONDS = 120


def lti_login(launch: Launch) -> str:
    digest = hashlib.sha256(f"{launch.platform.issuer}\n{launch.sub}".encode()).hexdigest()
    return f"lti-{digest[:12]}"


def assignment_of(launch: Launch, known: list[str]) -> str | None:
    """The assignment a resource link opens: its custom parameter ``assignment`` (set by deep linking or by hand)."""
    name = launch.custom.get("assignment")
    return name if isinstance(name, str) and name in known else None


def _account(con: sa.Connection, account_id: int) -> Account:
    r = con.execute(sa.select(ACCOUNTS).where(ACCOUNTS.c.id == account_id)).first()
    return Account(r.id, r.role, r.login, r.name, r.code_id)


def _new_account(con: sa.Connection, role: str, login: str, name: str, email: str, now: float) -> int:
    _, code_id, code_hash = codes.new_code()
    return con.execute(sa.insert(ACCOUNTS).values(role=role, login=login, name=name[:200], email=email[:200],
                                                  code_id=code_id, code_hash=code_hash, created_at=now)).inserted_primary_key[0]


def _roster_match(con: sa.Connection, launch: Launch) -> int | None:
    linked = sa.select(USERS.c.account_id).where(USERS.c.role == "student")
    base = (ACCOUNTS.c.role == "student") & ACCOUNTS.c.id.not_in(linked)
    if launch.sourcedid and STUDENT_ID.fullmatch(launch.sourcedid):
        found = con.execute(sa.select(ACCOUNTS.c.id).where(base & (ACCOUNTS.c.login == launch.sourcedid))).scalar()
        if found is not None:
            return found
    if launch.email:
        found = con.execute(sa.select(ACCOUNTS.c.id).where(base & (sa.func.lower(ACCOUNTS.c.email) == launch.email.lower()))).all()
        if len(found) == 1:
            return found[0][0]
    return None


def sign_in(db: Database, launch: Launch, now: float | None = None) -> Account:
    """The account this launch signs in as (made or linked on the first launch); records the course's endpoints."""
    now = now or time.time()
    role = launch.role
    key = (USERS.c.platform_id == launch.platform.id) & (USERS.c.sub == launch.sub) & (USERS.c.role == role)
    with db.write() as con:
        row = con.execute(sa.select(USERS).where(key)).first()
        if row is None:
            account_id = _roster_match(con, launch) if role == "student" else None
            if account_id is None:
                login = lti_login(launch) if role == "student" else f"{launch.name[:60] or '教师'}（{lti_login(launch)}）"
                existing = con.execute(sa.select(ACCOUNTS.c.id).where((ACCOUNTS.c.role == role) & (ACCOUNTS.c.login == login))).scalar()
                account_id = existing if existing is not None else _new_account(con, role, login, launch.name, launch.email, now)
            con.execute(sa.insert(USERS).values(platform_id=launch.platform.id, sub=launch.sub, role=role, account_id=account_id,
                                                name=launch.name, email=launch.email, context_id=launch.context_id or None,
                                                first_launch=now, last_launch=now, active=True))
        else:
            account_id = row.account_id
            con.execute(sa.update(USERS).where(key).values(last_launch=now, first_launch=row.first_launch or now, active=True,
                                                           context_id=launch.context_id or row.context_id,
                                                           name=launch.name or row.name, email=launch.email or row.email))
        if launch.context_id:
            _record_context(con, launch, now)
            if role == "student" and (row is None or row.context_id != launch.context_id):
                _queue_existing_scores(con, account_id, now)
        account = _account(con, account_id)
    if account.role != role:  # cannot happen through the code above; a guard against a corrupted table
        raise PermissionError("LTI person and account role differ")
    return account


def _queue_existing_scores(con: sa.Connection, account_id: int, now: float) -> None:
    """A student graded before they first came through the LMS (or from another course): their scores go over too."""
    login = con.execute(sa.select(ACCOUNTS.c.login).where(ACCOUNTS.c.id == account_id)).scalar()
    for r in counting_rows(con, student=login):
        passback.enqueue(con, login, r.assignment, r.id, effective_score(r.score, r.penalty), r.max_score, now)


def _record_context(con: sa.Connection, launch: Launch, now: float) -> None:
    ags, nrps = launch.ags, launch.nrps
    values: dict[str, Any] = dict(deployment_id=launch.deployment_id, title=launch.context_title, updated_at=now)
    if isinstance(ags.get("lineitems"), str):
        values["lineitems_url"] = ags["lineitems"]
        values["scopes"] = " ".join(s for s in ags.get("scope", []) if isinstance(s, str))[:2000]
    if isinstance(nrps.get("context_memberships_url"), str):
        values["memberships_url"] = nrps["context_memberships_url"]
    key = (CONTEXTS.c.platform_id == launch.platform.id) & (CONTEXTS.c.context_id == launch.context_id)
    if con.execute(sa.select(CONTEXTS.c.context_id).where(key)).first():
        con.execute(sa.update(CONTEXTS).where(key).values(**values))
    else:
        con.execute(sa.insert(CONTEXTS).values(platform_id=launch.platform.id, context_id=launch.context_id,
                                               **{"scopes": "", **values}))
    assignment = launch.custom.get("assignment")
    if isinstance(ags.get("lineitem"), str) and isinstance(assignment, str) and assignment:
        li = (LINEITEMS.c.platform_id == launch.platform.id) & (LINEITEMS.c.context_id == launch.context_id) \
            & (LINEITEMS.c.assignment == assignment[:128])
        if not con.execute(sa.select(LINEITEMS.c.url).where(li)).first():
            con.execute(sa.insert(LINEITEMS).values(platform_id=launch.platform.id, context_id=launch.context_id,
                                                    assignment=assignment[:128], url=ags["lineitem"]))


def handoff(db: Database, account: Account, target: str, now: float | None = None) -> str:
    """A one-time ticket (valid :data:`HANDOFF_SECONDS`) that turns into a session on the tool's own site."""
    now = now or time.time()
    ticket = secrets.token_urlsafe(32)
    with db.write() as con:
        con.execute(sa.delete(HANDOFFS).where(HANDOFFS.c.expires < now))
        con.execute(sa.insert(HANDOFFS).values(token=hashlib.sha256(ticket.encode()).hexdigest(), account_id=account.id,
                                               target=target[:300], expires=now + HANDOFF_SECONDS))
    return ticket


def redeem(db: Database, ticket: str, now: float | None = None) -> tuple[Account, str] | None:
    """The account and target of a ticket, once (None if unknown, used or expired)."""
    if not ticket or len(ticket) > 100:
        return None
    now = now or time.time()
    digest = hashlib.sha256(ticket.encode()).hexdigest()
    with db.write() as con:
        row = con.execute(sa.select(HANDOFFS).where(HANDOFFS.c.token == digest)).first()
        if row is None:
            return None
        con.execute(sa.delete(HANDOFFS).where(HANDOFFS.c.token == digest))
        if row.expires < now:
            return None
        return _account(con, row.account_id), row.target
