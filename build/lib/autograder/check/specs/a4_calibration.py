"""Assignment 4: Brier score and its baseline, calibration curve with per-bin counts, ECE."""

from __future__ import annotations

import numpy as np

from .case import Assignment, ref
from ._data import labels_probs

BS, BB, CC, ECE = "brier_score", "brier_baseline", "calibration_curve", "expected_calibration_error"
Y = [1, 0, 1, 0]
P = [0.9, 0.8, 0.7, 0.1]

cases = [
    ref("visible.brier", "a4_visible", 1, BS, "例 3.2 的 Brier 分数", Y, P),
    ref("visible.baseline", "a4_visible", 1, BB, "正类占 2/5 时的基线", [1, 0, 0, 1, 0]),
    ref("visible.curve", "a4_visible", 1, CC, "四个样本、两个分箱的校准曲线", Y, P, n_bins=2),
    ref("visible.curve_bins", "a4_visible", 1, CC, "概率落在内部边界上（进入左边的箱）、有一个空箱（不出现在结果中）",
        [0, 0, 1, 1, 0, 1], [0.1, 0.25, 0.5, 0.5, 0.8, 0.9], n_bins=4),
    ref("visible.ece", "a4_visible", 1, ECE, "两个箱的样本数不同：ECE 按每箱样本数加权", [1, 0, 1, 1, 0, 0], [0.9, 0.8, 0.7, 0.6, 0.3, 0.1],
        n_bins=2),
    ref("edge.brier_perfect", "a4_hidden_edge", 1, BS, "完全正确且确定的概率：Brier = 0", [1, 0, 1], [1.0, 0.0, 1.0]),
    ref("edge.brier_worst", "a4_hidden_edge", 1, BS, "完全错误且确定的概率：Brier = 1", [1, 0], [0.0, 1.0]),
    ref("edge.brier_single_class", "a4_hidden_edge", 1, BS, "只有负类也可以计算 Brier", [0, 0, 0], [0.1, 0.2, 0.3]),
    ref("edge.baseline_single_class", "a4_hidden_edge", 1, BB, "只有正类时基线为 0", [1, 1, 1]),
    ref("edge.baseline_imbalanced", "a4_hidden_edge", 1, BB, "正类占 1/10", [1] + [0] * 9),
    ref("edge.brier_bool_labels", "a4_hidden_edge", 1, BS, "布尔标签", np.array([True, False]), [0.75, 0.5]),
    ref("edge.curve_edges", "a4_hidden_edge", 1, CC, "概率恰好落在分箱边界（右闭，0 进入第一箱）",
        [1, 0, 1, 0, 1], [0.0, 0.1, 0.2, 0.5, 1.0], n_bins=10),
    ref("edge.curve_empty_bins", "a4_hidden_edge", 1, CC, "空箱不出现在结果中", [1, 0, 1], [0.05, 0.06, 0.95], n_bins=5),
    ref("edge.curve_one_bin", "a4_hidden_edge", 1, CC, "n_bins=1", [1, 0, 1], [0.2, 0.4, 0.6], n_bins=1),
    ref("edge.curve_constant", "a4_hidden_edge", 1, CC, "常数概率", [1, 0, 0, 1], [0.3] * 4, n_bins=4),
    ref("edge.curve_quantile", "a4_hidden_edge", 1, CC, "分位数分箱", [1, 0, 1, 0, 1, 0], [0.1, 0.2, 0.3, 0.6, 0.8, 0.9],
        n_bins=3, strategy="quantile"),
    ref("edge.ece_perfect", "a4_hidden_edge", 1, ECE, "每箱的平均概率等于正类比例时 ECE = 0", [1, 0, 1, 0], [0.5, 0.5, 0.5, 0.5], n_bins=2),
    ref("edge.ece_single_class", "a4_hidden_edge", 1, ECE, "只有负类时的 ECE", [0, 0, 0], [0.1, 0.2, 0.9]),
    ref("edge.ece_default_bins", "a4_hidden_edge", 1, ECE, "默认 10 个等宽分箱", Y, P),
]
invalid = [
    ("empty", "空数组", [], []),
    ("length_mismatch", "长度不一致", [1, 0], [0.1]),
    ("label_two", "标签含 2", [2, 0], [0.1, 0.2]),
    ("prob_above_one", "概率大于 1", [1, 0], [1.2, 0.2]),
    ("prob_negative", "概率小于 0", [1, 0], [-0.1, 0.2]),
    ("prob_nan", "概率含 NaN", [1, 0], [float("nan"), 0.2]),
    ("prob_inf", "概率含无穷大", [1, 0], [float("inf"), 0.2]),
    ("prob_complex", "复数概率", [1, 0], np.array([0.5 + 0j, 0.2 + 0j])),
]
for fn in (BS, CC, ECE):
    for key, text, y, p in invalid:
        cases.append(ref(f"invalid.{fn}.{key}", "a4_hidden_validation", 1, fn, f"{fn}：{text}", y, p))
cases += [
    ref("invalid.brier_baseline.empty", "a4_hidden_validation", 1, BB, "brier_baseline：空数组", []),
    ref("invalid.brier_baseline.label_half", "a4_hidden_validation", 1, BB, "brier_baseline：标签含 0.5", [1, 0.5]),
    ref("invalid.calibration_curve.zero_bins", "a4_hidden_validation", 1, CC, "n_bins=0", Y, P, n_bins=0),
    ref("invalid.calibration_curve.float_bins", "a4_hidden_validation", 1, CC, "n_bins=2.5", Y, P, n_bins=2.5),
    ref("invalid.calibration_curve.bool_bins", "a4_hidden_validation", 1, CC, "n_bins=True", Y, P, n_bins=True),
    ref("invalid.calibration_curve.strategy", "a4_hidden_validation", 1, CC, "strategy 不是 uniform/quantile", Y, P, strategy="kmeans"),
    ref("invalid.ece.zero_bins", "a4_hidden_validation", 1, ECE, "ECE：n_bins=0", Y, P, n_bins=0),
]
for seed, n, rate, dec in [(61, 100, 0.5, 2), (62, 400, 0.08, 1), (63, 300, 0.7, None)]:
    y, p = labels_probs(seed, n, rate, dec)
    desc = f"种子 {seed}，n={n}，正类约 {rate:.0%}"
    cases.append(ref(f"random.brier.seed{seed}", "a4_hidden_random", 1, BS, f"随机数据 Brier（{desc}）", y, p))
    cases.append(ref(f"random.curve.seed{seed}", "a4_hidden_random", 1, CC, f"随机数据校准曲线（{desc}）", y, p, n_bins=8))
    cases.append(ref(f"random.ece.seed{seed}", "a4_hidden_random", 1, ECE, f"随机数据 ECE（{desc}，分位数分箱）", y, p,
                     n_bins=5, strategy="quantile"))

ASSIGNMENT = Assignment(name="ps4_calibration", notebook="calibration", title="作业 4：Brier 分数与校准",
                        functions=(BS, BB, CC, ECE), cases=cases,
                        basic={BS: ("visible.brier", "random.brier.seed63"), BB: ("visible.baseline", "edge.baseline_imbalanced"),
                               CC: ("visible.curve", "random.curve.seed63"), ECE: ("edge.ece_default_bins", "random.ece.seed63")})
