"""What a course's LMS page shows: its bound LMS courses (and requests), their roster state, the passback queue."""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa

from ..database import Database
from ..roles import Role
from . import bindings, nrps, registry
from .bindings import Binding
from ..lms_tables import CONTEXTS, MEMBERSHIPS, PASSBACK

SHOWN = 200  # rows of pending and failed passbacks listed at most


@dataclass(frozen=True)
class LmsCourse:
    binding: Binding
    platform: str
    title: str
    launched: bool  # someone has launched from it (its AGS and NRPS endpoints are known)
    students: int
    inactive: int
    never_launched: list[str]
    can_sync: bool
    can_pass_back: bool


def lms_courses(db: Database, site: Database, course_id: str) -> list[LmsCourse]:
    """The LMS courses bound to ``course_id`` (or asked to be), with what the course's database knows of each."""
    names = {p.id: p.name for p in registry.all_platforms(site)}
    with db.read() as con:
        contexts = {(r.platform_id, r.context_id): r for r in con.execute(sa.select(CONTEXTS)).all()}
        counts = {(r.platform_id, r.context_id, bool(r.active)): r.n for r in con.execute(
            sa.select(MEMBERSHIPS.c.platform_id, MEMBERSHIPS.c.context_id, MEMBERSHIPS.c.active, sa.func.count().label("n"))
            .where(MEMBERSHIPS.c.role == Role.STUDENT.value)
            .group_by(MEMBERSHIPS.c.platform_id, MEMBERSHIPS.c.context_id, MEMBERSHIPS.c.active)).all()}
    out = []
    for b in bindings.of_course(site, course_id):
        ctx = contexts.get((b.platform_id, b.context_id))
        out.append(LmsCourse(b, names.get(b.platform_id, "（已移除）"), b.context_title or (ctx.title if ctx else "") or b.context_id,
                             ctx is not None, counts.get((b.platform_id, b.context_id, True), 0), counts.get((b.platform_id, b.context_id, False), 0),
                             [n or sub for sub, n in nrps.never_launched(db, b.platform_id, b.context_id)],
                             b.active and ctx is not None and bool(ctx.memberships_url),
                             ctx is not None and bool(ctx.lineitems_url)))
    return out


def open_passbacks(db: Database) -> list:
    """Pending and failed passbacks (failed first, then the oldest due)."""
    with db.read() as con:
        return con.execute(sa.select(PASSBACK).where(PASSBACK.c.status != "sent")
                           .order_by(sa.case((PASSBACK.c.status == "failed", 0), else_=1), PASSBACK.c.next_at).limit(SHOWN)).all()
