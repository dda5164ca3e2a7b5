"""A check before spending an attempt: the visible tests of an assignment run on the server against an uploaded
notebook, in the same sandbox as grading, without counting as an attempt.

Why it cannot become a channel to the hidden tests or a free CPU sink:

* **only the visible cases run**: the job carries ``visible_only`` (:func:`autograder.batch.jobs.visible_part`), so
  no hidden input ever reaches the sandbox (a notebook cannot remember one and echo it in a visible case's value),
  and the page shows only the visible cases' outcomes (:class:`CheckView` keeps those, whatever else came back);
  the visible tests are in the student's notebook anyway;
* **bounded**: ``checks_per_hour`` per student and assignment (``course.yml``, default 6, 0 turns checks off; a
  rolling hour), one check of a student pending at a time (over the course), none once the assignment is closed
  for them, and a check is claimed only when no attempt is waiting (:class:`.dispatcher.Dispatcher`): it never
  delays a graded attempt;
* **never an attempt**: checks have their own table (``service_checks``) and queue; nothing that counts attempts,
  chooses the counting one or shows the class's figures reads it.  The notebook is kept only until it is checked.

The upload is the API's (``POST api/v1/assignments/{name}/checks``), with the same checks of the caller, the CSRF
token, the body's size and time and the notebook as an attempt's (:mod:`.web.api`).
"""

from __future__ import annotations

import json
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import sqlalchemy as sa

from ..batch.jobs import visible_part
from ..check import all_assignments
from ..model import CaseRecord, CellError, SubmissionResult
from .codes import Account
from .database import ACCOUNTS, CHECKS, Database
from .errors import Forbidden, TooMany
from .policy import retry_after
from .queue import Queue, error_for
from .submissions import Submissions, closed_message, wait_text
from .uploads import check_filename, check_notebook, store_file, stored_path

HOUR = 3600.0
FOLDER = "checks"  # below the course's data folder, beside ``submissions``
CHECK_TAG = "check:"  # a check's job's tag: ``<course>/check:<id>`` (an attempt's: ``<course>/<id>``)
PENDING_RETRY = 10  # seconds a client is told to wait while the student's previous check runs
#: What makes a check's job (and so its fingerprint) differ from an attempt's of the same bytes.
NOTE = "检查：只运行可见测试"


class CheckQueue(Queue):
    """The checks' queue (table ``service_checks``): claims as the submissions' (:class:`.queue.Queue`); a result is
    recorded by :meth:`done`, with nothing else in its transaction (a check counts nowhere)."""

    def __init__(self, db: Database, instance: str, lease: float) -> None:
        super().__init__(db, instance, lease, CHECKS)

    def done(self, check_id: str, result_json: str) -> bool:
        """Record a check's result (the visible cases'); False if this process no longer holds the claim."""
        now = time.time()
        with self.db.write() as con:
            return con.execute(sa.update(CHECKS).where(self._mine(check_id)).values(
                status="graded", result_json=result_json, graded_at=now, finished_at=now, claimed_by=None,
                lease_until=None)).rowcount == 1


@dataclass(frozen=True)
class CheckWindow:
    """How many checks a student has left at one assignment, and whether one of theirs is still running."""

    limit: int  # checks per rolling hour (0: checks are off)
    left: int
    wait: int | None  # seconds until one comes back (none left)
    pending: bool  # a check of this student (any assignment) is queued or running


@dataclass
class CheckView:
    """A check as the student's page shows it: only the visible cases' outcomes."""

    id: str
    status: str  # queued | grading | graded | failed
    created_at: float
    filename: str
    cases: list[CaseRecord] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    cell_errors: list[CellError] = field(default_factory=list)
    error: str | None = None

    @property
    def passed(self) -> int:
        return sum(1 for c in self.cases if c.passed)

    @property
    def pending(self) -> bool:
        return self.status in ("queued", "grading")


def view_of(row) -> CheckView:
    """The :class:`CheckView` of a ``service_checks`` row; a result's hidden cases are dropped (none should be there:
    the job runs the visible ones only), and a failure's reason is the one a student may read (:func:`.queue.error_for`)."""
    v = CheckView(row.id, row.status, row.created_at, row.filename)
    if row.status == "graded" and row.result_json:
        result = SubmissionResult.from_json(json.loads(row.result_json))
        v.cases = [c for c in result.cases if not c.hidden]
        v.notes, v.cell_errors = list(result.notes), list(result.cell_errors)
    elif row.status == "failed":
        v.error = error_for(row.status, row.failure, row.error, instructor=False)
    return v


