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
        checks_per_hour: 6                    # checks of the visible tests before an attempt (0: none)

and a few service-wide limits (``upload_limit_mib``, ``login_failures``); ``hub`` signs the course's people in
through JupyterHub and links its assignments there (:mod:`.hub`).  :data:`KEYS` lists every key with what
it takes, its default and what it decides: the parser below accepts exactly those keys and takes its defaults and
bounds from there, and the instructors' reference page is generated from it (docs/_ext/guide_reference.py).  Every
error names the key and the file, in Chinese.  Without a file every assignment is open with the defaults.

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

from ..batch.collect import is_late
from ..model import MAX_NOTEBOOK_BYTES
from ..quiz import QuizError, get_template
from .hub import HubCourse, HubSettingError, parse_course_hub

FEEDBACK = ("full", "cases", "score")
QUIZ_FEEDBACK = ("full", "score")
COUNTS = ("best", "last")
QUIZ_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
MAX_QUESTIONS = 15  # a page's form carries every answer (and the forms read at most 20 fields)
DAY = 86400.0
#: How an assignment's (a quiz's) entry is written in a key's path (:data:`KEYS`).
ASSIGNMENT = "<作业>"
QUIZ = "<小测>"


@dataclass(frozen=True)
class Key:
    """One key of ``course.yml``.

    ``path`` is dotted from the top of the file, with :data:`ASSIGNMENT` standing for an assignment's name;
    ``default`` is what holds when the key is left out (``None``: nothing, e.g. no deadline); ``low``/``high``
    bound an integer; ``takes`` and ``decides`` say, in Chinese, what the key accepts and what it decides.
    """

    path: str
    takes: str
    default: Any
    decides: str
    low: int | None = None
    high: int | None = None


