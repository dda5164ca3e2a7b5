"""Which attempt counts, its score, and keeping the nbgrader gradebook holding exactly that attempt.

``best``: the highest score after the late penalty (the earliest of equal ones); ``last``: the latest
graded attempt.

One source of truth: a submission's row holds the grader's raw ``score`` and the late ``penalty`` it was
accepted with, and ``service_counting`` holds only *which* submission counts.  The score that counts is always
:func:`effective_score` of that row (``grades.csv``, the students' and the instructors' pages, the API and the
dashboard all read it through :func:`counting_rows`); nothing else stores it for the service to read back.
The nbgrader gradebook (its grade rows and the ledger row ``autograder_done``, written in one transaction by
:class:`autograder.store.ledger.Store`) is a derived copy for nbgrader's own tools, rewritten by :func:`settle`
from the counting row: a late attempt's cell scores are multiplied by its penalty on the way
(:func:`with_penalty`), so ``nbgrader export`` sees the score that counts.

:func:`settle` runs after each graded attempt (a new upload's or a regrade's), at start-up for attempts graded
but not yet settled (the service was killed in between), and for every pair when the policy changed: under a
lock per student and assignment it chooses the counting attempt, writes it into the gradebook if the choice or
its result changed, then records the choice and marks the attempts settled.  Every step can be repeated: a
crash anywhere leaves unsettled rows that the next start settles again.
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
    return max(rows, key=lambda r: (effective_score(r.score, r.penalty), -r.created_at))


def effective_score(score: float, penalty: float) -> float:
    """The score that counts: the grader's ``score`` times the late ``penalty`` (1 for work on time)."""
    return score * penalty


def counting_rows(con: sa.Connection, *, student: str | None = None, assignment: str | None = None,
                  graded_only: bool = False) -> list:
    """The counting submissions' rows (``id``, ``student_id``, ``assignment``, ``status``, ``score``, ``penalty``,
    ``max_score``, ``fingerprint``, ``result_json``, ``created_at``, ``late``), of one student and/or assignment or of everyone.

    A counting submission being graded again keeps counting with its last result until the new one is settled
    (``graded_only``: leave it out)."""
    cond = S.c.score.isnot(None)
    if graded_only:
        cond = cond & (S.c.status == "graded")
    if student is not None:
        cond = cond & (C.c.student_id == student)
    if assignment is not None:
        cond = cond & (C.c.assignment == assignment)
    return con.execute(sa.select(S.c.id, S.c.student_id, S.c.assignment, S.c.status, S.c.score, S.c.penalty,
                                 S.c.max_score, S.c.fingerprint, S.c.result_json, S.c.created_at, S.c.late)
                       .select_from(C.join(S, S.c.id == C.c.submission_id)).where(cond)).all()


def with_penalty(result: SubmissionResult, penalty: float) -> SubmissionResult:
    """The result as it counts: cell scores and total multiplied by ``penalty`` (< 1 for late work), with a note."""
    if penalty == 1.0:
        return result
    note = f"迟交：得分按 {penalty:g} 倍计入（原始得分 {result.score:g}/{result.max_score:g}）"
    cells = {k: CellScore(v.score * penalty, v.max_score) for k, v in result.cells.items()}
    return replace(result, cells=cells, score=result.score * penalty, notes=[note, *result.notes])


def settle(db: Database, store, counts_of: Callable[[str], str], notebook_of: Callable[[str], str],
           student: str, assignment: str, *, force: bool = False) -> str | None:
    """Make the gradebook hold the counting attempt of (student, assignment); return its submission id.

    The gradebook is written when the counting attempt changed, when one of the pair's attempts was graded
    since the last settling (a regrade may have changed the counting attempt's result) or with ``force``.
    """
    with db.pair_lock(f"settle:{student}:{assignment}"):
        pair = (S.c.student_id == student) & (S.c.assignment == assignment)
        with db.read() as con:
            rows = con.execute(sa.select(S.c.id, S.c.score, S.c.max_score, S.c.penalty, S.c.created_at, S.c.settled)
                               .where(pair & (S.c.status == "graded"))).all()
            current = con.execute(sa.select(C.c.submission_id).where((C.c.student_id == student)
                                                                     & (C.c.assignment == assignment))).scalar()
        chosen = choose(rows, counts_of(assignment))
        if chosen is None:
            return None
        if force or current != chosen.id or not all(r.settled for r in rows):
            with db.read() as con:
                text = con.execute(sa.select(S.c.result_json).where(S.c.id == chosen.id)).scalar()
            result = with_penalty(SubmissionResult.from_json(json.loads(text)), chosen.penalty)
            store.record(result, notebook_of(assignment), report.comment_text(result))
            with db.write() as con:
                con.execute(sa.delete(C).where((C.c.student_id == student) & (C.c.assignment == assignment)))
                con.execute(sa.insert(C).values(student_id=student, assignment=assignment, submission_id=chosen.id,
                                                updated_at=time.time()))
                lti_passback.enqueue(con, student, assignment, chosen.id, effective_score(chosen.score, chosen.penalty),
                                     chosen.max_score)  # LTI: grade passback, in the same transaction as the choice
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
