"""Run one case against the sandboxed student code and judge it in the trusted process."""

from __future__ import annotations

from ..model import CaseResult, Limits, Outcome
from ..sandbox import SandboxBroken, Session
from ..sandbox.command import unavailable
from .compare import compare, field_differences
from .diagnose import Observed
from .expected import expected_for
from .render import show, show_call, show_exc
from .specs import Case

FAILURE_TEXT = {
    "timeout": "调用超时（超过 {t:g} 秒），可能存在死循环或过慢的算法",
    "crash": "学生进程在调用中退出或被杀死（例如 sys.exit/os._exit、内存或 CPU 超限）",
    "protocol": "返回值无法读取（不是普通数据，或消息被破坏）",
    "unavailable": "学生代码无法启动（多次崩溃），此用例未能运行",
    "deadline": "这份提交的评分总时间已用完（上限 {s:g} 秒），此用例未能运行",
}


def failure_reason(out: Outcome, limits: Limits) -> str:
    """The feedback sentence for a call whose process failed (``out.failure``)."""
    return FAILURE_TEXT.get(out.failure or "", "未知错误").format(t=limits.call_timeout, s=limits.submission_timeout)


def _exc_matches(expected: BaseException, exc: dict) -> bool:
    mro = set(exc.get("mro", []))
    if type(expected).__name__ == "UndefinedMetricError":
        return bool(mro & {"ValueError", "ZeroDivisionError"})
    return "ValueError" in mro


def _unavailable_use(exc: dict, skipped: set[str]) -> str | None:
    """The reason when the student's function used a module the grading environment does not provide."""
    msg = str(exc.get("msg", ""))
    if exc.get("type") == "NameError":
        name = msg.split("'")[1] if msg.count("'") >= 2 else ""
        if name in skipped:
            return (f"函数用到了 {name}，它来自一个评分环境中没有的模块（导入它的那一行被跳过了，见页首说明）；"
                    "评分环境只提供 Python 标准库和 NumPy")
    if exc.get("type") == "ModuleNotFoundError":
        module = msg.split("'")[1] if msg.count("'") >= 2 else ""
        if unavailable(module):
            return (f"函数导入了 {module}：评分环境只提供 Python 标准库和 NumPy，"
                    "scikit-learn、SciPy 和课程的参考实现都不可用")
    return None


def check_call(session: Session, case: Case, args: tuple, kwargs: dict, limits: Limits,
               skipped: frozenset[str] = frozenset()) -> tuple[CaseResult, Observed]:
    """Call the student's function on one input and compare with the reference: the result and what the
    function did (for :mod:`.diagnose`).

    ``skipped``: names whose top-level import was skipped (:func:`.prepare.skip_unavailable_imports`).
    """
    # the texts of a call are rendered only for a case that fails (the feedback shows a passed case by its id and
    # description; rendering every call's arrays was ~10 % of grading an assignment's solution)
    expected, exp_exc = expected_for(case.function, args, kwargs)
    out = session.call(case.function, list(args), kwargs)

    def failed(got: str, reason: str, traceback: str = "", wrong_fields: tuple[str, ...] = ()) -> CaseResult:
        expected_text = f"抛出 ValueError（{exp_exc}）" if exp_exc is not None else show(expected)
        return CaseResult(False, show_call(case.function, args, kwargs), expected_text, got, reason, traceback, wrong_fields)

    if out.failure:
        return failed("—", failure_reason(out, limits)), Observed("failed")
    if out.exc is not None:
        raised = Observed("raised", mro=tuple(str(m) for m in out.exc.get("mro", [])))
        if exp_exc is not None and _exc_matches(exp_exc, out.exc):
            return CaseResult(True), raised
        if out.exc.get("type") == "NameError" and f"没有定义函数 {case.function}" in out.exc.get("msg", ""):
            return failed("—", f"笔记本中没有定义函数 {case.function}"), Observed("failed")
        unavailable = _unavailable_use(out.exc, skipped)
        if unavailable:
            return failed(show_exc(out.exc), unavailable, out.exc.get("tb", "")), Observed("failed")
        reason = "抛出了错误类型的异常（应为 ValueError）" if exp_exc is not None else "参考实现正常返回，而你的函数抛出了异常"
        return failed(show_exc(out.exc), reason, out.exc.get("tb", "")), raised
    seen = Observed("value", out.value)
    if exp_exc is not None:
        return failed(show(out.value), "应当抛出 ValueError，但函数正常返回了"), seen
    why = compare(expected, out.value)
    if why:
        wrong = field_differences(expected, out.value)  # a record of the right shape: every field that differs
        if wrong:
            return failed(show(out.value), "；".join(wrong.values()), wrong_fields=tuple(wrong)), seen
        return failed(show(out.value), why), seen
    return CaseResult(True), seen


def run_case(session: Session, case: Case, limits: Limits, skipped: frozenset[str] = frozenset()) -> CaseResult:
    """A ``ref`` case (one call) or a ``property`` case (several calls, then the relation between them).

    Whatever the student's value does to the judging (an integer beyond every float, a structure the
    rendering cannot handle ...), the case ends with a result: judging errors fail the case with the reason.
    """
    return run_case_observed(session, case, limits, skipped)[0]


def run_case_observed(session: Session, case: Case, limits: Limits,
                      skipped: frozenset[str] = frozenset()) -> tuple[CaseResult, list[Observed]]:
    """:func:`run_case`, and what the function did on each call made (a property case stops at its first
    failing call)."""
    seen: list[Observed] = []
    try:
        return _run_case(session, case, limits, skipped, seen), seen
    except SandboxBroken:
        raise  # the machine, not the student: never a grade
    except Exception as exc:  # noqa: BLE001 - a value the judging cannot handle fails only this case
        return CaseResult(False, show_call(case.function, case.args, case.kwargs) if case.kind == "ref" else "", "", "",
                          f"评分程序无法判断这个返回值（{type(exc).__name__}），此用例不得分"), seen + [Observed("failed")]


def _property_calls(case: Case, made: int, failed: bool) -> str:
    """Every call of a property case, numbered, with what became of it (two property cases on the same data
    differ in the inputs of their later calls: the student sees which call went wrong)."""
    lines = []
    for i, (args, kwargs) in enumerate(case.calls):
        state = "未运行" if i >= made else "未通过" if failed and i == made - 1 else "与参考实现一致"
        lines.append(f"第 {i + 1} 次调用（{state}）：{show_call(case.function, args, kwargs)}")
    return "\n".join(lines)


def _run_case(session: Session, case: Case, limits: Limits, skipped: frozenset[str], seen: list[Observed]) -> CaseResult:
    if case.kind == "ref":
        res, observed = check_call(session, case, case.args, case.kwargs, limits, skipped)
        seen.append(observed)
        return res
    values = []
    for args, kwargs in case.calls:
        res, observed = check_call(session, case, args, kwargs, limits, skipped)
        seen.append(observed)
        if not res.passed:
            return CaseResult(False, _property_calls(case, len(seen), True), res.expected, res.got, res.reason, res.traceback)
        values.append(observed.value)
    why = case.relation(values) if case.relation else None
    if why:
        return CaseResult(False, _property_calls(case, len(seen), False), "", "", why)
    return CaseResult(True)