#: Every key of ``course.yml``, in the order the reference lists them.
KEYS: tuple[Key, ...] = (
    Key("upload_limit_mib", f"大于 0、不超过 {MAX_NOTEBOOK_BYTES >> 20} 的数（MiB）", MAX_NOTEBOOK_BYTES >> 20,
        "学生上传的笔记本最大多大；上传框写明这个上限，超过的文件在浏览器里就被拒绝，服务器再查一次"),
    Key("login_failures", "映射，键见下面三项", None, "登录失败的次数限制（按客户端地址和按账号分别计数）"),
    Key("login_failures.max", "整数", 20, "同一客户端地址在时间窗内允许的失败登录次数；用完后，"
        "指向不存在账号的访问码不再检查，直接拒绝", low=1, high=10000),
    Key("login_failures.per_account", "整数", 10, "同一账号在时间窗内允许的失败登录次数；用完后连正确的访问码也要等到时间窗过去",
        low=1, high=1000),
    Key("login_failures.window_minutes", "整数（分钟）", 15, "计数的时间窗", low=1, high=10080),
    Key("assignments", "映射：作业名（与 solutions/ 下的文件夹同名）→ 该作业的设置", None,
        "开放提交的作业；必须至少列出一个，没列出的作业不接受提交"),
    Key(f"assignments.{ASSIGNMENT}.deadline", "带时区的 ISO 8601 时间，如 2026-12-20T23:59:00+08:00", None,
        "截止时间；不写则没有截止时间。页面上的一切时间都按这个时区显示"),
    Key(f"assignments.{ASSIGNMENT}.late", "reject，或映射 {penalty, until}", "reject",
        "截止后的提交：reject 一律拒收；{penalty, until} 在 until 之前接收，得分乘以 penalty"),
    Key(f"assignments.{ASSIGNMENT}.late.penalty", "0 到 1 之间的数", None, "迟交提交的得分系数（0.8：得分打八折）"),
    Key(f"assignments.{ASSIGNMENT}.late.until", "带时区的 ISO 8601 时间，须晚于 deadline", None, "最后接收迟交的时间"),
    Key(f"assignments.{ASSIGNMENT}.attempts_per_24h", "整数", 10,
        "滚动 24 小时内可评分的提交次数；用完后上传被拒绝，并告知还要等多久", low=1, high=1000),
    Key(f"assignments.{ASSIGNMENT}.feedback_before_deadline", " / ".join(FEEDBACK), "cases",
        "最后期限（接收迟交时为 late.until）之前反馈显示什么：full 每个用例的输入、期望与学生的结果；"
        "cases 只显示每个用例是否通过；score 只显示得分。期限过后一律显示全部"),
    Key(f"assignments.{ASSIGNMENT}.diagnoses_before_deadline", "true / false", True,
        "期限之前反馈是否指出已知的典型错误（score 时从不显示）"),
    Key(f"assignments.{ASSIGNMENT}.counts", " / ".join(COUNTS), "best",
        "哪一次提交计入成绩：best 扣除迟交系数后得分最高的一次（同分取最早），last 最近评完分的一次"),
    Key(f"assignments.{ASSIGNMENT}.checks_per_hour", "整数，0 表示关闭", 6,
        "每名学生每小时可以“只检查可见测试”的次数（不占提交次数，只运行笔记本里的可见测试）", low=0, high=60),
    Key("hub", "映射，键见下面几项；省略时本课程不接受 JupyterHub 登录", None,
        "JupyterHub 用户如何登录本课程、作业如何送到他们的 JupyterLab（站点的 JupyterHub 设置在 DATA/jupyterhub.yml）"),
    Key("hub.match", "student_id / email", "student_id", "JupyterHub 用户名对应名单中的哪一列（不区分大小写；两名学生都对应时拒绝）"),
    Key("hub.staff", "映射：JupyterHub 用户名 → 本课程教师或助教的名字", None, "哪些 JupyterHub 用户以教师或助教身份登录本课程"),
    Key("hub.repository", "https:// 或 file:// 开头的 git 仓库地址", None, "发布的作业笔记本所在的仓库（nbgitpuller 链接由它生成）"),
    Key("hub.branch", "分支名", "main", "仓库的分支"),
    Key("hub.folder", "仓库中的相对路径", "exercises", "作业笔记本所在的文件夹"),
    Key("quizzes", "映射：小测名（小写字母、数字、- 和 _，不与作业同名）→ 它的设置", None,
        "计分的小测与限时考试：每名学生每次作答各得一组题目变体，得分与编程作业一样计入成绩并回传课程平台"),
    Key(f"quizzes.{QUIZ}.title", "1 到 200 个字符", None, "页面上和课程平台成绩列的名称（省略时用小测名）"),
    Key(f"quizzes.{QUIZ}.questions", f"1 到 {MAX_QUESTIONS} 个题目模板的 id，或 {{template, form, points}}", None,
        "题目：autograder.quiz 的模板（autograder quiz-bank 列出全部模板），每个模板至多一次；form 为 choice 或 numeric，"
        "points 为分值（默认 1）"),
    Key(f"quizzes.{QUIZ}.opens", "带时区的 ISO 8601 时间", None, "开放时间：之前不能开始作答"),
    Key(f"quizzes.{QUIZ}.deadline", "带时区的 ISO 8601 时间", None, "截止时间，与作业的 deadline 相同"),
    Key(f"quizzes.{QUIZ}.late", "reject，或 {penalty, until}", "reject", "迟交规则，与作业的 late 相同（限时考试不接受迟交）"),
    Key(f"quizzes.{QUIZ}.attempts", "整数", 1, "一共可以作答几次，每次新的一组变体（限时考试只能 1 次）", low=1, high=20),
    Key(f"quizzes.{QUIZ}.feedback_before_deadline", " / ".join(QUIZ_FEEDBACK), "score",
        "最后期限之前显示什么：full 每道题的对错与解析；score 只显示总分"),
    Key(f"quizzes.{QUIZ}.counts", " / ".join(COUNTS), "best", "哪一次作答计入成绩"),
    Key(f"quizzes.{QUIZ}.time_limit_minutes", "整数（分钟）", None,
        "有它即为限时考试：学生打开时开始计时，时间到（或截止时间到）由服务器关闭并评分", low=1, high=24 * 60),
)
_BY_PATH = {k.path: k for k in KEYS}


def key(path: str) -> Key:
    """The :class:`Key` at ``path`` (as written in :data:`KEYS`)."""
    return _BY_PATH[path]


def children(prefix: str) -> set[str]:
    """The names of the keys right under ``prefix`` (``""``: the top level)."""
    depth = prefix.count(".") + 1 if prefix else 0
    return {k.path.split(".")[depth] for k in KEYS
            if (k.path.startswith(prefix + ".") or not prefix) and k.path.count(".") == depth}


def _default(name: str) -> Any:
    return key(f"assignments.{ASSIGNMENT}.{name}").default


#: The settings of an assignment that ``course.yml`` leaves open (or that has no ``course.yml``).
DEFAULTS: dict[str, Any] = {name: _default(name) for name in ("attempts_per_24h", "feedback_before_deadline", "counts",
                                                              "checks_per_hour")}


class PolicyError(ValueError):
    """``course.yml`` is not valid (message in Chinese, naming the key)."""


