"""Names and Role Provisioning: pull a bound LMS course's members (following ``Link: <...>; rel="next"``) and sync them.

Every active student member becomes a membership of that LMS course (known from the roster only until they
launch); members no longer listed (or listed with ``status: Inactive``/``Deleted``) are marked inactive, their
work kept.  Where the LMS course is an authority on the course's roster (:mod:`.bindings`), a member new to the
course is also enrolled as a launch would be (linked to the roster entry its SIS id or e-mail names, else a new
account); elsewhere accounts come only from launches (:mod:`.enroll`).  :func:`never_launched` lists the active
students who have not launched the tool yet.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass

import httpx
import sqlalchemy as sa

from ..database import Database
from ..roles import Role
from . import enroll, registry
from .ags import SCOPE_NRPS, AgsError, Tokens, _call
from .bindings import Binding
from .launch import Launch, context_role
from ..lms_tables import CONTEXTS, MEMBERSHIPS, USERS

MEMBERSHIP_TYPE = "application/vnd.ims.lti-nrps.v2.membershipcontainer+json"
MAX_PAGES = 1000
_NEXT = re.compile(r'<([^>]+)>\s*;\s*rel="?next"?')


@dataclass(frozen=True)
class SyncResult:
    enrolled: int
    departed: int
    members: int


def members(client: httpx.Client, token: str, url: str) -> list[dict]:
    """Every member of the container at ``url`` (all pages)."""
    out: list[dict] = []
    for _ in range(MAX_PAGES):
        response = _call(client, "GET", url, "读取课程成员", headers={"Authorization": f"Bearer {token}", "Accept": MEMBERSHIP_TYPE})
        body = response.json()
        out += [m for m in body.get("members", []) if isinstance(m, dict)] if isinstance(body, dict) else []
        found = _NEXT.search(response.headers.get("link", ""))
        if not found:
            return out
        url = found.group(1)
    raise AgsError(f"读取课程成员：超过 {MAX_PAGES} 页", False)


def sync(db: Database, site: Database, tokens: Tokens, client: httpx.Client, binding: Binding,
         now: float | None = None) -> SyncResult:
    """Sync the members of the LMS course of ``binding`` into its course (``db``); ``site``: the platforms."""
    now = now or time.time()
    platform = registry.get(site, binding.platform_id)
    with db.read() as con:
        ctx = con.execute(sa.select(CONTEXTS).where((CONTEXTS.c.platform_id == binding.platform_id)
                                                    & (CONTEXTS.c.context_id == binding.context_id))).first()
    if platform is None or ctx is None or not ctx.memberships_url:
        raise AgsError("这门课没有提供成员名单服务（NRPS）；请先从课程平台启动一次", False)
    listed = members(client, tokens.get(platform, [SCOPE_NRPS]), ctx.memberships_url)
    students = {m["user_id"]: m for m in listed if isinstance(m.get("user_id"), str) and len(m["user_id"]) <= 255
                and context_role(m.get("roles")) == Role.STUDENT and m.get("status", "Active") == "Active"}
    if not students:  # an empty list is far likelier a platform or permission problem than an empty course
        raise AgsError("课程平台返回的名单里没有学生；没有改动任何人的状态", False)
    here = (MEMBERSHIPS.c.platform_id == binding.platform_id) & (MEMBERSHIPS.c.context_id == binding.context_id) \
        & (MEMBERSHIPS.c.role == Role.STUDENT.value)
    enrolled = departed = 0
    with db.write() as con:
        known = {r.sub: r for r in con.execute(sa.select(MEMBERSHIPS).where(here)).all()}
        for sub, m in students.items():
            if sub not in known:
                con.execute(sa.insert(MEMBERSHIPS).values(platform_id=binding.platform_id, context_id=binding.context_id,
                                                          sub=sub, role=Role.STUDENT.value, name=str(m.get("name", ""))[:200],
                                                          active=True))
                enrolled += 1
            elif not known[sub].active:
                con.execute(sa.update(MEMBERSHIPS).where(here & (MEMBERSHIPS.c.sub == sub)).values(active=True))
            if binding.roster_authority:
                _enroll(con, Launch(platform=platform, claims={}, message_type="roster", deployment_id=binding.deployment_id,
                                    sub=sub, role=Role.STUDENT, name=str(m.get("name", ""))[:200], email=str(m.get("email", ""))[:200],
                                    sourcedid=str(m.get("lis_person_sourcedid", ""))[:100], context_id=binding.context_id), now)
        for sub, row in known.items():
            if row.active and sub not in students:
                con.execute(sa.update(MEMBERSHIPS).where(here & (MEMBERSHIPS.c.sub == sub)).values(active=False))
                departed += 1
    return SyncResult(enrolled, departed, len(students))


def _enroll(con: sa.Connection, member: Launch, now: float) -> None:
    """An authoritative roster's member without an account here: linked to the roster entry it names, else new."""
    person = (USERS.c.platform_id == member.platform.id) & (USERS.c.sub == member.sub) & (USERS.c.role == Role.STUDENT.value)
    if con.execute(sa.select(USERS.c.sub).where(person)).first() is not None:
        return
    account_id = enroll.roster_match(con, member)
    if account_id is None:
        account_id = enroll.create_account(con, Role.STUDENT.value, enroll.lti_login(member), member.name, member.email, now)
    con.execute(sa.insert(USERS).values(platform_id=member.platform.id, sub=member.sub, role=Role.STUDENT.value,
                                        account_id=account_id, name=member.name, email=member.email))


def never_launched(db: Database, platform_id: int, context_id: str) -> list[tuple[str, str]]:
    """(sub, name) of the active students of the LMS course who have not launched the tool yet."""
    with db.read() as con:
        rows = con.execute(sa.select(MEMBERSHIPS.c.sub, MEMBERSHIPS.c.name).where(
            (MEMBERSHIPS.c.platform_id == platform_id) & (MEMBERSHIPS.c.context_id == context_id)
            & (MEMBERSHIPS.c.role == Role.STUDENT.value) & MEMBERSHIPS.c.active & MEMBERSHIPS.c.first_launch.is_(None))
            .order_by(MEMBERSHIPS.c.name, MEMBERSHIPS.c.sub)).all()
    return [(r.sub, r.name) for r in rows]
