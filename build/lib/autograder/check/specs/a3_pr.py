"""Assignment 3: PR curve (one point per distinct score) and average precision."""

from __future__ import annotations

import numpy as np

from .case import Assignment, prop, ref
from ..compare import _close
from ._data import labels_scores
from ._ranking_common import FAWCETT_S, FAWCETT_Y, invalid_cases, same_curve

PR, AP = "pr_curve", "average_precision"


def _same(values: list) -> str | None:
    a, b = float(values[0]), float(values[1])
    return None if _close(a, b) else f"单调变换后 AP 从 {a!r} 变为 {b!r}"


y1, s1 = labels_scores(41, 90, 0.3, 1)
SMALL = ([1, 0, 0, 1, 1, 0], [0.6, 0.5, 0.4, 0.3, 0.2, 0.1])

cases = [
    # the precision dips and rises again, so that a trapezoid, an interpolated or an unweighted mean of the
    # precisions gives another AP; the tie group holds two positives and a negative, so that splitting it shows
    ref("visible.pr_small", "a3_visible", 1, PR, "六个样本的 PR 点", *SMALL),
    ref("visible.ap_small", "a3_visible", 1, AP, "六个样本的 AP（精确率先降后升，不做插值）", *SMALL),
    ref("visible.ap_ties", "a3_visible", 1, AP, "并列组中的正类共用该组整体进入后的精确率", [1, 1, 0, 1, 0, 0], [0.8, 0.5, 0.5, 0.5, 0.2, 0.1]),
    ref("edge.pr_fawcett", "a3_hidden_edge", 1, PR, "Fawcett 十样本表的 PR 点", FAWCETT_Y, FAWCETT_S),
    ref("edge.ap_fawcett", "a3_hidden_edge", 1, AP, "Fawcett 十样本表的 AP", FAWCETT_Y, FAWCETT_S),
    ref("edge.ap_perfect", "a3_hidden_edge", 1, AP, "完美排序 AP = 1", [1, 1, 0, 0], [0.9, 0.8, 0.2, 0.1]),
    ref("edge.pr_reversed", "a3_hidden_edge", 1, PR, "完全反向排序的 PR 点", [0, 0, 1, 1], [0.9, 0.8, 0.2, 0.1]),
    ref("edge.ap_reversed", "a3_hidden_edge", 1, AP, "完全反向排序的 AP", [0, 0, 1, 1], [0.9, 0.8, 0.2, 0.1]),
    ref("edge.pr_constant", "a3_hidden_edge", 1, PR, "常数得分：只有一个点", [1, 0, 0, 1, 0], [0.3] * 5),
    ref("edge.ap_constant", "a3_hidden_edge", 1, AP, "常数得分的 AP 等于正类比例", [1, 0, 0, 1, 0], [0.3] * 5),
    ref("edge.pr_ties", "a3_hidden_edge", 1, PR, "并列组整体进入（不拆分）", [1, 0, 1, 1, 0], [0.7, 0.7, 0.7, 0.2, 0.2]),
    ref("edge.ap_ties", "a3_hidden_edge", 1, AP, "并列组中多个正类共用该组的精确率", [1, 0, 1, 1, 0], [0.7, 0.7, 0.7, 0.2, 0.2]),
    ref("edge.ap_single_positive", "a3_hidden_edge", 1, AP, "只有一个正类（排在中间）", [0, 0, 1, 0], [0.9, 0.8, 0.5, 0.1]),
    ref("edge.pr_bool_labels", "a3_hidden_edge", 1, PR, "布尔标签", np.array([False, True, True]), [0.2, 0.9, 0.4]),
    ref("edge.pr_int_scores", "a3_hidden_edge", 1, PR, "整数得分", [1, 0, 1, 0], np.array([5, 4, 4, 1])),
    prop("property.monotone_ap", "a3_hidden_property", 2, AP, "严格单调递增变换不改变 AP", [((y1, s1), {}), ((y1, np.exp(s1)), {})], _same),
    prop("property.monotone_pr", "a3_hidden_property", 2, PR, "严格单调递增变换后 PR 点不变", [((y1, s1), {}), ((y1, 2.0 * s1 - 5.0), {})],
         same_curve(("precision", "recall"), lambda t: 2.0 * t - 5.0, "PR")),
]
for fn in (PR, AP):
    cases += invalid_cases("a3_hidden_validation", fn)
for seed, n, rate, dec in [(51, 100, 0.5, 1), (52, 400, 0.05, 1), (53, 250, 0.8, 0), (54, 300, 0.2, None)]:
    y, s = labels_scores(seed, n, rate, dec)
    desc = f"种子 {seed}，n={n}，正类约 {rate:.0%}，{'大量并列' if dec is not None else '无并列'}"
    cases.append(ref(f"random.pr.seed{seed}", "a3_hidden_random", 1, PR, f"随机数据 PR 曲线（{desc}）", y, s))
    cases.append(ref(f"random.ap.seed{seed}", "a3_hidden_random", 2, AP, f"随机数据 AP（{desc}）", y, s))

ASSIGNMENT = Assignment(name="ps3_pr_ap", notebook="pr_ap", title="作业 3：PR 曲线与平均精确率", functions=(PR, AP), cases=cases,
                        basic={PR: ("visible.pr_small", "random.pr.seed54"), AP: ("visible.ap_small", "random.ap.seed54")})
