"""Which attempt counts, and keeping the nbgrader gradebook holding exactly that attempt.

``best``: the highest score after the late penalty (the earliest of equal ones); ``last``: the latest
graded attempt.  A late attempt's cell scores are multiplied by its penalty before they go into the
gradebook, so ``grades.csv``, ``nbgrader export`` and every other nbgrader tool see the score that counts.

:func:`settle` runs after each graded attempt (and at start-up for attempts graded but not yet settled,
for example when the service was killed in between): under a lock per student and assignment it chooses
the counting attempt, writes it through :class:`autograder.store.ledger.Store` (one transaction with the
ledger row) if it changed, then records the choice in ``service_counting`` and marks the attempts settled.
Every step can be repeated: a crash anywhere leaves unsettled rows that the next start settles again.
"""

from __future__ import annotations

import json
import time
from dataclasses import replace
from typing import Callable

import sqlalchemy as sa

from ..model import CellScore, SubmissionResult
from ..store import report
from .database import COUNTING as C
from .database import SUBMISSIONS as S
from .database import Database
from .lti import passback as lti_passback


def choose(rows: list, counts: str):
    """The counting attempt among graded rows (each with ``score``, ``penalty``, ``created_at``)."""
    if not rows:
        return None
    if counts == "last":
        return max(rows, key=lambda r: r.created_at)
    return max(rows, key=lambda r: (r.score * r.penalty, -r.created_at))


def with_penalty(result: SubmissionResult, penalty: float) -> SubmissionResult:
    """The result as it counts: cell scores and total multiplied by ``penalty`` (< 1 for late work), with a note."""
    if penalty == 1.0:
        return result
    note = f"迟交：得分按 {penalty:g} 倍计入（原始得分 {result.score:g}/{result.max_score:g}）"
    cells = {k: CellScore(v.score * penalty, v.max_score) for k, v in result.cells.items()}
    return replace(result, cells=cells, score=result.score * penalty, notes=[note, *result.notes])


def settle(db: Database, store, counts_of: Callable[[str], str], notebook_of: Callable[[str], str],
           student: str, assignment: str) -> str | None:
    """Make the gradebook hold the counting attempt of (student, assignment); return its submission id."""
    with db.pair_lock(f"settle:{student}:{assignment}"):
        pair = (S.c.student_id == student) & (S.c.assignment == assignment)
        with db.read() as con:
            rows = con.execute(sa.select(S.c.id, S.c.score, S.c.max_score, S.c.penalty, S.c.created_at)
                               .where(pair & (S.c.status == "graded"))).all()
            current = con.execute(sa.select(C).where((C.c.student_id == student) & (C.c.assignment == assignment))).first()
        chosen = choose(rows, counts_of(assignment))
        if chosen is None:
            return None
        effective = chosen.score * chosen.penalty
        if current is None or current.submission_id != chosen.id or abs(current.score - effective) > 1e-9:
            with db.read() as con:
                text = con.execute(sa.select(S.c.result_json).where(S.c.id == chosen.id)).scalar()
            result = with_penalty(SubmissionResult.from_json(json.loads(text)), chosen.penalty)
            store.record(result, notebook_of(assignment), report.comment_text(result))
            with db.write() as con:
                con.execute(sa.delete(C).where((C.c.student_id == student) & (C.c.assignment == assignment)))
                con.execute(sa.insert(C).values(student_id=student, assignment=assignment, submission_id=chosen.id,
                                                score=effective, max_score=chosen.max_score, updated_at=time.time()))
                lti_passback.enqueue(con, student, assignment, chosen.id, effective, chosen.max_score)  # LTI: grade passback
        with db.write() as con:
            con.execute(sa.update(S).where(S.c.id.in_([r.id for r in rows]) & ~S.c.settled).values(settled=True))
        return chosen.id


def unsettled_pairs(db: Database, everything: bool = False) -> list[tuple[str, str]]:
    """(student, assignment) pairs with a graded attempt not yet settled (``everything``: all with a graded attempt)."""
    cond = S.c.status == "graded"
    if not everything:
        cond = cond & ~S.c.settled
    with db.read() as con:
        return [tuple(r) for r in con.execute(sa.select(S.c.student_id, S.c.assignment).where(cond).distinct()).all()]
