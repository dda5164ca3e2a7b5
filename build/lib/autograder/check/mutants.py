"""Planted implementations for assignment 5: the correct one and realistic bugs (trusted side only).

The student's test functions receive proxies; every call is answered here, in the
grader's process, so a student can tell the implementations apart only by their
behaviour.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .. import reference as R
from ..reference._validation import (
    check_binary_labels,
    check_both_classes,
    check_same_length,
    check_scores,
    check_threshold,
    check_zero_division,
)

__all__ = ["BINARY_METRICS_VARIANTS", "ROC_VARIANTS", "implementation"]


def _bm_from_counts(tp: int, fp: int, tn: int, fn: int, div: Callable[[float, float, str], float]) -> R.BinaryMetrics:
    total = tp + fp + tn + fn
    return R.BinaryMetrics(tp, fp, tn, fn, (tp + tn) / total, div(tp, tp + fp, "precision"), div(tp, tp + fn, "recall"),
                           div(fp, fp + tn, "fpr"), div(tn, tn + fp, "specificity"), div(2 * tp, 2 * tp + fp + fn, "f1"))


def _bm_epsilon(y_true: Any, y_score: Any, threshold: Any, *, zero_division: Any = "nan") -> R.BinaryMetrics:
    check_zero_division(zero_division)
    c = R.confusion_counts(y_true, (check_scores(y_score) >= check_threshold(threshold)).astype(int))
    return _bm_from_counts(*c, lambda a, b, _n: a / (b + 1e-12))


def _bm_strict(y_true: Any, y_score: Any, threshold: Any, *, zero_division: Any = "nan") -> R.BinaryMetrics:
    tau = check_threshold(threshold)
    scores = check_scores(y_score)
    bumped = np.nextafter(tau, np.inf)  # predicts positive only when score > threshold
    return R.binary_metrics(y_true, scores, bumped, zero_division=zero_division)


def _coerce(y_true: Any) -> np.ndarray:
    arr = np.asarray(y_true)
    if arr.dtype.kind in "biuf":
        return (arr != 0).astype(np.int64) if arr.ndim == 1 else arr
    return arr


def _bm_coerce(y_true: Any, y_score: Any, threshold: Any, *, zero_division: Any = "nan") -> R.BinaryMetrics:
    return R.binary_metrics(_coerce(y_true), y_score, threshold, zero_division=zero_division)


def _bm_any_policy(y_true: Any, y_score: Any, threshold: Any, *, zero_division: Any = "nan") -> R.BinaryMetrics:
    if zero_division in ("nan", "raise") or (isinstance(zero_division, (int, float)) and zero_division == 0 and not isinstance(zero_division, bool)):
        return R.binary_metrics(y_true, y_score, threshold, zero_division=zero_division)
    c = R.confusion_counts(y_true, (check_scores(y_score) >= check_threshold(threshold)).astype(int))
    return _bm_from_counts(*c, lambda a, b, _n: a / b if b else float(zero_division))


def _bm_nan_scores(y_true: Any, y_score: Any, threshold: Any, *, zero_division: Any = "nan") -> R.BinaryMetrics:
    scores = np.asarray(y_score, dtype=np.float64)
    if scores.ndim == 1 and scores.size and not np.all(np.isfinite(scores)):
        pred = (np.nan_to_num(scores, nan=-np.inf) >= check_threshold(threshold)).astype(int)
        c = R.confusion_counts(y_true, pred)
        return R.metrics_from_counts(*c, zero_division=zero_division)
    return R.binary_metrics(y_true, y_score, threshold, zero_division=zero_division)


def _bm_f1_rates(y_true: Any, y_score: Any, threshold: Any, *, zero_division: Any = "nan") -> R.BinaryMetrics:
    m = R.binary_metrics(y_true, y_score, threshold, zero_division=zero_division)
    p, r = m.precision, m.recall
    f1 = 2 * p * r / (p + r) if (p + r) != 0 else float("nan")
    return m._replace(f1=f1)


def _bm_constant(y_true: Any, y_score: Any, threshold: Any, *, zero_division: Any = "nan") -> R.BinaryMetrics:
    return R.BinaryMetrics(0, 0, 0, 0, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5)


BINARY_METRICS_VARIANTS: dict[str, tuple[str, Callable[..., Any]]] = {
    "correct": ("正确实现", R.binary_metrics),
    "constant": ("总是返回同一组数（可见测试用）", _bm_constant),
    "epsilon": ("在分母中加入 epsilon（分母为 0 时返回 0，不遵守 zero_division）", _bm_epsilon),
    "strict_threshold": ("用 score > threshold 而不是 >=", _bm_strict),
    "coerce_labels": ("把非 0 标签强制转换为 1，而不是拒绝", _bm_coerce),
    "any_zero_division": ("接受任意 zero_division 取值（如 1）而不报错", _bm_any_policy),
    "nan_scores": ("不检查 NaN 得分（把 NaN 当作负类预测）", _bm_nan_scores),
    "f1_from_rates": ("用 2PR/(P+R) 计算 F1，TP=0 时得到 NaN 而不是 0", _bm_f1_rates),
}


# -- ROC family ------------------------------------------------------------------------------------
def _validated(y_true: Any, y_score: Any) -> tuple[np.ndarray, np.ndarray]:
    pos = check_binary_labels(y_true)
    s = check_scores(y_score)
    check_same_length(pos, s, "y_true", "y_score")
    check_both_classes(pos)
    return pos, s


def _roc_no_ties(y_true: Any, y_score: Any) -> R.RocCurve:
    pos, s = _validated(y_true, y_score)
    order = np.argsort(-s, kind="stable")
    tps = np.cumsum(pos[order])
    fps = np.cumsum(~pos[order])
    return R.RocCurve(fpr=np.concatenate(([0.0], fps / fps[-1])), tpr=np.concatenate(([0.0], tps / tps[-1])),
                      thresholds=np.concatenate(([np.inf], s[order])))


def _auc_from_curve(curve: R.RocCurve) -> float:
    return float(np.sum(np.diff(curve.fpr) * (curve.tpr[1:] + curve.tpr[:-1]) / 2))


def _roc_no_start(y_true: Any, y_score: Any) -> R.RocCurve:
    c = R.roc_curve(y_true, y_score)
    return R.RocCurve(fpr=c.fpr[1:], tpr=c.tpr[1:], thresholds=c.thresholds[1:])


def _pairwise_ties_zero(y_true: Any, y_score: Any) -> float:
    pos, s = _validated(y_true, y_score)
    p, n = s[pos], s[~pos]
    return float(np.mean(p[:, None] > n[None, :]))


def _roc_single_class_nan(y_true: Any, y_score: Any) -> R.RocCurve:
    pos = check_binary_labels(y_true)
    s = check_scores(y_score)
    check_same_length(pos, s, "y_true", "y_score")
    if pos.all() or not pos.any():
        k = np.unique(s).size + 1
        return R.RocCurve(fpr=np.full(k, np.nan), tpr=np.full(k, np.nan), thresholds=np.concatenate(([np.inf], np.unique(s)[::-1])))
    return R.roc_curve(y_true, y_score)


def _auc_rectangle(y_true: Any, y_score: Any) -> float:
    c = R.roc_curve(y_true, y_score)
    return float(np.sum(np.diff(c.fpr) * c.tpr[:-1]))


def _roc_constant(*_a: Any) -> R.RocCurve:
    return R.RocCurve(fpr=np.array([0.0, 1.0]), tpr=np.array([0.0, 1.0]), thresholds=np.array([np.inf, 0.0]))


def _family(curve: Callable[..., Any] | None = None, auc: Callable[..., Any] | None = None,
            pairwise: Callable[..., Any] | None = None) -> dict[str, Callable[..., Any]]:
    return {"roc_curve": curve or R.roc_curve, "roc_auc": auc or R.roc_auc, "pairwise_auc": pairwise or R.pairwise_auc}


ROC_VARIANTS: dict[str, tuple[str, dict[str, Callable[..., Any]]]] = {
    "correct": ("正确实现", _family()),
    "constant": ("总是返回对角线与 0.5（可见测试用）", _family(_roc_constant, lambda *a: 0.5, lambda *a: 0.5)),
    "no_tie_groups": ("不按并列组更新：并列得分被拆成多个点", _family(_roc_no_ties, lambda y, s: _auc_from_curve(_roc_no_ties(y, s)))),
    "missing_start": ("ROC 缺少 (0, 0) 起点（阈值 +inf）", _family(_roc_no_start)),
    "ties_count_zero": ("正负样本对 AUC 中并列对计 0 而不是 1/2", _family(pairwise=_pairwise_ties_zero)),
    "coerce_labels": ("把非 0 标签强制转换为 1，而不是拒绝",
                      _family(lambda y, s: R.roc_curve(_coerce(y), s), lambda y, s: R.roc_auc(_coerce(y), s),
                              lambda y, s: R.pairwise_auc(_coerce(y), s))),
    "single_class_nan": ("单一类别时返回 NaN 而不是报错",
                         _family(_roc_single_class_nan, lambda y, s: _auc_from_curve(_roc_single_class_nan(y, s)))),
    "rectangle_auc": ("AUC 用左矩形而不是梯形（并列组处偏低）", _family(auc=_auc_rectangle)),
}


def implementation(family: str, variant: str, function: str) -> Callable[..., Any]:
    """The implementation of ``function`` in planted ``variant`` of ``family`` (``"binary_metrics"`` or ``"roc"``)."""
    if family == "binary_metrics":
        if function != "binary_metrics":
            raise KeyError(function)
        return BINARY_METRICS_VARIANTS[variant][1]
    return ROC_VARIANTS[variant][1][function]