@dataclass(frozen=True)
class AssignmentPolicy:
    """What the service allows for one assignment.

    ``late_penalty`` is None when late work is refused, else the factor a late attempt's score is multiplied
    by; late work is accepted until ``late_until``.  ``late_waived``: an instructor waived the penalty for one
    student (:mod:`.overrides`); their late work is still late, and counts whole.
    """

    name: str
    deadline: datetime | None
    late_penalty: float | None
    late_until: datetime | None
    attempts_per_24h: int
    feedback_before_deadline: str
    counts: str
    diagnoses_before_deadline: bool = True
    late_waived: bool = False
    checks_per_hour: int = DEFAULTS["checks_per_hour"]  # :mod:`.checks`: the visible tests run without an attempt

    def lateness(self, now: datetime) -> str:
        """``"on_time"``, ``"late"`` (accepted with the penalty) or ``"closed"`` (refused), by the lateness rule of
        batch grading (:func:`autograder.batch.collect.is_late`) against the deadline and the late cut-off."""
        if self.deadline is None or not is_late(now, self.deadline):
            return "on_time"
        if self.late_penalty is not None and self.late_until is not None and not is_late(now, self.late_until):
            return "late"
        return "closed"

    def terms(self, at: datetime) -> tuple[bool, float] | None:
        """Whether an attempt arriving at ``at`` is late and the factor its score counts with (1 on time or with the
        penalty waived); None when it is refused.  The one rule for a new upload and for the attempts already made
        when a student's deadline or waiver changes (:func:`.overrides.restate`)."""
        lateness = self.lateness(at)
        if lateness == "closed":
            return None
        late = lateness == "late"
        return late, (self.late_penalty if late and not self.late_waived else 1.0)

    def last_moment(self) -> datetime | None:
        """When the last submission can arrive: the late cut-off if late work is accepted, else the deadline."""
        return self.late_until if self.late_penalty is not None else self.deadline

    def feedback(self, now: datetime) -> str:
        """The feedback policy in force: the configured one until nothing more can be submitted, then ``full``.

        Hidden inputs stay hidden while anyone may still submit (also during a late period).
        """
        end = self.last_moment()
        return "full" if end is not None and is_late(now, end) else self.feedback_before_deadline

    def shows_diagnoses(self, now: datetime) -> bool:
        """Whether the feedback names known misconceptions now: always once it is ``full``, before that as configured."""
        return self.feedback(now) == "full" or self.diagnoses_before_deadline

    def to_json(self) -> dict[str, Any]:
        iso = lambda t: t.isoformat() if t else None  # noqa: E731
        return {"name": self.name, "deadline": iso(self.deadline), "late_penalty": self.late_penalty,
                "late_until": iso(self.late_until), "attempts_per_24h": self.attempts_per_24h,
                "feedback_before_deadline": self.feedback_before_deadline, "counts": self.counts,
                "diagnoses_before_deadline": self.diagnoses_before_deadline, "late_waived": self.late_waived,
                "checks_per_hour": self.checks_per_hour}


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
    login_max_failures: int = key("login_failures.max").default  # failed sign-ins per client address in the window
    login_window_seconds: float = key("login_failures.window_minutes").default * 60.0
    login_max_per_account: int = key("login_failures.per_account").default  # per account (its code's first part)
    hub: HubCourse | None = None  # JupyterHub: who a hub user is here, where the assignments are pulled from
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


def _int(data: dict, path: str, where: str) -> int:
    """The integer key ``path`` (:data:`KEYS`) of ``data`` (its parent's mapping), its default when left out."""
    k = key(path)
    value = data.get(path.rpartition(".")[2], k.default)
    if isinstance(value, bool) or not isinstance(value, int) or not k.low <= value <= k.high:
        raise PolicyError(f"{where}：应为 {k.low} 到 {k.high} 之间的整数，而不是 {value!r}")
    return value


def _assignment(name: str, data: Any, where: str) -> AssignmentPolicy:
    data = _keys(data or {}, children(f"assignments.{ASSIGNMENT}"), where)
    deadline = _time(data["deadline"], f"{where}.deadline") if data.get("deadline") is not None else None
    late = data.get("late", _default("late"))
    penalty = until = None
    if late != "reject":
        late = _keys(late, children(f"assignments.{ASSIGNMENT}.late"), f"{where}.late（reject，或 {{penalty: 系数, until: 截止时间}}）")
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
    attempts = _int(data, f"assignments.{ASSIGNMENT}.attempts_per_24h", f"{where}.attempts_per_24h")
    diagnoses = data.get("diagnoses_before_deadline", _default("diagnoses_before_deadline"))
    if not isinstance(diagnoses, bool):
        raise PolicyError(f"{where}.diagnoses_before_deadline：应为 true 或 false，而不是 {diagnoses!r}")
    checks = _int(data, f"assignments.{ASSIGNMENT}.checks_per_hour", f"{where}.checks_per_hour")
    return AssignmentPolicy(name, deadline, penalty, until, attempts, feedback, counts, diagnoses, checks_per_hour=checks)


