"""Assignment 5 (综合练习 7): the student writes tests; scored by the planted bugs they catch.

Each mutant case passes when the student's test function raises on that planted
implementation *and* passes on the correct one; the correct case passes when the
tests accept the correct implementation.
"""

from __future__ import annotations

from ..mutants import BINARY_METRICS_VARIANTS, ROC_VARIANTS
from .case import Assignment, Case

TB, TR = "test_binary_metrics", "test_roc"

cases = [
    Case("visible.binary_metrics_constant", "a5_visible", 1, TB, "test_binary_metrics 能发现“总是返回同一组数”的实现",
         kind="mutant", impls=("binary_metrics",), family="binary_metrics", variant="constant"),
    Case("visible.roc_constant", "a5_visible", 1, TR, "test_roc 能发现“总是返回对角线”的实现",
         kind="mutant", impls=("roc_curve", "roc_auc", "pairwise_auc"), family="roc", variant="constant"),
    Case("binary_metrics.correct", "a5_hidden_binary_metrics", 2, TB, "test_binary_metrics 接受正确实现（不误报）",
         kind="mutant", impls=("binary_metrics",), family="binary_metrics", variant="correct"),
    Case("roc.correct", "a5_hidden_roc", 2, TR, "test_roc 接受正确实现（不误报）",
         kind="mutant", impls=("roc_curve", "roc_auc", "pairwise_auc"), family="roc", variant="correct"),
]
for key, (text, _fn) in BINARY_METRICS_VARIANTS.items():
    if key not in ("correct", "constant"):
        cases.append(Case(f"binary_metrics.{key}", "a5_hidden_binary_metrics", 2, TB, f"发现错误实现：{text}",
                          kind="mutant", impls=("binary_metrics",), family="binary_metrics", variant=key))
for key, (text, _fns) in ROC_VARIANTS.items():
    if key not in ("correct", "constant"):
        cases.append(Case(f"roc.{key}", "a5_hidden_roc", 2, TR, f"发现错误实现：{text}",
                          kind="mutant", impls=("roc_curve", "roc_auc", "pairwise_auc"), family="roc", variant=key))

ASSIGNMENT = Assignment(name="ps5_testing", notebook="metric_tests", title="作业 5：为评价程序编写测试",
                        functions=(TB, TR), cases=cases)
