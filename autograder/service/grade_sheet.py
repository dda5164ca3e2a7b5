"""The instructor's ``grades.csv`` of the service: one row per enrolled student and open assignment.

Columns, named as in ``autograder grade``'s ``grades.csv`` where they mean the same (:mod:`autograder.store.grades`):
``student_id``, ``student_name``, ``assignment``, ``score`` (the counting attempt's score after the late
penalty; empty when the student has no graded attempt), ``max_score``, ``submitted_at`` (when the counting
attempt arrived, ``YYYY-MM-DD HH:MM:SS`` in the course's zone), ``time_zone`` (that zone, ``UTC+08:00``),
``late`` (``yes``/``no``, empty without an attempt), ``penalty`` (the factor applied, ``1`` when on time) and
``raw_score`` (before the penalty).  A student who did not submit has a row with an empty score, so the file
can be uploaded to a gradebook as it is.  Text a spreadsheet would read as a formula gets a leading apostrophe.
"""

from __future__ import annotations

import csv
import io
from datetime import datetime, tzinfo

import sqlalchemy as sa

from ..check import all_assignments
from ..store.grades import COLUMNS as BATCH_COLUMNS
from ..store.grades import _text
from .database import ACCOUNTS, COUNTING, SUBMISSIONS
from .times import utc_offset

COLUMNS = [*BATCH_COLUMNS[:6], "time_zone", "late", "penalty", "raw_score"]


def grades_csv(db, policy, tz: tzinfo) -> str:
    """``grades.csv`` of every enrolled student and every open assignment of ``policy`` (times in ``tz``)."""
    S, C = SUBMISSIONS, COUNTING
    with db.read() as con:
        students = con.execute(sa.select(ACCOUNTS.c.login, ACCOUNTS.c.name).where(ACCOUNTS.c.role == "student")
                               .order_by(ACCOUNTS.c.login)).all()
        counted = con.execute(sa.select(C.c.student_id, C.c.assignment, C.c.score, C.c.max_score, S.c.created_at, S.c.late,
                                        S.c.penalty, S.c.score.label("raw"))
                              .select_from(C.join(S, S.c.id == C.c.submission_id))).all()
    by_pair = {(r.student_id, r.assignment): r for r in counted}
    known = all_assignments()
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(COLUMNS)
    enrolled = {s.login for s in students}
    gone = sorted({r.student_id for r in counted} - enrolled)  # graded, then removed from the roster: kept, not lost
    for login, name in [*((s.login, s.name or "") for s in students), *((g, "") for g in gone)]:
        for assignment in policy.assignments:
            r = by_pair.get((login, assignment))
            if r is None:
                top = known[assignment].max_score() if assignment in known else ""
                w.writerow([_text(login), _text(name), assignment, "", f"{top:g}" if top != "" else "", "", "", "", "", ""])
                continue
            arrived = datetime.fromtimestamp(r.created_at, tz)
            w.writerow([_text(login), _text(name), assignment, f"{r.score:g}", f"{r.max_score:g}",
                        arrived.strftime("%Y-%m-%d %H:%M:%S"), utc_offset(arrived), "yes" if r.late else "no",
                        f"{r.penalty:g}", f"{r.raw:g}"])
    return out.getvalue()
