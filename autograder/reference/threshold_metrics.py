r"""Fixed-threshold metrics computed from the confusion matrix.

A sample is predicted positive iff ``score >= threshold``.  From the counts
:math:`TP, FP, TN, FN`:

.. math::

    \mathrm{Accuracy} = \frac{TP+TN}{TP+TN+FP+FN},\quad
    \mathrm{Precision} = \frac{TP}{TP+FP},\quad
    \mathrm{Recall} = \frac{TP}{TP+FN},

    \mathrm{FPR} = \frac{FP}{FP+TN},\quad
    \mathrm{Specificity} = \frac{TN}{TN+FP},\quad
    F_1 = \frac{2TP}{2TP+FP+FN}.

A zero denominator is never patched with an epsilon: the ``zero_division``
policy decides (``"nan"`` returns NaN, ``0`` returns 0.0, ``"raise"`` raises
:class:`~autograder.reference.UndefinedMetricError` naming the metric and the
empty denominator).  F1 uses the count form, so it is 0 whenever ``TP = 0`` and
``FP + FN > 0``; only ``TP = FP = FN = 0`` goes through ``zero_division``.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from ._validation import (
    check_binary_labels,
    check_same_length,
    check_scores,
    check_threshold,
    check_zero_division,
    safe_divide,
)

__all__ = [
    "ConfusionCounts",
    "BinaryMetrics",
    "confusion_counts",
    "binary_metrics",
    "metrics_from_counts",
    "fbeta_score",
    "matthews_corrcoef",
    "balanced_accuracy",
]


class ConfusionCounts(NamedTuple):
    """The four cells of a binary confusion matrix (Python ``int``)."""

    tp: int
    fp: int
    tn: int
    fn: int


class BinaryMetrics(NamedTuple):
    """Confusion counts and the fixed-threshold metrics derived from them."""

    tp: int
    fp: int
    tn: int
    fn: int
    accuracy: float
    precision: float
    recall: float
    fpr: float
    specificity: float
    f1: float


def _counts(positive: np.ndarray, predicted: np.ndarray) -> ConfusionCounts:
    n = positive.shape[0]
    n_pos = int(np.count_nonzero(positive))
    n_pred = int(np.count_nonzero(predicted))
    tp = int(np.count_nonzero(positive & predicted))
    fp = n_pred - tp
    fn = n_pos - tp
    tn = n - tp - fp - fn
    return ConfusionCounts(tp, fp, tn, fn)


def confusion_counts(y_true: ArrayLike, y_pred: ArrayLike) -> ConfusionCounts:
    """Count TP, FP, TN and FN from true and predicted 0/1 labels.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n,)
        Labels holding only 0 and 1 (or booleans, ``True`` = positive).

    Returns
    -------
    ConfusionCounts
        ``(tp, fp, tn, fn)`` as Python integers; they sum to ``n``.

    Raises
    ------
    ValueError
        On empty, non-1-D, non-binary or unequal-length inputs.

    Examples
    --------
    >>> confusion_counts([1, 1, 0, 0], [1, 0, 1, 0])
    ConfusionCounts(tp=1, fp=1, tn=1, fn=1)
    """
    positive = check_binary_labels(y_true, "y_true")
    predicted = check_binary_labels(y_pred, "y_pred")
    check_same_length(positive, predicted, "y_true", "y_pred")
    return _counts(positive, predicted)


def metrics_from_counts(tp: int, fp: int, tn: int, fn: int, *, zero_division: Any = "nan") -> BinaryMetrics:
    """Derive the fixed-threshold metrics from confusion-matrix counts.

    Parameters
    ----------
    tp, fp, tn, fn : int
        Non-negative counts with a positive total.
    zero_division : {"nan", 0, "raise"}, default "nan"
        What a metric with a zero denominator returns.

    Returns
    -------
    BinaryMetrics
    """
    policy = check_zero_division(zero_division)
    counts = []
    for name, value in (("tp", tp), ("fp", fp), ("tn", tn), ("fn", fn)):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < 0:
            raise ValueError(f"{name} 必须是非负整数，实际为 {value!r}")
        counts.append(int(value))
    tp, fp, tn, fn = counts
    total = tp + fp + tn + fn
    if total == 0:
        raise ValueError("混淆矩阵四项之和为 0，没有样本可以评价")
    return BinaryMetrics(
        tp=tp,
        fp=fp,
        tn=tn,
        fn=fn,
        accuracy=(tp + tn) / total,
        precision=safe_divide(tp, tp + fp, policy, "precision", "TP+FP（预测正类数）"),
        recall=safe_divide(tp, tp + fn, policy, "recall", "TP+FN（真实正类数）"),
        fpr=safe_divide(fp, fp + tn, policy, "fpr", "FP+TN（真实负类数）"),
        specificity=safe_divide(tn, tn + fp, policy, "specificity", "TN+FP（真实负类数）"),
        f1=safe_divide(2 * tp, 2 * tp + fp + fn, policy, "f1", "2TP+FP+FN"),
    )


def _predict(y_true: ArrayLike, y_score: ArrayLike, threshold: Any) -> ConfusionCounts:
    positive = check_binary_labels(y_true, "y_true")
    scores = check_scores(y_score, "y_score")
    check_same_length(positive, scores, "y_true", "y_score")
    tau = check_threshold(threshold, "threshold")
    return _counts(positive, scores >= tau)


def binary_metrics(y_true: ArrayLike, y_score: ArrayLike, threshold: float, *, zero_division: Any = "nan") -> BinaryMetrics:
    """Confusion counts and fixed-threshold metrics for the rule ``score >= threshold``.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        True labels, only 0 and 1 (booleans read as ``True`` = 1).
    y_score : array-like of shape (n,)
        Real, finite scores; larger means more likely positive.
    threshold : float
        Finite real scalar; a sample is predicted positive iff its score is
        greater than or equal to it.
    zero_division : {"nan", 0, "raise"}, default "nan"
        Result of a metric whose denominator is 0.  ``"raise"`` raises
        :class:`UndefinedMetricError` naming the metric and its empty
        denominator.  Any other value is a ``ValueError``.

    Returns
    -------
    BinaryMetrics
        ``tp, fp, tn, fn, accuracy, precision, recall, fpr, specificity, f1``.

    Examples
    --------
    例3.1 of the course (TP 50, TN 30, FP 10, FN 10) via counts:

    >>> m = metrics_from_counts(50, 10, 30, 10)
    >>> round(m.accuracy, 4), round(m.precision, 4), m.fpr
    (0.8, 0.8333, 0.25)
    """
    policy = check_zero_division(zero_division)
    return metrics_from_counts(*_predict(y_true, y_score, threshold), zero_division=policy)


def fbeta_score(y_true: ArrayLike, y_score: ArrayLike, threshold: float, *, beta: float = 1.0, zero_division: Any = "nan") -> float:
    r"""F-beta score at ``score >= threshold``.

    .. math:: F_\beta = \frac{(1+\beta^2)TP}{(1+\beta^2)TP + \beta^2 FN + FP}

    ``beta`` must be a finite positive real number; ``beta > 1`` weighs recall
    more.  Only ``TP = FP = FN = 0`` is a zero denominator.
    """
    policy = check_zero_division(zero_division)
    b = check_threshold(beta, "beta")
    if b <= 0:
        raise ValueError(f"beta 必须是正数，实际为 {b!r}")
    tp, fp, _tn, fn = _predict(y_true, y_score, threshold)
    b2 = b * b
    return safe_divide((1 + b2) * tp, (1 + b2) * tp + b2 * fn + fp, policy, "fbeta", "(1+β²)TP+β²FN+FP")


def matthews_corrcoef(y_true: ArrayLike, y_score: ArrayLike, threshold: float, *, zero_division: Any = "nan") -> float:
    r"""Matthews correlation coefficient at ``score >= threshold``.

    .. math:: \mathrm{MCC} = \frac{TP\cdot TN - FP\cdot FN}{\sqrt{(TP+FP)(TP+FN)(TN+FP)(TN+FN)}}

    The denominator is 0 whenever a row or column of the confusion matrix is
    empty (one class only, or one predicted class only); ``zero_division``
    decides.  Integer arithmetic keeps the numerator exact.
    """
    policy = check_zero_division(zero_division)
    tp, fp, tn, fn = _predict(y_true, y_score, threshold)
    product = (tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)
    denominator = math.sqrt(product)
    return safe_divide(tp * tn - fp * fn, denominator, policy, "mcc", "√((TP+FP)(TP+FN)(TN+FP)(TN+FN))")


def balanced_accuracy(y_true: ArrayLike, y_score: ArrayLike, threshold: float, *, zero_division: Any = "nan") -> float:
    r"""Balanced accuracy ``(TPR + TNR) / 2`` at ``score >= threshold``.

    With a single class present one of the two rates has a zero denominator;
    under ``zero_division="nan"`` the result is NaN, under ``0`` the missing
    rate counts as 0, under ``"raise"`` it raises.
    """
    policy = check_zero_division(zero_division)
    tp, fp, tn, fn = _predict(y_true, y_score, threshold)
    tpr = safe_divide(tp, tp + fn, policy, "recall", "TP+FN（真实正类数）")
    tnr = safe_divide(tn, tn + fp, policy, "specificity", "TN+FP（真实负类数）")
    return (tpr + tnr) / 2.0
