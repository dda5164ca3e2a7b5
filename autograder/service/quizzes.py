"""Graded quizzes and timed exams of one course: attempts with a variant per student, saved answers, grading,
regrades and item statistics.  The rules live here once; the API and the pages only translate.

A quiz (``course.yml``'s ``quizzes:``, :class:`.policy.QuizPolicy`) is a list of question templates
(:mod:`autograder.quiz`).  Starting an attempt issues every question's variant from a seed the server derives
(:func:`autograder.quiz.variant_seed` of the course, the student, ``<quiz>/<template>`` and the attempt's number
from 0), and stores it as the student sees it with the template's fingerprint.  Nothing a client sends names a
seed, a template or a variant: a body that tries is refused (:class:`ForgedField`).

* **Answers** are saved one at a time as they are given (:meth:`Quizzes.save`), each with an optional sequence
  number: a save older than the stored one (a replayed or reordered request) is refused (:class:`StaleAnswer`),
  so the latest answer stays.  Nothing is saved after the attempt's end by the server's clock (:class:`QuizClosed`).
* **The end of an attempt** (:meth:`Quizzes.ends_at`): for a quiz, the student's last moment (the deadline, or the
  end of the late period, moved by a grant); for a timed exam, the start plus the time limit and the student's
  extra minutes, and never after the deadline plus those extra minutes.
* **Closing**: the student submits (:meth:`Quizzes.submit`; a second submission is refused:
  :class:`AlreadySubmitted`), or the server closes an attempt whose end has passed with the answers saved before
  it (:meth:`Quizzes.close_overdue`).  That runs at request time (every page and API call about the attempt, and
  the instructors' pages) *and* in the service's sweep thread (:class:`QuizCloser`, every few seconds), so an exam
  is graded at its end even if its student never comes back.  A closed attempt's lateness is decided by the
  moment of its submission, or for an attempt closed by the clock by its last saved answer (a student who
  answered in time and did not press 提交 is not late).
* **Counting**: a closed attempt becomes a graded row of ``service_submissions`` in the same transaction, and
  :func:`.counting.choose_in` chooses the counting attempt (``best`` or ``last``) and queues the LMS passback, as
  for a programming assignment; ``grades.csv``, the dashboard and the LTI passback read it unchanged.  A quiz
  has no nbgrader gradebook copy: its rows are settled at once.
* **Regrading** (:meth:`Quizzes.regrade`): after a template is fixed, every submitted answer whose variant the
  template now gives differently is graded again from its stored seed and answer (:func:`.quiz_grading.grade_item`);
  a changed score changes the submission row in place, which posts the new score to the LMS once.  The change is
  shown to the student beside the question and the attempt.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import threading
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from enum import Enum
from typing import Any, Callable

import sqlalchemy as sa

from ..model import SubmissionResult
from ..quiz import Answer, AnswerError, Mistake, Variant, get_template, make_variant, parse_answer, variant_seed
from . import counting, overrides
from .codes import Account
from .database import ACCOUNTS, SUBMISSIONS, Database
from .errors import Forbidden, Invalid, NotFound, NotReady
from .policy import CoursePolicy, QuizPolicy
from .quiz_grading import ItemStatistics, canonical, grade_item, item_statistics, variant_from_json
from .quiz_tables import ATTEMPTS, GRANTS, ITEMS, REGRADES
from .submissions import scores
from .times import course_zone, stamp

MAX_ANSWER_CHARS = 100
MAX_EXTRA_MINUTES = 24 * 60
MAX_EXTRA_ATTEMPTS = 20
NO_ATTEMPT = "没有这次作答"
#: What only the server decides: a body naming one of these is refused with :data:`FORGED`.
SERVER_DECIDES = ("seed", "template", "variant", "form", "options", "key", "question", "score", "correct", "student",
                  "student_id", "attempt", "number")
FORGED = ("不接受“{key}”：题目、变式和种子都由服务器按你的学号和作答次数生成，评分也只在服务器上进行，"
          "请求中不能指定它们")
SAVE_KEYS = ("answer", "seq")
FEEDBACK_TEXT = {"full": "每道题是否答对、正确答案和解析（选错时指出对应的常见错误）", "score": "只显示总分"}
COUNTS_TEXT = {"best": "计入成绩的是得分最高的一次作答（迟交的得分先乘以迟交系数）", "last": "计入成绩的是最后提交的一次作答"}


class AttemptStatus(str, Enum):
    """Where an attempt is (``quiz_attempts.status``)."""

    OPEN = "open"
    SUBMITTED = "submitted"


class ClosedBy(str, Enum):
    """Who closed a submitted attempt (``quiz_attempts.closed_by``)."""

    STUDENT = "student"
    CLOCK = "clock"  # its end passed (a timed exam's time, a quiz's last moment)


class QuizClosed(Forbidden):
    """The attempt's end has passed by the server's clock (or the quiz is closed): nothing more is accepted."""


class NotOpenYet(Forbidden):
    """The quiz opens later."""


class NoAttemptsLeft(Forbidden):
    """Every attempt allowed has been used."""


class AlreadySubmitted(NotReady):
    """The attempt was submitted already: a duplicate or replayed submission, or an answer after it."""


class StaleAnswer(NotReady):
    """A save whose sequence number is not newer than the stored answer's (a replayed or reordered request)."""


class ForgedField(Invalid):
    """A body that names what only the server decides (a seed, a template, a variant, a score)."""


