"""Submissions: whether a student may submit now (and why not), accepting an upload, reading attempts back.

Each of these is decided here once and used by the API and by the pages alike (the attempts rule they apply is
:mod:`.attempts`, lateness :meth:`.policy.AssignmentPolicy.lateness`):

* :meth:`Submissions.window` - the student's own policy (with the instructor's exceptions), whether the
  assignment is on time, late or closed at a moment, and how many attempts are left (and when the next one comes
  back, by the rule of :mod:`.attempts`); :meth:`Submissions.check_can_submit` turns a closed window or no
  attempts left into the refusal;
* :meth:`Submissions.accept` - checks and stores an upload under the student's row lock (the attempts are
  counted again inside the transaction, so two uploads at once cannot both take the last attempt);
* :func:`scores` - the one shape of a submission's score: ``score`` is what counts (the raw score times the
  late penalty, :func:`.counting.effective_score`), ``raw_score`` what the grader gave, both only once graded;
* :meth:`Submissions.attempts` - a student's attempts as pages show them, with the feedback cut to what the
  viewer may see (:meth:`Submissions.shown_feedback`);
* :meth:`Submissions.grades_csv` and :meth:`Submissions.counting_scores` - the counting attempts' scores,
  derived from the submissions (see :mod:`.counting`).
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass
from datetime import datetime, timezone, tzinfo
from pathlib import Path
from typing import Any, Callable

import sqlalchemy as sa

from ..check import all_assignments
from ..model import SubmissionResult
from ..store.report import FEEDBACK_POLICIES
from . import grade_sheet, overrides, queue
from .attempts import WINDOW, Recent, attempts_left, rows_needed
from .codes import Account
from .counting import BEING_REGRADED, counting_rows, effective_score, lock_pair, with_penalty
from .database import ACCOUNTS, SUBMISSIONS, Database
from .errors import Forbidden, Invalid, NotFound, NotReady, TooMany
from .policy import AssignmentPolicy, CoursePolicy
from .times import course_zone, stamp
from .uploads import NotebookRules, check_filename, check_notebook, store_file

NOT_FOUND = "没有这份提交"
MAX_LISTED = 5000
COUNTS_TEXT = {
    "best": ("计入成绩的是得分最高的一次提交（迟交的得分先乘以迟交系数再比较；同分时取较早的一次）", "按得分最高的一次计"),
    "last": ("计入成绩的是最后一次评分完成的提交（无论高低）", "按最后一次提交计"),
}


def error_shown(row, viewer: Account | None) -> str | None:
    """Why the submission ``row`` could not be graded, or its regrade could not finish (a ``graded`` row that kept
    its previous result), as ``viewer`` may read it (:func:`.queue.error_for`): an instructor the whole stored
    reason, a student (or None: the student) no internal detail of the grading system; None while it is queued
    or being graded."""
    if row.status not in ("graded", "failed"):
        return None
    return queue.error_for(row.status, row.failure, row.error, instructor=viewer is not None and viewer.is_staff)


def utc(t: float) -> datetime:
    return datetime.fromtimestamp(t, timezone.utc)


@dataclass(frozen=True)
class Scores:
    """A submission's score: ``score`` counts (raw x penalty); all None until it is graded."""

    score: float | None
    raw_score: float | None
    max_score: float | None


def scores(row, *, kept: bool = False) -> Scores:
    """The :class:`Scores` of a submission row (``status``, ``score``, ``penalty``, ``max_score``).

    ``kept``: a row being graded again (a regrade) shows its previous result meanwhile (a counting attempt keeps
    counting with it: :func:`.counting.choose_in`)."""
    if row.status != "graded" and not (kept and row.score is not None):
        return Scores(None, None, None)
    return Scores(effective_score(row.score, row.penalty), row.score, row.max_score)


@dataclass(frozen=True)
class Window:
    """What a student may do at ``assignment`` at one moment."""

    policy: AssignmentPolicy
    lateness: str  # on_time | late | closed
    left: int  # attempts left in the rolling 24 hours
    wait: int | None  # seconds until one attempt comes back (when none is left)
    extended: bool  # the instructor gave this student a later deadline

    @property
    def closed(self) -> bool:
        return self.lateness == "closed"


