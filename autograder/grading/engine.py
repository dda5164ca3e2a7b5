"""Grade one submission: prepare the notebook, run every case against the sandbox, score the cells."""

from __future__ import annotations

import random
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from . import mutants, wire
from .compare import compare
from .notebook import forbidden_uses, prepare
from .render import show, show_call, show_exc
from .sandbox import Limits, Outcome, Session, SetupReport
from .specs import Assignment, Case, CaseResult, expected_for

FAILURE_TEXT = {
    "timeout": "调用超时（超过 {t:g} 秒），可能存在死循环或过慢的算法",
    "crash": "学生进程在调用中退出或被杀死（例如 sys.exit/os._exit、内存或 CPU 超限）",
    "protocol": "返回值无法读取（不是普通数据，或消息被破坏）",
    "unavailable": "学生代码无法启动（多次崩溃），此用例未能运行",
    "deadline": "这份提交的评分总时间已用完（上限 {s:g} 秒），此用例未能运行",
}


@dataclass
class SubmissionResult:
    """Everything recorded for one student and assignment."""

    student: str
    assignment: str
    score: float
    max_score: float
    cells: dict[str, dict[str, float]]
    cases: list[dict[str, Any]]
    notes: list[str] = field(default_factory=list)
    cell_errors: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0
    fingerprint: str = ""

    def to_json(self) -> dict:
        return asdict(self)


def _exc_matches(expected: BaseException, exc: dict) -> bool:
    mro = set(exc.get("mro", []))
    if type(expected).__name__ == "UndefinedMetricError":
        return bool(mro & {"ValueError", "ZeroDivisionError"})
    return "ValueError" in mro


def _failure_reason(out: Outcome, limits: Limits) -> str:
    return FAILURE_TEXT.get(out.failure or "", "未知错误").format(t=limits.call_timeout, s=limits.submission_timeout)


def _check_call(session: Session, case: Case, args: tuple, kwargs: dict, limits: Limits) -> tuple[CaseResult, Any]:
    call_text = show_call(case.function, args, kwargs)
    expected, exp_exc = expected_for(case.function, args, kwargs)
    out = session.call(case.function, list(args), kwargs)
    expected_text = f"抛出 ValueError（{exp_exc}）" if exp_exc is not None else show(expected)
    if out.failure:
        return CaseResult(False, call_text, expected_text, "—", _failure_reason(out, limits)), None
    if out.exc is not None:
        if exp_exc is not None and _exc_matches(exp_exc, out.exc):
            return CaseResult(True, call_text), None
        if out.exc.get("type") == "NameError" and f"没有定义函数 {case.function}" in out.exc.get("msg", ""):
            return CaseResult(False, call_text, expected_text, "—", f"笔记本中没有定义函数 {case.function}"), None
        reason = "抛出了错误类型的异常（应为 ValueError）" if exp_exc is not None else "参考实现正常返回，而你的函数抛出了异常"
        return CaseResult(False, call_text, expected_text, show_exc(out.exc), reason, out.exc.get("tb", "")), None
    if exp_exc is not None:
        return CaseResult(False, call_text, expected_text, show(out.value), "应当抛出 ValueError，但函数正常返回了"), None
    why = compare(expected, out.value)
    if why:
        return CaseResult(False, call_text, expected_text, show(out.value), why), None
    return CaseResult(True, call_text), out.value


def _run_case(session: Session, case: Case, limits: Limits) -> CaseResult:
    if case.kind == "ref":
        return _check_call(session, case, case.args, case.kwargs, limits)[0]
    values = []
    for args, kwargs in case.calls:
        res, value = _check_call(session, case, args, kwargs, limits)
        if not res.passed:
            return res
        values.append(value)
    why = case.relation(values) if case.relation else None
    if why:
        return CaseResult(False, show_call(case.function, case.calls[0][0], case.calls[0][1]), "", "", why)
    return CaseResult(True)


def _impl_handler(family: str, variant: str):
    def handle(msg: dict) -> dict:
        try:
            fn = mutants.implementation(family, variant, str(msg.get("fn")))
            args = [wire.decode(a) for a in msg.get("args", [])]
            kwargs = {str(k): wire.decode(v) for k, v in dict(msg.get("kwargs", {})).items()}
            with np.errstate(all="ignore"):
                value = fn(*args, **kwargs)
            return {"ok": True, "value": wire.encode(value)}
        except ValueError as exc:
            return {"ok": False, "exc_type": type(exc).__name__, "msg": str(exc)[:500]}
        except Exception as exc:  # noqa: BLE001 - a planted bug may raise anything; pass it on as data
            return {"ok": False, "exc_type": type(exc).__name__, "msg": str(exc)[:500]}

    return handle


def _mutant_runs(cells, notebook, cases, sandbox, limits, deadline, *, shared):
    """Run every case once, in random order; None instead of the outcomes if the shared sandbox restarted."""
    order = list(cases)
    random.SystemRandom().shuffle(order)
    raw: dict[str, Outcome] = {}
    reports = []
    zygote = Session(cells, notebook, sandbox=sandbox, limits=limits, deadline=deadline) if shared else None
    try:
        for case in order:
            family = "binary_metrics" if case.function == "test_binary_metrics" else "roc"
            session = zygote or Session(cells, notebook, sandbox=sandbox, limits=limits, deadline=deadline)
            session.new_run()
            try:
                raw[case.id] = session.call(case.function, list(case.impls), op="run_test",
                                            impl_handler=_impl_handler(family, case.variant), timeout=limits.call_timeout * 5)
            finally:
                reports.append(session.report)
                if zygote is None:
                    session.close()
            if zygote is not None and (zygote.proc is None or zygote.zygotes_started > 1):
                return None, reports
    finally:
        if zygote is not None:
            zygote.close()
    return raw, reports


