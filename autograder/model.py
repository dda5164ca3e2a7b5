"""Result types of the grading engine, each with explicit conversion to and from JSON data.

Every layer speaks these types: the sandbox client returns :class:`Outcome` and :class:`SetupReport`,
the trusted checks build :class:`CaseResult` and :class:`SubmissionResult`, the batch layer carries
results across process and machine boundaries as :meth:`SubmissionResult.to_json` data, and the store
writes that same data into the gradebook's ledger, ``results/`` and the feedback pages.  Conversions
are written out by hand (no ``dataclasses.asdict`` round trips), so the JSON shape is stated once,
here, and :meth:`SubmissionResult.from_json` rejects data of another shape instead of guessing.

This module imports nothing else of the engine.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

__all__ = ["Limits", "SandboxSettings", "Outcome", "SetupReport", "CaseResult", "CaseRecord", "CellScore", "CellError",
           "Diagnosis", "SubmissionResult", "ResultFormatError", "MAX_NOTEBOOK_BYTES", "TEXT_LIMITS", "MAX_NOTES", "MAX_CELL_ERRORS", "clip"]

# Sizes of what a result stores and the feedback shows (characters); longer text is cut with a mark.
# Much of it comes from student code (values, messages, tracebacks), so it is bounded here, where every
# result is built, whatever produced it.
TEXT_LIMITS = {"call": 2000, "expected": 2000, "got": 600, "reason": 600, "traceback": 2000, "note": 600}
MAX_NOTES = 40
MAX_CELL_ERRORS = 30
_CUT = "…（已截短）"


def clip(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, marked when cut."""
    text = str(text)
    return text if len(text) <= limit else text[: max(0, limit - len(_CUT))] + _CUT


class ResultFormatError(ValueError):
    """JSON data does not have the shape of the type it is read as."""


def _take(data: Any, key: str, kind: type | tuple[type, ...], what: str) -> Any:
    if not isinstance(data, dict) or key not in data:
        raise ResultFormatError(f"{what}: missing field {key!r}")
    value = data[key]
    if isinstance(value, bool) and kind in (int, float, (int, float)):
        raise ResultFormatError(f"{what}.{key}: expected a number, got a boolean")
    if not isinstance(value, kind):
        raise ResultFormatError(f"{what}.{key}: expected {kind}, got {type(value).__name__}")
    return value


MAX_NOTEBOOK_BYTES = 20 << 20  # larger submissions are refused with a message (documented for students)


@dataclass(frozen=True)
class Limits:
    """Resource limits of one submission's sandbox and its calls.

    ``file_bytes`` (largest file a sandboxed process may write) and ``scratch_bytes`` (size of each
    scratch file system, the working directory with the student's copy of the notebook among them) are
    above :data:`MAX_NOTEBOOK_BYTES`, so that every notebook that is accepted can be copied in.
    """

    memory_bytes: int = 1 << 30  # address space of each process
    sandbox_memory_bytes: int = 1536 << 20  # memory of all processes of the sandbox together (cgroup)
    cpus: float = 1.0  # CPUs all processes of the sandbox may use at once (cgroup CPU bandwidth)
    cpu_seconds: int = 60
    file_bytes: int = 24 << 20
    scratch_bytes: int = 32 << 20
    open_files: int = 64
    processes: int = 32
    cell_timeout: float = 10.0  # CPU seconds of the sandbox's whole process tree (wall clock without cgroups)
    call_timeout: float = 4.0  # CPU seconds, as cell_timeout
    wall_factor: float = 5.0  # wall-clock backstop of a cell or call: wall_factor x its CPU limit
    setup_timeout: float = 60.0
    submission_timeout: float = 180.0  # wall clock for the whole submission (all restarts, all cases)

    def wall_backstop(self, cpu_limit: float) -> float:
        """Wall-clock seconds after which a cell or call with CPU limit ``cpu_limit`` is stopped anyway
        (a sleeping process uses no CPU).  Generous: a loaded machine must not change a grade."""
        return self.wall_factor * cpu_limit + 2.0

    def to_json(self) -> dict[str, int | float]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_json(cls, data: dict) -> "Limits":
        if not isinstance(data, dict):
            raise ResultFormatError("Limits: expected an object")
        unknown = set(data) - {f.name for f in fields(cls)}
        if unknown:
            raise ResultFormatError(f"Limits: unknown fields {sorted(unknown)}")
        return cls(**{f.name: _take(data, f.name, (int, float), "Limits") for f in fields(cls) if f.name in data})