def closed_message(p: AssignmentPolicy) -> str:
    end = p.last_moment()
    return f"作业 {p.name} 已于 {end.isoformat()} 截止，不再接受提交" + ("（迟交期也已结束）" if p.late_penalty is not None else "")


def attempts_message(p: AssignmentPolicy, wait: int) -> str:
    return (f"作业 {p.name} 在 24 小时内最多评分 {p.attempts_per_24h} 次，已用完；"
            f"请 {wait} 秒（约 {wait / 3600:.1f} 小时）后再提交")


@dataclass
class Attempt:
    """One submission as a page shows it."""

    id: str
    number: int
    student_id: str
    assignment: str
    status: str
    created_at: float
    graded_at: float | None
    filename: str
    late: bool
    penalty: float
    score: float | None
    raw_score: float | None
    max_score: float | None
    error: str | None
    position: int | None
    counting: bool
    result: SubmissionResult | None
    shown: str
    policy_text: str
    settled: bool = True  # False: graded, the gradebook's copy of the counting attempt not yet written
    show_diagnoses: bool = True  # the named misconceptions of the feedback (course.yml diagnoses_before_deadline)
    regrading: bool = False  # being graded again: score and feedback are the previous result's, kept meanwhile
    waived: bool = False  # late, with the late penalty waived for this student
    feedback_note: str | None = None  # what the cut feedback shows now and later (:func:`feedback_note`; None: full)


