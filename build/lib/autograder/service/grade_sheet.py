"""The instructor's ``grades.csv`` of the service: one row per enrolled student and open assignment.

Columns, named as in ``autograder grade``'s ``grades.csv`` where they mean the same (:mod:`autograder.store.grades`):
``student_id``, ``student_name``, ``assignment``, ``score`` (the counting attempt's score after the late
penalty; empty when the student has no graded attempt), ``max_score``, ``submitted_at`` (when the counting
attempt arrived, ``YYYY-MM-DD HH:MM:SS`` in the course's zone), ``time_zone`` (that zone, ``UTC+08:00``),
``late`` (``yes``/``no``, empty without an attempt), ``penalty`` (the factor applied, ``1`` when on time) and
``raw_score`` (before the penalty).  A student who did not submit has a row with an empty score, so the file
can be uploaded to a gradebook as it is.  Text a spreadsheet would read as a formula gets a leading apostrophe.

This module only writes the file; :meth:`.submissions.Submissions.grades_csv` reads the counting rows (their
one source, :func:`.counting.counting_rows`) and the roster, and calls :func:`write`.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from datetime import datetime, tzinfo

from ..store.grades import COLUMNS as BATCH_COLUMNS
from ..store.grades import spreadsheet_text
from .times import utc_offset

COLUMNS = [*BATCH_COLUMNS[:6], "time_zone", "late", "penalty", "raw_score"]


@dataclass(frozen=True)
class Counted:
    """The counting attempt of one student at one assignment, as ``grades.csv`` states it."""

    score: float  # after the late penalty
    raw_score: float
    max_score: float
    created_at: float  # epoch seconds
    late: bool
    penalty: float


def write(students: list[tuple[str, str]], assignments: dict[str, float | None], counted: dict[tuple[str, str], Counted],
          tz: tzinfo) -> str:
    """``grades.csv`` of ``students`` (login, name) at ``assignments`` (name -> full marks, None if unknown).

    ``counted`` maps (login, assignment) to the counting attempt; a graded student no longer on the roster
    keeps rows (after the roster's, with an empty name): no grade is lost.  Times are written in ``tz``."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(COLUMNS)
    enrolled = {login for login, _ in students}
    gone = sorted({login for login, _ in counted} - enrolled)
    for login, name in [*students, *((g, "") for g in gone)]:
        for assignment, top in assignments.items():
            r = counted.get((login, assignment))
            if r is None:
                w.writerow([spreadsheet_text(login), spreadsheet_text(name), spreadsheet_text(assignment), "",
                            "" if top is None else f"{top:g}", "", "", "", "", ""])
                continue
            arrived = datetime.fromtimestamp(r.created_at, tz)
            w.writerow([spreadsheet_text(login), spreadsheet_text(name), spreadsheet_text(assignment), f"{r.score:g}", f"{r.max_score:g}",
                        arrived.strftime("%Y-%m-%d %H:%M:%S"), utc_offset(arrived), "yes" if r.late else "no",
                        f"{r.penalty:g}", f"{r.raw_score:g}"])
    return out.getvalue()
