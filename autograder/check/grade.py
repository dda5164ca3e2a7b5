"""Grade one notebook: prepare its cells, run every case against the sandbox, score the grade cells."""

from __future__ import annotations

import time
from pathlib import Path

from ..model import (CaseRecord, CaseResult, CellError, CellScore, Diagnosis, Limits, SandboxSettings, SetupReport,
                     SubmissionResult, clip)
from ..sandbox import SandboxBroken, Session
from .cases import run_case_observed
from .diagnose import Observed, diagnose
from .mutant_runs import run_mutants
from .prepare import cell_label, prepare
from .render import show_call
from .scoring import VOIDED_REASON, score
from .specs import FIELD_LABELS, Assignment, cell_group


def grade_notebook(assignment: Assignment, source: Path, submission: Path | None, student: str, *,
                   sandbox: SandboxSettings | bool = True, limits: Limits | None = None) -> SubmissionResult:
    """Grade ``submission`` (None when the student submitted nothing for this assignment)."""
    return grade_with_timing(assignment, source, submission, student, sandbox=sandbox, limits=limits)[0]


def grade_with_timing(assignment: Assignment, source: Path, submission: Path | None, student: str, *,
                      sandbox: SandboxSettings | bool = True, limits: Limits | None = None) -> tuple[SubmissionResult, float]:
    """:func:`grade_notebook`, and the seconds spent starting sandboxes and running the notebook's cells.

    A submission the trusted side cannot handle (a bug, or input that breaks a check) still gets a
    result: every case 0 and a note saying why, so that it is recorded (replacing any earlier grade)
    and the batch goes on.  Only :class:`~autograder.sandbox.SandboxBroken` (the machine cannot
    isolate) is raised: that is never the student's grade.
    """
    t0 = time.monotonic()
    try:
        return _grade(assignment, source, submission, student, sandbox=SandboxSettings.of(sandbox), limits=limits or Limits(),
                      t0=t0)
    except (SandboxBroken, SystemError):
        raise  # the machine or the interpreter, not the student: retried, never a grade
    except Exception as exc:  # noqa: BLE001 - recorded as this submission's outcome, never the batch's
        why = f"评分程序无法处理这份提交（{type(exc).__name__}: {clip(str(exc), 200)}）；请联系教师"
        return unjudged(assignment, student, why, time.monotonic() - t0), 0.0


def unjudged(assignment: Assignment, student: str, why: str, seconds: float = 0.0) -> SubmissionResult:
    """The result of a submission the trusted side could not judge: every case 0, ``why`` as the note."""
    results = {case.id: CaseResult(False, reason=why) for case in assignment.cases}
    return _scored(assignment, student, results, [why], [], seconds)


