"""An instructor's exceptions for one student: a later deadline, extra graded attempts.

Stored in ``service_overrides`` (one row per student and assignment) and applied by
:func:`personal_policy`, which every check of an upload goes through (:meth:`.app.Service.policy_for`):
the student's own deadline decides whether an attempt is on time, late or refused, and the feedback shown
to that student before it; the extra attempts are added to ``attempts_per_24h``.  When the assignment
accepts late work, the late period moves with the deadline (same length, never ending earlier).
Other students are not affected: their feedback turns ``full`` after the course's own last moment.
"""

from __future__ import annotations

import time
from dataclasses import replace
from datetime import datetime, timezone

import sqlalchemy as sa

from .database import OVERRIDES as O
from .database import Database
from .policy import AssignmentPolicy
from .errors import Invalid

MAX_EXTRA_ATTEMPTS = 1000


class OverrideError(Invalid, ValueError):
    """An exception that cannot be granted (Chinese message)."""


def personal_policy(policy: AssignmentPolicy, row) -> AssignmentPolicy:
    """``policy`` as it applies to the student of override ``row`` (None: unchanged)."""
    if row is None:
        return policy
    deadline, until = policy.deadline, policy.late_until
    if row.deadline is not None and policy.deadline is not None:
        deadline = datetime.fromtimestamp(row.deadline, timezone.utc).astimezone(policy.deadline.tzinfo)
        if policy.late_penalty is not None and until is not None:
            until = max(until, deadline + (until - policy.deadline))
    return replace(policy, deadline=deadline, late_until=until,
                   attempts_per_24h=policy.attempts_per_24h + (row.extra_attempts or 0))


def get(db: Database, student: str, assignment: str):
    """The override row of (student, assignment), or None."""
    with db.read() as con:
        return con.execute(sa.select(O).where((O.c.student_id == student) & (O.c.assignment == assignment))).first()


def of_student(db: Database, student: str) -> dict[str, object]:
    """The override rows of one student, by assignment."""
    with db.read() as con:
        return {r.assignment: r for r in con.execute(sa.select(O).where(O.c.student_id == student)).all()}


def _upsert(db: Database, student: str, assignment: str, by: str, **values) -> None:
    key = (O.c.student_id == student) & (O.c.assignment == assignment)
    with db.write() as con:
        row = con.execute(sa.select(O).where(key)).first()
        if row is None:
            con.execute(sa.insert(O).values(**{"deadline": None, "extra_attempts": 0, **values}, student_id=student,
                                            assignment=assignment, updated_at=time.time(), updated_by=by))
        else:
            con.execute(sa.update(O).where(key).values(updated_at=time.time(), updated_by=by, **values))


def extend_deadline(db: Database, policy: AssignmentPolicy, student: str, deadline: datetime, by: str) -> None:
    """Give ``student`` the later ``deadline`` (timezone-aware) for ``policy``'s assignment."""
    if policy.deadline is None:
        raise OverrideError(f"作业 {policy.name} 没有截止时间，无需延期")
    if deadline.tzinfo is None:
        raise OverrideError("新的截止时间必须带时区")
    if deadline <= policy.deadline:
        raise OverrideError(f"新的截止时间必须晚于课程的截止时间 {policy.deadline.isoformat()}")
    _upsert(db, student, policy.name, by, deadline=deadline.timestamp())


def add_attempts(db: Database, policy: AssignmentPolicy, student: str, extra: int, by: str) -> int:
    """Grant ``extra`` more attempts per 24 hours (in addition to earlier grants); the new total of grants."""
    if isinstance(extra, bool) or not isinstance(extra, int) or not 1 <= extra <= 100:
        raise OverrideError("增加的次数应为 1 到 100 之间的整数")
    row = get(db, student, policy.name)
    total = (row.extra_attempts if row is not None else 0) + extra
    if total > MAX_EXTRA_ATTEMPTS:
        raise OverrideError(f"额外次数最多 {MAX_EXTRA_ATTEMPTS} 次")
    _upsert(db, student, policy.name, by, extra_attempts=total)
    return total
