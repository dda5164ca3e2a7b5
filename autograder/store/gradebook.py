"""Everything that goes through nbgrader: assignment generation, the gradebook's scores and CSV export."""

from __future__ import annotations

import functools
import os
import shutil
import sys
import tempfile
import threading
import warnings
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

import nbgrader.api as nbgrader_api
from nbgrader.api import Gradebook, MissingEntry
from sqlalchemy.exc import SAWarning

from ..model import SubmissionResult

if TYPE_CHECKING:
    from nbgrader.apps import NbGraderAPI

_PATH_LOCK = threading.Lock()


@functools.cache
def alembic_head() -> str:
    """nbgrader's newest gradebook schema revision, which it stamps into every gradebook it creates, read in this
    process (0.14 s of CPU); nbgrader's own ``get_alembic_version`` runs the ``alembic heads`` executable for it,
    2.4 s of CPU for each new gradebook of a run, a test or the service."""
    from alembic.config import Config
    from alembic.script import ScriptDirectory
    from nbgrader.dbutil import _temp_alembic_ini

    with _temp_alembic_ini("sqlite:////tmp/gradebook.db") as ini:  # as nbgrader's get_alembic_version writes it
        return ScriptDirectory.from_config(Config(ini)).get_current_head()


nbgrader_api.get_alembic_version = alembic_head  # what Gradebook() calls on a database without its tables


@contextmanager
def alembic_on_path() -> Iterator[None]:
    """While nbgrader creates a gradebook it runs the ``alembic`` executable of its own environment:
    put this interpreter's ``bin`` first on ``PATH`` for that call only."""
    bin_dir = os.path.dirname(sys.executable)
    with _PATH_LOCK:
        old = os.environ.get("PATH")
        if bin_dir in (old or "").split(os.pathsep):
            yield
            return
        os.environ["PATH"] = bin_dir + (os.pathsep + old if old else "")
        try:
            yield
        finally:
            if old is None:
                os.environ.pop("PATH", None)
            else:
                os.environ["PATH"] = old


class GenerationError(RuntimeError):
    """``nbgrader generate_assignment`` failed."""


def _api(root: Path, db_url: str) -> NbGraderAPI:
    from nbgrader.apps import NbGraderAPI  # generation only (1 s of imports a run that generates nothing skips)
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config import Config

    c = Config()
    c.CourseDirectory.root = str(root)
    c.CourseDirectory.db_url = db_url
    # nbgrader's default course id "" is never inserted into the course table; SQLite does not enforce the
    # foreign key, PostgreSQL does.  Use the Gradebook's own default.
    c.CourseDirectory.course_id = "default_course"
    c.CourseDirectory.source_directory = "source"
    c.CourseDirectory.release_directory = "release"
    c.Exchange.root = str(root / "exchange")
    return NbGraderAPI(coursedir=CourseDirectory(config=c), config=c)


def generate(solutions: Path, names: list[str], root: Path, db_url: str) -> dict[str, Path]:
    """Run ``nbgrader generate_assignment`` on each assignment; return each release directory.

    Also records the assignment, its notebooks and grade cells in the gradebook at ``db_url``.
    """
    api = _api(root, db_url)
    out = {}
    for name in names:
        dest = root / "source" / name
        if dest.exists():
            shutil.rmtree(dest)
        shutil.copytree(solutions / name, dest, ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
        with alembic_on_path():
            result = api.generate_assignment(name, force=True, create=True)
        if not result.get("success"):
            raise GenerationError(f"nbgrader generate_assignment {name} 失败：\n{result.get('error') or result.get('log')}")
        out[name] = root / "release" / name
    return out


def generate_exercises(solutions: Path, exercises: Path, names: list[str]) -> None:
    """Regenerate the student versions in ``exercises/`` from ``solutions/`` (nbgrader generate_assignment)."""
    with tempfile.TemporaryDirectory(prefix="autograder-generate-") as tmp:
        root = Path(tmp)
        releases = generate(solutions, names, root, f"sqlite:///{root / 'gradebook.db'}")
        for name, release in releases.items():
            dest = exercises / name
            if dest.exists():
                shutil.rmtree(dest)
            shutil.copytree(release, dest)


def record(gb: Gradebook, notebook: str, result: SubmissionResult, comment: str, *, before_commit=None) -> None:
    """Store a result as nbgrader autograded scores (one per grade cell) and an autograder comment.

    ``before_commit(session)`` adds more statements to the same transaction (the ledger row of
    :mod:`.ledger`).  nbgrader creates the empty submission rows in a commit of its own; that step is
    idempotent, the scores are written together with ``before_commit``'s statements.
    """
    try:
        gb.find_student(result.student)  # update_or_create_student without changes: the same, without its commit
    except MissingEntry:
        gb.add_student(result.student)
    try:
        gb.find_submission(result.assignment, result.student)
    except MissingEntry:
        with warnings.catch_warnings():  # nbgrader's add_submission triggers SQLAlchemy autoflush warnings
            warnings.simplefilter("ignore", SAWarning)
            gb.add_submission(result.assignment, result.student)
    nb = gb.find_submission_notebook(notebook, result.assignment, result.student)
    grades = _grades_by_cell(gb, nb)
    for cell, score in result.cells.items():
        grade = grades.get(cell)
        if grade is None:
            raise MissingEntry()  # as nbgrader's find_grade for a cell the notebook has no grade of
        grade.auto_score = float(score.score)
        grade.manual_score = None
        grade.needs_manual_grade = False
    for comment_row in nb.comments:
        comment_row.auto_comment = comment
    if before_commit is not None:
        before_commit(gb.db)
    gb.db.commit()


def _grades_by_cell(gb: Gradebook, nb) -> dict:
    """The grade rows of the submitted notebook ``nb`` by their cell's name, in one query (nbgrader's ``find_grade``
    costs a six-table join per cell); where a grade cell and a task cell share a name, the grade cell's, as
    ``find_grade`` looks there first."""
    Grade, BaseCell = nbgrader_api.Grade, nbgrader_api.BaseCell
    rows = (gb.db.query(Grade, BaseCell.name, BaseCell.type).join(BaseCell, BaseCell.id == Grade.cell_id)
            .filter(Grade.notebook_id == nb.id).all())
    found: dict = {}
    for grade, name, kind in sorted(rows, key=lambda r: r[2] == "GradeCell"):
        if kind in ("GradeCell", "TaskCell"):
            found[name] = grade
    return found


def export_csv(gb: Gradebook, path: Path) -> None:
    """nbgrader's CSV export (columns include student_id, assignment, score, max_score)."""
    from nbgrader.plugins.export import CsvExportPlugin

    CsvExportPlugin(to=str(path)).export(gb)


def open_gradebook(db_url: str) -> Gradebook:
    """A Gradebook the caller closes (``gb.close()``); opening it creates nbgrader's tables if needed."""
    with alembic_on_path():
        return Gradebook(db_url)


def update_students(db_url: str, students: list[tuple[str, str, str]]) -> None:
    """Add or update students ``(student_id, name, email)`` in the gradebook (nbgrader keeps one name field
    per part; the whole name goes into ``first_name``), so that exports list the whole class."""
    gb = open_gradebook(db_url)
    try:
        for student_id, name, email in students:
            gb.update_or_create_student(student_id, first_name=name or None, email=email or None)
    finally:
        gb.close()
