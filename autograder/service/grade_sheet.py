"""The instructor's ``grades.csv`` of the service, in two shapes: long (one row per enrolled student and open
assignment, the default) and wide (``?format=wide``: one row per student, a column per assignment).

Long columns, named as in ``autograder grade``'s ``grades.csv`` where they mean the same (:mod:`autograder.store.grades`):
``student_id``, ``student_name``, ``assignment``, ``score`` (the counting attempt's score after the late
penalty; empty when the student has no graded attempt), ``max_score``, ``submitted_at`` (when the counting
attempt arrived, ``YYYY-MM-DD HH:MM:SS`` in the course's zone), ``time_zone`` (that zone, ``UTC+08:00``),
``late`` (``yes``/``no``, empty without an attempt), ``penalty`` (the factor applied, ``1`` when on time or
waived), ``raw_score`` (before the penalty) and ``attempts`` (every attempt the student made at the assignment,
graded or not; ``0`` without one).  A student who did not submit has a row with an empty score, so the file can
be uploaded to a gradebook as it is.

Wide columns: ``student_id``, ``student_name``, then one per open assignment named by it, holding the counting
score after the penalty (empty without one); the full marks are the long format's ``max_score``.

Either file is UTF-8 with a byte order mark (:func:`encoded`), so that a spreadsheet in a Chinese locale (Excel
reads a CSV without one in the system's code page) shows the names as written.  Text a spreadsheet would read as
a formula gets a leading apostrophe.

This module only writes the file; :meth:`.submissions.Submissions.grades_csv` reads the counting rows (their
one source, :func:`.counting.counting_rows`), the attempt counts and the roster, and calls :func:`write`.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from datetime import datetime, tzinfo

from ..store.grades import COLUMNS as BATCH_COLUMNS
from ..store.grades import spreadsheet_text
from .times import utc_offset

COLUMNS = [*BATCH_COLUMNS[:6], "time_zone", "late", "penalty", "raw_score", "attempts"]
WIDE_COLUMNS = BATCH_COLUMNS[:2]  # then one column per assignment
FORMATS = ("long", "wide")
BOM = "\ufeff"


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
          tz: tzinfo, attempts: dict[tuple[str, str], int] | None = None, shape: str = "long") -> str:
    """``grades.csv`` of ``students`` (login, name) at ``assignments`` (name -> full marks, None if unknown), in
    ``shape`` (:data:`FORMATS`).

    ``counted`` maps (login, assignment) to the counting attempt, ``attempts`` to the number of attempts made; a
    graded student no longer on the roster keeps rows (after the roster's, with an empty name): no grade is lost.
    Times are written in ``tz``."""
    if shape not in FORMATS:
        raise ValueError(f"unknown shape {shape!r}")
    attempts = attempts or {}
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    enrolled = {login for login, _ in students}
    gone = sorted({login for login, _ in counted} - enrolled)
    people = [*students, *((g, "") for g in gone)]
    if shape == "wide":
        w.writerow([*WIDE_COLUMNS, *(spreadsheet_text(a) for a in assignments)])
        for login, name in people:
            cells = [counted.get((login, a)) for a in assignments]
            w.writerow([spreadsheet_text(login), spreadsheet_text(name), *("" if r is None else f"{r.score:g}" for r in cells)])
        return out.getvalue()
    w.writerow(COLUMNS)
    for login, name in people:
        for assignment, top in assignments.items():
            r = counted.get((login, assignment))
            n = str(attempts.get((login, assignment), 0))
            if r is None:
                w.writerow([spreadsheet_text(login), spreadsheet_text(name), spreadsheet_text(assignment), "",
                            "" if top is None else f"{top:g}", "", "", "", "", "", n])
                continue
            arrived = datetime.fromtimestamp(r.created_at, tz)
            w.writerow([spreadsheet_text(login), spreadsheet_text(name), spreadsheet_text(assignment), f"{r.score:g}", f"{r.max_score:g}",
                        arrived.strftime("%Y-%m-%d %H:%M:%S"), utc_offset(arrived), "yes" if r.late else "no",
                        f"{r.penalty:g}", f"{r.raw_score:g}", n])
    return out.getvalue()


def encoded(text: str) -> bytes:
    """The file's bytes: UTF-8 with a byte order mark (a Chinese Excel then reads it as UTF-8)."""
    return (BOM + text).encode("utf-8")
