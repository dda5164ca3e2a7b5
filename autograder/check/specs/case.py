"""The vocabulary of the specs: :class:`Case`, :class:`Assignment` and the helpers that make cases.

Kept apart from the package's ``__init__`` (which gathers the assignments) so that the assignment modules import
it without importing the package they are part of (no import cycle).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable


@dataclass
class Case:
    """One graded check."""

    id: str
    cell: str
    points: int
    function: str
    description: str
    kind: str = "ref"  # "ref" | "property" | "mutant"
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    # property: list of (args, kwargs) calls and a relation over the student's values
    calls: list = field(default_factory=list)
    relation: Callable[[list[Any]], str | None] | None = None
    # mutant: student test function, the implementation functions it receives, the family of planted
    # implementations ("binary_metrics" or "roc", see mutants.py) and the planted variant
    impls: tuple = ()
    family: str = ""
    variant: str = ""


@dataclass
class Assignment:
    """One nbgrader assignment: its notebook, student functions and cases."""

    name: str
    notebook: str
    title: str
    functions: tuple[str, ...]
    cases: list[Case]

    def cells(self) -> dict[str, list[Case]]:
        out: dict[str, list[Case]] = {}
        for c in self.cases:
            out.setdefault(c.cell, []).append(c)
        return out

    def max_score(self) -> int:
        return sum(c.points for c in self.cases)

    def basic_cases(self, function: str, expects_error: Callable[["Case"], bool]) -> list["Case"]:
        """The valid-input cases a function must pass before its validation cases count: its visible ones,
        or, when it has none, its first two (so that a stub that only raises ``ValueError`` scores nothing)."""
        valid = [c for c in self.cases if c.function == function and c.kind != "mutant" and not expects_error(c)]
        visible = [c for c in valid if c.cell.endswith("_visible")]
        return visible or valid[:2]


def ref(case_id: str, cell: str, points: int, function: str, description: str, *args: Any, **kwargs: Any) -> Case:
    """A case compared with the reference on one call."""
    return Case(case_id, cell, points, function, description, "ref", args, kwargs)


def prop(case_id: str, cell: str, points: int, function: str, description: str, calls: list,
         relation: Callable[[list[Any]], str | None]) -> Case:
    """A case of several calls, each compared with the reference, plus a relation between them."""
    return Case(case_id, cell, points, function, description, "property", calls=calls, relation=relation)


def render_cell_listing(assignment: "Assignment", cell: str) -> str:
    """The comment block listing a grade cell's cases and points, as written into the notebook."""
    lines = [f"# 本单元的测试由评分程序在沙箱之外运行，代码不公开。共 {sum(c.points for c in assignment.cells()[cell])} 分："]
    for c in assignment.cells()[cell]:
        lines.append(f"#   {c.id}（{c.points} 分）：{c.description}")
    return "\n".join(lines)
