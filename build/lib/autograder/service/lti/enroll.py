"""What a launch from a bound LMS course does in the course's database: sign the person in, enrolling them if needed.

A person is (platform, ``sub``, role) within one course: the same LMS person is a student account in one course
and a teaching assistant's in another, and one LMS person launching as a student and as a teacher gets two
accounts (a teaching role never turns a student's account into a teacher's).

A student's first launch into the course links them to the roster:

* the LMS course is an authority on the course's roster (:mod:`.bindings`): to the roster entry its SIS id
  names (``lis.person_sourcedid`` equal to a student id, if that entry is not linked to another LMS person yet;
  never by e-mail, which people edit themselves on some LMSs), else a new student account;
* otherwise, while the roster has students not yet linked to an LMS person, the launch asks (:class:`NeedsCode`)
  for the student's id and access code (:func:`link`), or for a word that they have none: then a new student
  account (:func:`sign_in` with ``new_account``).  A claimed SIS id or e-mail never reaches a roster entry here.

Login of a new account: ``lti-`` + 12 hex digits of a hash of issuer and ``sub`` for a student, the person's name
and that id for a teacher.  A new account's access code is drawn and thrown away (``autograder roster import
--reset`` issues one).

Every launch records the person's membership of that LMS course, the LMS course's AGS and NRPS endpoints, and the
assignment its link opens (an assignment linked there: its grades go there, :mod:`.passback`).
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from typing import Any, Collection

import sqlalchemy as sa

from .. import codes, outbox
from ..codes import Account
from ..counting import counting_rows, effective_score
from ..database import ACCOUNTS, Database
from ..errors import Forbidden
from ..lms_tables import CONTEXTS, LINEITEMS, LINKS, MEMBERSHIPS, USERS
from ..roles import Role
from ..roster import STUDENT_ID
from .bindings import Binding
from .launch import Launch


@dataclass(frozen=True)
class NeedsCode:
    """A student's first launch that must be linked to the roster by the student (see the module's docstring);
    ``hint``: the student id the LMS sends, to fill in."""

    hint: str


def lti_login(launch: Launch) -> str:
    digest = hashlib.sha256(f"{launch.platform.issuer}\n{launch.sub}".encode()).hexdigest()
    return f"lti-{digest[:12]}"


def assignment_of(launch: Launch, known: Collection[str]) -> str | None:
    """The assignment a resource link opens: its custom parameter ``assignment`` (set by deep linking or by hand)."""
    name = launch.custom.get("assignment")
    return name if isinstance(name, str) and name in known else None


def _account(con: sa.Connection, account_id: int) -> Account:
    r = con.execute(sa.select(ACCOUNTS).where(ACCOUNTS.c.id == account_id)).first()
    return Account(r.id, r.role, r.login, r.name, r.code_id)


def account_of(db: Database, account_id: int) -> Account:
    """The course's account ``account_id``."""
    with db.read() as con:
        return _account(con, account_id)


def create_account(con: sa.Connection, role: str, login: str, name: str, email: str, now: float) -> int:
    _, code_id, code_hash = codes.new_code()
    return con.execute(sa.insert(ACCOUNTS).values(role=role, login=login, name=name[:200], email=email[:200],
                                                  code_id=code_id, code_hash=code_hash, created_at=now)).inserted_primary_key[0]


def _unlinked_students(platform_id: int):
    linked = sa.select(USERS.c.account_id).where((USERS.c.role == Role.STUDENT.value) & (USERS.c.platform_id == platform_id))
    return (ACCOUNTS.c.role == Role.STUDENT.value) & ACCOUNTS.c.id.not_in(linked)


