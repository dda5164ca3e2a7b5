r"""Probability-quality metrics: Brier score, log loss, calibration curve and ECE.

Inputs here are probabilities of the positive class, validated to lie in
[0, 1]; arbitrary scores must first be turned into probabilities.

Binning (shared by :func:`calibration_curve` and
:func:`expected_calibration_error`, identical to scikit-learn's
``calibration_curve``): with edges :math:`0 = e_0 < e_1 < \dots < e_K = 1`
(``"uniform"``) or the empirical quantiles of ``y_prob`` (``"quantile"``), a
probability :math:`p` falls into bin :math:`k` when :math:`e_k < p \le e_{k+1}`;
the first bin also holds :math:`p = e_0`.  Only non-empty bins are reported,
and, unlike scikit-learn, their sample counts are returned too.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from ._validation import check_binary_labels, check_positive_int, check_probabilities, check_same_length

__all__ = [
    "CalibrationCurve",
    "brier_score",
    "brier_baseline",
    "log_loss",
    "calibration_curve",
    "expected_calibration_error",
]


class CalibrationCurve(NamedTuple):
    """Reliability-diagram data over the non-empty bins, in increasing order.

    Attributes
    ----------
    mean_predicted : ndarray of shape (k,)
        Mean predicted probability in each non-empty bin.
    fraction_positive : ndarray of shape (k,)
        Observed share of positives in each non-empty bin.
    count : ndarray of int64, shape (k,)
        Number of samples in each non-empty bin (sums to ``n``).
    bin_edges : ndarray of shape (k, 2)
        ``[lower, upper]`` edges of each non-empty bin.
    """

    mean_predicted: np.ndarray
    fraction_positive: np.ndarray
    count: np.ndarray
    bin_edges: np.ndarray


def _labels_and_probs(y_true: ArrayLike, y_prob: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    positive = check_binary_labels(y_true, "y_true")
    probs = check_probabilities(y_prob, "y_prob")
    check_same_length(positive, probs, "y_true", "y_prob")
    return positive, probs


def brier_score(y_true: ArrayLike, y_prob: ArrayLike) -> float:
    r"""Brier score :math:`\frac1n\sum_i (p_i - y_i)^2`; lower is better, range [0, 1].

    Examples
    --------
    例3.2 of the course:

    >>> round(brier_score([1, 0, 1, 0], [0.9, 0.8, 0.7, 0.1]), 12)
    0.1875
    """
    positive, probs = _labels_and_probs(y_true, y_prob)
    residual = probs - positive
    return float(np.mean(residual * residual))


def brier_baseline(y_true: ArrayLike) -> float:
    r"""Brier score of the constant model that always predicts :math:`\bar y`.

    Equal to :math:`\bar y(1-\bar y)`, where :math:`\bar y` is the share of
    positives; a model is useful as a probability forecaster only below it.

    Examples
    --------
    >>> brier_baseline([1, 0, 1, 0])
    0.25
    """
    positive = check_binary_labels(y_true, "y_true")
    rate = np.count_nonzero(positive) / positive.shape[0]
    return float(rate * (1.0 - rate))


def log_loss(y_true: ArrayLike, y_prob: ArrayLike) -> float:
    r"""Mean negative log-likelihood :math:`-\frac1n\sum_i [y_i\ln p_i + (1-y_i)\ln(1-p_i)]`.

    Probabilities are never clipped.  A probability of exactly 0 or 1 on the
    *correct* side contributes 0 (the limit :math:`0\ln 0 = 0`); a probability of
    exactly 0 for a positive or 1 for a negative makes the loss ``+inf``, which is
    the true value of the score for such a confident mistake.
    """
    positive, probs = _labels_and_probs(y_true, y_prob)
    p_of_truth = np.where(positive, probs, 1.0 - probs)
    with np.errstate(divide="ignore"):
        return float(-np.mean(np.log(p_of_truth)))


def _bin_edges(probs: np.ndarray, n_bins: int, strategy: Any) -> np.ndarray:
    if strategy == "uniform":
        return np.linspace(0.0, 1.0, n_bins + 1)
    if strategy == "quantile":
        return np.percentile(probs, np.linspace(0.0, 100.0, n_bins + 1))
    raise ValueError(f'strategy 只能是 "uniform" 或 "quantile"，实际为 {strategy!r}')


def calibration_curve(y_true: ArrayLike, y_prob: ArrayLike, n_bins: int = 10, strategy: str = "uniform") -> CalibrationCurve:
    r"""Binned reliability diagram: mean prediction, observed positive share and count per bin.

    For each non-empty bin :math:`\mathcal B_k`,
    :math:`\bar p_k = |\mathcal B_k|^{-1}\sum_{i\in\mathcal B_k} p_i` and
    :math:`\bar y_k = |\mathcal B_k|^{-1}\sum_{i\in\mathcal B_k} y_i`.
    A point below the diagonal means the model over-estimates the probability
    of the positive class there.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Labels 0/1 (booleans read as ``True`` = 1).  A single class is allowed.
    y_prob : array-like of shape (n,)
        Probabilities in [0, 1].
    n_bins : int, default 10
        Number of bins (positive integer).
    strategy : {"uniform", "quantile"}, default "uniform"
        Equal-width bins on [0, 1], or edges at the empirical quantiles of
        ``y_prob`` (bins of roughly equal counts; duplicate edges give empty
        bins, which are dropped).

    Returns
    -------
    CalibrationCurve
        ``(mean_predicted, fraction_positive, count, bin_edges)`` over non-empty bins.

    Notes
    -----
    scikit-learn's ``calibration_curve`` returns ``(prob_true, prob_pred)`` --
    fraction first -- and no counts.
    """
    positive, probs = _labels_and_probs(y_true, y_prob)
    k = check_positive_int(n_bins, "n_bins")
    edges = _bin_edges(probs, k, strategy)
    ids = np.searchsorted(edges[1:-1], probs, side="left")
    count = np.bincount(ids, minlength=k)
    sums = np.bincount(ids, weights=probs, minlength=k)
    hits = np.bincount(ids, weights=positive.astype(np.float64), minlength=k)
    nonempty = count > 0
    n_k = count[nonempty]
    return CalibrationCurve(
        mean_predicted=sums[nonempty] / n_k,
        fraction_positive=hits[nonempty] / n_k,
        count=n_k.astype(np.int64),
        bin_edges=np.column_stack((edges[:-1][nonempty], edges[1:][nonempty])),
    )


def expected_calibration_error(y_true: ArrayLike, y_prob: ArrayLike, n_bins: int = 10, strategy: str = "uniform") -> float:
    r"""Binned expected calibration error :math:`\sum_k \frac{|\mathcal B_k|}{n}\,|\bar y_k - \bar p_k|`.

    Uses exactly the bins of :func:`calibration_curve`.  It estimates
    :math:`\mathrm{CE}_1 = \mathbb E|\mathbb E[Y\mid P] - P|` and depends on the
    binning: too few bins can hide miscalibration, too many add noise.
    """
    curve = calibration_curve(y_true, y_prob, n_bins=n_bins, strategy=strategy)
    gaps = np.abs(curve.fraction_positive - curve.mean_predicted)
    return float(np.sum(curve.count * gaps) / curve.count.sum())
