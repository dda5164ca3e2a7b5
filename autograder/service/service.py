"""One course's core, in one object: what ``autograder serve`` builds per course and every web module calls.

:class:`Service` knows its course, the course's database, the course policy, the data folder, the notebooks' rules and a clock; it
never sees an HTTP request.  Its parts: :attr:`Service.accounts` (:class:`.accounts.Accounts`: codes, sign-in
failures, the roster), :attr:`Service.submissions` (:class:`.submissions.Submissions`: may a student submit,
accepting, reading attempts, what counts), :attr:`Service.checks` (:class:`.checks.Checks`: the visible tests run
before an attempt), and the instructor's actions below (exceptions for one student,
regrades, the dashboard's figures).  Refusals are :mod:`.errors`; the web layer decides how they look.

Graded quizzes and timed exams are :attr:`Service.quizzes` (:class:`.quizzes.Quizzes`).

``clock`` (epoch seconds) is read through the object at every use, so a test can move time forward.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime, tzinfo
from pathlib import Path
from typing import Any, Callable

from . import codes, dashboard, overrides, regrade, sessions
from .accounts import Accounts
from .checks import Checks
from .codes import Account
from .courses import UPGRADED, Course
from .database import Database
from .errors import Invalid
from .policy import CoursePolicy
from .quizzes import Quizzes
from .submissions import Submissions
from .times import course_zone
from .uploads import NotebookRules


@dataclass
class Service:
    """What the web layer needs; built by ``autograder serve`` (and by the in-process tests)."""

    db: Database
    policy: CoursePolicy
    data_root: Path
    signer: sessions.Signer
    rules: dict[str, NotebookRules]
    titles: dict[str, str]
    wake: Callable[[], None] = lambda: None
    settle_soon: Callable[[], None] = lambda: None  # the grading loop's: copy unsettled pairs into the gradebook now
    cache: codes.CodeCache = field(default_factory=codes.CodeCache)
    clock: Callable[[], float] = time.time
    course: Course = UPGRADED
    site_db: Database | None = None  # the site's database (bindings, platforms); None: the course's own

    def __post_init__(self) -> None:
        now = lambda: self.clock()  # noqa: E731 - read at every use: a test may replace the clock
        self.accounts = Accounts(self.db, self.policy, now, self.cache)
        self.submissions = Submissions(self.db, self.policy, self.data_root, self.rules, self.titles, now,
                                       lambda: self.wake())
        self.checks = Checks(self.db, self.submissions, now, lambda: self.wake())
        self.quizzes = Quizzes(self.db, self.policy, self.course.id, now)  # graded quizzes and timed exams

    def now(self) -> float:
        return self.clock()

    @property
    def site(self) -> Database:
        """The site's database (the course's own for a course that lives in it)."""
        return self.site_db if self.site_db is not None else self.db

    def course_tz(self) -> tzinfo:
        """The course's one time zone, of every page, form and ``grades.csv`` (:func:`.times.course_zone`)."""
        return course_zone(self.policy)

    # ---- an instructor's exceptions for one student

    def extend_deadline(self, student: str, assignment: str, local_time: str, by: str) -> None:
        """Give ``student`` the later deadline ``local_time`` (``YYYY-MM-DDTHH:MM`` in the course's time zone)."""
        self.accounts.student(student)
        policy = self.policy.assignments[self.submissions.known(assignment)]
        if policy.deadline is None:
            raise overrides.OverrideError(f"作业 {assignment} 没有截止时间，无需延期")
        try:
            naive = datetime.strptime(local_time.strip()[:16], "%Y-%m-%dT%H:%M")
        except ValueError:
            raise Invalid("新的截止时间格式应为 YYYY-MM-DDTHH:MM") from None
        overrides.extend_deadline(self.db, policy, student, naive.replace(tzinfo=self.course_tz()), by)
        self.settle_soon()  # the attempts already made were restated: the gradebook's copy follows

    def add_attempts(self, student: str, assignment: str, extra: str, by: str) -> int:
        """Grant ``student`` ``extra`` (a form's text) more attempts per 24 hours at ``assignment``."""
        self.accounts.student(student)
        policy = self.policy.assignments[self.submissions.known(assignment)]
        try:
            n = int(extra)
        except ValueError:
            raise Invalid("增加的次数应为 1 到 100 之间的整数") from None
        return overrides.add_attempts(self.db, policy, student, n, by)

    def waive_late(self, student: str, assignment: str, waived: str, by: str) -> None:
        """Waive (``waived`` ``"1"``) or restore (``"0"``) ``student``'s late penalty at ``assignment``, for the
        attempts already made (their scores, the counting choice, the LMS and the gradebook follow) and the next."""
        self.accounts.student(student)
        policy = self.policy.assignments[self.submissions.known(assignment)]
        if waived not in ("0", "1"):
            raise Invalid("免除迟交扣分的取值应为 1（免除）或 0（恢复）")
        overrides.waive_late(self.db, policy, student, waived == "1", by)
        self.settle_soon()

    def late_waived(self, student: str, assignment: str) -> bool:
        row = overrides.get(self.db, student, assignment)
        return bool(row is not None and row.waive_late)

    def extra_attempts(self, student: str, assignment: str) -> int:
        row = overrides.get(self.db, student, assignment)
        return row.extra_attempts if row is not None else 0

    # ---- regrades

    def regrade(self, by: Account, assignment: str, *, submission_id: str | None = None) -> str | None:
        """Grade ``assignment`` again (all of it, or the one submission); the student of that submission."""
        student = None
        if submission_id is not None:
            row = self.submissions.get(by, submission_id)
            if row.assignment in self.policy.quizzes:  # graded on the spot, not by the queue: Quizzes.regrade
                raise Invalid("小测的作答不经评分队列：修正题目模板后，请在小测的统计页面重新评分")
            assignment, student = row.assignment, row.student_id
        else:
            self.submissions.known(assignment)
        regrade.request(self.db, assignment, by.login, student=student, submission_id=submission_id)
        self.wake()
        return student

    # ---- the dashboard

    def figures(self, assignment: str) -> dict[str, Any]:
        """The dashboard's figures of ``assignment`` now, the queue, the roster's size and the latest regrade."""
        return {"f": dashboard.assignment_figures(self.db, assignment, self.submissions.title(assignment), self.clock()),
                "queue": dashboard.queue_length(self.db), "roster": self.accounts.roster_size(),
                "progress": regrade.latest(self.db, assignment)}

    def overview(self) -> dict[str, Any]:
        """The figures of every open assignment (with its deadline), the queue and the roster's size."""
        t = self.clock()
        figures = [{**dashboard.assignment_figures(self.db, n, self.submissions.title(n), t), "deadline": p.deadline}
                   for n, p in self.policy.assignments.items()]
        return {"figures": figures, "queue": dashboard.queue_length(self.db), "roster": self.accounts.roster_size()}
