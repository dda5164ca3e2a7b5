"""The course policy of the grading service, read from a documented ``course.yml``.

One entry per assignment that is open for submission::

    assignments:
      ps2_roc_auc:
        deadline: 2026-12-20T23:59:00+08:00   # ISO 8601 with a time zone; omit for no deadline
        late: {penalty: 0.8, until: 2026-12-27T23:59:00+08:00}   # or: late: reject (default)
        attempts_per_24h: 5                   # graded attempts per rolling 24 hours
        feedback_before_deadline: cases       # full | cases | score
        diagnoses_before_deadline: true       # name known misconceptions before the deadline (never under score)
        counts: best                          # best | last: the attempt the gradebook holds

and a few service-wide limits (``upload_limit_mib``, ``login_failures``).  Every error names the key and
the file, in Chinese.  Without a file every assignment is open with :data:`DEFAULTS`.

Graded quizzes and timed exams (:class:`QuizPolicy`, served by :mod:`.quizzes`) are a section of their own::

    quizzes:
      quiz1_confusion:                        # lower-case letters, digits, - and _; not an assignment's name
        title: 小测 1：混淆矩阵                  # shown to students and sent to the LMS as the column's name
        questions:                            # question templates of autograder.quiz, each at most once
          - confusion-cells                   # the template's book form ...
          - {template: fpr-fdr, form: choice, points: 2}   # ... or a form and points of its own
        opens: 2026-12-01T08:00:00+08:00      # optional: no attempt starts earlier
        deadline: 2026-12-20T23:59:00+08:00   # as for assignments; late: reject | {penalty, until} likewise
        attempts: 3                           # attempts in all, each with new variants (default 1)
        feedback_before_deadline: full        # full | score: per question, or only the total, until the last moment
        counts: best                          # best | last
      exam1:
        title: 期中测验
        questions: [auc-pairs, ap-ranking]
        time_limit_minutes: 20                # a timed exam: one attempt, the clock starts when it is opened
        deadline: 2026-12-21T12:00:00+08:00   # no exam runs past it (plus a student's extra time)
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import yaml

from ..model import MAX_NOTEBOOK_BYTES
from ..quiz import QuizError, get_template

FEEDBACK = ("full", "cases", "score")
QUIZ_FEEDBACK = ("full", "score")
COUNTS = ("best", "last")
QUIZ_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
MAX_QUESTIONS = 15  # a page's form carries every answer (and the forms read at most 20 fields)
MAX_QUIZ_ATTEMPTS = 20
MAX_EXAM_MINUTES = 24 * 60
DEFAULTS: dict[str, Any] = {"attempts_per_24h": 10, "feedback_before_deadline": "cases", "counts": "best"}
DAY = 86400.0


class PolicyError(ValueError):
    """``course.yml`` is not valid (message in Chinese, naming the key)."""


@dataclass(frozen=True)
class AssignmentPolicy:
    """What the service allows for one assignment.

    ``late_penalty`` is None when late work is refused, else the factor a late attempt's score is multiplied
    by; late work is accepted until ``late_until``.
    """

    name: str
    deadline: datetime | None
    late_penalty: float | None
    late_until: datetime | None
    attempts_per_24h: int
    feedback_before_deadline: str
    counts: str
    diagnoses_before_deadline: bool = True

    def lateness(self, now: datetime) -> str:
        """``"on_time"``, ``"late"`` (accepted with the penalty) or ``"closed"`` (refused)."""
        if self.deadline is None or now <= self.deadline:
            return "on_time"
        if self.late_penalty is not None and self.late_until is not None and now <= self.late_until:
            return "late"
        return "closed"

    def last_moment(self) -> datetime | None:
        """When the last submission can arrive: the late cut-off if late work is accepted, else the deadline."""
        return self.late_until if self.late_penalty is not None else self.deadline

    def feedback(self, now: datetime) -> str:
        """The feedback policy in force: the configured one until nothing more can be submitted, then ``full``.

        Hidden inputs stay hidden while anyone may still submit (also during a late period).
        """
        end = self.last_moment()
        return "full" if end is not None and now > end else self.feedback_before_deadline

    def shows_diagnoses(self, now: datetime) -> bool:
        """Whether the feedback names known misconceptions now: always once it is ``full``, before that as configured."""
        return self.feedback(now) == "full" or self.diagnoses_before_deadline

    def to_json(self) -> dict[str, Any]:
        iso = lambda t: t.isoformat() if t else None  # noqa: E731
        return {"name": self.name, "deadline": iso(self.deadline), "late_penalty": self.late_penalty,
                "late_until": iso(self.late_until), "attempts_per_24h": self.attempts_per_24h,
                "feedback_before_deadline": self.feedback_before_deadline, "counts": self.counts,
                "diagnoses_before_deadline": self.diagnoses_before_deadline}


@dataclass(frozen=True)
class Question:
    """One question of a quiz: a template of :mod:`autograder.quiz`, the way it is answered, its points."""

    template: str
    form: str
    points: float = 1.0


@dataclass(frozen=True)
class QuizPolicy:
    """A graded quiz, or with ``time_limit_minutes`` a timed exam (one attempt).

    ``rules`` holds what a quiz shares with an assignment (deadline, late work, feedback before the deadline,
    which attempt counts) and answers the same questions: :meth:`AssignmentPolicy.lateness`, ``last_moment``,
    ``feedback``.
    """

    name: str
    title: str
    questions: tuple[Question, ...]
    rules: AssignmentPolicy
    attempts: int = 1
    opens: datetime | None = None
    time_limit_minutes: int | None = None

    @property
    def is_exam(self) -> bool:
        return self.time_limit_minutes is not None

    @property
    def max_score(self) -> float:
        return float(sum(q.points for q in self.questions))

    @property
    def deadline(self) -> datetime | None:
        return self.rules.deadline

    @property
    def late_until(self) -> datetime | None:
        return self.rules.late_until

    def to_json(self) -> dict[str, Any]:
        rules = {k: v for k, v in self.rules.to_json().items() if k not in ("attempts_per_24h", "diagnoses_before_deadline")}
        return {**rules, "title": self.title, "kind": "exam" if self.is_exam else "quiz",
                "attempts": self.attempts, "opens": self.opens.isoformat() if self.opens else None,
                "time_limit_minutes": self.time_limit_minutes, "max_score": self.max_score,
                "questions": [{"template": q.template, "form": q.form, "points": q.points} for q in self.questions]}


@dataclass(frozen=True)
class CoursePolicy:
    """All assignments open for submission and the service's limits."""

    assignments: dict[str, AssignmentPolicy]
    upload_limit_bytes: int = MAX_NOTEBOOK_BYTES  # the one limit the notebooks and the book state
    login_max_failures: int = 20  # failed sign-ins per client address in the window
    login_window_seconds: float = 900.0
    login_max_per_account: int = 10  # failed sign-ins per account (its code's first part) in the window
    quizzes: dict[str, QuizPolicy] = field(default_factory=dict)  # graded quizzes and timed exams

    @property
    def gradable(self) -> list[str]:
        """Everything that gets a score: the assignments, then the quizzes (what the LMS can link and receive)."""
        return [*self.assignments, *self.quizzes]

    def digest(self) -> str:
        """Hash of what decides which attempt counts and how much (re-settles the gradebook when it changes)."""
        data = {n: [p.counts, p.late_penalty] for n, p in sorted(self.assignments.items())}
        return hashlib.sha256(json.dumps(data).encode()).hexdigest()[:16]


