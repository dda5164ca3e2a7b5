"""What the instructor's LTI page shows: the platforms' courses, their roster state, and the passback queue."""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa

from ..database import Database
from . import nrps, registry
from .tables import CONTEXTS, PASSBACK, USERS

SHOWN = 200  # rows of pending and failed passbacks listed at most


@dataclass(frozen=True)
class Course:
    platform_id: int
    platform: str
    context_id: str
    title: str
    students: int
    inactive: int
    never_launched: list[str]
    can_sync: bool
    can_pass_back: bool


def courses(db: Database) -> list[Course]:
    names = {p.id: p.name for p in registry.all_platforms(db)}
    with db.read() as con:
        rows = con.execute(sa.select(CONTEXTS).order_by(CONTEXTS.c.platform_id, CONTEXTS.c.title)).all()
        counts = {(r.platform_id, r.context_id, bool(r.active)): r.n for r in con.execute(
            sa.select(USERS.c.platform_id, USERS.c.context_id, USERS.c.active, sa.func.count().label("n"))
            .where(USERS.c.role == "student").group_by(USERS.c.platform_id, USERS.c.context_id, USERS.c.active)).all()}
    return [Course(r.platform_id, names.get(r.platform_id, "（已移除）"), r.context_id, r.title or r.context_id,
                   counts.get((r.platform_id, r.context_id, True), 0), counts.get((r.platform_id, r.context_id, False), 0),
                   [n or sub for sub, n in nrps.never_launched(db, r.platform_id, r.context_id)], bool(r.memberships_url),
                   bool(r.lineitems_url)) for r in rows]


def open_passbacks(db: Database) -> list:
    """Pending and failed passbacks (failed first, then the oldest due)."""
    with db.read() as con:
        return con.execute(sa.select(PASSBACK).where(PASSBACK.c.status != "sent")
                           .order_by(sa.case((PASSBACK.c.status == "failed", 0), else_=1), PASSBACK.c.next_at).limit(SHOWN)).all()