class Submissions:
    """The submissions of the course ``course`` in ``db``; uploads are stored under ``data_root``."""

    def __init__(self, db: Database, course: CoursePolicy, data_root: Path, rules: dict[str, NotebookRules],
                 titles: dict[str, str], clock: Callable[[], float], wake: Callable[[], None]) -> None:
        self.db, self.course, self.data_root, self.rules, self.titles = db, course, data_root, rules, titles
        self.clock, self.wake = clock, wake

    # ---- the rules

    def known(self, assignment: str) -> str:
        """``assignment`` if it is open for submission in this course, else :class:`NotFound`."""
        if assignment not in self.course.assignments:
            raise NotFound(f"没有开放提交的作业 {assignment[:100]}")
        return assignment

    def title(self, assignment: str) -> str:
        return self.titles.get(assignment, assignment)

    def policy_for(self, student: str, assignment: str) -> AssignmentPolicy:
        """The policy of ``assignment`` as it applies to ``student`` (with the instructor's exceptions)."""
        return overrides.personal_policy(self.course.assignments[assignment], overrides.get(self.db, student, assignment))

    def _window(self, con: sa.Connection, student: str, assignment: str, now: float) -> Window:
        row = overrides.get(self.db, student, assignment)
        policy = overrides.personal_policy(self.course.assignments[assignment], row)
        S = SUBMISSIONS
        owner = (S.c.student_id == student) & (S.c.assignment == assignment)
        recent = con.execute(sa.select(S.c.created_at, S.c.status, S.c.failure)
                             .where(owner & (S.c.created_at > now - WINDOW)).order_by(S.c.created_at.desc())
                             .limit(rows_needed(policy.attempts_per_24h))).all()
        left, wait = attempts_left((Recent(*r) for r in recent), policy.attempts_per_24h, now)
        return Window(policy, policy.lateness(utc(now)), left, wait, row is not None and row.deadline is not None)

    def window(self, student: str, assignment: str, now: float) -> Window:
        """The :class:`Window` of ``student`` at ``assignment`` at ``now`` (epoch seconds)."""
        with self.db.read() as con:
            return self._window(con, student, assignment, now)

    @staticmethod
    def check_window(w: Window) -> None:
        """Refuse a new attempt in window ``w``: :class:`Forbidden` when closed, :class:`TooMany` without attempts."""
        if w.closed:
            raise Forbidden(closed_message(w.policy))
        if not w.left:
            raise TooMany(attempts_message(w.policy, w.wait), retry_after=w.wait)

    def check_can_submit(self, account: Account, assignment: str, now: float) -> None:
        """Whether ``account`` may submit ``assignment`` now; raises the refusal (read before an upload's body)."""
        self.known(assignment)
        if account.is_staff:
            raise Forbidden("教师和助教的账号不能提交作业；请用学生的访问码")
        self.check_window(self.window(account.login, assignment, now))

    # ---- accepting

    def accept(self, account: Account, assignment: str, arrived: float, filename: str | None, data: bytes) -> str:
        """Check and store an uploaded notebook; the new submission's id (raises a :class:`~.errors.ServiceError`)."""
        name = check_filename(filename)
        check_notebook(data, self.rules[assignment])
        w = self.window(account.login, assignment, arrived)
        if w.closed:
            raise Forbidden(closed_message(w.policy))
        sid = secrets.token_urlsafe(16)
        # the file first, outside the transaction (its fsync must not hold up other writers); a refusal or a
        # crash before the commit leaves a file no row points to, which is removed or never read
        path, digest = store_file(self.data_root, assignment, account.login, sid, data)
        try:
            with self.db.write() as con:
                self.db.lock_for_update(con, ACCOUNTS, ACCOUNTS.c.id == account.id)  # one upload of a student at a time
                lock_pair(self.db, con, account.login, assignment)  # an exception granted meanwhile restates this one too
                w = self._window(con, account.login, assignment, arrived)
                self.check_window(w)
                late, penalty = w.policy.terms(utc(arrived))  # (not closed: checked above)
                con.execute(sa.insert(SUBMISSIONS).values(
                    id=sid, student_id=account.login, assignment=assignment, status="queued", created_at=arrived,
                    filename=name, path=path, sha256=digest, size=len(data), late=late, penalty=penalty,
                    tries=0, settled=True))
        except BaseException:
            (self.data_root / path).unlink(missing_ok=True)
            raise
        self.wake()
        return sid

    # ---- reading back

    def get(self, account: Account, submission_id: str):
        """The row of a submission the caller may see (:class:`NotFound` for everything else, existing or not)."""
        if not (0 < len(submission_id) <= 64):
            raise NotFound(NOT_FOUND)
        with self.db.read() as con:
            row = con.execute(sa.select(SUBMISSIONS).where(SUBMISSIONS.c.id == submission_id)).first()
        if row is None or (not account.is_staff and row.student_id != account.login):
            raise NotFound(NOT_FOUND)
        return row

    def shown_feedback(self, viewer: Account | None, policy: AssignmentPolicy | None, now: float) -> str:
        """What a feedback page shows ``viewer`` (None: the student) under the student's ``policy``."""
        if (viewer is not None and viewer.is_staff) or policy is None:
            return "full"
        return policy.feedback(utc(now))

    def shows_diagnoses(self, viewer: Account | None, policy: AssignmentPolicy | None, now: float) -> bool:
        """Whether the feedback names the misconceptions it recognised (always once the full feedback is shown;
        before that as the course's ``diagnoses_before_deadline`` says; never under the ``score`` policy)."""
        shown = self.shown_feedback(viewer, policy, now)
        return shown == "full" or (shown != "score" and policy is not None and policy.shows_diagnoses(utc(now)))

    def feedback(self, account: Account, row) -> tuple[str, SubmissionResult, str, bool]:
        """``(title, result as it counts, what to show, whether diagnoses are named)`` of a graded submission
        (:class:`NotReady` before)."""
        if row.status != "graded":
            raise NotReady("这份提交还没有评分完成" if row.status in ("queued", "grading") else
                           f"这份提交未能评分：{error_shown(row, account) or ''}")
        result = with_penalty(SubmissionResult.from_json(json.loads(row.result_json)), row.penalty)
        policy = self.policy_for(row.student_id, row.assignment) if row.assignment in self.course.assignments else None
        now = self.clock()
        return (self.title(row.assignment), result, self.shown_feedback(account, policy, now),
                self.shows_diagnoses(account, policy, now))

    def listing(self, account: Account, assignment: str | None, student: str | None) -> list:
        """The caller's submissions, newest first (the staff's: everyone's, or ``student``'s)."""
        S = SUBMISSIONS
        q = sa.select(S).order_by(S.c.created_at.desc()).limit(MAX_LISTED)
        if assignment:
            q = q.where(S.c.assignment == assignment)
        if not account.is_staff:
            q = q.where(S.c.student_id == account.login)
        elif student:
            q = q.where(S.c.student_id == student)
        with self.db.read() as con:
            return con.execute(q).all()

    def attempts(self, student: str, assignment: str, viewer: Account | None, now: float) -> list[Attempt]:
        """The attempts of ``student`` at ``assignment``, newest first, with feedback cut to what ``viewer`` may see."""
        S = SUBMISSIONS
        policy = self.policy_for(student, assignment)
        with self.db.read() as con:
            rows = con.execute(sa.select(S).where((S.c.student_id == student) & (S.c.assignment == assignment))
                               .order_by(S.c.created_at)).all()
            counting = counting_rows(con, student=student, assignment=assignment)
            queued = con.execute(sa.select(S.c.created_at).where(S.c.status == "queued").order_by(S.c.created_at)).scalars().all()
        counting_id = counting[0].id if counting else None
        shown = self.shown_feedback(viewer, policy, now)
        named = self.shows_diagnoses(viewer, policy, now)
        out = []
        note = feedback_note(shown, full_feedback_when(policy, course_zone(self.course))) if shown != "full" else None
        for number, row in enumerate(rows, 1):
            regrading = row.status in BEING_REGRADED and row.result_json is not None
            kept = row.status == "graded" or regrading
            result = with_penalty(SubmissionResult.from_json(json.loads(row.result_json)), row.penalty) if kept and row.result_json else None
            position = 1 + sum(1 for t in queued if t < row.created_at) if row.status == "queued" else None
            s = scores(row, kept=regrading)
            out.append(Attempt(row.id, number, row.student_id, row.assignment, row.status, row.created_at,
                               row.graded_at if kept or row.status == "failed" else None, row.filename, bool(row.late),
                               row.penalty, s.score, s.raw_score, s.max_score, error_shown(row, viewer),
                               position, row.id == counting_id, result, shown, FEEDBACK_POLICIES[shown],
                               bool(row.settled), named, regrading, bool(row.late) and policy.late_waived, note))
        out.reverse()
        return out

    def view(self, student: str, assignment: str, now: float, viewer: Account | None = None) -> dict[str, Any]:
        """What the course page and the assignment page show about one assignment to one student."""
        w = self.window(student, assignment, now)
        policy = w.policy
        rows = self.attempts(student, assignment, viewer, now)
        if w.left:
            attempts_text = f"24 小时内还可提交 {w.left} 次（共 {policy.attempts_per_24h} 次）"
        else:
            attempts_text = f"24 小时内的 {policy.attempts_per_24h} 次已用完，{wait_text(w.wait)}后恢复 1 次"
        refusal = None
        if w.closed:
            refusal = f"本作业已于 {stamp(policy.last_moment(), course_zone(self.course))}截止，不再接受提交。"
        elif not w.left:
            refusal = f"你在 24 小时内的 {policy.attempts_per_24h} 次评分已用完，{wait_text(w.wait)}后可以再提交 1 次。"
        rules = self.rules[assignment]
        counting = next((a for a in rows if a.counting), None)
        return {
            "name": assignment, "title": self.title(assignment), "policy": policy,
            "notebook": all_assignments()[assignment].notebook, "extended": w.extended,
            "late_text": late_text(policy, course_zone(self.course)), "attempts_left": w.left, "attempts_text": attempts_text, "refusal": refusal,
            "late_now": w.lateness == "late", "closed": w.closed,
            "feedback_text": feedback_text(policy, utc(now), course_zone(self.course)),
            "counts_text": COUNTS_TEXT[policy.counts][0], "counts_short": COUNTS_TEXT[policy.counts][1],
            "attempts": rows, "counting": counting, "pending": any(a.status in ("queued", "grading") for a in rows),
            "grade_ids": sorted(rules.grade_ids), "functions": list(rules.functions),
            "owners": json.dumps(rules.owners, ensure_ascii=False, sort_keys=True),
        }

    # ---- what counts

    def counting_scores(self) -> dict[str, dict[str, Scores]]:
        """Student -> assignment -> the :class:`Scores` of the counting attempt."""
        with self.db.read() as con:
            rows = counting_rows(con)
        out: dict[str, dict[str, Scores]] = {}
        for r in rows:
            out.setdefault(r.student_id, {})[r.assignment] = scores(r, kept=True)
        return out

    def _attempt_counts(self, con: sa.Connection) -> dict[tuple[str, str], int]:
        S = SUBMISSIONS
        rows = con.execute(sa.select(S.c.student_id, S.c.assignment, sa.func.count()).group_by(S.c.student_id, S.c.assignment))
        return {(sid, a): n for sid, a, n in rows}

    def attempt_counts(self) -> dict[str, dict[str, int]]:
        """Student -> assignment -> how many attempts."""
        with self.db.read() as con:
            counts = self._attempt_counts(con)
        out: dict[str, dict[str, int]] = {}
        for (sid, a), n in counts.items():
            out.setdefault(sid, {})[a] = n
        return out

    def grades_csv(self, shape: str = "long") -> str:
        """``grades.csv`` (:mod:`.grade_sheet`) in ``shape`` (``long``: every enrolled student at every open
        assignment and quiz, the counting attempt's score with the penalty (empty without one), when it arrived in the course's
        zone, late, penalty, the attempts made; ``wide``: a row per student, a column per assignment)."""
        if shape not in grade_sheet.FORMATS:
            raise Invalid(f"grades.csv 的 format 应为 {' 或 '.join(grade_sheet.FORMATS)}，而不是 {shape[:40]!r}")
        with self.db.read() as con:
            rows = counting_rows(con)
            tries = self._attempt_counts(con)
            students = con.execute(sa.select(ACCOUNTS.c.login, ACCOUNTS.c.name).where(ACCOUNTS.c.role == "student")
                                   .order_by(ACCOUNTS.c.login)).all()
        counted = {}
        for r in rows:
            s = scores(r, kept=True)
            counted[(r.student_id, r.assignment)] = grade_sheet.Counted(s.score, s.raw_score, s.max_score, r.created_at,
                                                                        bool(r.late), r.penalty)
        known = all_assignments()
        tops = {a: (known[a].max_score() if a in known else None) for a in self.course.assignments}
        tops.update({q: p.max_score for q, p in self.course.quizzes.items()})  # graded quizzes count alike
        return grade_sheet.write([(s.login, s.name or "") for s in students], tops, counted, course_zone(self.course),
                                 tries, shape)


