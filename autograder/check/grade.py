"""Grade one notebook: prepare its cells, run every case against the sandbox, score the grade cells."""

from __future__ import annotations

import time
from pathlib import Path

from ..model import (CaseRecord, CaseResult, CellError, CellScore, Diagnosis, Limits, SandboxSettings, SetupReport,
                     SubmissionResult, clip)
from ..sandbox import SandboxBroken, Session
from .cases import run_case_observed
from .diagnose import Observed, diagnose
from .expected import expects_error
from .mutant_runs import run_mutants
from .prepare import cell_label, prepare
from .render import show_call
from .specs import Assignment


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
    voided = _gate_validation(assignment, results)
    try:
        diagnoses = diagnose(assignment, results, observed) if observed else []
    except Exception:  # noqa: BLE001 - naming a mistake is advice: a fault there must not cost the grade
        diagnoses = []
        run_notes.append("评分程序未能分析这次提交的错误属于哪一类（不影响得分）。")
    return (_scored(assignment, student, results, notes, cell_errors, time.monotonic() - t0, voided, diagnoses,
                    run_notes), start_seconds)


def _gate_validation(assignment: Assignment, results: dict[str, CaseResult]) -> set[str]:
    """Rejecting bad input counts only for a function that also computes: a validation case passes only if its
    function passes its basic valid-input cases (:meth:`Assignment.basic_cases`) AND at least half of its other
    valid-input cases (the visible answers are known to every student: a lookup table of them must not unlock
    the validation points).  Returns the ids of the validation cases voided this way."""
    voided: set[str] = set()
    for fn in assignment.functions:
        basic = assignment.basic_cases(fn, expects_error)
        valid = [c for c in assignment.cases if c.function == fn and c.kind != "mutant" and not expects_error(c)
                 and c not in basic]
        failed_basic = [c.id for c in basic if not results[c.id].passed]
        passed_share = sum(results[c.id].passed for c in valid) / len(valid) if valid else 1.0
        if not failed_basic and passed_share >= 0.5:
            continue
        why = (f"没有通过基本用例（{'、'.join(failed_basic)}）" if failed_basic
               else f"只通过了 {passed_share:.0%} 的其他合法输入用例（至少要一半）")
        for case in assignment.cases:
            if case.function == fn and expects_error(case) and results[case.id].passed:
                r = results[case.id]
                call = r.call or (show_call(case.function, case.args, case.kwargs) if case.kind == "ref" else "")
                results[case.id] = CaseResult(False, call, r.expected, r.got,
                                              f"函数拒绝了这个非法输入，但它{why}：只有在函数能正确计算时，拒绝非法输入的用例才计分")
                voided.add(case.id)
    return voided


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
            cell_errors: list[CellError], seconds: float, voided: set[str] = frozenset(),
            diagnoses: list[Diagnosis] | None = None, run_notes: list[str] | None = None) -> SubmissionResult:
    cells: dict[str, CellScore] = {}
    records = []
    for case in assignment.cases:
        r = results[case.id]
        cell = cells.setdefault(case.cell, CellScore(0.0, 0.0))
        cell.max_score += case.points
        cell.score += case.points if r.passed else 0
        records.append(CaseRecord(case.id, case.cell, case.points, case.function, case.description,
                                  not case.cell.endswith("_visible"), r, case.id in voided))
    score = sum(c.score for c in cells.values())
    return SubmissionResult(student, assignment.name, score, float(assignment.max_score()), cells, records, notes,
                            cell_errors, round(seconds, 3), diagnoses=list(diagnoses or []), run_notes=list(run_notes or []))