def _grade(assignment: Assignment, source: Path, submission: Path | None, student: str, *, sandbox: SandboxSettings,
           limits: Limits, t0: float) -> tuple[SubmissionResult, float]:
    deadline = t0 + limits.submission_timeout
    results: dict[str, CaseResult] = {}
    observed: dict[str, list[Observed]] = {}
    notes: list[str] = []  # about the notebook
    run_notes: list[str] = []  # about running it against the cases (SubmissionResult.run_notes)
    cell_errors: list[CellError] = []
    start_seconds = 0.0
    if submission is None:
        notes.append(f"没有找到提交的笔记本 {assignment.notebook}.ipynb")
        for case in assignment.cases:
            results[case.id] = CaseResult(False, reason="没有提交")
    else:
        prepared = prepare(source, submission)
        notes += prepared.notes
        if prepared.error:
            notes.insert(0, prepared.error)
            for case in assignment.cases:
                results[case.id] = CaseResult(False, reason="未能评分（原因见页首的说明）")
        else:
            todo = list(assignment.cases)
            skipped = frozenset(prepared.skipped_imports)
            report: SetupReport | None
            if any(c.kind == "mutant" for c in todo):
                found, reports, start_seconds = run_mutants(prepared.cells, submission, todo, sandbox, limits, deadline)
                results.update(found)
                report = reports[0] if reports else None
                out_of_time = any(r.out_of_time for r in reports)
            else:
                session = Session(prepared.cells, submission, sandbox=sandbox, limits=limits, deadline=deadline)
                try:
                    for case in todo:
                        results[case.id], observed[case.id] = run_case_observed(session, case, limits, skipped)
                finally:
                    session.close()
                report, start_seconds, out_of_time = session.report, session.start_seconds, session.report.out_of_time
            if report is not None:
                run_notes += _setup_notes(report, cell_errors)
            if out_of_time:
                run_notes.append(f"这份提交的评分总时间超过上限（{limits.submission_timeout:g} 秒，多为反复超时的单元或调用），"
                             "其余用例未能运行，计 0 分。")
    try:
        diagnoses = diagnose(assignment, results, observed) if observed else []
    except Exception:  # noqa: BLE001 - naming a mistake is advice: a fault there must not cost the grade
        diagnoses = []
        run_notes.append("评分程序未能分析这次提交的错误属于哪一类（不影响得分）。")
    return (_scored(assignment, student, results, notes, cell_errors, time.monotonic() - t0, diagnoses, run_notes),
            start_seconds)


def _setup_notes(report: SetupReport, cell_errors: list[CellError]) -> list[str]:
    """Feedback notes about running the cells (restarts and skipped cells follow from the cases that crashed or
    hung the process: run notes); appends each cell's error to ``cell_errors``."""
    notes = []
    for idx, err in sorted(report.cell_errors.items()):
        cell_errors.append(CellError(idx, str(err.get("type")), str(err.get("tb", ""))[-2000:]))
    for idx, why in sorted(report.skipped.items()):
        if idx == -1:
            notes.append("学生进程无法启动或反复崩溃，剩余用例未能运行。")
        else:
            notes.append(f"{cell_label(idx)}在执行时{why}，评分时跳过了这个单元（该单元中的定义不可用）。")
    if report.restarts:
        notes.append(f"学生进程因崩溃或超时重启了 {report.restarts} 次（每次只影响当时正在运行的用例）。")
    return notes


def _scored(assignment: Assignment, student: str, results: dict[str, CaseResult], notes: list[str],
            cell_errors: list[CellError], seconds: float, diagnoses: list[Diagnosis] | None = None,
            run_notes: list[str] | None = None) -> SubmissionResult:
    """The submission's result: each case's points by the rules of :mod:`.scoring`, summed per grade cell."""
    scores = score(assignment, results)
    cells: dict[str, CellScore] = {}
    records = []
    for case in assignment.cases:
        r = results[case.id]
        blocking = scores.voided.get(case.id, ())
        if blocking:
            call = r.call or (show_call(case.function, case.args, case.kwargs) if case.kind == "ref" else "")
            basic = "；".join(c.description for c in assignment.basic_cases(case.function) if c.id in blocking)
            r = CaseResult(False, call, r.expected, r.got, VOIDED_REASON.format(basic=basic))
        cell = cells.setdefault(case.cell, CellScore(0.0, 0.0))
        cell.max_score += case.points
        cell.score = round(cell.score + scores.earned[case.id], 6)
        records.append(CaseRecord(case.id, case.cell, case.points, case.function, case.description,
                                  not case.cell.endswith("_visible"), r, bool(blocking), scores.earned[case.id],
                                  assignment.is_basic(case), cell_group(case.cell), blocking))
    total = round(sum(c.score for c in cells.values()), 6)
    return SubmissionResult(student, assignment.name, total, float(assignment.max_score()), cells, records, notes,
                            cell_errors, round(seconds, 3), diagnoses=list(diagnoses or []), field_labels=dict(FIELD_LABELS),
                            field_scored=list(assignment.by_field), run_notes=list(run_notes or []))
