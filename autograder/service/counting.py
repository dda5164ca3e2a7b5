"""Which attempt counts, its score, and keeping the nbgrader gradebook holding exactly that attempt.

``best``: the highest score after the late penalty (the earliest of equal ones); ``last``: the latest
graded attempt.

One source of truth: a submission's row holds the grader's raw ``score`` and the late ``penalty`` it was
accepted with, and ``service_counting`` holds only *which* submission counts.  The score that counts is always
:func:`effective_score` of that row (``grades.csv``, the students' and the instructors' pages, the API and the
dashboard all read it through :func:`counting_rows`); nothing else stores it for the service to read back.
The nbgrader gradebook (its grade rows and the ledger row ``autograder_done``, written in one transaction by
:class:`autograder.store.ledger.Store`) is a derived copy for nbgrader's own tools, rewritten by
:func:`write_gradebook` from the counting row: a late attempt's cell scores are multiplied by its penalty on the
way (:func:`with_penalty`), so ``nbgrader export`` sees the score that counts.

Two steps, in this order:

* **the choice** (:func:`choose_in`) runs inside the transaction that records a result
  (:meth:`.queue.Queue.graded`): the submission becomes ``graded`` together with the pair's counting row and
  its grade passback row (:func:`.outbox.enqueue`), so no reader ever sees a graded attempt next to the
  previous counting score (``grades.csv``, the pages and the API read only these tables);
* **the gradebook copy** (:func:`write_gradebook`) follows, outside that transaction (nbgrader writes through its
  own connection): under a lock per student and assignment it writes the counting attempt into the gradebook
  when one of the pair's graded attempts is not ``settled`` yet, then marks the attempts it saw ``settled``.

:func:`settle` does both (the choice in its own transaction): at start-up for attempts graded but not yet settled
(the service was killed before the gradebook copy), and for every pair when the policy changed.  Every step can
be repeated: a crash anywhere leaves unsettled rows that the next start settles again.
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
from . import outbox


#: The statuses of an attempt put back into the queue by a regrade, which keeps its previous result meanwhile.
BEING_REGRADED = ("queued", "grading")


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


def counting_rows(con: sa.Connection, *, student: str | None = None, assignment: str | None = None) -> list:
    """The counting submissions' rows (``id``, ``student_id``, ``assignment``, ``status``, ``score``, ``penalty``,
    ``max_score``, ``fingerprint``, ``result_json``, ``created_at``, ``late``, ``graded_at``), of one student and/or
    assignment or of everyone.

    A counting submission being graded again keeps counting with its last result until the new one is recorded."""
    cond = S.c.score.isnot(None)
    if student is not None:
        cond = cond & (C.c.student_id == student)
    if assignment is not None:
        cond = cond & (C.c.assignment == assignment)
    return con.execute(sa.select(S.c.id, S.c.student_id, S.c.assignment, S.c.status, S.c.score, S.c.penalty,
                                 S.c.max_score, S.c.fingerprint, S.c.result_json, S.c.created_at, S.c.late, S.c.graded_at)
                       .select_from(C.join(S, S.c.id == C.c.submission_id)).where(cond)).all()


def with_penalty(result: SubmissionResult, penalty: float) -> SubmissionResult:
    """The result as it counts: cell scores and total multiplied by ``penalty`` (< 1 for late work), with a note."""
    if penalty == 1.0:
        return result
    note = f"迟交：得分按 {penalty:g} 倍计入（原始得分 {result.score:g}/{result.max_score:g}）"
    cells = {k: CellScore(v.score * penalty, v.max_score) for k, v in result.cells.items()}
    return replace(result, cells=cells, score=result.score * penalty, notes=[note, *result.notes])


def _pair(student: str, assignment: str):
    return (S.c.student_id == student) & (S.c.assignment == assignment)


def lock_pair(db: Database, con: sa.Connection, student: str, assignment: str) -> None:
    """Serialize the caller's write transaction with every other choice for (student, assignment), until it ends.

    SQLite: ``BEGIN IMMEDIATE`` already serializes every writer.  PostgreSQL: a transaction advisory lock, so
    the choice of two processes recording two attempts of one pair at once reads the other's committed result
    (the second waits, and under READ COMMITTED its next statement sees the first's commit)."""
    db.serialize(con, f"counting:{student}:{assignment}")


def choose_in(con: sa.Connection, student: str, assignment: str, counts: str, now: float | None = None):
    """Choose the counting attempt of (student, assignment) inside the caller's write transaction (which holds
    :func:`lock_pair`): ``service_counting`` and the grade passback (:func:`.outbox.enqueue`) follow the
    graded attempts as this transaction sees them; the chosen row (``id``, ``score``, ``penalty``, ...) or None
    when the pair has no graded attempt (a counting attempt being graded again keeps counting).

    An attempt being graded again (a regrade: ``queued`` or ``grading`` with its previous result) takes part with
    that result until its new one is recorded: a regrade never makes the count move to another attempt and back
    (nor sends the LMS a grade that is taken back moments later) because the other attempts were graded first.

    A changed choice marks the chosen attempt not ``settled``, so the gradebook copy follows it even if the
    process ends before :func:`write_gradebook` (the next start settles unsettled pairs)."""
    rows = con.execute(sa.select(S.c.id, S.c.score, S.c.max_score, S.c.penalty, S.c.created_at)
                       .where(_pair(student, assignment) & S.c.score.isnot(None)
                              & S.c.status.in_(("graded",) + BEING_REGRADED))).all()
    chosen = choose(rows, counts)
    if chosen is None:
        return None
    here = (C.c.student_id == student) & (C.c.assignment == assignment)
    current = con.execute(sa.select(C.c.submission_id).where(here)).scalar()
    if current != chosen.id:
        con.execute(sa.delete(C).where(here))
        con.execute(sa.insert(C).values(student_id=student, assignment=assignment, submission_id=chosen.id,
                                        updated_at=now or time.time()))
        con.execute(sa.update(S).where(S.c.id == chosen.id).values(settled=False))
    # LTI: the passback row, in the same transaction as the choice (a no-op when the line already holds this score)
    outbox.enqueue(con, student, assignment, chosen.id, effective_score(chosen.score, chosen.penalty),
                         chosen.max_score, now)
    return chosen


def write_gradebook(db: Database, store, notebook: str, student: str, assignment: str, *, force: bool = False) -> str | None:
    """Copy the counting attempt of (student, assignment) into the gradebook if one of the pair's graded attempts
    is not ``settled`` (or with ``force``), then mark the attempts it saw settled; the counting submission's id.

    Runs under a lock per pair (two copies at once could land the older one last).  The attempts are read before
    the counting row: an attempt graded in between is left unsettled, so the next copy writes what counts then;
    an attempt graded again in between keeps its new mark (the mark is guarded by ``graded_at``)."""
    pair = _pair(student, assignment)
    with db.pair_lock(f"gradebook:{student}:{assignment}"):
        with db.read() as con:
            pending = con.execute(sa.select(S.c.id, S.c.graded_at).where(pair & (S.c.status == "graded") & ~S.c.settled)).all()
            counted = counting_rows(con, student=student, assignment=assignment)
        if not counted:
            return None
        row = counted[0]
        if pending or force:
            result = with_penalty(SubmissionResult.from_json(json.loads(row.result_json)), row.penalty)
            store.record(result, notebook, report.comment_text(result))
        if pending:
            with db.write() as con:
                for p in pending:
                    con.execute(sa.update(S).where((S.c.id == p.id) & (S.c.graded_at == p.graded_at) & (S.c.status == "graded"))
                                .values(settled=True))
        return row.id


def settle(db: Database, store, counts_of: Callable[[str], str], notebook_of: Callable[[str], str],
           student: str, assignment: str, *, force: bool = False) -> str | None:
    """Choose the counting attempt of (student, assignment) again (:func:`choose_in`, its own transaction) and copy
    it into the gradebook (:func:`write_gradebook`); the counting submission's id (None: nothing graded).

    For the start of the service (pairs left unsettled, or every pair after a change of the policy); a new result
    is chosen in the transaction that records it, and only copied afterwards.  ``force``: copy even if settled.
    """
    with db.write() as con:
        lock_pair(db, con, student, assignment)
        chosen = choose_in(con, student, assignment, counts_of(assignment))
    if chosen is None:
        return None
    return write_gradebook(db, store, notebook_of(assignment), student, assignment, force=force)


def unsettled_pairs(db: Database, everything: bool = False) -> list[tuple[str, str]]:
    """(student, assignment) pairs with a graded attempt not yet settled (``everything``: all with a graded attempt)."""
    cond = S.c.status == "graded"
    if not everything:
        cond = cond & ~S.c.settled
    with db.read() as con:
        return [tuple(r) for r in con.execute(sa.select(S.c.student_id, S.c.assignment).where(cond).distinct()).all()]