def parse_policy(data: Any, known: list[str], where: str = "course.yml") -> CoursePolicy:
    """A :class:`CoursePolicy` from parsed YAML data; ``known`` lists the assignments the grader has."""
    data = _keys(data, children(""), where)
    entries = _keys(data.get("assignments"), set(known), f"{where}: assignments") if "assignments" in data else None
    if not entries:
        raise PolicyError(f"{where}: assignments：至少列出一个作业（可用：{', '.join(known)}）")
    assignments = {str(n): _assignment(str(n), v, f"{where}: assignments.{n}") for n, v in entries.items()}
    top = MAX_NOTEBOOK_BYTES >> 20
    mib = data.get("upload_limit_mib", key("upload_limit_mib").default)
    if isinstance(mib, bool) or not isinstance(mib, (int, float)) or not 0 < mib <= top:
        raise PolicyError(f"{where}: upload_limit_mib：应在 0 到 {top} 之间（MiB），而不是 {mib!r}")
    login = _keys(data.get("login_failures") or {}, children("login_failures"), f"{where}: login_failures")
    max_failures = _int(login, "login_failures.max", f"{where}: login_failures.max")
    per_account = _int(login, "login_failures.per_account", f"{where}: login_failures.per_account")
    window = _int(login, "login_failures.window_minutes", f"{where}: login_failures.window_minutes")
    try:
        hub = parse_course_hub(data["hub"], children("hub"), f"{where}: hub") if data.get("hub") is not None else None
    except HubSettingError as exc:
        raise PolicyError(str(exc)) from None
    listed = data.get("quizzes") or {}
    if not isinstance(listed, dict):
        raise PolicyError(f"{where}: quizzes：应为键值映射（小测的名称 -> 它的设置）")
    quizzes = {str(n): _quiz(str(n), v, f"{where}: quizzes.{n}", known) for n, v in listed.items()}
    return CoursePolicy(assignments, int(mib * (1 << 20)), max_failures, window * 60.0, per_account, hub, quizzes)


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
    data = _keys(data or {}, children(f"quizzes.{QUIZ}"), where)
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
    feedback = data.get("feedback_before_deadline", key(f"quizzes.{QUIZ}.feedback_before_deadline").default)
    if feedback not in QUIZ_FEEDBACK:
        raise PolicyError(f"{where}.feedback_before_deadline：应为 {' / '.join(QUIZ_FEEDBACK)} 之一，而不是 {feedback!r}")
    shared = {k: data[k] for k in ("deadline", "late", "counts") if k in data}
    rules = _assignment(name, {**shared, "feedback_before_deadline": feedback}, where)
    opens = _time(data["opens"], f"{where}.opens") if data.get("opens") is not None else None
    if opens is not None and rules.deadline is not None and opens >= rules.deadline:
        raise PolicyError(f"{where}.opens：开放时间必须早于 deadline")
    minutes = data.get("time_limit_minutes")
    if minutes is not None:
        minutes = _int(data, f"quizzes.{QUIZ}.time_limit_minutes", f"{where}.time_limit_minutes")
        if data.get("attempts", 1) != 1:
            raise PolicyError(f"{where}.attempts：限时考试只能作答 1 次，而不是 {data['attempts']!r}")
        if data.get("late", "reject") != "reject":
            raise PolicyError(f"{where}.late：限时考试在时间到时由服务器关闭，不接受迟交")
    attempts = _int(data, f"quizzes.{QUIZ}.attempts", f"{where}.attempts")
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


def retry_after(oldest: float, now: float, window: float = DAY) -> int:
    """Seconds until an attempt made at ``oldest`` (epoch seconds) leaves the rolling window (24 hours)."""
    return max(1, int(oldest + window - now + 0.999))


__all__ = ["AssignmentPolicy", "CoursePolicy", "QuizPolicy", "Question", "QUIZ_FEEDBACK", "QUIZ", "PolicyError", "load_policy", "parse_policy",
           "utcnow", "retry_after", "FEEDBACK", "COUNTS", "DEFAULTS", "DAY", "KEYS", "Key", "key", "children", "ASSIGNMENT"]
