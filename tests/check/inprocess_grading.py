"""Grade trusted Python code in this process, through the engine's own case runner, scoring rules and
diagnosis (no sandbox): for tests of the catalogue and the matching on the real hidden cases."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import nbformat

from autograder.check import grade as grade_module
from autograder.check.cases import run_case_observed
from autograder.check.diagnose import diagnose
from autograder.check.specs import Assignment
from autograder.model import Limits, Outcome, SubmissionResult
from autograder.sandbox.payload import wire

REPO = Path(__file__).resolve().parents[2]


class InProcessSession:
    """Answers :meth:`Session.call` from a namespace, with values through the real wire format."""

    def __init__(self, namespace: dict[str, Any]) -> None:
        self.ns = namespace

    def call(self, fn: str, args: list, kwargs: dict | None = None, **_: Any) -> Outcome:
        func = self.ns.get(fn)
        if func is None:
            return Outcome(False, exc={"type": "NameError", "mro": ["NameError"], "msg": f"没有定义函数 {fn}", "tb": ""})
        try:
            value = func(*[wire.decode(wire.encode(a), wire.namedtuple_factory) for a in args],
                         **{k: wire.decode(wire.encode(v), wire.namedtuple_factory) for k, v in (kwargs or {}).items()})
        except Exception as exc:  # noqa: BLE001 - the student's exception, as the sandbox reports it
            return Outcome(False, exc={"type": type(exc).__name__, "mro": [c.__name__ for c in type(exc).__mro__],
                                       "msg": str(exc), "tb": ""})
        return Outcome(True, value=wire.decode(json.loads(json.dumps(wire.encode(value)))))


def solution_namespace(assignment: Assignment, *extra_sources: str, edit: tuple[str, str] | None = None) -> dict[str, Any]:
    """The instructor solution's code cells (not the grade cells) run in a fresh namespace, then ``extra_sources``;
    ``edit``: (old, new) text replaced once in the solution's code first (it must be there)."""
    nb = nbformat.read(REPO / "solutions" / assignment.name / f"{assignment.notebook}.ipynb", as_version=4)
    ns: dict[str, Any] = {}
    sources = [c.source for c in nb.cells if c.cell_type == "code" and not c.get("metadata", {}).get("nbgrader", {}).get("grade")]
    if edit is not None:
        at = next(i for i, text in enumerate(sources) if edit[0] in text)
        sources[at] = sources[at].replace(edit[0], edit[1], 1)
    for source in sources:
        exec(source, ns)  # noqa: S102 - our own test code
    for source in extra_sources:
        exec(source, ns)  # noqa: S102
    return ns


def grade_in_process(assignment: Assignment, namespace: dict[str, Any], student: str = "s") -> SubmissionResult:
    """Every case of ``assignment`` against ``namespace``, scored and diagnosed as :func:`grade_notebook` does."""
    session = InProcessSession(namespace)
    results, observed = {}, {}
    for case in assignment.cases:
        results[case.id], observed[case.id] = run_case_observed(session, case, Limits())
    return grade_module._scored(assignment, student, results, [], [], 0.0, diagnose(assignment, results, observed))
