"""Grade one notebook: prepare its cells, run every case against the sandbox, score the grade cells."""

from __future__ import annotations

import time
from pathlib import Path

from ..model import CaseRecord, CaseResult, CellError, CellScore, Limits, SetupReport, SubmissionResult
from ..sandbox import Session
from .cases import run_case
from .forbidden import forbidden_uses
from .mutant_runs import run_mutants
from .prepare import prepare
from .specs import Assignment


def grade_notebook(assignment: Assignment, source: Path, submission: Path | None, student: str, *,
                   sandbox: bool = True, limits: Limits | None = None) -> SubmissionResult:
    """Grade ``submission`` (None when the student submitted nothing for this assignment)."""
    return grade_with_timing(assignment, source, submission, student, sandbox=sandbox, limits=limits)[0]


def grade_with_timing(assignment: Assignment, source: Path, submission: Path | None, student: str, *,
                      sandbox: bool = True, limits: Limits | None = None) -> tuple[SubmissionResult, float]:
    """:func:`grade_notebook`, and the seconds spent starting sandboxes and running the notebook's cells."""
    limits = limits or Limits()
    t0 = time.monotonic()
    deadline = t0 + limits.submission_timeout
    results: dict[str, CaseResult] = {}
    notes: list[str] = []
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
            notes.append(prepared.error)
            for case in assignment.cases:
                results[case.id] = CaseResult(False, reason=prepared.error)
        else:
            banned = forbidden_uses(prepared.cells, assignment.functions)
            for fn, why in banned.items():
                notes.append(f"函数 {fn} 使用了课程参考实现或 scikit-learn（{why}）：该函数的全部用例不得分。")
            todo = [c for c in assignment.cases if c.function not in banned]
            for case in assignment.cases:
                if case.function in banned:
                    results[case.id] = CaseResult(False, reason=f"{case.function} 使用了 autograder.reference 或 scikit-learn，不得分")
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
                        results[case.id] = run_case(session, case, limits)
                finally:
                    session.close()
                report, start_seconds, out_of_time = session.report, session.start_seconds, session.report.out_of_time
            if report is not None:
                notes += _setup_notes(report, cell_errors)
            if out_of_time:
                notes.append(f"这份提交的评分总时间超过上限（{limits.submission_timeout:g} 秒，多为反复超时的单元或调用），"
                             "其余用例未能运行，计 0 分。")
    return _scored(assignment, student, results, notes, cell_errors, time.monotonic() - t0), start_seconds


def _setup_notes(report: SetupReport, cell_errors: list[CellError]) -> list[str]:
    """Feedback notes about running the cells; appends each cell's error to ``cell_errors``."""
    notes = []
    for idx, err in sorted(report.cell_errors.items()):
        cell_errors.append(CellError(idx, str(err.get("type")), str(err.get("tb", ""))[-2000:]))
    for idx, why in sorted(report.skipped.items()):
        if idx == -1:
            notes.append("学生进程无法启动或反复崩溃，剩余用例未能运行。")
        else:
            notes.append(f"第 {idx} 个单元在执行时{why}，评分时跳过了这个单元（该单元中的定义不可用）。")
    if report.restarts:
        notes.append(f"学生进程因崩溃或超时重启了 {report.restarts} 次（每次只影响当时正在运行的用例）。")
    return notes


def _scored(assignment: Assignment, student: str, results: dict[str, CaseResult], notes: list[str],
            cell_errors: list[CellError], seconds: float) -> SubmissionResult:
    cells: dict[str, CellScore] = {}
    records = []
    for case in assignment.cases:
        r = results[case.id]
        cell = cells.setdefault(case.cell, CellScore(0.0, 0.0))
        cell.max_score += case.points
        cell.score += case.points if r.passed else 0
        records.append(CaseRecord(case.id, case.cell, case.points, case.function, case.description,
                                  not case.cell.endswith("_visible"), r))
    score = sum(c.score for c in cells.values())
    return SubmissionResult(student, assignment.name, score, float(assignment.max_score()), cells, records, notes,
                            cell_errors, round(seconds, 3))