class Checks:
    """The checks of one course: may a student check now, accepting one, the latest one's view."""

    def __init__(self, db: Database, submissions: Submissions, clock: Callable[[], float], wake: Callable[[], None]) -> None:
        self.db, self.submissions, self.clock, self.wake = db, submissions, clock, wake

    def _window(self, con: sa.Connection, student: str, assignment: str, now: float) -> CheckWindow:
        limit = self.submissions.course.assignments[assignment].checks_per_hour
        C = CHECKS
        recent = con.execute(sa.select(C.c.created_at).where((C.c.student_id == student) & (C.c.assignment == assignment)
                                                             & (C.c.created_at > now - HOUR))
                             .order_by(C.c.created_at.desc()).limit(max(limit, 1))).scalars().all()
        pending = con.execute(sa.select(C.c.id).where((C.c.student_id == student) & C.c.status.in_(("queued", "grading")))
                              .limit(1)).first() is not None
        left = max(0, limit - len(recent))
        wait = retry_after(min(recent), now, HOUR) if limit and not left else None
        return CheckWindow(limit, left, wait, pending)

    def window(self, student: str, assignment: str, now: float) -> CheckWindow:
        with self.db.read() as con:
            return self._window(con, student, assignment, now)

    def _refuse(self, account: Account, assignment: str, w: CheckWindow, now: float) -> None:
        closed = self.submissions.window(account.login, assignment, now)
        if closed.closed:
            raise Forbidden(closed_message(closed.policy))
        if not w.limit:
            raise Forbidden(f"作业 {assignment} 没有开放提交前的检查")
        if w.pending:
            raise TooMany("你的上一次检查还没有完成：等它的结果出来后再检查", retry_after=PENDING_RETRY)
        if not w.left:
            raise TooMany(f"作业 {assignment} 每小时最多检查 {w.limit} 次，已用完；请 {w.wait} 秒后再检查（提交评分不受影响）",
                          retry_after=w.wait)

    def check_can_check(self, account: Account, assignment: str, now: float) -> None:
        """Whether ``account`` may check a notebook of ``assignment`` now; raises the refusal (before the body is read)."""
        self.submissions.known(assignment)
        if account.is_staff:
            raise Forbidden("教师和助教的账号不能检查作业；请用学生的访问码")
        self._refuse(account, assignment, self.window(account.login, assignment, now), now)

    def accept(self, account: Account, assignment: str, arrived: float, filename: str | None, data: bytes) -> str:
        """Check and store an uploaded notebook for a check; the new check's id (raises a :class:`~.errors.ServiceError`)."""
        name = check_filename(filename)
        check_notebook(data, self.submissions.rules[assignment])
        self._refuse(account, assignment, self.window(account.login, assignment, arrived), arrived)
        cid = secrets.token_urlsafe(16)
        path, digest = store_file(self.submissions.data_root, assignment, account.login, cid, data, folder=FOLDER)
        try:
            with self.db.write() as con:
                self.db.lock_for_update(con, ACCOUNTS, ACCOUNTS.c.id == account.id)  # one check of a student at a time
                self._refuse(account, assignment, self._window(con, account.login, assignment, arrived), arrived)
                con.execute(sa.insert(CHECKS).values(id=cid, student_id=account.login, assignment=assignment, status="queued",
                                                     created_at=arrived, filename=name, path=path, sha256=digest,
                                                     size=len(data), tries=0))
        except BaseException:
            (self.submissions.data_root / path).unlink(missing_ok=True)
            raise
        self.wake()
        return cid

    def panel(self, student: str, assignment: str, now: float) -> dict:
        """What the assignment's page shows about checks: whether they are on (``limit``), the student's latest check
        and a line on how many are left (or why none can start now)."""
        w = self.window(student, assignment, now)
        if w.pending:
            text = "上一次检查完成后才能再检查。"
        elif w.left:
            text = f"这一小时内还可检查 {w.left} 次（每小时 {w.limit} 次）。"
        else:
            text = f"这一小时内的 {w.limit} 次检查已用完，{wait_text(w.wait or 0)}后恢复 1 次；提交评分不受影响。"
        return {"limit": w.limit, "latest": self.latest(student, assignment), "text": text}

    def latest(self, student: str, assignment: str) -> CheckView | None:
        """The student's latest check of ``assignment`` (None: never checked)."""
        with self.db.read() as con:
            row = con.execute(sa.select(CHECKS).where((CHECKS.c.student_id == student) & (CHECKS.c.assignment == assignment))
                              .order_by(CHECKS.c.created_at.desc()).limit(1)).first()
        return None if row is None else view_of(row)


def discard(data_root: Path, assignment: str, student: str, check_id: str) -> None:
    """Remove a checked notebook (the check's result is all that is kept)."""
    (data_root / stored_path(FOLDER, assignment, student, check_id)).unlink(missing_ok=True)


def visible_assignment(name: str):
    """The assignment ``name`` as a check runs it (:func:`autograder.batch.jobs.visible_part`)."""
    return visible_part(all_assignments()[name])