def roster_match(con: sa.Connection, launch: Launch) -> int | None:
    """The roster entry an authoritative LMS course names by its SIS id, not yet linked.  Never by e-mail: on
    several LMSs (Moodle's profiles by default) people edit their own e-mail, so a student could claim a
    classmate's entry by typing the classmate's address."""
    if not launch.sourcedid or not STUDENT_ID.fullmatch(launch.sourcedid):
        return None
    return con.execute(sa.select(ACCOUNTS.c.id).where(_unlinked_students(launch.platform.id)
                                                      & (ACCOUNTS.c.login == launch.sourcedid))).scalar()


def _person(launch: Launch):
    return (USERS.c.platform_id == launch.platform.id) & (USERS.c.sub == launch.sub) & (USERS.c.role == launch.role.value)


def sign_in(db: Database, launch: Launch, binding: Binding, assignments: Collection[str], now: float | None = None, *,
            new_account: bool = False) -> Account | NeedsCode:
    """The account this launch signs in as in the course ``binding`` names (made or linked on the first launch),
    or :class:`NeedsCode`; ``assignments``: the course's; ``new_account``: the student said they have no access code."""
    if launch.role is None:
        raise Forbidden("你在这门课程中的角色不能使用本服务")
    now = now or time.time()
    role = launch.role
    with db.write() as con:
        row = con.execute(sa.select(USERS).where(_person(launch))).first()
        if row is not None:
            account_id = row.account_id
            con.execute(sa.update(USERS).where(_person(launch)).values(name=launch.name or row.name,
                                                                       email=launch.email or row.email))
        else:
            account_id = None
            if role == Role.STUDENT:
                if binding.roster_authority:
                    account_id = roster_match(con, launch)
                elif not new_account and con.execute(sa.select(ACCOUNTS.c.id).where(_unlinked_students(launch.platform.id))
                                                      .limit(1)).first() is not None:
                    return NeedsCode(launch.sourcedid if STUDENT_ID.fullmatch(launch.sourcedid or "") else "")
            if account_id is None:
                login = lti_login(launch) if role == Role.STUDENT else f"{launch.name[:60] or role.label}（{lti_login(launch)}）"
                existing = con.execute(sa.select(ACCOUNTS.c.id).where((ACCOUNTS.c.role == role.value) & (ACCOUNTS.c.login == login))).scalar()
                account_id = existing if existing is not None else create_account(con, role.value, login, launch.name, launch.email, now)
            con.execute(sa.insert(USERS).values(platform_id=launch.platform.id, sub=launch.sub, role=role.value, account_id=account_id,
                                                name=launch.name, email=launch.email))
        account = _account(con, account_id)
        _record(con, launch, account, assignment_of(launch, assignments), now)
    if account.role != role.value:  # cannot happen through the code above; a guard against a corrupted table
        raise PermissionError("LTI person and account role differ")
    return account


def link(db: Database, launch: Launch, account: Account, assignments: Collection[str], now: float | None = None) -> Account:
    """Link a student's first launch to ``account``, the roster entry whose access code they just gave."""
    if launch.role != Role.STUDENT or account.role != Role.STUDENT.value:
        raise Forbidden("只有学生的账号可以这样关联")
    now = now or time.time()
    with db.write() as con:
        if con.execute(sa.select(USERS.c.sub).where(_person(launch))).first() is not None:
            raise Forbidden("你在课程平台上的账号已经关联过了；请回到课程平台重新打开作业")
        taken = con.execute(sa.select(USERS.c.sub).where((USERS.c.platform_id == launch.platform.id)
                                                         & (USERS.c.account_id == account.id))).first()
        if taken is not None:
            raise Forbidden(f"学号 {account.login} 已经关联到课程平台上的另一个账号；如有疑问请联系教师")
        con.execute(sa.insert(USERS).values(platform_id=launch.platform.id, sub=launch.sub, role=Role.STUDENT.value,
                                            account_id=account.id, name=launch.name, email=launch.email))
        _record(con, launch, account, assignment_of(launch, assignments), now)
    return account


