r"""Probability-quality metrics: Brier score, log loss, calibration curve and ECE.

Inputs here are probabilities of the positive class, validated to lie in
[0, 1]; arbitrary scores must first be turned into probabilities.

Binning (shared by :func:`calibration_curve` and
:func:`expected_calibration_error`, identical to scikit-learn's
``calibration_curve``): with edges :math:`0 = e_0 < e_1 < \dots < e_K = 1`
(``"uniform"``) or the empirical quantiles of ``y_prob`` (``"quantile"``), a
probability :math:`p` falls into bin :math:`k` when :math:`e_k < p \le e_{k+1}`;
the first bin also holds :math:`p = e_0`.  Only non-empty bins are reported,
and, unlike scikit-learn, their sample counts and edges are returned too.
:class:`CalibrationCurve` starts with scikit-learn's two arrays in scikit-learn's
order, ``(fraction_positive, mean_predicted, ...)`` = ``(prob_true, prob_pred)``.
"""

from __future__ import annotations

import numbers
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from ._validation import check_binary_labels, check_option, check_probabilities, check_same_length, check_scalar

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

    The first two fields are scikit-learn's ``(prob_true, prob_pred)`` in the
    same order, so ``prob_true, prob_pred, *_ = calibration_curve(...)`` reads
    them as scikit-learn does.

    Attributes
    ----------
    fraction_positive : ndarray of shape (k,)
        Observed share of positives in each non-empty bin (scikit-learn's ``prob_true``).
    mean_predicted : ndarray of shape (k,)
        Mean predicted probability in each non-empty bin (scikit-learn's ``prob_pred``).
    count : ndarray of int64, shape (k,)
        Number of samples in each non-empty bin (sums to ``n``).
    bin_edges : ndarray of shape (k, 2)
        ``[lower, upper]`` edges of each non-empty bin.
    """

    fraction_positive: np.ndarray
    mean_predicted: np.ndarray
    count: np.ndarray
    bin_edges: np.ndarray


def _labels_and_probs(y_true: ArrayLike, y_prob: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    positive = check_binary_labels(y_true, "y_true")
    probs = check_probabilities(y_prob, "y_prob")
    check_same_length(positive, probs, "y_true", "y_prob")
    return positive, probs


def brier_score(y_true: ArrayLike, y_prob: ArrayLike) -> float:
    r"""Brier score: mean squared difference between probability and outcome.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Labels 0/1 (booleans read as ``True`` = 1).  A single class is allowed.
    y_prob : array-like of shape (n,)
        Predicted probabilities of the positive class, in [0, 1].

    Returns
    -------
    float
        Brier score in [0, 1]; lower is better.

    Raises
    ------
    ValueError
        On bad labels, probabilities outside [0, 1] (or not finite), or
        unequal lengths.

    See Also
    --------
    brier_baseline : The score of the best constant forecast.
    sklearn.metrics.brier_score_loss : Equal value on 0/1 labels; it also
        takes ``pos_label``, sample weights and a multiclass form
        (``scale_by_half``).

    Notes
    -----
    .. math:: \mathrm{BS} = \frac1n \sum_{i=1}^{n} (p_i - y_i)^2

    It is a strictly proper scoring rule: its expectation is minimised only by
    reporting the true probability.  It rewards calibration and sharpness
    together (Murphy's decomposition: reliability - resolution + uncertainty).

    References
    ----------
    .. [1] Brier, G. W. (1950). Verification of forecasts expressed in terms of
           probability. *Monthly Weather Review*, 78(1), 1-3.
    .. [2] Murphy, A. H. (1973). A new vector partition of the probability
           score. *Journal of Applied Meteorology*, 12(4), 595-600.

    Examples
    --------
    例3.2 of the course:

    >>> from autograder.reference import brier_score
    >>> round(brier_score([1, 0, 1, 0], [0.9, 0.8, 0.7, 0.1]), 12)
    0.1875
    """
    positive, probs = _labels_and_probs(y_true, y_prob)
    residual = probs - positive
    return float(np.mean(residual * residual))


def brier_baseline(y_true: ArrayLike) -> float:
    r"""Brier score of the constant forecast :math:`\bar y` (the share of positives).

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Labels 0/1 (booleans read as ``True`` = 1).  A single class is allowed
        (the baseline is then 0).

    Returns
    -------
    float
        :math:`\bar y(1-\bar y)`, in [0, 0.25].

    Raises
    ------
    ValueError
        On empty, non-1-D or non-binary labels.

    See Also
    --------
    brier_score : The score to compare with this baseline.
    sklearn.metrics.brier_score_loss : Gives the same number for
        ``y_prob = np.full(n, y.mean())``; scikit-learn has no baseline
        function.

    Notes
    -----
    .. math:: \mathrm{BS}_0 = \frac1n \sum_{i=1}^{n} (\bar y - y_i)^2 = \bar y\,(1-\bar y)

    This is the *uncertainty* term of Murphy's decomposition.  A model is
    useful as a probability forecaster only below it; the Brier skill score
    is :math:`1 - \mathrm{BS}/\mathrm{BS}_0`.

    References
    ----------
    .. [1] Brier, G. W. (1950). Verification of forecasts expressed in terms of
           probability. *Monthly Weather Review*, 78(1), 1-3.
    .. [2] Murphy, A. H. (1973). A new vector partition of the probability
           score. *Journal of Applied Meteorology*, 12(4), 595-600.

    Examples
    --------
    >>> from autograder.reference import brier_baseline
    >>> brier_baseline([1, 0, 1, 0])
    0.25
    >>> round(brier_baseline([1] + [0] * 9), 12)
    0.09
    """
    positive = check_binary_labels(y_true, "y_true")
    rate = np.count_nonzero(positive) / positive.shape[0]
    return float(rate * (1.0 - rate))


def log_loss(y_true: ArrayLike, y_prob: ArrayLike) -> float:
    r"""Mean negative log-likelihood of the labels under the predicted probabilities.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Labels 0/1 (booleans read as ``True`` = 1).  A single class is allowed.
    y_prob : array-like of shape (n,)
        Predicted probabilities of the positive class, in [0, 1].

    Returns
    -------
    float
        Log loss in nats, in :math:`[0, +\infty]`; lower is better.

    Raises
    ------
    ValueError
        On bad labels, probabilities outside [0, 1] (or not finite), or
        unequal lengths.

    See Also
    --------
    brier_score : The other proper scoring rule of the course, bounded.
    sklearn.metrics.log_loss : Equal value for probabilities inside (0, 1).
        scikit-learn clips probabilities to machine epsilon, so a confident
        mistake gives a large finite number (about 36 per such sample) where
        this function returns ``inf``.

    Notes
    -----
    .. math:: \mathrm{LL} = -\frac1n\sum_{i=1}^{n} \bigl[y_i\ln p_i + (1-y_i)\ln(1-p_i)\bigr]

    Probabilities are never clipped.  A probability of exactly 0 or 1 on the
    *correct* side contributes 0 (the limit :math:`0\ln 0 = 0`); a probability
    of exactly 0 for a positive or 1 for a negative makes the loss ``+inf``,
    which is the true value of the score for such a confident mistake.

    References
    ----------
    .. [1] Good, I. J. (1952). Rational decisions. *Journal of the Royal
           Statistical Society: Series B*, 14(1), 107-114.

    Examples
    --------
    >>> from autograder.reference import log_loss
    >>> round(log_loss([1, 0], [0.8, 0.3]), 4)
    0.2899
    >>> log_loss([1, 0], [0.0, 0.0])  # a confident mistake
    inf
    """
    positive, probs = _labels_and_probs(y_true, y_prob)
    p_of_truth = np.where(positive, probs, 1.0 - probs)
    with np.errstate(divide="ignore"):
        return float(-np.mean(np.log(p_of_truth)))


def _bin_edges(probs: np.ndarray, n_bins: int, strategy: str) -> np.ndarray:
    if strategy == "uniform":
        return np.linspace(0.0, 1.0, n_bins + 1)
    # The same percentiles as scikit-learn (quantiles times 100): linspace(0, 100, K + 1) differs
    # from it in the last bit, which can move an edge across a sample.
    return np.percentile(probs, np.linspace(0.0, 1.0, n_bins + 1) * 100)


def calibration_curve(y_true: ArrayLike, y_prob: ArrayLike, n_bins: int = 10, strategy: str = "uniform") -> CalibrationCurve:
    r"""Binned reliability diagram: observed positive share, mean prediction and count per bin.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Labels 0/1 (booleans read as ``True`` = 1).  A single class is allowed.
    y_prob : array-like of shape (n,)
        Probabilities in [0, 1].
    n_bins : int, default 10
        Number of bins, an integer of at least 1 (not ``bool``, not ``2.0``).
    strategy : {"uniform", "quantile"}, default "uniform"
        Equal-width bins on [0, 1], or edges at the empirical quantiles of
        ``y_prob`` (bins of roughly equal counts; duplicate edges give empty
        bins, which are dropped).

    Returns
    -------
    CalibrationCurve
        ``(fraction_positive, mean_predicted, count, bin_edges)`` over the
        non-empty bins, in increasing order.

    Raises
    ------
    ValueError
        On bad labels or probabilities, unequal lengths, a bad ``n_bins`` or an
        unknown ``strategy``.

    See Also
    --------
    expected_calibration_error : The count-weighted mean gap of this curve.
    sklearn.calibration.calibration_curve : Same bins and the same first two
        arrays in the same order, ``(prob_true, prob_pred)``, which it returns
        alone, without counts or edges.  Its default is ``n_bins=5`` (here 10)
        and it takes ``n_bins`` and ``strategy`` by keyword only.

    Notes
    -----
    For each non-empty bin :math:`\mathcal B_k`,

    .. math::

        \bar y_k = \frac{1}{|\mathcal B_k|}\sum_{i\in\mathcal B_k} y_i, \qquad
        \bar p_k = \frac{1}{|\mathcal B_k|}\sum_{i\in\mathcal B_k} p_i.

    A point :math:`(\bar p_k, \bar y_k)` below the diagonal means the model
    over-estimates the probability of the positive class there.  Bins are
    right-closed, :math:`e_k < p \le e_{k+1}`, the first one also holding
    :math:`p = 0`.  Record the counts: a bin with few samples supports no
    conclusion.

    References
    ----------
    .. [1] DeGroot, M. H., & Fienberg, S. E. (1983). The comparison and
           evaluation of forecasters. *Journal of the Royal Statistical
           Society: Series D (The Statistician)*, 32(1-2), 12-22.
    .. [2] Niculescu-Mizil, A., & Caruana, R. (2005). Predicting good
           probabilities with supervised learning. In *Proceedings of the 22nd
           International Conference on Machine Learning (ICML)*, 625-632.

    Examples
    --------
    >>> from autograder.reference import calibration_curve
    >>> prob_true, prob_pred, count, edges = calibration_curve(
    ...     [1, 0, 1, 0], [0.9, 0.8, 0.7, 0.1], n_bins=2)
    >>> prob_true.round(4), prob_pred.round(4)
    (array([0.    , 0.6667]), array([0.1, 0.8]))
    >>> count
    array([1, 3])
    >>> edges
    array([[0. , 0.5],
           [0.5, 1. ]])
    """
    positive, probs = _labels_and_probs(y_true, y_prob)
    k = check_scalar(n_bins, "n_bins", numbers.Integral, min_val=1, description="分箱数")
    edges = _bin_edges(probs, k, check_option(strategy, "strategy", ("uniform", "quantile")))
    ids = np.searchsorted(edges[1:-1], probs, side="left")
    count = np.bincount(ids, minlength=k)
    sums = np.bincount(ids, weights=probs, minlength=k)
    hits = np.bincount(ids, weights=positive.astype(np.float64), minlength=k)
    nonempty = count > 0
    n_k = count[nonempty]
    return CalibrationCurve(
        fraction_positive=hits[nonempty] / n_k,
        mean_predicted=sums[nonempty] / n_k,
        count=n_k.astype(np.int64),
        bin_edges=np.column_stack((edges[:-1][nonempty], edges[1:][nonempty])),
    )


def expected_calibration_error(y_true: ArrayLike, y_prob: ArrayLike, n_bins: int = 10, strategy: str = "uniform") -> float:
    r"""Binned expected calibration error: count-weighted mean gap of the reliability diagram.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Labels 0/1 (booleans read as ``True`` = 1).  A single class is allowed.
    y_prob : array-like of shape (n,)
        Probabilities in [0, 1].
    n_bins : int, default 10
        Number of bins, an integer of at least 1.
    strategy : {"uniform", "quantile"}, default "uniform"
        Binning, as in :func:`calibration_curve`.

    Returns
    -------
    float
        ECE in [0, 1]; 0 when every bin's mean prediction equals its positive share.

    Raises
    ------
    ValueError
        On bad labels or probabilities, unequal lengths, a bad ``n_bins`` or an
        unknown ``strategy``.

    See Also
    --------
    calibration_curve : The bins this sum runs over.
    sklearn.calibration.calibration_curve : scikit-learn has no ECE function;
        from its two arrays the weights (bin counts) cannot be recovered.

    Notes
    -----
    .. math::

        \mathrm{ECE} = \sum_{k} \frac{|\mathcal B_k|}{n}\,\bigl|\bar y_k - \bar p_k\bigr|

    It estimates :math:`\mathrm{CE}_1 = \mathbb E\,\bigl|\mathbb E[Y\mid P] - P\bigr|`
    and depends on the binning: too few bins can hide miscalibration (errors
    of opposite sign average out inside a bin), too many add noise.

    References
    ----------
    .. [1] Naeini, M. P., Cooper, G. F., & Hauskrecht, M. (2015). Obtaining
           well calibrated probabilities using Bayesian binning. In
           *Proceedings of the AAAI Conference on Artificial Intelligence*,
           29(1), 2901-2907.
    .. [2] Guo, C., Pleiss, G., Sun, Y., & Weinberger, K. Q. (2017). On
           calibration of modern neural networks. In *Proceedings of the 34th
           International Conference on Machine Learning (ICML)*, 1321-1330.

    Examples
    --------
    Two predictions, 0.2 and 0.4, whose observed rates are swapped: one bin
    averages the errors away, ten bins see them.

    >>> import numpy as np
    >>> from autograder.reference import expected_calibration_error
    >>> y = np.r_[np.ones(4), np.zeros(6), np.ones(2), np.zeros(8)]
    >>> p = np.r_[np.full(10, 0.2), np.full(10, 0.4)]
    >>> round(expected_calibration_error(y, p, n_bins=1), 12)
    0.0
    >>> round(expected_calibration_error(y, p, n_bins=10), 12)
    0.2
    """
    curve = calibration_curve(y_true, y_prob, n_bins=n_bins, strategy=strategy)
    gaps = np.abs(curve.fraction_positive - curve.mean_predicted)
    return float(np.sum(curve.count * gaps) / curve.count.sum())
