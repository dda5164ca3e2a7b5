"""Assignment 2 (综合练习 6): ROC by one sort and one scan with tie groups, trapezoid and pairwise AUC."""

from __future__ import annotations

import numpy as np

from .case import Assignment, prop, ref
from ..compare import _close
from ._data import labels_scores
from ._ranking_common import FAWCETT_S, FAWCETT_Y, invalid_cases, same_curve

RC, AUC, PW = "roc_curve", "roc_auc", "pairwise_auc"


def _same(values: list) -> str | None:
    first = values[0]
    for v in values[1:]:
        if not _close(float(v), float(first)):
            return f"单调变换后 AUC 从 {float(first)!r} 变为 {float(v)!r}"
    return None


def _complement(values: list) -> str | None:
    a, b = float(values[0]), float(values[1])
    return None if _close(b, 1.0 - a) else f"AUC(-s) = {b!r}，而 1 - AUC(s) = {1.0 - a!r}"


y1, s1 = labels_scores(21, 80, 0.4, 1)
TIES = ([1, 0, 0, 1, 0, 0, 1], [0.8, 0.8, 0.7, 0.5, 0.4, 0.2, 0.1])  # the top group is tied: a missing (0, 0) changes the area
y2, s2 = labels_scores(22, 120, 0.15, None)

cases = [
    ref("visible.roc_small", "a2_visible", 1, RC, "四个样本的 ROC 点（含两个端点）", [1, 0, 1, 0], [0.9, 0.8, 0.7, 0.1]),
    ref("visible.auc_small", "a2_visible", 1, AUC, "四个样本的梯形 AUC", [1, 0, 1, 0], [0.9, 0.8, 0.7, 0.1]),
    ref("visible.pairwise_small", "a2_visible", 1, PW, "四个样本的正负样本对 AUC", [1, 0, 1, 0], [0.9, 0.8, 0.7, 0.1]),
    # ties between a positive and a negative: splitting a tie group, or counting a tied pair 0 or 1, shows
    ref("visible.roc_ties", "a2_visible", 1, RC, "正负样本得分并列：并列组一步走完，只产生一个点", *TIES),
    ref("visible.auc_ties", "a2_visible", 1, AUC, "正负样本得分并列时的梯形 AUC（并列组走斜线）", *TIES),
    ref("visible.pairwise_ties", "a2_visible", 1, PW, "正负样本得分并列时的正负样本对 AUC（并列对计 1/2）", *TIES),
    ref("edge.roc_fawcett", "a2_hidden_edge", 1, RC, "Fawcett 十样本表的完整 ROC 点", FAWCETT_Y, FAWCETT_S),
    ref("edge.auc_fawcett", "a2_hidden_edge", 1, AUC, "Fawcett 十样本表的 AUC", FAWCETT_Y, FAWCETT_S),
    ref("edge.roc_perfect", "a2_hidden_edge", 1, RC, "完美排序的 ROC", [1, 1, 0, 0], [0.9, 0.8, 0.2, 0.1]),
    ref("edge.auc_perfect", "a2_hidden_edge", 1, AUC, "完美排序 AUC = 1", [1, 1, 0, 0], [0.9, 0.8, 0.2, 0.1]),
    ref("edge.auc_reversed", "a2_hidden_edge", 1, AUC, "完全反向排序 AUC = 0", [0, 0, 1, 1], [0.9, 0.8, 0.2, 0.1]),
    ref("edge.pairwise_reversed", "a2_hidden_edge", 1, PW, "完全反向排序的正负样本对 AUC = 0", [0, 0, 1, 1], [0.9, 0.8, 0.2, 0.1]),
    ref("edge.roc_constant", "a2_hidden_edge", 1, RC, "常数得分：只有一条对角线段", [1, 0, 1, 0, 0], [0.5] * 5),
    ref("edge.auc_constant", "a2_hidden_edge", 1, AUC, "常数得分 AUC = 0.5", [1, 0, 1, 0, 0], [0.5] * 5),
    ref("edge.pairwise_constant", "a2_hidden_edge", 1, PW, "常数得分：并列对计 1/2", [1, 0, 1, 0, 0], [0.5] * 5),
    ref("edge.roc_ties_mixed", "a2_hidden_edge", 1, RC, "含正负混合的并列组（整组一步）", [1, 0, 1, 1, 0, 0], [0.8, 0.8, 0.5, 0.3, 0.3, 0.1]),
    ref("edge.auc_ties_mixed", "a2_hidden_edge", 1, AUC, "含并列组的梯形 AUC", [1, 0, 1, 1, 0, 0], [0.8, 0.8, 0.5, 0.3, 0.3, 0.1]),
    ref("edge.pairwise_ties", "a2_hidden_edge", 1, PW, "含并列组的正负样本对 AUC", [1, 0, 1, 1, 0, 0], [0.8, 0.8, 0.5, 0.3, 0.3, 0.1]),
    ref("edge.roc_order_in_ties", "a2_hidden_edge", 1, RC, "并列组内样本顺序不影响结果", [0, 1, 0, 1], [0.4, 0.4, 0.4, 0.9]),
    ref("edge.roc_bool_labels", "a2_hidden_edge", 1, RC, "布尔标签", np.array([True, False, False, True]), [0.3, 0.6, 0.1, 0.9]),
    ref("edge.roc_int_scores", "a2_hidden_edge", 1, RC, "整数得分", [1, 0, 1, 0], np.array([3, 1, 2, 2])),
    ref("edge.auc_two_samples", "a2_hidden_edge", 1, AUC, "最小数据：一个正类一个负类", [0, 1], [0.2, 0.1]),
    prop("property.monotone_auc", "a2_hidden_property", 2, AUC, "严格单调递增变换（exp、3s+1）不改变 AUC",
         [((y1, s1), {}), ((y1, np.exp(s1)), {}), ((y1, 3.0 * s1 + 1.0), {})], _same),
    prop("property.monotone_roc", "a2_hidden_property", 2, RC, "严格单调递增变换后 ROC 的 FPR/TPR 不变（阈值随之变换）",
         [((y2, s2), {}), ((y2, np.exp(s2 / 4)), {})], same_curve(("fpr", "tpr"), lambda t: np.exp(t / 4), "ROC")),
    prop("property.negated_auc", "a2_hidden_property", 2, AUC, "AUC(-s) = 1 - AUC(s)", [((y1, s1), {}), ((y1, -s1), {})], _complement),
    prop("property.negated_pairwise", "a2_hidden_property", 2, PW, "正负样本对 AUC 满足 AUC(-s) = 1 - AUC(s)",
         [((y2, s2), {}), ((y2, -s2), {})], _complement),
]
for fn in (RC, AUC, PW):
    cases += invalid_cases("a2_hidden_validation", fn)