def utc(t: float) -> datetime:
    return datetime.fromtimestamp(t, timezone.utc)


# ------------------------------------------------------------------------------------------ views


@dataclass(frozen=True)
class ItemView:
    """One question of an attempt as a page or the API shows it to one viewer.

    ``shown`` is the variant as it was issued (what the student saw); ``verdict`` (a dict: ``correct``,
    ``score``, ``feedback``, ``answer_text``, ``mistake`` - a :class:`~autograder.quiz.Mistake` or None -, ``note``)
    and ``score`` are None while the attempt is open and whenever the feedback shown is only the total;
    ``corrected`` is the variant it was graded against when that differs from the shown one (a regrade)."""

    position: int
    template: str
    title: str
    points: float
    shown: Variant
    answer: Answer | None
    answer_shown: str
    answered_at: float | None
    verdict: dict[str, Any] | None
    score: float | None
    previous_score: float | None
    regraded_at: float | None
    corrected: Variant | None


@dataclass(frozen=True)
class AttemptView:
    """One attempt as a page or the API shows it (``feedback``: ``full`` or ``score``, what the viewer may see)."""

    id: str
    quiz: str
    number: int
    status: str
    started_at: float
    ends_at: float | None
    answered_at: float | None
    submitted_at: float | None
    closed_by: str | None
    late: bool
    penalty: float
    score: float | None  # after the late penalty
    raw_score: float | None
    max_score: float
    previous_score: float | None
    regraded_at: float | None
    counting: bool
    feedback: str
    seq: int  # the newest stored sequence number (a page continues above it)
    items: list[ItemView]

    @property
    def open(self) -> bool:
        return self.status == AttemptStatus.OPEN.value

    def seconds_left(self, now: float) -> float | None:
        return None if self.ends_at is None else max(0.0, self.ends_at - now)

    def to_json(self, now: float) -> dict[str, Any]:
        def variant(v: Variant, full: bool) -> dict[str, Any]:
            data = {"stem": list(v.stem), "form": v.form}
            if v.form == "choice":
                data["options"] = [{"letter": o.letter, "text": o.text} for o in v.options]
            else:
                data["instruction"] = v.key.instruction() if v.key else ""
            if full:
                data["solution"], data["answer_text"] = v.solution, v.answer_text
            return data

        full = self.feedback == "full" and not self.open
        return {"id": self.id, "quiz": self.quiz, "number": self.number, "status": self.status,
                "started_at": _iso(self.started_at), "ends_at": _iso(self.ends_at), "seconds_left": self.seconds_left(now),
                "submitted_at": _iso(self.submitted_at), "closed_by": self.closed_by, "late": self.late,
                "penalty": self.penalty, "score": self.score, "raw_score": self.raw_score, "max_score": self.max_score,
                "previous_score": self.previous_score, "counting": self.counting, "feedback": self.feedback,
                "seq": self.seq,
                "questions": [{"position": i.position, "title": i.title, "points": i.points,
                               "question": variant(i.shown, full), "answer": i.answer.to_json() if i.answer else None,
                               "answered_at": _iso(i.answered_at), "score": i.score, "previous_score": i.previous_score,
                               "verdict": None if i.verdict is None else {
                                   **i.verdict, "mistake": i.verdict["mistake"].to_json() if i.verdict["mistake"] else None}}
                              for i in self.items]}


def _iso(t: float | None) -> str | None:
    return None if t is None else utc(t).isoformat(timespec="seconds")


@dataclass(frozen=True)
class RegradeReport:
    """What a regrade did: the templates whose variants changed, the answers graded again, and the attempts whose
    score changed (student, attempt number, old raw score, new raw score)."""

    templates: list[str]
    items: int
    changes: list[tuple[str, int, float, float]]


def _answer_shown(variant: Variant, answer: Answer | None) -> str:
    if answer is None:
        return ""
    if answer.choice is not None:
        option = next((o for o in variant.options if o.letter == answer.choice), None)
        return f"{answer.choice}. {option.text}" if option else answer.choice
    return answer.shown


def _fingerprint(templates: list[str]) -> str:
    """One fingerprint of the templates an attempt was graded with (the submission row's ``fingerprint``)."""
    return hashlib.sha256(json.dumps([get_template(t).fingerprint for t in templates]).encode()).hexdigest()