@dataclass(frozen=True)
class SandboxSettings:
    """Whether and where student code is isolated: decided once by the grading command from its options and carried
    by every job to the process that starts the sandboxes (nothing reaches a worker through its environment).

    ``cgroup_parent`` is a cgroup path as ``/proc/self/cgroup`` writes it (``--cgroup-parent``; None: the machine's
    default, :func:`autograder.sandbox.delegation.parents`); ``user`` the account a grader running as root starts
    its sandboxes as (``--sandbox-user``; None: ``nobody``, :mod:`autograder.sandbox.account`); ``warm`` whether a
    process keeps a session's healthy sandbox for its next session (:mod:`autograder.sandbox.warm`; False with
    ``AUTOGRADER_SANDBOX=cold``, :func:`autograder.sandbox.warm.asked_cold`: the cold path the benchmarks compare with).
    """

    enabled: bool = True  # False only with --no-sandbox: student code runs unisolated (debugging)
    cgroup_parent: str | None = None
    user: str | None = None
    warm: bool = True

    @classmethod
    def of(cls, value: "SandboxSettings | bool") -> "SandboxSettings":
        """``value`` itself, or for a bool this machine's defaults with (True) or without (False) isolation."""
        return value if isinstance(value, SandboxSettings) else cls(enabled=bool(value))

    def to_json(self) -> dict[str, bool | str | None]:
        return {"enabled": self.enabled, "cgroup_parent": self.cgroup_parent, "user": self.user, "warm": self.warm}

    @classmethod
    def from_json(cls, data: dict) -> "SandboxSettings":
        w = "SandboxSettings"
        if not isinstance(data, dict) or set(data) != {"enabled", "cgroup_parent", "user", "warm"}:
            raise ResultFormatError(f"{w}: expected the fields enabled, cgroup_parent, user, warm")
        optional = {k: None if data[k] is None else _take(data, k, str, w) for k in ("cgroup_parent", "user")}
        return cls(_take(data, "enabled", bool, w), **optional, warm=_take(data, "warm", bool, w))


@dataclass
class Outcome:
    """What one call into the sandbox produced.

    Exactly one of: ``ok`` with a decoded ``value``; ``exc``, an exception the student's code raised
    (plain data: ``type``, ``mro``, ``msg``, ``tb``); or ``failure``, when the process itself failed:
    ``"timeout"``, ``"crash"``, ``"protocol"``, ``"unavailable"`` or ``"deadline"`` (the submission's
    time budget is spent).
    """

    ok: bool
    value: Any = None
    exc: dict | None = None
    failure: str | None = None
    impl_calls: int = 0


@dataclass
class SetupReport:
    """How running a notebook's cells went: errors per cell, cells skipped because they killed or hung
    the process, restarts, whether the submission ran out of time, and the seconds spent starting the
    sandbox and running cells."""

    cell_errors: dict[int, dict] = field(default_factory=dict)
    skipped: dict[int, str] = field(default_factory=dict)
    restarts: int = 0
    out_of_time: bool = False


MAX_FIELDS = 20  # fields of a record-valued result (BinaryMetrics has 10)


@dataclass
class CaseResult:
    """Outcome of one case, with what the feedback shows (all text already rendered).

    ``wrong_fields``: when the function returned a record of the reference's type and fields (a named tuple
    such as ``BinaryMetrics``) that differs from the reference's, the names of the fields that differ; empty
    when the case passed or the result was wrong as a whole (another type, an exception, a timeout ...).
    """

    passed: bool
    call: str = ""
    expected: str = ""
    got: str = ""
    reason: str = ""
    traceback: str = ""
    wrong_fields: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for name in _CASE_TEXT:
            setattr(self, name, clip(getattr(self, name), TEXT_LIMITS[name]))
        self.wrong_fields = tuple(clip(f, 100) for f in self.wrong_fields[:MAX_FIELDS])


