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
    """One nbgrader assignment: its notebook, student functions and cases.

    ``basic`` names each graded function's *basic cases*: ordinary valid inputs (both classes present, no tied
    scores, no score on the threshold or a bin edge, no zero denominator, bins of equal size, the default options),
    at least one of them hidden, on which any function that computes what the assignment asks is right, whatever
    else it gets wrong.  ``by_field`` maps each function that returns several metrics in one record
    (``binary_metrics``) to the record's fields: its cases are scored metric by metric.  How both enter the score:
    :mod:`autograder.check.scoring`.
    """

    name: str
    notebook: str
    title: str
    functions: tuple[str, ...]
    cases: list[Case]
    basic: dict[str, tuple[str, ...]] = field(default_factory=dict)
    by_field: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def cells(self) -> dict[str, list[Case]]:
        out: dict[str, list[Case]] = {}
        for c in self.cases:
            out.setdefault(c.cell, []).append(c)
        return out

    def max_score(self) -> int:
        return sum(c.points for c in self.cases)

    def basic_cases(self, function: str) -> list["Case"]:
        """The basic cases of ``function`` (see the class), in the order of the cases."""
        ids = set(self.basic.get(function, ()))
        return [c for c in self.cases if c.id in ids]

    def is_basic(self, case: "Case") -> bool:
        return case.id in self.basic.get(case.function, ())


#: What each kind of grade cell checks, as the feedback names it (the part of the cell id after ``aN_`` / ``aN_hidden_``).
CELL_GROUPS = {
    "visible": "可见测试", "edge": "边界情况", "zero_division": "分母为 0 与 zero_division 参数",
    "validation": "非法输入应抛出 ValueError", "random": "随机数据上与参考实现比较", "property": "性质：变换得分后结果应有的关系",
    "binary_metrics": "发现 binary_metrics 的错误实现", "roc": "发现 ROC 与 AUC 的错误实现",
}


#: The Chinese name of each field of the records the functions return (the course's terms), for the feedback.
FIELD_LABELS = {
    "tp": "真正例数", "fp": "假正例数", "tn": "真负例数", "fn": "假负例数", "accuracy": "准确率", "precision": "精确率",
    "recall": "召回率", "fpr": "假正率", "specificity": "特异性", "f1": "F1 分数", "tpr": "真正率", "thresholds": "阈值",
    "fraction_positive": "每箱正类比例", "mean_predicted": "每箱平均概率", "count": "每箱样本数", "bin_edges": "箱的边界",
}


def cell_group(cell: str) -> str:
    """What the grade cell ``cell`` (``a1_hidden_edge``) checks, in Chinese (``边界情况``)."""
    kind = cell.split("_", 1)[1] if "_" in cell else cell
    return CELL_GROUPS.get(kind.removeprefix("hidden_"), cell)


def ref(case_id: str, cell: str, points: int, function: str, description: str, *args: Any, **kwargs: Any) -> Case:
    """A case compared with the reference on one call."""
    return Case(case_id, cell, points, function, description, "ref", args, kwargs)


def prop(case_id: str, cell: str, points: int, function: str, description: str, calls: list,
         relation: Callable[[list[Any]], str | None]) -> Case:
    """A case of several calls, each compared with the reference, plus a relation between them."""
    return Case(case_id, cell, points, function, description, "property", calls=calls, relation=relation)


def listing_line(assignment: "Assignment", case: "Case") -> str:
    """One case as a grade cell's comment lists it: id, points (and whether it is a basic case), description."""
    basic = "，基本用例" if assignment.is_basic(case) else ""
    return f"#   {case.id}（{case.points} 分{basic}）：{case.description}"


def render_cell_listing(assignment: "Assignment", cell: str) -> str:
    """The comment block listing a grade cell's cases and points, as written into the notebook."""
    lines = [f"# 本单元的测试由评分程序在沙箱之外运行，代码不公开。共 {sum(c.points for c in assignment.cells()[cell])} 分："]
    lines += [listing_line(assignment, c) for c in assignment.cells()[cell]]
    return "\n".join(lines)