class Quizzes:
    """The quizzes of one course (``course_id``: the seeds' course) in ``db``, by ``policy``, at ``clock``'s time."""

    def __init__(self, db: Database, policy: CoursePolicy, course_id: str, clock: Callable[[], float]) -> None:
        self.db, self.policy, self.course_id, self.clock = db, policy, course_id, clock

    # ---- the rules

    def known(self, name: str) -> QuizPolicy:
        """The quiz ``name`` (:class:`NotFound` when the course has none of that name)."""
        try:
            return self.policy.quizzes[name]
        except KeyError:
            raise NotFound(f"没有小测 {str(name)[:100]}") from None

    def title(self, name: str) -> str:
        return self.known(name).title

    def _grant(self, con: sa.Connection, student: str, name: str):
        return con.execute(sa.select(GRANTS).where((GRANTS.c.student_id == student) & (GRANTS.c.quiz == name))).first()

    def grant(self, student: str, name: str):
        """The staff's exceptions for ``student`` at quiz ``name`` (a ``quiz_grants`` row), or None."""
        with self.db.read() as con:
            return self._grant(con, student, name)

    def policy_for(self, student: str, name: str, grant=None) -> QuizPolicy:
        """Quiz ``name`` as it applies to ``student``: a later deadline (the late period moving with it) and more
        attempts, as granted (``grant``: that row, if already read)."""
        quiz = self.known(name)
        row = grant if grant is not None else self.grant(student, name)
        if row is None:
            return quiz
        return replace(quiz, rules=overrides.personal_policy(quiz.rules, row), attempts=quiz.attempts + row.extra_attempts)

    @staticmethod
    def ends_at(quiz: QuizPolicy, started_at: float, extra_minutes: int = 0) -> float | None:
        """When an attempt started at ``started_at`` ends (epoch seconds; None: never) under ``quiz`` (the student's
        own, :meth:`policy_for`), with ``extra_minutes`` for a timed exam."""
        last = quiz.rules.last_moment()
        if not quiz.is_exam:
            return None if last is None else last.timestamp()
        extra = 60.0 * extra_minutes
        end = started_at + 60.0 * quiz.time_limit_minutes + extra
        return end if last is None else min(end, last.timestamp() + extra)

    def _end_of(self, con: sa.Connection, row) -> float | None:
        grant = self._grant(con, row.student_id, row.quiz)
        return self.ends_at(self.policy_for(row.student_id, row.quiz, grant), row.started_at,
                            grant.extra_minutes if grant is not None else 0)

    def _check_not_staff(self, account: Account) -> None:
        if account.is_staff:
            raise Forbidden("教师和助教的账号不能作答小测；请用学生的访问码")

    # ---- starting, saving, submitting

    def start(self, account: Account, name: str) -> str:
        """Start ``account``'s next attempt at quiz ``name`` and issue its variants, or resume the open one; its id.

        Raises :class:`NotOpenYet`, :class:`QuizClosed` or :class:`NoAttemptsLeft` (and :class:`Forbidden` for staff).
        """
        self._check_not_staff(account)
        student = account.login
        self.known(name)
        self.close_overdue(student=student, quiz=name)
        now = self.clock()
        with self.db.write() as con:
            self.db.lock_for_update(con, ACCOUNTS, ACCOUNTS.c.id == account.id)  # one start of a student at a time
            rows = con.execute(sa.select(ATTEMPTS.c.id, ATTEMPTS.c.status, ATTEMPTS.c.number)
                               .where((ATTEMPTS.c.quiz == name) & (ATTEMPTS.c.student_id == student))).all()
            resumed = next((r.id for r in rows if r.status == AttemptStatus.OPEN.value), None)
            if resumed is not None:
                return resumed
            quiz = self.policy_for(student, name, self._grant(con, student, name))
            tz = course_zone(self.policy)
            if quiz.opens is not None and now < quiz.opens.timestamp():
                raise NotOpenYet(f"{quiz.title} 于 {stamp(quiz.opens, tz)}开放，现在还不能开始")
            if quiz.rules.lateness(utc(now)) == "closed":
                raise QuizClosed(f"{quiz.title} 已于 {stamp(quiz.rules.last_moment(), tz)}截止，不能再开始作答")
            if len(rows) >= quiz.attempts:
                raise NoAttemptsLeft(f"{quiz.title} 最多作答 {quiz.attempts} 次，你已用完" if not quiz.is_exam else
                                     f"{quiz.title} 是限时考试，只能作答一次，你已作答过")
            number = 1 + max((r.number for r in rows), default=0)
            attempt_id = secrets.token_urlsafe(16)
            con.execute(sa.insert(ATTEMPTS).values(id=attempt_id, quiz=name, student_id=student, number=number,
                                                   status=AttemptStatus.OPEN.value, started_at=now, late=False, penalty=1.0))
            for position, q in enumerate(quiz.questions, 1):
                seed = variant_seed(self.course_id, student, f"{name}/{q.template}", number - 1)
                variant = make_variant(q.template, seed, q.form)
                con.execute(sa.insert(ITEMS).values(
                    attempt_id=attempt_id, position=position, template=q.template, form=q.form, points=q.points,
                    seed=str(seed), fingerprint=get_template(q.template).fingerprint,
                    shown_json=json.dumps(variant.to_json(), ensure_ascii=False)))
        return attempt_id

    def _own(self, con: sa.Connection, account: Account, attempt_id: str, *, lock: bool = False):
        """The attempt row ``attempt_id`` if it is ``account``'s own (another's answers exactly like none)."""
        if not isinstance(attempt_id, str) or not 0 < len(attempt_id) <= 64:
            raise NotFound(NO_ATTEMPT)
        if lock:
            self.db.lock_for_update(con, ATTEMPTS, ATTEMPTS.c.id == attempt_id)
        row = con.execute(sa.select(ATTEMPTS).where(ATTEMPTS.c.id == attempt_id)).first()
        if row is None or row.student_id != account.login or row.quiz not in self.policy.quizzes:
            raise NotFound(NO_ATTEMPT)
        return row

    def attempt_id(self, student: str, name: str, number: int) -> str:
        """The id of ``student``'s attempt ``number`` at quiz ``name`` (:class:`NotFound` without one)."""
        with self.db.read() as con:
            found = con.execute(sa.select(ATTEMPTS.c.id).where((ATTEMPTS.c.quiz == name) & (ATTEMPTS.c.student_id == student)
                                                               & (ATTEMPTS.c.number == number))).scalar()
        if found is None:
            raise NotFound(NO_ATTEMPT)
        return found

    def _refuse_closed(self, con: sa.Connection, row, now: float) -> None:
        """Refuse a change to attempt ``row``: :class:`QuizClosed` past its end, :class:`AlreadySubmitted` once the
        student submitted it."""
        tz = course_zone(self.policy)
        end = self._end_of(con, row)
        if row.closed_by == ClosedBy.CLOCK.value or (end is not None and now > end):
            raise QuizClosed(f"作答时间已于 {stamp(end, tz)}结束（以服务器时间为准），不再接受答案；"
                             "服务器已按结束前保存的答案评分")
        if row.status != AttemptStatus.OPEN.value:
            raise AlreadySubmitted(f"第 {row.number} 次作答已于 {stamp(row.submitted_at, tz)}提交，不能再修改或重复提交")

    @staticmethod
    def check_fields(payload: Any, allowed: tuple[str, ...] = ()) -> None:
        """Refuse a body (parsed JSON; None: empty) with a key beyond ``allowed``: :class:`ForgedField` for what only
        the server decides."""
        if payload is not None and not isinstance(payload, dict):
            raise Invalid("请求体应为 JSON 对象")
        for key in payload or ():
            if key in SERVER_DECIDES:
                raise ForgedField(FORGED.format(key=str(key)))
            if key not in allowed:
                raise Invalid(f"未知的字段“{str(key)[:40]}”" + (f"（只接受 {' 和 '.join(allowed)}）" if allowed else "（这个请求不带字段）"))

    @classmethod
    def _payload(cls, payload: Any) -> tuple[str, int | None]:
        """The answer text and sequence number of a save's body (:class:`ForgedField`, :class:`Invalid`)."""
        if not isinstance(payload, dict):
            raise Invalid("请求体应为 JSON 对象 {\"answer\": 答案, \"seq\": 序号}")
        cls.check_fields(payload, SAVE_KEYS)
        if "answer" not in payload:
            raise Invalid("缺少 answer：选择题填选项字母，数值题填一个数（空字符串表示清除答案）")
        answer, seq = payload["answer"], payload.get("seq")
        if isinstance(answer, (int, float)) and not isinstance(answer, bool):
            answer = repr(answer)
        if not isinstance(answer, str) or len(answer) > MAX_ANSWER_CHARS:
            raise Invalid(f"answer 应为不超过 {MAX_ANSWER_CHARS} 个字符的文字")
        if seq is not None and (isinstance(seq, bool) or not isinstance(seq, int) or not 0 <= seq < 2 ** 62):
            raise Invalid("seq 应为非负整数")
        return answer, seq

    def save(self, account: Account, attempt_id: str, position: int, payload: Any) -> dict[str, Any]:
        """Save the answer of question ``position`` of ``account``'s open attempt from ``payload`` (a save's JSON
        body: ``answer`` as typed or picked, an empty text clearing it, and an optional ``seq``); what was saved."""
        text, seq = self._payload(payload)
        now = self.clock()
        self.close_overdue(attempt=attempt_id)
        with self.db.write() as con:
            row = self._own(con, account, attempt_id, lock=True)
            item = con.execute(sa.select(ITEMS).where((ITEMS.c.attempt_id == row.id) & (ITEMS.c.position == position))).first()
            if item is None:
                raise NotFound(f"这次作答没有第 {position} 题")
            self._refuse_closed(con, row, now)
            if seq is not None and item.answer_seq is not None and seq <= item.answer_seq:
                raise StaleAnswer(f"第 {position} 题已保存了更新的答案（序号 {item.answer_seq}），这个较早的请求（序号 {seq}）"
                                  "没有覆盖它；可能是重发的请求，或另一个窗口也在作答，请刷新页面")
            try:
                answer = parse_answer(variant_from_json(json.loads(item.shown_json)), text) if text.strip() else None
            except AnswerError as exc:
                raise Invalid(f"第 {position} 题：{exc}") from None
            con.execute(sa.update(ITEMS).where((ITEMS.c.attempt_id == row.id) & (ITEMS.c.position == position)).values(
                answer_json=json.dumps(answer.to_json()) if answer else None, answer_seq=seq, answered_at=now))
            con.execute(sa.update(ATTEMPTS).where(ATTEMPTS.c.id == row.id).values(answered_at=now))
        return {"position": position, "answer": answer.to_json() if answer else None, "saved_at": _iso(now), "seq": seq}

    def submit(self, account: Account, attempt_id: str) -> None:
        """Submit ``account``'s open attempt: it is graded and counted now.  Raises :class:`AlreadySubmitted` for a
        second submission and :class:`QuizClosed` after its end (the server has then closed it by its clock)."""
        self.close_overdue(attempt=attempt_id)
        now = self.clock()
        with self.db.read() as con:
            row = self._own(con, account, attempt_id)
            self._refuse_closed(con, row, now)
        if not self._close(attempt_id, now, ClosedBy.STUDENT):
            with self.db.read() as con:  # another request closed it in between: say how it stands now
                self._refuse_closed(con, self._own(con, account, attempt_id), now)

    # ---- closing and grading

    def close_overdue(self, *, student: str | None = None, quiz: str | None = None, attempt: str | None = None) -> int:
        """Close and grade every open attempt (of ``student``, ``quiz`` or the one ``attempt``) whose end has passed by
        the server's clock, with the answers saved before it; how many were closed."""
        now = self.clock()
        cond = ATTEMPTS.c.status == AttemptStatus.OPEN.value
        for column, value in ((ATTEMPTS.c.student_id, student), (ATTEMPTS.c.quiz, quiz), (ATTEMPTS.c.id, attempt)):
            if value is not None:
                cond = cond & (column == value)
        with self.db.read() as con:
            due = []
            for row in con.execute(sa.select(ATTEMPTS).where(cond)).all():
                if row.quiz in self.policy.quizzes:
                    end = self._end_of(con, row)
                    if end is not None and now > end:
                        due.append(row)
        return sum(self._close(r.id, r.answered_at or r.started_at, ClosedBy.CLOCK) for r in due)

    def _close(self, attempt_id: str, moment: float, by: ClosedBy) -> bool:
        """Grade and count the open attempt ``attempt_id``, submitted at ``moment`` (which decides its lateness);
        False if it was no longer open."""
        now = self.clock()
        with self.db.write() as con:
            row = con.execute(sa.select(ATTEMPTS.c.student_id, ATTEMPTS.c.quiz).where(ATTEMPTS.c.id == attempt_id)).first()
            if row is None:
                return False
            counting.lock_pair(self.db, con, row.student_id, row.quiz)
            if con.execute(sa.update(ATTEMPTS).where((ATTEMPTS.c.id == attempt_id) & (ATTEMPTS.c.status == AttemptStatus.OPEN.value))
                           .values(status=AttemptStatus.SUBMITTED.value, submitted_at=moment, closed_by=by.value)).rowcount != 1:
                return False
            attempt = con.execute(sa.select(ATTEMPTS).where(ATTEMPTS.c.id == attempt_id)).first()
            quiz = self.policy_for(attempt.student_id, attempt.quiz, self._grant(con, attempt.student_id, attempt.quiz))
            items = con.execute(sa.select(ITEMS).where(ITEMS.c.attempt_id == attempt_id).order_by(ITEMS.c.position)).all()
            total = 0.0
            for item in items:
                graded = self._grade(item)
                total += graded.score
                con.execute(sa.update(ITEMS).where((ITEMS.c.attempt_id == attempt_id) & (ITEMS.c.position == item.position))
                            .values(graded_json=json.dumps(graded.variant.to_json(), ensure_ascii=False),
                                    graded_fingerprint=get_template(item.template).fingerprint,
                                    verdict_json=graded.verdict_json(), score=graded.score))
            late = not quiz.is_exam and quiz.rules.lateness(utc(moment)) == "late"
            penalty = quiz.rules.late_penalty if late else 1.0
            top = float(sum(i.points for i in items))
            sid = secrets.token_urlsafe(16)
            answers = json.dumps([i.answer_json for i in items])
            result = SubmissionResult(attempt.student_id, attempt.quiz, total, top, {}, [],
                                      notes=[f"小测“{quiz.title}”第 {attempt.number} 次作答：每道题的反馈见小测页面"])
            con.execute(sa.insert(SUBMISSIONS).values(
                id=sid, student_id=attempt.student_id, assignment=attempt.quiz, status="graded", created_at=moment,
                filename=f"第 {attempt.number} 次作答", path="", sha256=hashlib.sha256(answers.encode()).hexdigest(),
                size=len(answers), late=late, penalty=penalty, tries=0, graded_at=now, finished_at=now, graded_by="quiz",
                score=total, max_score=top, fingerprint=_fingerprint([i.template for i in items]),
                result_json=json.dumps(result.to_json(), ensure_ascii=False), settled=True))
            con.execute(sa.update(ATTEMPTS).where(ATTEMPTS.c.id == attempt_id).values(
                late=late, penalty=penalty, score=total, max_score=top, submission_id=sid))
            self._count(con, attempt.student_id, attempt.quiz, quiz.rules.counts, now)
        return True

    @staticmethod
    def _count(con: sa.Connection, student: str, name: str, counts: str, now: float) -> None:
        """Choose the counting attempt and queue its passback (:func:`.counting.choose_in`); a quiz has no gradebook
        copy to write, so its rows are settled at once."""
        counting.choose_in(con, student, name, counts, now)
        con.execute(sa.update(SUBMISSIONS).where((SUBMISSIONS.c.student_id == student) & (SUBMISSIONS.c.assignment == name))
                    .values(settled=True))

    @staticmethod
    def _grade(item):
        answer = Answer.from_json(json.loads(item.answer_json)) if item.answer_json else None
        return grade_item(item.template, int(item.seed), item.form, item.points,
                          variant_from_json(json.loads(item.shown_json)), answer)

    # ---- regrades

    def regrade(self, by: str, name: str) -> RegradeReport:
        """Grade again every submitted answer of quiz ``name`` whose variant its template now gives differently (a
        fixed template), from the stored seed and answer; a changed score changes the attempt's submission row in
        place and is counted (and passed back) again.  ``by``: who asked (recorded)."""
        quiz = self.known(name)
        with self.db.read() as con:
            attempts = con.execute(sa.select(ATTEMPTS.c.id).where((ATTEMPTS.c.quiz == name)
                                                                  & (ATTEMPTS.c.status == AttemptStatus.SUBMITTED.value))
                                   .order_by(ATTEMPTS.c.student_id, ATTEMPTS.c.number)).scalars().all()
        templates: set[str] = set()
        changed_items = 0
        changes = []
        current: dict[tuple[str, int, str], dict] = {}
        for attempt_id in attempts:
            now = self.clock()
            with self.db.write() as con:
                attempt = con.execute(sa.select(ATTEMPTS).where(ATTEMPTS.c.id == attempt_id)).first()
                counting.lock_pair(self.db, con, attempt.student_id, name)
                items = con.execute(sa.select(ITEMS).where(ITEMS.c.attempt_id == attempt_id)).all()
                total, moved = 0.0, False
                for item in items:
                    key = (item.template, int(item.seed), item.form)
                    if key not in current:
                        current[key] = canonical(make_variant(*key))
                    if item.graded_json is not None and json.loads(item.graded_json) == current[key]:
                        total += item.score or 0.0
                        continue
                    graded = self._grade(item)
                    templates.add(item.template)
                    changed_items += 1
                    moved = moved or graded.score != item.score
                    total += graded.score
                    con.execute(sa.update(ITEMS).where((ITEMS.c.attempt_id == attempt_id) & (ITEMS.c.position == item.position))
                                .values(graded_json=json.dumps(graded.variant.to_json(), ensure_ascii=False),
                                        graded_fingerprint=get_template(item.template).fingerprint,
                                        verdict_json=graded.verdict_json(), score=graded.score,
                                        previous_score=item.score if graded.score != item.score else item.previous_score,
                                        regraded_at=now if graded.score != item.score else item.regraded_at))
                if moved and total != attempt.score:
                    changes.append((attempt.student_id, attempt.number, attempt.score, total))
                    con.execute(sa.update(ATTEMPTS).where(ATTEMPTS.c.id == attempt_id).values(
                        score=total, previous_score=attempt.score, regraded_at=now))
                    con.execute(sa.update(SUBMISSIONS).where(SUBMISSIONS.c.id == attempt.submission_id).values(
                        score=total, graded_at=now, finished_at=now,
                        fingerprint=_fingerprint([i.template for i in items])))
                    self._count(con, attempt.student_id, name, quiz.rules.counts, now)
        with self.db.write() as con:
            con.execute(sa.insert(REGRADES).values(quiz=name, requested_at=self.clock(), requested_by=by[:128],
                                                   templates=json.dumps(sorted(templates)), items=changed_items,
                                                   attempts=len(changes)))
        return RegradeReport(sorted(templates), changed_items, changes)

    def last_regrade(self, name: str):
        """The latest regrade of quiz ``name`` (a ``quiz_regrades`` row), or None."""
        with self.db.read() as con:
            return con.execute(sa.select(REGRADES).where(REGRADES.c.quiz == name).order_by(REGRADES.c.id.desc())).first()

    # ---- grants (staff with the GRANT permission)

    def grant_exception(self, student: str, name: str, *, by: str, deadline: datetime | None = None,
                        extra_attempts: int = 0, extra_minutes: int = 0) -> None:
        """Record an exception for ``student`` at quiz ``name``: a later ``deadline`` (timezone-aware), more attempts,
        or extra minutes of a timed exam (added to what was granted before; they apply to an exam already running)."""
        quiz = self.known(name)
        if deadline is not None:
            if quiz.deadline is None:
                raise Invalid(f"{quiz.title} 没有截止时间，无需延期")
            if deadline.tzinfo is None or deadline <= quiz.deadline:
                raise Invalid(f"新的截止时间必须晚于原来的截止时间 {stamp(quiz.deadline, course_zone(self.policy))}")
        for value, top, what in ((extra_attempts, MAX_EXTRA_ATTEMPTS, "增加的作答次数"), (extra_minutes, MAX_EXTRA_MINUTES, "延长的分钟数")):
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= top:
                raise Invalid(f"{what}应为 0 到 {top} 之间的整数")
        if extra_attempts and quiz.is_exam:
            raise Invalid("限时考试只能作答一次；为学生延长时间请用“延长分钟数”")
        if extra_minutes and not quiz.is_exam:
            raise Invalid("只有限时考试才有作答时间；小测请延长截止时间")
        key = (GRANTS.c.student_id == student) & (GRANTS.c.quiz == name)
        now = self.clock()
        with self.db.write() as con:
            row = con.execute(sa.select(GRANTS).where(key)).first()
            if row is None:
                con.execute(sa.insert(GRANTS).values(student_id=student, quiz=name, deadline=None, extra_attempts=0,
                                                     extra_minutes=0, updated_at=now, updated_by=by[:128]))
                row = con.execute(sa.select(GRANTS).where(key)).first()
            if row.extra_minutes + extra_minutes > MAX_EXTRA_MINUTES or row.extra_attempts + extra_attempts > MAX_EXTRA_ATTEMPTS:
                raise Invalid("累计的额外时间或次数超过了上限")
            con.execute(sa.update(GRANTS).where(key).values(
                deadline=deadline.timestamp() if deadline is not None else row.deadline,
                extra_attempts=row.extra_attempts + extra_attempts, extra_minutes=row.extra_minutes + extra_minutes,
                updated_at=now, updated_by=by[:128]))

    # ---- a changed course.yml

    def digest(self) -> str:
        """Hash of what decides which attempt of a quiz counts (its ``counts``)."""
        return hashlib.sha256(json.dumps({n: q.rules.counts for n, q in sorted(self.policy.quizzes.items())})
                              .encode()).hexdigest()[:16]

    def resettle(self) -> int:
        """When the quizzes' rules of counting changed since the last start (``course.yml``), choose every student's
        counting attempt again (and pass back what changes); how many (student, quiz) pairs were chosen again."""
        digest = self.digest()
        if self.db.get_setting("quiz_policy_digest") == digest:
            return 0
        with self.db.read() as con:
            pairs = con.execute(sa.select(ATTEMPTS.c.student_id, ATTEMPTS.c.quiz).where(
                ATTEMPTS.c.status == AttemptStatus.SUBMITTED.value).distinct()).all()
        now = self.clock()
        for student, name in pairs:
            if name in self.policy.quizzes:
                with self.db.write() as con:
                    counting.lock_pair(self.db, con, student, name)
                    self._count(con, student, name, self.policy.quizzes[name].rules.counts, now)
        self.db.set_setting("quiz_policy_digest", digest)
        return len(pairs)

    # ---- reading back

    def feedback_for(self, viewer: Account | None, quiz: QuizPolicy, now: float) -> str:
        """``full`` or ``score``: what ``viewer`` (None: the student) sees of graded attempts under the student's
        ``quiz`` now (staff: always everything; students: the quiz's policy until their last moment)."""
        if viewer is not None and viewer.is_staff:
            return "full"
        return quiz.rules.feedback(utc(now))

    def attempts(self, student: str, name: str, viewer: Account | None = None) -> list[AttemptView]:
        """``student``'s attempts at quiz ``name``, newest first, cut to what ``viewer`` (None: the student) may see."""
        now = self.clock()
        with self.db.read() as con:
            grant = self._grant(con, student, name)
            rows = con.execute(sa.select(ATTEMPTS).where((ATTEMPTS.c.quiz == name) & (ATTEMPTS.c.student_id == student))
                               .order_by(ATTEMPTS.c.number.desc())).all()
            items = con.execute(sa.select(ITEMS).where(ITEMS.c.attempt_id.in_([r.id for r in rows]))
                                .order_by(ITEMS.c.position)).all() if rows else []
            counted = counting.counting_rows(con, student=student, assignment=name)
        quiz = self.policy_for(student, name, grant)
        feedback = self.feedback_for(viewer, quiz, now)
        counting_id = counted[0].id if counted else None
        extra = grant.extra_minutes if grant is not None else 0
        by_attempt: dict[str, list] = {}
        for item in items:
            by_attempt.setdefault(item.attempt_id, []).append(item)
        return [self._view(r, by_attempt.get(r.id, []), quiz, feedback, counting_id, extra) for r in rows]

    def _view(self, row, items: list, quiz: QuizPolicy, feedback: str, counting_id: str | None, extra: int) -> AttemptView:
        open_ = row.status == AttemptStatus.OPEN.value
        hidden = open_ or feedback != "full"
        views = []
        for item in items:
            shown = variant_from_json(json.loads(item.shown_json))
            answer = Answer.from_json(json.loads(item.answer_json)) if item.answer_json else None
            verdict = None
            if not hidden and item.verdict_json is not None:
                data = json.loads(item.verdict_json)
                m = data.get("mistake")
                verdict = {**data, "mistake": variant_mistake(m)}
            corrected = None
            if not hidden and item.graded_json is not None and json.loads(item.graded_json) != json.loads(item.shown_json):
                corrected = variant_from_json(json.loads(item.graded_json))
            views.append(ItemView(item.position, item.template, get_template(item.template).title, item.points, shown,
                                  answer, _answer_shown(shown, answer), item.answered_at, verdict,
                                  None if hidden else (item.score or 0.0), None if hidden else item.previous_score,
                                  item.regraded_at, corrected))
        graded = row.score is not None
        return AttemptView(
            row.id, row.quiz, row.number, row.status, row.started_at, self.ends_at(quiz, row.started_at, extra) if open_ else None,
            row.answered_at, row.submitted_at, row.closed_by, bool(row.late), row.penalty,
            counting.effective_score(row.score, row.penalty) if graded else None, row.score, quiz.max_score,
            row.previous_score, row.regraded_at, row.submission_id is not None and row.submission_id == counting_id,
            feedback, max((i.answer_seq or 0 for i in items), default=0), views)

    def attempt(self, viewer: Account, attempt_id: str) -> AttemptView:
        """The attempt ``attempt_id`` as ``viewer`` may see it: their own (students), anyone's (staff)."""
        self.close_overdue(attempt=attempt_id)
        with self.db.read() as con:
            row = con.execute(sa.select(ATTEMPTS).where(ATTEMPTS.c.id == attempt_id)).first() \
                if isinstance(attempt_id, str) and 0 < len(attempt_id) <= 64 else None
        if row is None or row.quiz not in self.policy.quizzes or (not viewer.is_staff and row.student_id != viewer.login):
            raise NotFound(NO_ATTEMPT)
        return next(a for a in self.attempts(row.student_id, row.quiz, viewer) if a.id == attempt_id)

    def of_submission(self, submission_id: str):
        """The attempt row whose submission is ``submission_id`` (None: not a quiz's)."""
        with self.db.read() as con:
            return con.execute(sa.select(ATTEMPTS).where(ATTEMPTS.c.submission_id == submission_id)).first()

    def card(self, student: str, name: str) -> dict[str, Any]:
        """What the course page and the quiz page say about quiz ``name`` to ``student`` now."""
        self.close_overdue(student=student, quiz=name)
        now = self.clock()
        with self.db.read() as con:
            grant = self._grant(con, student, name)
        quiz = self.policy_for(student, name, grant)
        attempts = self.attempts(student, name)
        tz = course_zone(self.policy)
        open_attempt = next((a for a in attempts if a.open), None)
        counted = next((a for a in attempts if a.counting), None)
        lateness = quiz.rules.lateness(utc(now))
        refusal = None
        if open_attempt is None:
            if quiz.opens is not None and now < quiz.opens.timestamp():
                refusal = f"{stamp(quiz.opens, tz)}开放"
            elif lateness == "closed":
                refusal = f"已于 {stamp(quiz.rules.last_moment(), tz)}截止"
            elif len(attempts) >= quiz.attempts:
                refusal = "作答次数已用完" if not quiz.is_exam else "已作答"
        extra = grant.extra_minutes if grant is not None else 0
        return {"name": name, "quiz": quiz, "title": quiz.title, "attempts": attempts, "open": open_attempt,
                "counting": counted, "used": len(attempts), "refusal": refusal, "late_now": lateness == "late",
                "extended": grant is not None and grant.deadline is not None, "extra_minutes": extra,
                "feedback_text": FEEDBACK_TEXT[quiz.rules.feedback_before_deadline],
                "counts_text": COUNTS_TEXT[quiz.rules.counts]}

    # ---- the staff's figures

    def class_rows(self, name: str) -> list[dict[str, Any]]:
        """Every student with an attempt at quiz ``name``: login, attempts, open or not, the counting score."""
        self.close_overdue(quiz=name)
        with self.db.read() as con:
            rows = con.execute(sa.select(ATTEMPTS.c.student_id, ATTEMPTS.c.status, ATTEMPTS.c.number)
                               .where(ATTEMPTS.c.quiz == name)).all()
            counted = {r.student_id: scores(r, kept=True) for r in counting.counting_rows(con, assignment=name)}
            grants = {g.student_id: g for g in con.execute(sa.select(GRANTS).where(GRANTS.c.quiz == name)).all()}
        out: dict[str, dict[str, Any]] = {}
        for r in rows:
            entry = out.setdefault(r.student_id, {"login": r.student_id, "attempts": 0, "open": False,
                                                  "score": counted.get(r.student_id), "grant": grants.get(r.student_id)})
            entry["attempts"] += 1
            entry["open"] = entry["open"] or r.status == AttemptStatus.OPEN.value
        return sorted(out.values(), key=lambda e: e["login"])

    def statistics(self, name: str) -> list[ItemStatistics]:
        """The item statistics of quiz ``name`` over every student's counting attempt (:func:`.quiz_grading.item_statistics`)."""
        quiz = self.known(name)
        with self.db.read() as con:
            counted = [r.id for r in counting.counting_rows(con, assignment=name)]
            rows = con.execute(sa.select(ITEMS.c.attempt_id, ITEMS.c.position, ITEMS.c.score, ITEMS.c.verdict_json)
                               .join(ATTEMPTS, ATTEMPTS.c.id == ITEMS.c.attempt_id)
                               .where(ATTEMPTS.c.submission_id.in_(counted))).all() if counted else []
        students: dict[str, dict[int, tuple[float, dict | None]]] = {}
        for r in rows:
            students.setdefault(r.attempt_id, {})[r.position] = (r.score or 0.0, json.loads(r.verdict_json) if r.verdict_json else None)
        return item_statistics([(i, q.template) for i, q in enumerate(quiz.questions, 1)], list(students.values()))