def _time(value: Any, where: str) -> datetime:
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.strip())
        except ValueError:
            raise PolicyError(f"{where}：{value!r} 不是 ISO 8601 时间（例如 2026-12-20T23:59:00+08:00）") from None
    if not isinstance(value, datetime):
        raise PolicyError(f"{where}：应为 ISO 8601 时间（例如 2026-12-20T23:59:00+08:00），而不是 {value!r}")
    if value.tzinfo is None or value.utcoffset() is None:
        raise PolicyError(f"{where}：时间 {value.isoformat()} 必须带时区（例如 +08:00 或 Z）")
    return value


def _keys(data: Any, allowed: set[str], where: str) -> dict:
    if not isinstance(data, dict):
        raise PolicyError(f"{where}：应为键值映射")
    unknown = sorted(str(k) for k in set(data) - allowed)
    if unknown:
        raise PolicyError(f"{where}：未知的键 {', '.join(unknown)}（可用：{', '.join(sorted(allowed))}）")
    return data


def _int(value: Any, where: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise PolicyError(f"{where}：应为 {low} 到 {high} 之间的整数，而不是 {value!r}")
    return value


def _assignment(name: str, data: Any, where: str) -> AssignmentPolicy:
    data = _keys(data or {}, {"deadline", "late", "attempts_per_24h", "feedback_before_deadline", "counts",
                              "diagnoses_before_deadline"}, where)
    deadline = _time(data["deadline"], f"{where}.deadline") if data.get("deadline") is not None else None
    late = data.get("late", "reject")
    penalty = until = None
    if late != "reject":
        late = _keys(late, {"penalty", "until"}, f"{where}.late（reject，或 {{penalty: 系数, until: 截止时间}}）")
        penalty = late.get("penalty")
        if isinstance(penalty, bool) or not isinstance(penalty, (int, float)) or not 0 <= penalty <= 1:
            raise PolicyError(f"{where}.late.penalty：迟交得分的系数应在 0 到 1 之间，而不是 {penalty!r}")
        if "until" not in late:
            raise PolicyError(f"{where}.late.until：接受迟交时必须给出最后期限")
        until = _time(late["until"], f"{where}.late.until")
        if deadline is None or until <= deadline:
            raise PolicyError(f"{where}.late.until：迟交的最后期限必须晚于 deadline")
        penalty = float(penalty)
    feedback = data.get("feedback_before_deadline", DEFAULTS["feedback_before_deadline"])
    if feedback not in FEEDBACK:
        raise PolicyError(f"{where}.feedback_before_deadline：应为 {' / '.join(FEEDBACK)} 之一，而不是 {feedback!r}")
    counts = data.get("counts", DEFAULTS["counts"])
    if counts not in COUNTS:
        raise PolicyError(f"{where}.counts：应为 {' / '.join(COUNTS)} 之一，而不是 {counts!r}")
    attempts = _int(data.get("attempts_per_24h", DEFAULTS["attempts_per_24h"]), f"{where}.attempts_per_24h", 1, 1000)
    diagnoses = data.get("diagnoses_before_deadline", True)
    if not isinstance(diagnoses, bool):
        raise PolicyError(f"{where}.diagnoses_before_deadline：应为 true 或 false，而不是 {diagnoses!r}")
    return AssignmentPolicy(name, deadline, penalty, until, attempts, feedback, counts, diagnoses)


def parse_policy(data: Any, known: list[str], where: str = "course.yml") -> CoursePolicy:
    """A :class:`CoursePolicy` from parsed YAML data; ``known`` lists the assignments the grader has."""
    data = _keys(data, {"assignments", "upload_limit_mib", "login_failures", "quizzes"}, where)
    entries = _keys(data.get("assignments"), set(known), f"{where}: assignments") if "assignments" in data else None
    if not entries:
        raise PolicyError(f"{where}: assignments：至少列出一个作业（可用：{', '.join(known)}）")
    assignments = {str(n): _assignment(str(n), v, f"{where}: assignments.{n}") for n, v in entries.items()}
    top = MAX_NOTEBOOK_BYTES >> 20
    mib = data.get("upload_limit_mib", top)
    if isinstance(mib, bool) or not isinstance(mib, (int, float)) or not 0 < mib <= top:
        raise PolicyError(f"{where}: upload_limit_mib：应在 0 到 {top} 之间（MiB），而不是 {mib!r}")
    login = _keys(data.get("login_failures") or {}, {"max", "per_account", "window_minutes"}, f"{where}: login_failures")
    max_failures = _int(login.get("max", 20), f"{where}: login_failures.max", 1, 10000)
    per_account = _int(login.get("per_account", 10), f"{where}: login_failures.per_account", 1, 1000)
    window = _int(login.get("window_minutes", 15), f"{where}: login_failures.window_minutes", 1, 10080)
    listed = data.get("quizzes") or {}
    if not isinstance(listed, dict):
        raise PolicyError(f"{where}: quizzes：应为键值映射（小测的名称 -> 它的设置）")
    quizzes = {str(n): _quiz(str(n), v, f"{where}: quizzes.{n}", known) for n, v in listed.items()}
    return CoursePolicy(assignments, int(mib * (1 << 20)), max_failures, window * 60.0, per_account, quizzes)


QUIZ_KEYS = {"title", "questions", "opens", "deadline", "late", "attempts", "feedback_before_deadline", "counts",
             "time_limit_minutes"}


def _question(data: Any, where: str) -> Question:
    if isinstance(data, str):
        data = {"template": data}
    data = _keys(data, {"template", "form", "points"}, f"{where}（模板 id，或 {{template, form, points}}）")
    try:
        template = get_template(data.get("template"))
    except QuizError as exc:
        raise PolicyError(f"{where}.template：{exc}") from None
    form = data.get("form", template.book_form)
    if form not in template.forms:
        raise PolicyError(f"{where}.form：模板 {template.id} 的作答方式只有 {' / '.join(template.forms)}，而不是 {form!r}")
    points = data.get("points", 1)
    if isinstance(points, bool) or not isinstance(points, (int, float)) or not 0 < points <= 100:
        raise PolicyError(f"{where}.points：应为大于 0、不超过 100 的分值，而不是 {points!r}")
    return Question(template.id, form, float(points))


def _quiz(name: str, data: Any, where: str, known: list[str]) -> QuizPolicy:
    if not QUIZ_NAME.fullmatch(name):
        raise PolicyError(f"{where}：小测的名称只能由小写字母、数字、- 和 _ 组成（最长 64 个字符）")
    if name in known:
        raise PolicyError(f"{where}：{name} 是一项编程作业的名称，小测须另起一个名称")
    data = _keys(data or {}, QUIZ_KEYS, where)
    title = data.get("title", name)
    if not isinstance(title, str) or not 0 < len(title.strip()) <= 200:
        raise PolicyError(f"{where}.title：应为 1 到 200 个字符的名称，而不是 {title!r}")
    listed = data.get("questions")
    if not isinstance(listed, list) or not 0 < len(listed) <= MAX_QUESTIONS:
        raise PolicyError(f"{where}.questions：应列出 1 到 {MAX_QUESTIONS} 道题（题目模板的 id）")
    questions = tuple(_question(q, f"{where}.questions[{i}]") for i, q in enumerate(listed))
    seen = [q.template for q in questions]
    twice = sorted({t for t in seen if seen.count(t) > 1})
    if twice:
        raise PolicyError(f"{where}.questions：模板 {', '.join(twice)} 出现了不止一次（同一份小测中每个模板只能出一道题）")
    feedback = data.get("feedback_before_deadline", "score")
    if feedback not in QUIZ_FEEDBACK:
        raise PolicyError(f"{where}.feedback_before_deadline：应为 {' / '.join(QUIZ_FEEDBACK)} 之一，而不是 {feedback!r}")
    shared = {k: data[k] for k in ("deadline", "late", "counts") if k in data}
    rules = _assignment(name, {**shared, "feedback_before_deadline": feedback}, where)
    opens = _time(data["opens"], f"{where}.opens") if data.get("opens") is not None else None
    if opens is not None and rules.deadline is not None and opens >= rules.deadline:
        raise PolicyError(f"{where}.opens：开放时间必须早于 deadline")
    minutes = data.get("time_limit_minutes")
    if minutes is not None:
        minutes = _int(minutes, f"{where}.time_limit_minutes", 1, MAX_EXAM_MINUTES)
        if data.get("attempts", 1) != 1:
            raise PolicyError(f"{where}.attempts：限时考试只能作答 1 次，而不是 {data['attempts']!r}")
        if data.get("late", "reject") != "reject":
            raise PolicyError(f"{where}.late：限时考试在时间到时由服务器关闭，不接受迟交")
    attempts = _int(data.get("attempts", 1), f"{where}.attempts", 1, MAX_QUIZ_ATTEMPTS)
    return QuizPolicy(name, title.strip(), questions, rules, attempts, opens, minutes)


def load_policy(path: Path | None, known: list[str]) -> CoursePolicy:
    """Read ``course.yml`` at ``path``; None: every known assignment open with :data:`DEFAULTS`, no deadline."""
    if path is None:
        return CoursePolicy({n: _assignment(n, {}, n) for n in known})
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise PolicyError(f"无法读取课程配置 {path}：{exc.strerror}") from None
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise PolicyError(f"课程配置 {path} 不是合法的 YAML：{exc}") from None
    return parse_policy(data, known, str(path))


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


def retry_after(oldest: float, now: float) -> int:
    """Seconds until an attempt made at ``oldest`` (epoch seconds) leaves the rolling 24-hour window."""
    return max(1, int(oldest + DAY - now + 0.999))


__all__ = ["AssignmentPolicy", "CoursePolicy", "QuizPolicy", "Question", "PolicyError", "load_policy", "parse_policy", "utcnow", "retry_after",
           "FEEDBACK", "QUIZ_FEEDBACK", "COUNTS", "DEFAULTS", "DAY"]