for seed, n, rate, dec in [(31, 100, 0.5, 1), (32, 400, 0.05, 1), (33, 250, 0.8, 0), (34, 300, 0.3, None)]:
    y, s = labels_scores(seed, n, rate, dec)
    desc = f"种子 {seed}，n={n}，正类约 {rate:.0%}，{'大量并列' if dec is not None else '无并列'}"
    cases.append(ref(f"random.roc.seed{seed}", "a2_hidden_random", 1, RC, f"随机数据 ROC 曲线（{desc}）", y, s))
    cases.append(ref(f"random.auc.seed{seed}", "a2_hidden_random", 1, AUC, f"随机数据梯形 AUC（{desc}）", y, s))
    cases.append(ref(f"random.pairwise.seed{seed}", "a2_hidden_random", 1, PW, f"随机数据正负样本对 AUC（{desc}）", y, s))

ASSIGNMENT = Assignment(
    name="ps2_roc_auc",
    notebook="roc_auc",
    title="作业 2：ROC 曲线与 AUC",
    functions=(RC, AUC, PW),
    cases=cases,
    basic={RC: ("visible.roc_small", "random.roc.seed34"), AUC: ("visible.auc_small", "random.auc.seed34"),
           PW: ("visible.pairwise_small", "random.pairwise.seed34")},
)
