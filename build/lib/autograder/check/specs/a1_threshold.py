"""Assignment 1 (综合练习 5): fixed-threshold metrics with ``zero_division`` and full validation."""

from __future__ import annotations

import numpy as np

from ...reference import BinaryMetrics
from .case import Assignment, ref
from ._data import labels_scores

BM = "binary_metrics"
CC = "confusion_counts"
Y = [1, 0, 1, 0, 1, 0]
S = [0.9, 0.8, 0.7, 0.4, 0.3, 0.1]

cases = [
    # visible tests (the same inputs as the notebook's visible test cell): FP != FN and every metric a different
    # number, so that swapping two counts or two formulas (precision/recall, FPR/FDR, F1 as a mean) shows
    ref("visible.counts", "a1_visible", 1, CC, "混淆矩阵的四个计数（FP 与 FN 不同）", [1, 1, 0, 0, 1, 0], [1, 0, 1, 1, 1, 0]),
    ref("visible.metrics", "a1_visible", 1, BM, "十个样本在阈值 0.5 的全部指标（精确率与召回率不同）",
        [1, 0, 1, 1, 0, 0, 1, 0, 1, 0], [0.95, 0.85, 0.8, 0.65, 0.45, 0.4, 0.35, 0.3, 0.2, 0.1], 0.5),
    ref("visible.threshold_tie", "a1_visible", 1, BM, "得分恰好等于阈值的样本判为正类", [1, 0, 1, 0], [0.6, 0.5, 0.5, 0.2], 0.5),
    ref("visible.zero_division", "a1_visible", 1, BM, "没有样本被判为正类：zero_division=\"nan\" 时精确率为 NaN",
        [1, 0, 0], [0.3, 0.2, 0.1], 0.5, zero_division="nan"),
    # edge cases of 综合练习 7
    ref("edge.all_negative_labels", "a1_hidden_edge", 1, BM, "全部真实标签为负类（Recall 分母为 0）", [0, 0, 0], [0.2, 0.6, 0.9], 0.5),
    ref("edge.all_positive_labels", "a1_hidden_edge", 1, BM, "全部真实标签为正类（FPR 分母为 0）", [1, 1, 1], [0.2, 0.6, 0.9], 0.5),
    ref("edge.predict_all_negative", "a1_hidden_edge", 1, BM, "阈值高于全部得分：全预测为负类", Y, S, 2.0),
    ref("edge.predict_all_positive", "a1_hidden_edge", 1, BM, "阈值低于全部得分：全预测为正类", Y, S, -1.0),
    ref("edge.perfect", "a1_hidden_edge", 1, BM, "完美排序", [1, 1, 0, 0], [0.9, 0.8, 0.2, 0.1], 0.5),
    ref("edge.reversed", "a1_hidden_edge", 1, BM, "完全反向排序", [0, 0, 1, 1], [0.9, 0.8, 0.2, 0.1], 0.5),
    ref("edge.constant_scores", "a1_hidden_edge", 1, BM, "常数得分且等于阈值（>= 判为正类）", [1, 0, 1], [0.5, 0.5, 0.5], 0.5),
    ref("edge.ties_at_threshold", "a1_hidden_edge", 1, BM, "并列得分恰好落在阈值上", [1, 0, 0, 1, 0], [0.3, 0.3, 0.7, 0.7, 0.1], 0.7),
    ref("edge.bool_labels", "a1_hidden_edge", 1, BM, "布尔标签（True 为正类）", np.array([True, False, True]), [0.9, 0.2, 0.4], 0.5),
    ref("edge.float_labels", "a1_hidden_edge", 1, BM, "浮点标签 1.0/0.0 合法", np.array([1.0, 0.0, 1.0, 0.0]), [0.9, 0.8, 0.2, 0.1], 0.5),
    ref("edge.int_scores_threshold", "a1_hidden_edge", 1, BM, "整数得分与整数阈值", [1, 0, 1, 0], np.array([3, 2, 2, 1]), 2),
    ref("edge.single_sample", "a1_hidden_edge", 1, BM, "只有一个样本", [1], [0.3], 0.5),
    ref("edge.counts_all_same", "a1_hidden_edge", 1, CC, "confusion_counts：预测与真实完全一致", [0, 1, 1, 0], [0, 1, 1, 0]),
    # zero denominators and the zero_division policy
    ref("zero.nan_precision", "a1_hidden_zero_division", 1, BM, "无预测正类，zero_division=\"nan\"", Y, S, 5.0, zero_division="nan"),
    ref("zero.zero_precision", "a1_hidden_zero_division", 1, BM, "无预测正类，zero_division=0", Y, S, 5.0, zero_division=0),
    ref("zero.raise_precision", "a1_hidden_zero_division", 1, BM, "无预测正类，zero_division=\"raise\" 应报错", Y, S, 5.0, zero_division="raise"),
    ref("zero.raise_recall", "a1_hidden_zero_division", 1, BM, "没有真实正类，zero_division=\"raise\" 应报错", [0, 0], [0.1, 0.9], 0.5,
        zero_division="raise"),
    ref("zero.f1_tp0", "a1_hidden_zero_division", 1, BM, "TP=0 但 FP+FN>0 时 F1 为 0，不经过 zero_division", [1, 0], [0.1, 0.9], 0.5),
    ref("zero.all_undefined_zero", "a1_hidden_zero_division", 1, BM, "没有正类也没有预测正类，zero_division=0", [0, 0, 0], [0.1, 0.2, 0.3], 0.9,
        zero_division=0),
    ref("zero.float_zero_ok", "a1_hidden_zero_division", 1, BM, "zero_division=0.0 等同于 0", Y, S, 5.0, zero_division=0.0),
    ref("zero.reject_one", "a1_hidden_zero_division", 1, BM, "zero_division=1 应被拒绝", Y, S, 0.5, zero_division=1),
    ref("zero.reject_none", "a1_hidden_zero_division", 1, BM, "zero_division=None 应被拒绝", Y, S, 0.5, zero_division=None),
    ref("zero.reject_false", "a1_hidden_zero_division", 1, BM, "zero_division=False 应被拒绝", Y, S, 0.5, zero_division=False),
    ref("zero.reject_NaN_text", "a1_hidden_zero_division", 1, BM, "zero_division=\"NaN\"（大小写不同）应被拒绝", Y, S, 0.5, zero_division="NaN"),
    ref("zero.reject_float_nan", "a1_hidden_zero_division", 1, BM, "zero_division=float('nan') 应被拒绝", Y, S, 0.5, zero_division=float("nan")),
    # validation: every bad input is a ValueError
    ref("invalid.empty", "a1_hidden_validation", 1, BM, "空数组", [], [], 0.5),
    ref("invalid.two_dimensional", "a1_hidden_validation", 1, BM, "二维得分", [1, 0], [[0.1, 0.2], [0.3, 0.4]], 0.5),
    ref("invalid.length_mismatch", "a1_hidden_validation", 1, BM, "标签与得分长度不一致", [1, 0, 1], [0.1, 0.2], 0.5),
    ref("invalid.label_two", "a1_hidden_validation", 1, BM, "标签含 2（不能强制转换）", [1, 2, 0], [0.1, 0.2, 0.3], 0.5),
    ref("invalid.label_half", "a1_hidden_validation", 1, BM, "标签含 0.5（不能四舍五入）", [1, 0.5, 0], [0.1, 0.2, 0.3], 0.5),
    ref("invalid.label_minus_one", "a1_hidden_validation", 1, BM, "标签含 -1", [1, -1, 0], [0.1, 0.2, 0.3], 0.5),
    ref("invalid.label_strings", "a1_hidden_validation", 1, BM, "字符串标签 \"1\"/\"0\"", np.array(["1", "0"]), [0.1, 0.2], 0.5),
    ref("invalid.label_nan", "a1_hidden_validation", 1, BM, "标签含 NaN", [1.0, float("nan")], [0.1, 0.2], 0.5),
    ref("invalid.score_nan", "a1_hidden_validation", 1, BM, "得分含 NaN", [1, 0], [0.1, float("nan")], 0.5),
    ref("invalid.score_inf", "a1_hidden_validation", 1, BM, "得分含无穷大", [1, 0], [float("inf"), 0.2], 0.5),
    ref("invalid.score_complex", "a1_hidden_validation", 1, BM, "复数得分", [1, 0], np.array([0.1 + 1j, 0.2]), 0.5),
    ref("invalid.score_bool", "a1_hidden_validation", 1, BM, "布尔得分", [1, 0], np.array([True, False]), 0.5),
    ref("invalid.threshold_nan", "a1_hidden_validation", 1, BM, "阈值为 NaN", [1, 0], [0.1, 0.2], float("nan")),
    ref("invalid.threshold_inf", "a1_hidden_validation", 1, BM, "阈值为无穷大", [1, 0], [0.1, 0.2], float("inf")),
    ref("invalid.threshold_bool", "a1_hidden_validation", 1, BM, "阈值为布尔值", [1, 0], [0.1, 0.2], True),
    ref("invalid.threshold_vector", "a1_hidden_validation", 1, BM, "阈值为数组而不是标量", [1, 0], [0.1, 0.2], np.array([0.5, 0.6])),
    ref("invalid.threshold_complex", "a1_hidden_validation", 1, BM, "阈值为复数", [1, 0], [0.1, 0.2], 0.5 + 0j),
    ref("invalid.counts_bad_pred", "a1_hidden_validation", 1, CC, "confusion_counts：预测标签含 2", [1, 0], [1, 2]),
    ref("invalid.counts_mismatch", "a1_hidden_validation", 1, CC, "confusion_counts：长度不一致", [1, 0, 1], [1, 0]),
]

for k, (seed, n, rate, dec) in enumerate([(1, 60, 0.5, 1), (2, 200, 0.1, 1), (3, 150, 0.9, 0), (4, 300, 0.3, None)]):
    y, s = labels_scores(seed, n, rate, dec)
    tau = float(np.round(np.median(s), 1))
    cases.append(ref(f"random.seed{seed}", "a1_hidden_random", 2, BM,
                     f"随机数据（种子 {seed}，n={n}，正类约 {rate:.0%}，{'大量并列' if dec is not None else '无并列'}）与参考实现比较",
                     y, s, tau))

ASSIGNMENT = Assignment(
    name="ps1_threshold_metrics",
    notebook="threshold_metrics",
    title="作业 1：固定阈值指标",
    functions=(CC, BM),
    cases=cases,
    basic={CC: ("visible.counts", "edge.counts_all_same"), BM: ("visible.metrics", "random.seed4")},
    by_field={BM: BinaryMetrics._fields},
)