def _run_mutants(cells: list[tuple[int, str]], notebook: Path, cases: list[Case], sandbox: bool,
                 limits: Limits, deadline: float | None = None) -> tuple[dict[str, CaseResult], list[SetupReport]]:
    """Assignment 5: each run in a fresh process, in random order; decide after all runs.

    With the sandbox, one bubblewrap sandbox per submission: its runner is a zygote that has run no
    student code and forks an isolated child per run (see ``runner.py`` and ``Session.new_run``);
    without it (``--no-sandbox``), a fresh process per run.
    """
    raw, reports = _mutant_runs(cells, notebook, cases, sandbox, limits, deadline, shared=sandbox)
    if raw is None:
        # A run ended the shared sandbox (crash, timeout, garbage on the pipe), so later runs started in a
        # new one, which they could notice: one bit from an earlier run.  Discard everything and judge
        # every run in its own sandbox instead (slower, and nothing is shared at all).
        raw, reports = _mutant_runs(cells, notebook, cases, sandbox, limits, deadline, shared=False)
    results: dict[str, CaseResult] = {}
    correct_ok: dict[str, tuple[bool, str]] = {}
    for case in cases:
        if case.variant == "correct":
            out = raw[case.id]
            correct_ok[case.function] = (out.ok, show_exc(out.exc) if out.exc else (_failure_reason(out, limits) if out.failure else ""))
    for case in cases:
        out = raw[case.id]
        call = f"{case.function}(<{mutants_label(case)}>)"
        if out.failure == "deadline":
            results[case.id] = CaseResult(False, call, "", "", _failure_reason(out, limits))
            continue
        if out.failure == "unavailable" or (out.exc and out.exc.get("type") == "NameError" and "没有定义测试函数" in out.exc.get("msg", "")):
            results[case.id] = CaseResult(False, call, "", "", f"笔记本中没有可运行的测试函数 {case.function}")
            continue
        if case.variant == "correct":
            ok, detail = correct_ok[case.function]
            results[case.id] = CaseResult(ok, call, "测试正常返回", detail, "" if ok else "你的测试把正确实现判为错误（误报）",
                                          out.exc.get("tb", "") if out.exc else "")
            continue
        caught = out.exc is not None
        ok_correct = correct_ok.get(case.function, (False, ""))[0]
        if caught and ok_correct:
            results[case.id] = CaseResult(True, call)
        elif not caught:
            why = "你的测试没有发现这个错误实现" if not out.failure else "测试在这个实现上没有正常结束：" + _failure_reason(out, limits)
            results[case.id] = CaseResult(False, call, "测试抛出异常（发现错误）", "测试正常返回" if not out.failure else "—", why)
        else:
            results[case.id] = CaseResult(False, call, "", "", "你的测试同时拒绝了正确实现，发现错误不计分")
    return results, reports


def mutants_label(case: Case) -> str:
    table = mutants.BINARY_METRICS_VARIANTS if case.function == "test_binary_metrics" else mutants.ROC_VARIANTS
    return "正确实现" if case.variant == "correct" else "错误实现：" + table[case.variant][0]


def grade_notebook(assignment: Assignment, source: Path, submission: Path | None, student: str, *,
                   sandbox: bool = True, limits: Limits | None = None) -> SubmissionResult:
    """Grade ``submission`` (None when the student submitted nothing for this assignment)."""
    limits = limits or Limits()
    t0 = time.monotonic()
    deadline = t0 + limits.submission_timeout
    results: dict[str, CaseResult] = {}
    notes: list[str] = []
    cell_errors: list[dict[str, Any]] = []
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
            if any(c.kind == "mutant" for c in todo):
                found, reports = _run_mutants(prepared.cells, submission, todo, sandbox, limits, deadline)
                results.update(found)
                report = reports[0] if reports else None
            else:
                session = Session(prepared.cells, submission, sandbox=sandbox, limits=limits, deadline=deadline)
                try:
                    for case in todo:
                        results[case.id] = _run_case(session, case, limits)
                finally:
                    session.close()
                report = session.report
            if report is not None:
                for idx, err in sorted(report.cell_errors.items()):
                    cell_errors.append({"cell": idx, "type": err.get("type"), "traceback": str(err.get("tb", ""))[-2000:]})
                for idx, why in sorted(report.skipped.items()):
                    if idx == -1:
                        notes.append("学生进程无法启动或反复崩溃，剩余用例未能运行。")
                    else:
                        notes.append(f"第 {idx} 个单元在执行时{why}，评分时跳过了这个单元（该单元中的定义不可用）。")
                if report.restarts:
                    notes.append(f"学生进程因崩溃或超时重启了 {report.restarts} 次（每次只影响当时正在运行的用例）。")
            if any(r.reason == FAILURE_TEXT["deadline"].format(s=limits.submission_timeout) for r in results.values()):
                notes.append(f"这份提交的评分总时间超过上限（{limits.submission_timeout:g} 秒，多为反复超时的单元或调用），"
                             "其余用例未能运行，计 0 分。")
    cells: dict[str, dict[str, float]] = {}
    case_rows = []
    for case in assignment.cases:
        r = results[case.id]
        cell = cells.setdefault(case.cell, {"score": 0.0, "max_score": 0.0})
        cell["max_score"] += case.points
        cell["score"] += case.points if r.passed else 0
        case_rows.append({"id": case.id, "cell": case.cell, "points": case.points, "function": case.function,
                          "description": case.description, "hidden": not case.cell.endswith("_visible"),
                          **asdict(r)})
    score = sum(c["score"] for c in cells.values())
    return SubmissionResult(student, assignment.name, score, float(assignment.max_score()), cells, case_rows, notes,
                            cell_errors, round(time.monotonic() - t0, 3))
