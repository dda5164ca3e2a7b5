"""An instructor's exceptions for one student: a later deadline, extra graded attempts, a waived late penalty.

Stored in ``service_overrides`` (one row per student and assignment) and applied by
:func:`personal_policy`, which every check of an upload goes through (:meth:`.app.Service.policy_for`):
the student's own deadline decides whether an attempt is on time, late or refused, and the feedback shown
to that student before it; the extra attempts are added to ``attempts_per_24h`` (:func:`.attempts.allowance`).
When the assignment accepts late work, the late period moves with the deadline (same length, never ending
earlier).  A waived penalty lets the student's late work count whole (it is still shown as late).
Other students are not affected: their feedback turns ``full`` after the course's own last moment.

An exception applies to the attempts already made as well as to the next ones: granting it restates, in the
same transaction, whether each of the student's attempts at the assignment was late and the factor its score
counts with (:func:`restate`, by :meth:`.policy.AssignmentPolicy.terms`, the rule a new upload is judged by),
and chooses the counting attempt again (:func:`.counting.choose_in`, which queues the LMS passback of a changed
score).  The nbgrader gradebook's copy follows within seconds: the attempts whose terms changed are marked not
settled, and the grading loop settles such pairs while it runs (:class:`.dispatcher.Dispatcher`).
"""

from __future__ import annotations

import time
from dataclasses import replace
from datetime import datetime, timezone

import sqlalchemy as sa

from . import counting
from .attempts import allowance
from .database import OVERRIDES as O
from .database import SUBMISSIONS as S
from .database import Database
from .policy import AssignmentPolicy
from .errors import Invalid
from .times import stamp

MAX_EXTRA_ATTEMPTS = 1000


class OverrideError(Invalid, ValueError):
    """An exception that cannot be granted (Chinese message)."""


def personal_policy(policy: AssignmentPolicy, row) -> AssignmentPolicy:
    """``policy`` as it applies to the student of override ``row`` (None: unchanged): an assignment's override or a
    quiz's grant (:mod:`.quiz_tables`), which has no late waiver."""
    if row is None:
        return policy
    deadline, until = policy.deadline, policy.late_until
    if row.deadline is not None and policy.deadline is not None:
        deadline = datetime.fromtimestamp(row.deadline, timezone.utc).astimezone(policy.deadline.tzinfo)
        if policy.late_penalty is not None and until is not None:
            until = max(until, deadline + (until - policy.deadline))
    return replace(policy, deadline=deadline, late_until=until,
                   attempts_per_24h=allowance(policy.attempts_per_24h, row.extra_attempts),
                   late_waived=bool(getattr(row, "waive_late", False)) and policy.late_penalty is not None)


def get(db: Database, student: str, assignment: str):
    """The override row of (student, assignment), or None."""
    with db.read() as con:
        return con.execute(sa.select(O).where((O.c.student_id == student) & (O.c.assignment == assignment))).first()


def restate(con: sa.Connection, policy: AssignmentPolicy, student: str, assignment: str) -> int:
    """Restate in ``con`` whether each attempt of ``student`` at ``assignment`` is late and its penalty, under the
    student's ``policy`` (:meth:`~.policy.AssignmentPolicy.terms` of its arrival); the number of attempts changed.

    An attempt with a result whose factor changed is marked not ``settled`` (the gradebook holds the score that
    counts, which changed with it).  Raises :class:`OverrideError` when an attempt already accepted would be refused
    under ``policy`` (an extension moved before it): the caller's transaction then changes nothing."""
    rows = con.execute(sa.select(S.c.id, S.c.created_at, S.c.late, S.c.penalty, S.c.status)
                       .where((S.c.student_id == student) & (S.c.assignment == assignment))).all()
    changed = 0
    for row in rows:
        at = datetime.fromtimestamp(row.created_at, timezone.utc)
        terms = policy.terms(at)
        if terms is None:
            zone = policy.deadline.tzinfo if policy.deadline is not None else timezone.utc
            raise OverrideError(f"该生在 {stamp(at, zone)}已有一次提交，晚于这个截止时间允许的最后时刻：新的截止时间不能早于已经接受的提交")
        late, penalty = terms
        if (bool(row.late), row.penalty) == (late, penalty):
            continue
        values = {"late": late, "penalty": penalty}
        if row.status == "graded":
            values["settled"] = False
        con.execute(sa.update(S).where(S.c.id == row.id).values(**values))
        changed += 1
    return changed


def _grant(db: Database, policy: AssignmentPolicy, student: str, by: str, **values) -> None:
    """Record ``values`` in the override row of (student, ``policy``'s assignment) and apply the exception to the
    attempts already made (:func:`restate`) with the counting choice and its passback, in one transaction."""
    assignment = policy.name
    key = (O.c.student_id == student) & (O.c.assignment == assignment)
    with db.write() as con:
        counting.lock_pair(db, con, student, assignment)
        row = con.execute(sa.select(O).where(key)).first()
        now = time.time()
        if row is None:
            con.execute(sa.insert(O).values(**{"deadline": None, "extra_attempts": 0, "waive_late": False, **values},
                                            student_id=student, assignment=assignment, updated_at=now, updated_by=by))
        else:
            con.execute(sa.update(O).where(key).values(updated_at=now, updated_by=by, **values))
        personal = personal_policy(policy, con.execute(sa.select(O).where(key)).first())
        if restate(con, personal, student, assignment):
            counting.choose_in(con, student, assignment, policy.counts, now)


def extend_deadline(db: Database, policy: AssignmentPolicy, student: str, deadline: datetime, by: str) -> None:
    """Give ``student`` the later ``deadline`` (timezone-aware) for ``policy``'s assignment."""
    if policy.deadline is None:
        raise OverrideError(f"作业 {policy.name} 没有截止时间，无需延期")
    if deadline.tzinfo is None:
        raise OverrideError("新的截止时间必须带时区")
    if deadline <= policy.deadline:
        raise OverrideError(f"新的截止时间必须晚于课程的截止时间 {policy.deadline.isoformat()}")
    _grant(db, policy, student, by, deadline=deadline.timestamp())


def add_attempts(db: Database, policy: AssignmentPolicy, student: str, extra: int, by: str) -> int:
    """Grant ``extra`` more attempts per 24 hours (in addition to earlier grants); the new total of grants."""
    if isinstance(extra, bool) or not isinstance(extra, int) or not 1 <= extra <= 100:
        raise OverrideError("增加的次数应为 1 到 100 之间的整数")
    row = get(db, student, policy.name)
    total = (row.extra_attempts if row is not None else 0) + extra
    if total > MAX_EXTRA_ATTEMPTS:
        raise OverrideError(f"额外次数最多 {MAX_EXTRA_ATTEMPTS} 次")
    _grant(db, policy, student, by, extra_attempts=total)
    return total


def waive_late(db: Database, policy: AssignmentPolicy, student: str, waived: bool, by: str) -> None:
    """Waive (or, ``waived`` False, restore) the late penalty of ``student`` at ``policy``'s assignment, for the
    attempts already made and the next ones."""
    if policy.late_penalty is None:
        raise OverrideError(f"作业 {policy.name} 不接受迟交，没有迟交扣分可以免除")
    _grant(db, policy, student, by, waive_late=bool(waived))