_CASE_TEXT = ("call", "expected", "got", "reason", "traceback")


@dataclass
class CaseRecord:
    """One case of a graded submission: what it checks, its points, the points it earned and its :class:`CaseResult`.

    ``group`` says in Chinese what the case's grade cell checks (``边界情况`` ...); ``basic`` marks the function's
    basic cases (the rule of :mod:`autograder.check.scoring`); ``voided_by`` lists, for a validation case that
    passed but counts nothing, the basic cases of its function that were not computed right (``voided`` is then
    true).  ``earned`` defaults to all the points of a passed case and none of a failed one.
    """

    id: str
    cell: str
    points: float
    function: str
    description: str
    hidden: bool
    result: CaseResult
    voided: bool = False
    earned: float | None = None
    basic: bool = False
    group: str = ""
    voided_by: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.earned is None:
            self.earned = float(self.points) if self.result.passed else 0.0
        self.group = clip(self.group, 100)
        self.voided_by = tuple(clip(c, 100) for c in self.voided_by[:100])

    @property
    def passed(self) -> bool:
        return self.result.passed

    @property
    def failed(self) -> bool:
        """Did the function's own result lose this case (a voided validation case did not: its rejection was right)?"""
        return not self.result.passed and not self.voided

    def to_json(self) -> dict:
        r = self.result
        return {"id": self.id, "cell": self.cell, "points": self.points, "function": self.function,
                "description": self.description, "hidden": self.hidden, "passed": r.passed,
                **{k: getattr(r, k) for k in _CASE_TEXT}, "wrong_fields": list(r.wrong_fields), "voided": self.voided,
                "earned": self.earned, "basic": self.basic, "group": self.group, "voided_by": list(self.voided_by)}

    @classmethod
    def from_json(cls, data: dict) -> "CaseRecord":
        w = "case"
        # results stored before a field was added read as they were graded
        wrong = _take(data, "wrong_fields", list, w) if "wrong_fields" in data else []
        voided_by = _take(data, "voided_by", list, w) if "voided_by" in data else []
        if not all(isinstance(x, str) for x in wrong + voided_by):
            raise ResultFormatError("case.wrong_fields/voided_by: expected strings")
        result = CaseResult(_take(data, "passed", bool, w), **{k: _take(data, k, str, w) for k in _CASE_TEXT},
                            wrong_fields=tuple(wrong))
        return cls(_take(data, "id", str, w), _take(data, "cell", str, w), _take(data, "points", (int, float), w),
                   _take(data, "function", str, w), _take(data, "description", str, w), _take(data, "hidden", bool, w),
                   result, _take(data, "voided", bool, w) if "voided" in data else False,
                   _take(data, "earned", (int, float), w) if "earned" in data else None,
                   _take(data, "basic", bool, w) if "basic" in data else False,
                   _take(data, "group", str, w) if "group" in data else "", tuple(voided_by))


MAX_DIAGNOSES = 20


@dataclass
class Diagnosis:
    """A known misconception named for one graded function: the catalogue id, the failed cases it explains, and
    what the feedback shows about it (the catalogue's title, explanation and hint, and the book section's address
    relative to the book's root), so a stored result renders without the grader's catalogue."""

    function: str
    misconception: str
    cases: list[str]
    title: str = ""
    explanation: str = ""
    hint: str = ""
    link: str = ""
    section: str = ""  # the heading of the linked book section

    def __post_init__(self) -> None:
        self.function = clip(self.function, 100)
        self.misconception = clip(self.misconception, 100)
        self.cases = [clip(c, 100) for c in self.cases[:1000]]
        for name in _DIAGNOSIS_TEXT:
            setattr(self, name, clip(getattr(self, name), TEXT_LIMITS["note"]))

    def to_json(self) -> dict:
        return {"function": self.function, "misconception": self.misconception, "cases": list(self.cases),
                **{k: getattr(self, k) for k in _DIAGNOSIS_TEXT}}

    @classmethod
    def from_json(cls, data: dict) -> "Diagnosis":
        w = "diagnosis"
        cases = _take(data, "cases", list, w)
        if not all(isinstance(c, str) for c in cases):
            raise ResultFormatError("diagnosis.cases: expected strings")
        text = {k: _take(data, k, str, w) for k in _DIAGNOSIS_TEXT if k in data}
        return cls(_take(data, "function", str, w), _take(data, "misconception", str, w), cases, **text)


