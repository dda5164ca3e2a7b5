"""Which course here an LMS course is: bindings of (platform, deployment, ``context_id``) to a course.

One registration per platform serves every course of the site, and an LMS holds thousands of courses; a launch
says which LMS course it comes from (its ``context``), and what the person is there.  That role is believed
only where the LMS course is **bound**, and only in the course it is bound to: a student who teaches her own
sandbox course on the same LMS is a teacher of that sandbox, never of our course.

A binding is made, in the site's database:

* by a service administrator (``autograder lti bind``, or the administrators' page), active at once; or
* by a teacher of the LMS course, who asks from inside the LMS (a launch from an unbound LMS course shows them
  the request form) for one course here: the binding waits (``requested``) until that course's instructor, or
  an administrator, confirms it.  Nothing is granted meanwhile.

``roster_authority`` says whether the LMS course speaks for the course's roster: only then is a launch (or a
roster sync) linked to a roster entry by the SIS id or e-mail the LMS sends (e-mails can be edited by their
owners on some LMSs, and another platform's SIS ids are anyone's); otherwise a student links their LMS person
to their roster entry once, with their access code (:mod:`.enroll`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from enum import Enum

import sqlalchemy as sa

from ..database import Database
from ..errors import Forbidden, NotFound
from ..lms_tables import BINDINGS


class BindingStatus(str, Enum):
    ACTIVE = "active"
    REQUESTED = "requested"


@dataclass(frozen=True)
class Binding:
    platform_id: int
    deployment_id: str
    context_id: str
    course_id: str
    status: BindingStatus
    roster_authority: bool
    context_title: str
    requested_by: str
    confirmed_by: str | None

    @property
    def active(self) -> bool:
        return self.status == BindingStatus.ACTIVE

    @property
    def key(self) -> tuple[int, str, str]:
        return self.platform_id, self.deployment_id, self.context_id


def _binding(row) -> Binding:
    return Binding(row.platform_id, row.deployment_id, row.context_id, row.course_id, BindingStatus(row.status),
                   bool(row.roster_authority), row.context_title, row.requested_by, row.confirmed_by)


def _where(platform_id: int, deployment_id: str, context_id: str):
    return ((BINDINGS.c.platform_id == platform_id) & (BINDINGS.c.deployment_id == deployment_id)
            & (BINDINGS.c.context_id == context_id))


def find(site: Database, platform_id: int, deployment_id: str, context_id: str) -> Binding | None:
    """The binding of an LMS course (active or requested), or None."""
    with site.read() as con:
        row = con.execute(sa.select(BINDINGS).where(_where(platform_id, deployment_id, context_id))).first()
    return _binding(row) if row is not None else None


def of_course(site: Database, course_id: str) -> list[Binding]:
    """Every binding to ``course_id`` (requests first, then by title)."""
    with site.read() as con:
        rows = con.execute(sa.select(BINDINGS).where(BINDINGS.c.course_id == course_id)
                           .order_by(BINDINGS.c.status.desc(), BINDINGS.c.context_title)).all()
    return [_binding(r) for r in rows]


def everything(site: Database) -> list[Binding]:
    with site.read() as con:
        rows = con.execute(sa.select(BINDINGS).order_by(BINDINGS.c.course_id, BINDINGS.c.status.desc(),
                                                        BINDINGS.c.context_title)).all()
    return [_binding(r) for r in rows]


def bind(site: Database, platform_id: int, deployment_id: str, context_id: str, course_id: str, *, by: str,
         roster_authority: bool = False, title: str = "", now: float | None = None) -> Binding:
    """Bind an LMS course to ``course_id``, active (an administrator's act: it replaces any earlier binding or
    request of that LMS course)."""
    now = now or time.time()
    with site.write() as con:
        con.execute(sa.delete(BINDINGS).where(_where(platform_id, deployment_id, context_id)))
        con.execute(sa.insert(BINDINGS).values(
            platform_id=platform_id, deployment_id=deployment_id, context_id=context_id[:255], course_id=course_id,
            status=BindingStatus.ACTIVE.value, roster_authority=roster_authority, context_title=title[:400],
            requested_by=by[:400], created_at=now, confirmed_by=by[:200], confirmed_at=now))
    found = find(site, platform_id, deployment_id, context_id)
    assert found is not None
    return found


def request(site: Database, platform_id: int, deployment_id: str, context_id: str, course_id: str, *, by: str,
            title: str, now: float | None = None) -> Binding:
    """A teacher's request to bind their LMS course to ``course_id``, waiting for confirmation.  An LMS course
    already bound stays as it is (:class:`Forbidden`); a newer request replaces an older one."""
    with site.write() as con:
        row = con.execute(sa.select(BINDINGS).where(_where(platform_id, deployment_id, context_id))).first()
        if row is not None and row.status == BindingStatus.ACTIVE.value:
            raise Forbidden("这门课程平台上的课程已经绑定；如需改绑，请联系管理员")
        con.execute(sa.delete(BINDINGS).where(_where(platform_id, deployment_id, context_id)))
        con.execute(sa.insert(BINDINGS).values(
            platform_id=platform_id, deployment_id=deployment_id, context_id=context_id[:255], course_id=course_id,
            status=BindingStatus.REQUESTED.value, roster_authority=False, context_title=title[:400],
            requested_by=by[:400], created_at=now or time.time()))
    found = find(site, platform_id, deployment_id, context_id)
    assert found is not None
    return found


def confirm(site: Database, key: tuple[int, str, str], course_id: str, *, by: str, roster_authority: bool = False,
            now: float | None = None) -> Binding:
    """Confirm a request to bind to ``course_id`` (by that course's instructor, or an administrator)."""
    with site.write() as con:
        done = con.execute(sa.update(BINDINGS).where(_where(*key) & (BINDINGS.c.course_id == course_id)
                                                     & (BINDINGS.c.status == BindingStatus.REQUESTED.value))
                           .values(status=BindingStatus.ACTIVE.value, roster_authority=roster_authority,
                                   confirmed_by=by[:200], confirmed_at=now or time.time())).rowcount
    if not done:
        raise NotFound("没有等待确认的这项绑定申请（可能已被确认、拒绝或撤销）")
    found = find(site, *key)
    assert found is not None
    return found


def set_authority(site: Database, key: tuple[int, str, str], course_id: str, authority: bool) -> None:
    """Say whether an active binding's LMS course speaks for ``course_id``'s roster."""
    with site.write() as con:
        done = con.execute(sa.update(BINDINGS).where(_where(*key) & (BINDINGS.c.course_id == course_id)
                                                     & (BINDINGS.c.status == BindingStatus.ACTIVE.value))
                           .values(roster_authority=authority)).rowcount
    if not done:
        raise NotFound("没有这项绑定")


def unbind(site: Database, key: tuple[int, str, str], course_id: str | None = None) -> bool:
    """Remove a binding or a request (of ``course_id`` only, when given); whether there was one.  Accounts made
    through it and their work stay; its people can no longer launch into the course."""
    where = _where(*key)
    if course_id is not None:
        where = where & (BINDINGS.c.course_id == course_id)
    with site.write() as con:
        return bool(con.execute(sa.delete(BINDINGS).where(where)).rowcount)
