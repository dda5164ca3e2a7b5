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
through JupyterHub and links its assignments there (:mod:`.hub`).  Every error names the key and
the file, in Chinese.  Without a file every assignment is open with :data:`DEFAULTS`.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import yaml

from ..model import MAX_NOTEBOOK_BYTES
from .hub import HubCourse, HubSettingError, parse_course_hub

FEEDBACK = ("full", "cases", "score")
COUNTS = ("best", "last")
DEFAULTS: dict[str, Any] = {"attempts_per_24h": 10, "feedback_before_deadline": "cases", "counts": "best",
                            "checks_per_hour": 6}
MAX_CHECKS_PER_HOUR = 60
DAY = 86400.0


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
        """``"on_time"``, ``"late"`` (accepted with the penalty) or ``"closed"`` (refused)."""
        if self.deadline is None or now <= self.deadline:
            return "on_time"
        if self.late_penalty is not None and self.late_until is not None and now <= self.late_until:
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
        return "full" if end is not None and now > end else self.feedback_before_deadline

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
class CoursePolicy:
    """All assignments open for submission and the service's limits."""

    assignments: dict[str, AssignmentPolicy]
    upload_limit_bytes: int = MAX_NOTEBOOK_BYTES  # the one limit the notebooks and the book state
    login_max_failures: int = 20  # failed sign-ins per client address in the window
    login_window_seconds: float = 900.0
    login_max_per_account: int = 10  # failed sign-ins per account (its code's first part) in the window
    hub: HubCourse | None = None  # JupyterHub: who a hub user is here, where the assignments are pulled from

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
                              "diagnoses_before_deadline", "checks_per_hour"}, where)
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
    checks = _int(data.get("checks_per_hour", DEFAULTS["checks_per_hour"]), f"{where}.checks_per_hour", 0, MAX_CHECKS_PER_HOUR)
    return AssignmentPolicy(name, deadline, penalty, until, attempts, feedback, counts, diagnoses, checks_per_hour=checks)


def parse_policy(data: Any, known: list[str], where: str = "course.yml") -> CoursePolicy:
    """A :class:`CoursePolicy` from parsed YAML data; ``known`` lists the assignments the grader has."""
    data = _keys(data, {"assignments", "upload_limit_mib", "login_failures", "hub"}, where)
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
    try:
        hub = parse_course_hub(data["hub"], f"{where}: hub") if data.get("hub") is not None else None
    except HubSettingError as exc:
        raise PolicyError(str(exc)) from None
    return CoursePolicy(assignments, int(mib * (1 << 20)), max_failures, window * 60.0, per_account, hub)


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


__all__ = ["AssignmentPolicy", "CoursePolicy", "PolicyError", "load_policy", "parse_policy", "utcnow", "retry_after",
           "FEEDBACK", "COUNTS", "DEFAULTS", "DAY"]
