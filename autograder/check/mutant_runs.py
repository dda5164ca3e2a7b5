"""Assignment 5: run the student's test functions against every planted implementation and judge them.

Each run gets a fresh process (with the sandbox: one bubblewrap sandbox per submission whose zygote
forks an isolated child per run, see ``sandbox/payload/zygote.py`` and ``Session.new_run``), in
random order; every call the student's tests make of an implementation is answered here, in the
trusted process, by :mod:`.mutants`.  Nothing is decided before all runs are done.
"""

from __future__ import annotations

import functools
import inspect
import random
from pathlib import Path

import numpy as np

from .. import reference
from ..model import CaseResult, Limits, Outcome, SandboxSettings, SetupReport
from ..sandbox import Session
from ..sandbox.payload import wire
from . import mutants
from .cases import failure_reason
from .render import show_exc
from .specs import Case


# The planted implementations run HERE, in the trusted process, on inputs the student's tests choose:
# each call's arguments are bounded before they are decoded (a 40 000 x 40 000 pairwise comparison
# would take gigabytes), and a call over the bound is refused like bad input, for every implementation alike.
MAX_IMPL_ITEMS = 20_000


def _impl_handler(family: str, variant: str):
    def handle(msg: dict) -> dict:
        try:
            fn = mutants.implementation(family, variant, str(msg.get("fn")))
            raw_args, raw_kwargs = msg.get("args", []), msg.get("kwargs", {})
            if not isinstance(raw_args, list) or not isinstance(raw_kwargs, dict) or len(raw_args) + len(raw_kwargs) > 16:
                raise ValueError("参数格式错误")
            budget = MAX_IMPL_ITEMS
            args = []
            for a in raw_args:
                args.append(wire.decode(a, max_items=budget))
                budget -= _items(args[-1])
            kwargs = {}
            for k, v in raw_kwargs.items():
                kwargs[str(k)[:100]] = wire.decode(v, max_items=max(budget, 1))
                budget -= _items(kwargs[str(k)[:100]])
            if budget < 0:
                raise wire.WireError("")
            name = str(msg.get("fn"))
            try:  # every implementation takes the reference's arguments; a wrong call says so, the same for all
                _reference_signature(name).bind(*args, **kwargs)
            except TypeError:
                return {"ok": False, "exc_type": "TypeError", "msg": f"调用参数与 {name} 的签名不符"}
            with np.errstate(all="ignore"):
                value = fn(*args, **kwargs)
            return {"ok": True, "value": wire.encode(value)}
        except wire.WireError:
            return {"ok": False, "exc_type": "ValueError",
                    "msg": f"评分时每次调用的输入最多 {MAX_IMPL_ITEMS} 个元素（或输入无法读取）"}
        except ValueError as exc:  # the reference's own checks: the same words in every implementation
            return {"ok": False, "exc_type": type(exc).__name__, "msg": str(exc)[:500]}
        except Exception as exc:  # noqa: BLE001 - a planted bug may raise anything: only its type crosses
            # (messages of other errors name the planted function, e.g. "_bm_epsilon() takes ...")
            return {"ok": False, "exc_type": type(exc).__name__, "msg": type(exc).__name__}

    return handle


@functools.lru_cache(maxsize=64)
def _reference_signature(name: str) -> inspect.Signature:
    """The signature of the reference's function ``name`` (an implementation of it was found: a known name),
    worked out once per process instead of for each of the hundreds of calls a test makes."""
    return inspect.signature(getattr(reference, name))


def _items(x) -> int:
    """Number of values in a decoded argument (array elements, list items, recursively)."""
    if isinstance(x, np.ndarray):
        return int(x.size) if x.dtype != object else sum(_items(v) for v in x.ravel())
    if isinstance(x, (list, tuple)):
        return 1 + sum(_items(v) for v in x)
    if isinstance(x, dict):
        return 1 + sum(_items(k) + _items(v) for k, v in x.items())
    return 1


def _runs(cells, notebook, cases, sandbox, limits, deadline, *, shared):
    """Run every case once, in random order: (outcomes or None if the shared sandbox restarted, reports, seconds)."""
    order = list(cases)
    random.SystemRandom().shuffle(order)
    raw: dict[str, Outcome] = {}
    reports: list[SetupReport] = []
    seconds = 0.0
    zygote = Session(cells, notebook, sandbox=sandbox, limits=limits, deadline=deadline) if shared else None
    try:
        for case in order:
            session = zygote or Session(cells, notebook, sandbox=sandbox, limits=limits, deadline=deadline)
            session.new_run()
            try:
                raw[case.id] = session.call(case.function, list(case.impls), op="run_test",
                                            impl_handler=_impl_handler(case.family, case.variant),
                                            timeout=limits.call_timeout * 5)
            finally:
                reports.append(session.report)
                if zygote is None:
                    seconds += session.start_seconds
                    session.close()
            if zygote is not None and (zygote.proc is None or zygote.zygotes_started > 1):
                return None, reports, seconds + zygote.start_seconds
    finally:
        if zygote is not None:
            zygote.close()
    return raw, reports, seconds + (zygote.start_seconds if zygote is not None else 0.0)


def label(case: Case) -> str:
    """How the feedback names the planted implementation of a case."""
    table = mutants.BINARY_METRICS_VARIANTS if case.family == "binary_metrics" else mutants.ROC_VARIANTS
    return "正确实现" if case.variant == "correct" else "错误实现：" + table[case.variant][0]


def run_mutants(cells: list[tuple[int, str]], notebook: Path, cases: list[Case], sandbox: SandboxSettings | bool,
                limits: Limits, deadline: float | None = None) -> tuple[dict[str, CaseResult], list[SetupReport], float]:
    """Judge every mutant case: ``(results by case id, setup reports, seconds spent starting sandboxes and cells)``."""
    raw, reports, seconds = _runs(cells, notebook, cases, sandbox, limits, deadline, shared=SandboxSettings.of(sandbox).enabled)
    if raw is None:
        # A run ended the shared sandbox (crash, timeout, garbage on the pipe), so later runs started in a
        # new one, which they could notice: one bit from an earlier run.  Discard everything and judge
        # every run in its own sandbox instead (slower, and nothing is shared at all).
        raw, reports, more = _runs(cells, notebook, cases, sandbox, limits, deadline, shared=False)
        seconds += more
    results: dict[str, CaseResult] = {}
    correct_ok: dict[str, tuple[bool, str]] = {}
    for case in cases:
        if case.variant == "correct":
            out = raw[case.id]
            correct_ok[case.function] = (out.ok, show_exc(out.exc) if out.exc else (failure_reason(out, limits) if out.failure else ""))
    for case in cases:
        out = raw[case.id]
        call = f"{case.function}(<{label(case)}>)"
        if out.failure == "deadline":
            results[case.id] = CaseResult(False, call, "", "", failure_reason(out, limits))
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
            why = "你的测试没有发现这个错误实现" if not out.failure else "测试在这个实现上没有正常结束：" + failure_reason(out, limits)
            results[case.id] = CaseResult(False, call, "测试抛出异常（发现错误）", "测试正常返回" if not out.failure else "—", why)
        else:
            results[case.id] = CaseResult(False, call, "", "", "你的测试同时拒绝了正确实现，发现错误不计分")
    return results, reports, seconds
