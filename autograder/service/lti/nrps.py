"""Names and Role Provisioning: pull a course's members (following ``Link: <...>; rel="next"``) and sync them.

New students are enrolled (an account each, linked to a roster entry that names them as a launch would be);
members no longer listed (or listed with ``status: Inactive``/``Deleted``) are marked inactive, their work
kept; :func:`never_launched` lists the active students who have not launched the tool yet.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass

import httpx
import sqlalchemy as sa

from ..database import Database
from . import enroll, registry
from .ags import SCOPE_NRPS, AgsError, Tokens, _call
from .launch import Launch, role_of
from .tables import CONTEXTS, USERS

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


def sync(db: Database, tokens: Tokens, client: httpx.Client, platform_id: int, context_id: str, now: float | None = None) -> SyncResult:
    now = now or time.time()
    platform = registry.get(db, platform_id)
    with db.read() as con:
        ctx = con.execute(sa.select(CONTEXTS).where((CONTEXTS.c.platform_id == platform_id) & (CONTEXTS.c.context_id == context_id))).first()
    if platform is None or ctx is None or not ctx.memberships_url:
        raise AgsError("这门课没有提供成员名单服务（NRPS）；请先从课程平台启动一次", False)
    listed = members(client, tokens.get(platform, [SCOPE_NRPS]), ctx.memberships_url)
    students = {m["user_id"]: m for m in listed if isinstance(m.get("user_id"), str)
                and role_of(m.get("roles")) == "student" and m.get("status", "Active") == "Active"}
    if not students:  # an empty list is far likelier a platform or permission problem than an empty course
        raise AgsError("课程平台返回的名单里没有学生；没有改动任何人的状态", False)
    enrolled = departed = 0
    with db.read() as con:
        known = {r.sub: r for r in con.execute(sa.select(USERS).where((USERS.c.platform_id == platform_id) & (USERS.c.role == "student")
                                                                      & (USERS.c.context_id == context_id))).all()}
    for sub, m in students.items():
        if sub in known:
            continue
        launch = Launch(platform=platform, claims={}, message_type="roster", deployment_id=ctx.deployment_id, sub=sub, role="student",
                        name=str(m.get("name", ""))[:200], email=str(m.get("email", ""))[:200],
                        sourcedid=str(m.get("lis_person_sourcedid", ""))[:100], context_id=context_id)
        enroll.sign_in(db, launch, now)
        with db.write() as con:  # known from the roster only: not a launch
            con.execute(sa.update(USERS).where((USERS.c.platform_id == platform_id) & (USERS.c.sub == sub) & (USERS.c.role == "student"))
                        .values(first_launch=None, last_launch=None))
        enrolled += 1
    with db.write() as con:
        for sub, row in known.items():
            active = sub in students
            if bool(row.active) != active:
                con.execute(sa.update(USERS).where((USERS.c.platform_id == platform_id) & (USERS.c.sub == sub) & (USERS.c.role == "student"))
                            .values(active=active))
                departed += not active
    return SyncResult(enrolled, departed, len(students))


def never_launched(db: Database, platform_id: int, context_id: str) -> list[tuple[str, str]]:
    """(sub, name) of the active students of the course who have not launched the tool yet."""
    with db.read() as con:
        return [(r.sub, r.name) for r in con.execute(sa.select(USERS.c.sub, USERS.c.name).where(
            (USERS.c.platform_id == platform_id) & (USERS.c.context_id == context_id) & (USERS.c.role == "student")
            & USERS.c.active & USERS.c.first_launch.is_(None)).order_by(USERS.c.name)).all()]