_DIAGNOSIS_TEXT = ("title", "explanation", "hint", "link", "section")


@dataclass
class CellScore:
    """Score of one nbgrader grade cell."""

    score: float
    max_score: float

    def to_json(self) -> dict:
        return {"score": self.score, "max_score": self.max_score}

    @classmethod
    def from_json(cls, data: dict) -> "CellScore":
        return cls(_take(data, "score", (int, float), "cell"), _take(data, "max_score", (int, float), "cell"))


@dataclass
class CellError:
    """An exception raised while a code cell of the submission ran (``cell`` as the grader numbers it)."""

    cell: int
    type: str
    traceback: str

    def __post_init__(self) -> None:
        self.type = clip(self.type, 100)
        self.traceback = clip(self.traceback, TEXT_LIMITS["traceback"])

    def to_json(self) -> dict:
        return {"cell": self.cell, "type": self.type, "traceback": self.traceback}

    @classmethod
    def from_json(cls, data: dict) -> "CellError":
        return cls(_take(data, "cell", int, "cell_error"), _take(data, "type", str, "cell_error"),
                   _take(data, "traceback", str, "cell_error"))


def _bounded_notes(notes: list[str]) -> list[str]:
    """``notes`` clipped, at most :data:`MAX_NOTES` of them, the last one then saying how many were left out."""
    notes = [clip(n, TEXT_LIMITS["note"]) for n in notes]
    if len(notes) > MAX_NOTES:
        notes = notes[: MAX_NOTES - 1] + [f"……另有 {len(notes) - MAX_NOTES + 1} 条说明未显示"]
    return notes


def _strings(values: list, what: str) -> list[str]:
    if not all(isinstance(v, str) for v in values):
        raise ResultFormatError(f"{what}: expected strings")
    return values