def _record(con: sa.Connection, launch: Launch, account: Account, assignment: str | None, now: float) -> None:
    """The person's membership of the launch's LMS course, its endpoints and the assignment its link opens; a
    student new to that LMS course gets their existing scores passed back there."""
    if not launch.context_id:
        return
    key = ((MEMBERSHIPS.c.platform_id == launch.platform.id) & (MEMBERSHIPS.c.context_id == launch.context_id)
           & (MEMBERSHIPS.c.sub == launch.sub) & (MEMBERSHIPS.c.role == account.role))
    member = con.execute(sa.select(MEMBERSHIPS.c.first_launch, MEMBERSHIPS.c.active).where(key)).first()
    if member is None:
        con.execute(sa.insert(MEMBERSHIPS).values(platform_id=launch.platform.id, context_id=launch.context_id, sub=launch.sub,
                                                  role=account.role, name=launch.name, first_launch=now, last_launch=now,
                                                  active=True))
    else:
        con.execute(sa.update(MEMBERSHIPS).where(key).values(first_launch=member.first_launch or now, last_launch=now, active=True,
                                                             **({"name": launch.name} if launch.name else {})))
    _record_context(con, launch, assignment, now)
    if account.role == Role.STUDENT.value and (member is None or member.first_launch is None or not member.active):
        for r in counting_rows(con, student=account.login):
            outbox.enqueue(con, account.login, r.assignment, r.id, effective_score(r.score, r.penalty), r.max_score, now)


def _record_context(con: sa.Connection, launch: Launch, assignment: str | None, now: float) -> None:
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
    if launch.resource_link_id and assignment is not None:
        mark_linked(con, launch.platform.id, launch.context_id, assignment, now)
        if isinstance(ags.get("lineitem"), str):
            li = (LINEITEMS.c.platform_id == launch.platform.id) & (LINEITEMS.c.context_id == launch.context_id) \
                & (LINEITEMS.c.assignment == assignment)
            if not con.execute(sa.select(LINEITEMS.c.url).where(li)).first():
                con.execute(sa.insert(LINEITEMS).values(platform_id=launch.platform.id, context_id=launch.context_id,
                                                        assignment=assignment, url=ags["lineitem"][:1000]))


def end_staff_sessions(db: Database, platform_id: int, context_id: str) -> int:
    """End every session of the staff accounts an LMS course gave (its teachers and TAs, by their memberships
    there): a binding removed takes its roles back at once, not when the sessions expire.  Each gets a new
    code id (the code of an LMS-made account was never given out); the number of accounts."""
    staff = sa.select(USERS.c.account_id).join(MEMBERSHIPS, (MEMBERSHIPS.c.platform_id == USERS.c.platform_id)
                                               & (MEMBERSHIPS.c.sub == USERS.c.sub) & (MEMBERSHIPS.c.role == USERS.c.role)).where(
        (MEMBERSHIPS.c.platform_id == platform_id) & (MEMBERSHIPS.c.context_id == context_id)
        & USERS.c.role.in_([Role.TA.value, Role.INSTRUCTOR.value]))
    with db.write() as con:
        ids = con.execute(staff).scalars().all()
        for account_id in ids:
            _, code_id, code_hash = codes.new_code()
            con.execute(sa.update(ACCOUNTS).where(ACCOUNTS.c.id == account_id).values(code_id=code_id, code_hash=code_hash))
    return len(ids)


def mark_linked(con: sa.Connection, platform_id: int, context_id: str, assignment: str, now: float) -> None:
    """``assignment`` is linked in that LMS course (a link to it was launched or deep-linked there)."""
    key = (LINKS.c.platform_id == platform_id) & (LINKS.c.context_id == context_id) & (LINKS.c.assignment == assignment)
    if con.execute(sa.select(LINKS.c.assignment).where(key)).first() is None:
        con.execute(sa.insert(LINKS).values(platform_id=platform_id, context_id=context_id, assignment=assignment,
                                            created_at=now))
