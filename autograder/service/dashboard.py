"""The instructor's live figures of one assignment, from the service's tables.

Queue length, submissions per minute, how many students have submitted (and how many submissions could not be
graded: ``failed``, and ``regrade_failed`` - graded ones whose regrade did not finish and that keep their previous
result, :func:`.queue.finish_failed`, the same ones the regrade's progress counts as not graded), the score histogram of the
counting attempts and the share of students failing each case (the figures of ``summary.html``, computed by
:func:`autograder.store.report.summary` on the counting attempts; while a regrade runs, on the results they keep
until their new ones, ``regrading`` of them being graded again), and the late submissions.
Parsed results are cached by submission id, with the moment its result was recorded (a regrade records a new one
under the same id, with the same fingerprint when nothing of the grader changed) and its penalty.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from typing import Any

import sqlalchemy as sa

from ..model import SubmissionResult
from ..store import report
from .counting import BEING_REGRADED, counting_rows, with_penalty
from .database import SUBMISSIONS, Database

WINDOW = 600.0  # submissions per minute: averaged over the last ten minutes
_CACHE: OrderedDict[tuple[str, float, float], SubmissionResult] = OrderedDict()
_CACHE_LOCK = threading.Lock()
_CACHE_SIZE = 5000


def _result(row) -> SubmissionResult:
    key = (row.id, row.graded_at or 0.0, row.penalty)
    with _CACHE_LOCK:
        hit = _CACHE.get(key)
        if hit is not None:
            _CACHE.move_to_end(key)
            return hit
    result = with_penalty(SubmissionResult.from_json(json.loads(row.result_json)), row.penalty)
    with _CACHE_LOCK:
        _CACHE[key] = result
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return result


def queue_length(db: Database) -> dict[str, int]:
    """Submissions waiting and being graded, over all assignments."""
    with db.read() as con:
        rows = con.execute(sa.select(SUBMISSIONS.c.status, sa.func.count()).where(SUBMISSIONS.c.status.in_(("queued", "grading")))
                           .group_by(SUBMISSIONS.c.status)).all()
    counts = dict(rows)
    return {"queued": counts.get("queued", 0), "grading": counts.get("grading", 0)}


def assignment_figures(db: Database, assignment: str, title: str, now: float) -> dict[str, Any]:
    """Everything the dashboard of ``assignment`` shows, as of ``now`` (epoch seconds)."""
    S = SUBMISSIONS
    mine = S.c.assignment == assignment
    with db.read() as con:
        status = dict(con.execute(sa.select(S.c.status, sa.func.count()).where(mine).group_by(S.c.status)).all())
        kept = con.execute(sa.select(sa.func.count()).where(mine & (S.c.status == "graded") & S.c.failure.isnot(None))).scalar() or 0
        recent = con.execute(sa.select(sa.func.count()).where(mine & (S.c.created_at > now - WINDOW))).scalar() or 0
        last_minute = con.execute(sa.select(sa.func.count()).where(mine & (S.c.created_at > now - 60))).scalar() or 0
        students = con.execute(sa.select(sa.func.count(sa.distinct(S.c.student_id))).where(mine)).scalar() or 0
        counting = counting_rows(con, assignment=assignment)  # a regrade in progress: their kept results
        regrading = con.execute(sa.select(sa.func.count()).where(mine & S.c.status.in_(BEING_REGRADED)
                                                                 & S.c.result_json.isnot(None))).scalar() or 0
        late = con.execute(sa.select(S.c.id, S.c.student_id, S.c.created_at, S.c.status, S.c.score, S.c.max_score, S.c.penalty)
                           .where(mine & S.c.late).order_by(S.c.created_at.desc()).limit(200)).all()
        late_total = con.execute(sa.select(sa.func.count()).where(mine & S.c.late)).scalar() or 0
    results = [_result(r) for r in counting if r.result_json]
    summary = report.summary({assignment: title}, results).get(assignment)
    cases = []
    if results:
        ids = [c.id for c in results[0].cases]
        for cid in ids:
            failed = sum(1 for r in results for c in r.cases if c.id == cid and c.failed)  # a voided case is no failure
            case = next(c for c in results[0].cases if c.id == cid)
            cases.append({"id": cid, "description": case.description, "hidden": case.hidden, "failed": failed,
                          "students": len(results), "share": failed / len(results)})
        cases.sort(key=lambda c: (-c["share"], c["id"]))
    return {"assignment": assignment, "title": title, "queued": status.get("queued", 0), "grading": status.get("grading", 0),
            "graded": status.get("graded", 0), "failed": status.get("failed", 0),
            "regrade_failed": kept, "regrading": regrading,
            "submissions": sum(status.values()), "per_minute": recent / (WINDOW / 60), "last_minute": last_minute,
            "students": students, "summary": summary, "cases": cases, "late": late, "late_total": late_total}