@dataclass
class SubmissionResult:
    """Everything recorded for one student and assignment.

    ``notes`` are about the submitted notebook itself (how it was read, which cells ran); ``run_notes`` about
    running the student's code against the cases (restarts, cells skipped after they crashed, the time budget):
    they depend on the hidden inputs, so a feedback policy that hides those inputs shows no ``run_notes``.
    """

    student: str
    assignment: str
    score: float
    max_score: float
    cells: dict[str, CellScore]
    cases: list[CaseRecord]
    notes: list[str] = field(default_factory=list)
    cell_errors: list[CellError] = field(default_factory=list)
    seconds: float = 0.0
    fingerprint: str = ""
    diagnoses: list[Diagnosis] = field(default_factory=list)
    # the Chinese name of each field of a record-valued result ("recall" -> "召回率"), for the feedback
    field_labels: dict[str, str] = field(default_factory=dict)
    field_scored: list[str] = field(default_factory=list)  # the functions whose cases were scored field by field
    run_notes: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.field_labels = {clip(k, 100): clip(v, 100) for k, v in list(self.field_labels.items())[:MAX_FIELDS * 4]}
        self.field_scored = [clip(f, 100) for f in self.field_scored[:MAX_FIELDS]]
        self.notes = _bounded_notes(self.notes)
        self.run_notes = _bounded_notes(self.run_notes)
        self.cell_errors = self.cell_errors[:MAX_CELL_ERRORS]
        self.diagnoses = self.diagnoses[:MAX_DIAGNOSES]

    def to_json(self) -> dict:
        return {"student": self.student, "assignment": self.assignment, "score": self.score,
                "max_score": self.max_score, "cells": {k: v.to_json() for k, v in self.cells.items()},
                "cases": [c.to_json() for c in self.cases], "notes": list(self.notes),
                "cell_errors": [e.to_json() for e in self.cell_errors], "seconds": self.seconds,
                "fingerprint": self.fingerprint, "diagnoses": [d.to_json() for d in self.diagnoses],
                "field_labels": dict(self.field_labels), "field_scored": list(self.field_scored),
                "run_notes": list(self.run_notes)}

    @classmethod
    def from_json(cls, data: dict) -> "SubmissionResult":
        w = "result"
        cells = _take(data, "cells", dict, w)
        notes = _strings(_take(data, "notes", list, w), "result.notes")
        run_notes = _strings(_take(data, "run_notes", list, w), "result.run_notes") if "run_notes" in data else []
        diagnoses = _take(data, "diagnoses", list, w) if "diagnoses" in data else []  # results stored before the field
        labels = _take(data, "field_labels", dict, w) if "field_labels" in data else {}
        scored = _strings(_take(data, "field_scored", list, w), "result.field_scored") if "field_scored" in data else []
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in labels.items()):
            raise ResultFormatError("result.field_labels: expected strings")
        return cls(_take(data, "student", str, w), _take(data, "assignment", str, w),
                   _take(data, "score", (int, float), w), _take(data, "max_score", (int, float), w),
                   {str(k): CellScore.from_json(v) for k, v in cells.items()},
                   [CaseRecord.from_json(c) for c in _take(data, "cases", list, w)], notes,
                   [CellError.from_json(e) for e in _take(data, "cell_errors", list, w)],
                   _take(data, "seconds", (int, float), w), _take(data, "fingerprint", str, w),
                   [Diagnosis.from_json(d) for d in diagnoses[:MAX_DIAGNOSES]], labels, scored, run_notes)

    def failed_cases(self) -> list[CaseRecord]:
        return [c for c in self.cases if not c.passed]

    def listed_failures(self) -> list[CaseRecord]:
        """The failed cases the feedback lists one by one: all but the voided validation cases."""
        return [c for c in self.cases if c.failed]

    def field_label(self, name: str) -> str:
        """A field of a record-valued result as the feedback names it: ``召回率（recall）``."""
        label = self.field_labels.get(name)
        return f"{label}（{name}）" if label else name

    def voided_groups(self) -> list[dict[str, Any]]:
        """Validation cases voided by the basic-case rule, one group per function: the case ids (``cases``) and
        descriptions (``names``), their points, the descriptions of the basic cases that were not computed right
        (``basic``) and the reason in words (``why``: "在基本用例（…）上没有算对")."""
        described = {c.id: c.description for c in self.cases}
        groups: dict[str, dict[str, Any]] = {}
        for c in self.cases:
            if c.voided:
                g = groups.setdefault(c.function, {"function": c.function, "cases": [], "names": [], "points": 0.0,
                                                   "basic": [], "why": ""})
                g["cases"].append(c.id)
                g["names"].append(c.description)
                g["points"] += c.points
                g["basic"] += [described[b] for b in c.voided_by if b in described and described[b] not in g["basic"]]
        for g in groups.values():
            g["why"] = f"在基本用例（{'；'.join(g['basic'])}）上没有算对" if g["basic"] else ""
        return list(groups.values())

    def wrong_fields(self) -> list[dict[str, Any]]:
        """Per function whose failed cases include results of the right type with some wrong fields: each wrong
        field (``name``, ``label``, ``cases``: how many failed cases it is wrong in), most frequent first, and
        ``whole``: how many of the function's failed cases were wrong as a whole (an exception, another type ...)."""
        out: dict[str, dict[str, Any]] = {}
        for c in self.listed_failures():
            g = out.setdefault(c.function, {"function": c.function, "counts": {}, "whole": 0})
            if not c.result.wrong_fields:
                g["whole"] += 1
            for f in c.result.wrong_fields:
                g["counts"][f] = g["counts"].get(f, 0) + 1
        groups = []
        for g in out.values():
            if g["counts"]:
                fields = sorted(g["counts"].items(), key=lambda kv: -kv[1])
                groups.append({"function": g["function"], "whole": g["whole"],
                               "fields": [{"name": f, "label": self.field_label(f), "cases": n} for f, n in fields]})
        return groups

    def unexplained_functions(self) -> list[str]:
        """Functions that failed a case (voided validation cases aside) and that no diagnosis names."""
        named = {d.function for d in self.diagnoses}
        out: list[str] = []
        for c in self.listed_failures():
            if c.function not in named and c.function not in out:
                out.append(c.function)
        return out
