"""``grades.csv``: one row per submission graded from this run's submissions folder, and nothing else.

Columns (also in the README): ``student_id``, ``student_name`` (as the LMS names the student; empty for the
folder layout), ``assignment``, ``score``, ``max_score``, ``submitted_at`` (local time, ``YYYY-MM-DD HH:MM:SS``),
``time_source`` (``lms_name``: written in the LMS file name; ``zip_entry``: the archive entry's time;
``file_mtime``: the file's modification time; empty when nothing was submitted), ``late`` (``yes``/``no``, empty
when unknown), ``file`` (where the graded notebook was found).  Text cells that a spreadsheet would read as a
formula get a leading apostrophe.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from .outputs import write_atomic

COLUMNS = ["student_id", "student_name", "assignment", "score", "max_score", "submitted_at", "time_source", "late",
           "file"]


@dataclass
class GradeRow:
    student: str
    display_name: str
    assignment: str
    score: float
    max_score: float
    submitted_at: datetime | None
    time_source: str
    late: bool | None
    file: str

    def cells(self) -> list[str]:
        late = "" if self.late is None else ("yes" if self.late else "no")
        when = self.submitted_at.strftime("%Y-%m-%d %H:%M:%S") if self.submitted_at else ""
        return [spreadsheet_text(self.student), spreadsheet_text(self.display_name), spreadsheet_text(self.assignment),
                f"{self.score:g}", f"{self.max_score:g}", when, self.time_source, late, spreadsheet_text(self.file)]


def spreadsheet_text(value: str) -> str:
    """A cell a spreadsheet shows as text, never evaluates: one beginning with ``=``, ``+``, ``-``, ``@``, a tab
    or a carriage return gets a leading ``'`` (every CSV the project writes passes its text cells through here)."""
    return "'" + value if value[:1] in ("=", "+", "-", "@", "\t", "\r") else value


def write_grades_csv(path: Path, rows: list[GradeRow]) -> None:
    """Write ``rows`` (sorted by student, then assignment) to ``path`` atomically."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(COLUMNS)
    for row in sorted(rows, key=lambda r: (r.student, r.assignment)):
        writer.writerow(row.cells())
    write_atomic(path, buf.getvalue())