def variant_mistake(data: dict | None) -> Mistake | None:
    """The :class:`~autograder.quiz.Mistake` of a stored verdict's ``mistake`` data."""
    if not data:
        return None
    return Mistake(data["id"], data["title"], data["page"], data["label"], data["section"])


class QuizCloser:
    """The sweep of one service process: every ``poll`` seconds, close the overdue attempts of every course
    (:meth:`Quizzes.close_overdue`), so a timed exam is graded at its end even if its student never comes back.
    At its start, each course's counting attempts are chosen again if ``course.yml`` changed the rule
    (:meth:`Quizzes.resettle`)."""

    def __init__(self, quizzes: list[Quizzes], log: Callable[[str], None], poll: float = 5.0) -> None:
        self.quizzes, self.log, self.poll = quizzes, log, poll
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def run_once(self) -> int:
        closed = 0
        for q in self.quizzes:
            if q.policy.quizzes:
                try:
                    closed += q.close_overdue()
                except Exception as exc:  # noqa: BLE001 - a database hiccup: try again at the next tick
                    self.log(f"autograder: 关闭到时的小测作答时出错：{type(exc).__name__}: {exc}")
        return closed

    def _loop(self) -> None:
        while not self._stop.wait(self.poll):
            self.run_once()

    def start(self) -> "QuizCloser":
        for q in self.quizzes:
            q.resettle()  # course.yml changed which attempt counts
        self.run_once()  # attempts that ended while the service was down
        self._thread = threading.Thread(target=self._loop, name="quiz-closer", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)


__all__ = ["Quizzes", "QuizCloser", "AttemptView", "ItemView", "RegradeReport", "AttemptStatus", "ClosedBy",
           "QuizClosed", "NotOpenYet", "NoAttemptsLeft", "AlreadySubmitted", "StaleAnswer", "ForgedField"]