def wait_text(seconds: float) -> str:
    """``约 3 小时 20 分钟`` / ``约 12 分钟``: how long until the next attempt is possible."""
    minutes = max(1, int(seconds // 60))
    return f"约 {minutes // 60} 小时 {minutes % 60} 分钟" if minutes >= 60 else f"约 {minutes} 分钟"


def late_text(p: AssignmentPolicy, tz: tzinfo) -> str:
    """What happens after the deadline, the late cut-off in the course's zone ``tz`` (to the student: a waived
    penalty is theirs)."""
    if p.deadline is None:
        return "无截止时间，随时可以提交"
    if p.late_penalty is None:
        return "截止后不再接受提交"
    if p.late_waived:
        return f"截止后到 {stamp(p.late_until, tz)}仍可提交；迟交扣分已为你免除，迟交的得分照常计入"
    return f"截止后到 {stamp(p.late_until, tz)}仍可提交，得分乘以 {p.late_penalty:g}"


#: What the feedback shows under each policy before it is full, and what it adds once full.
FEEDBACK_NOW = {"score": "只显示得分", "cases": "只显示每个用例是否通过"}
FEEDBACK_LATER = {"score": "每个用例的结果、输入和期望值", "cases": "每个用例的输入、期望值和你的函数的结果"}


def full_feedback_when(p: AssignmentPolicy, tz: tzinfo) -> str | None:
    """The clause saying when the feedback of ``p`` becomes full: after the last moment a submission can arrive,
    the late cut-off when late work is accepted (:meth:`.policy.AssignmentPolicy.feedback` is the rule); None
    without a deadline (it never does)."""
    end = p.last_moment()
    if end is None:
        return None
    return f"迟交期在 {stamp(end, tz)}结束" if p.late_penalty is not None else f"本作业在 {stamp(end, tz)}截止"


def feedback_note(policy: str, when: str | None) -> str:
    """The one sentence a feedback cut by ``policy`` (``score`` | ``cases``) says about itself: what it shows now and,
    ``when`` (:func:`full_feedback_when`), what it will show after that moment."""
    now = f"现在{FEEDBACK_NOW[policy]}"
    return f"{now}；{when}，之后可以看到{FEEDBACK_LATER[policy]}。" if when else f"{now}。"


def feedback_text(p: AssignmentPolicy, now: datetime, tz: tzinfo) -> str:
    """The assignment page's line on the feedback: what it shows now and when that changes."""
    if p.feedback(now) == "full":
        return f"显示全部：{FEEDBACK_POLICIES['full']}"
    return feedback_note(p.feedback_before_deadline, full_feedback_when(p, tz))
