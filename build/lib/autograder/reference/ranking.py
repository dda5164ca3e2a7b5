r"""Ranking metrics: ROC curve, ROC-AUC, pairwise AUC, PR curve, average precision, d'.

All curves and areas are built on one private sort-and-scan kernel,
:func:`_binary_clf_curve`, in the spirit of scikit-learn's function of the same
name.  The kernel moves the threshold from :math:`+\infty` down through every
*distinct* score; all samples sharing a score enter the predicted-positive set
together, so the order inside a tie group never matters and no point that no
threshold can produce is ever emitted.

Because tie groups enter whole, the kernel may sort *values* instead of indices
(``np.sort`` is several times faster than ``np.argsort``): it sorts the scores of
each class by value and then merges the two sorted runs (see
:func:`_binary_clf_curve`).

Conventions (and where they differ from scikit-learn)
----------------------------------------------------
* :func:`roc_curve` returns ``RocCurve(fpr, tpr, thresholds)``, the positional
  order of scikit-learn's ``roc_curve``, so ``fpr, tpr, thresholds =
  roc_curve(...)`` means the same in both.  The first point is ``(0, 0)`` at
  threshold ``+inf``, then one point per distinct score in decreasing order, the
  last being ``(1, 1)``.  This equals scikit-learn's
  ``roc_curve(..., drop_intermediate=False)``; scikit-learn's default drops
  collinear points.
* :func:`pr_curve` returns ``PrCurve(precision, recall, thresholds)``, the
  positional order of scikit-learn's ``precision_recall_curve``, with one point
  per distinct score, thresholds *decreasing* (recall increasing).
  scikit-learn orders thresholds increasingly and appends the point
  ``(recall 0, precision 1)`` without a threshold.  That point is a plotting
  convention -- at a threshold above every score no sample is predicted
  positive and precision is 0/0 -- and is *not* part of :func:`pr_curve` nor of
  :func:`average_precision`; plotting code may add it and should say so.
* :func:`average_precision` is :math:`\sum_k (R_k - R_{k-1}) P_k` with
  :math:`R_0 = 0`, which equals scikit-learn's ``average_precision_score``.
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from ._validation import check_binary_labels, check_both_classes, check_same_length, check_scalar, check_scores

__all__ = [
    "RocCurve",
    "PrCurve",
    "roc_curve",
    "roc_auc",
    "pairwise_auc",
    "pr_curve",
    "average_precision",
    "d_prime",
]


class RocCurve(NamedTuple):
    """ROC points, in scikit-learn's positional order ``(fpr, tpr, thresholds)``.

    Attributes
    ----------
    fpr : ndarray of float64, shape (m + 1,)
        Non-decreasing false positive rates, from 0 to 1.
    tpr : ndarray of float64, shape (m + 1,)
        Non-decreasing true positive rates, from 0 to 1.
    thresholds : ndarray of float64, shape (m + 1,)
        Strictly decreasing thresholds, ``+inf`` first; ``thresholds[k]``
        gives the point ``(fpr[k], tpr[k])`` under the rule ``score >= threshold``.
    """

    fpr: np.ndarray
    tpr: np.ndarray
    thresholds: np.ndarray


class PrCurve(NamedTuple):
    """PR points, in scikit-learn's positional order ``(precision, recall, thresholds)``.

    Attributes
    ----------
    precision : ndarray of float64, shape (m,)
        Precision at each threshold (never 0/0: every threshold predicts a positive).
    recall : ndarray of float64, shape (m,)
        Non-decreasing recall, ending at 1.
    thresholds : ndarray of float64, shape (m,)
        The distinct scores, strictly *decreasing* (scikit-learn: increasing);
        ``thresholds[k]`` gives the point ``(recall[k], precision[k])``.
    """

    precision: np.ndarray
    recall: np.ndarray
    thresholds: np.ndarray


class _CurveCounts(NamedTuple):
    """Kernel output, ordered by *increasing* threshold, with a sentinel at the end.

    ``values[g]`` is the g-th smallest distinct score (length ``m``); ``tps[g]`` and
    ``fps[g]`` (length ``m + 1``) count positives and negatives with
    ``score >= values[g]``, and ``tps[m] = fps[m] = 0`` stands for the threshold
    ``+inf``.  Reversed, ``tps``/``fps`` are the ROC scan from ``(0, 0)``.
    """

    values: np.ndarray | None
    tps: np.ndarray
    fps: np.ndarray
    n_pos: int
    n_neg: int


def _validated(y_true: ArrayLike, y_score: ArrayLike) -> tuple[np.ndarray, np.ndarray, int, int]:
    positive = check_binary_labels(y_true, "y_true")
    scores = check_scores(y_score, "y_score")
    check_same_length(positive, scores, "y_true", "y_score")
    n_pos, n_neg = check_both_classes(positive, "y_true")
    return positive, scores, n_pos, n_neg


# Below this share of distinct scores, binary search per distinct score beats a merge.
_FEW_DISTINCT = 1 / 8


def _distinct_sorted(a: np.ndarray) -> np.ndarray:
    """Distinct values of an ascending array (a copy)."""
    keep = np.empty(a.shape[0], dtype=bool)
    keep[:1] = True
    np.not_equal(a[1:], a[:-1], out=keep[1:])
    return np.compress(keep, a)


def _binary_clf_curve(
    positive: np.ndarray, scores: np.ndarray, n_pos: int, n_neg: int, *, with_values: bool = True
) -> _CurveCounts:
    r"""Cumulative TP and FP counts at every distinct score (the shared sort-and-scan kernel).

    Parameters
    ----------
    positive : bool ndarray of shape (n,)
        Validated labels, ``True`` = positive.
    scores : float64 ndarray of shape (n,)
        Validated finite scores.
    n_pos, n_neg : int
        Class sizes (both > 0).
    with_values : bool, default True
        Whether the distinct scores themselves are needed (curves need them as
        thresholds; AUC and AP do not, and skipping them saves memory).

    Returns
    -------
    _CurveCounts
        ``values`` is ``None`` when ``with_values`` is false.

    Notes
    -----
    The scores of each class are sorted by value (``np.sort``, no index sort).  Then
    one of two :math:`O(n \log n)` routes finishes the count:

    * few distinct scores (heavy ties): the distinct scores are the union of each
      class's distinct scores, and one binary search per distinct score in each
      sorted class gives the counts at or above it;
    * many distinct scores: a stable ``argsort`` of the two sorted runs laid end
      to end -- which Timsort performs as a single linear merge -- gives every
      sample's class in score order; the positives of each tie group are summed
      and accumulated from the top group down.

    A tie group always enters whole, so the order inside it never changes a count.
    Peak extra memory stays near four arrays of ``n`` float64 values.
    """
    n = scores.shape[0]
    pos = np.compress(positive, scores)  # np.compress is much faster than boolean indexing
    pos.sort()
    neg = np.compress(~positive, scores)
    neg.sort()
    pos_values = _distinct_sorted(pos)
    neg_values = _distinct_sorted(neg)
    if pos_values.shape[0] + neg_values.shape[0] <= _FEW_DISTINCT * n:
        values = np.union1d(pos_values, neg_values)  # small: both are short
        del pos_values, neg_values
        m = values.shape[0]
        tps = np.zeros(m + 1, dtype=np.int64)
        fps = np.zeros(m + 1, dtype=np.int64)
        np.subtract(n_pos, np.searchsorted(pos, values, side="left"), out=tps[:m])
        np.subtract(n_neg, np.searchsorted(neg, values, side="left"), out=fps[:m])
        return _CurveCounts(values if with_values else None, tps, fps, n_pos, n_neg)
    del pos_values, neg_values

    merged = np.concatenate((pos, neg))
    del pos, neg
    order = np.argsort(merged, kind="stable")  # a linear merge of two sorted runs
    in_order = order < n_pos  # class of each sample in ascending score order
    ordered = merged[order]
    del merged, order
    new_group = np.empty(n, dtype=bool)
    new_group[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=new_group[1:])
    values = np.compress(new_group, ordered) if with_values else None  # distinct, ascending
    del ordered
    starts = np.flatnonzero(new_group)  # first sorted index of each tie group
    del new_group
    m = starts.shape[0]
    # Positives among the first i+1 samples in score order; int32 is exact below 2**31
    # and its running sum is several times faster than int64.
    below = np.cumsum(in_order, dtype=np.int32 if n < 2**31 else np.int64)
    del in_order
    tps = np.empty(m + 1, dtype=np.int64)
    tps[0] = n_pos
    tps[m] = 0
    starts[1:] -= 1  # index of the last sample below each group
    np.subtract(n_pos, below[starts[1:]], out=tps[1:m])  # positives at or above each group
    starts[1:] += 1
    del below
    fps = np.empty(m + 1, dtype=np.int64)
    fps[m] = 0
    np.subtract(n, starts, out=fps[:m])  # samples at or above each threshold ...
    del starts
    fps[:m] -= tps[:m]  # ... minus the positives among them
    return _CurveCounts(values, tps, fps, n_pos, n_neg)


def roc_curve(y_true: ArrayLike, y_score: ArrayLike) -> RocCurve:
    r"""ROC curve with one point per distinct score, tie groups entered whole.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Labels 0/1 (booleans read as ``True`` = 1); both classes must be present.
    y_score : array-like of shape (n,)
        Real, finite scores; larger means more likely positive.

    Returns
    -------
    RocCurve
        ``(fpr, tpr, thresholds)``, each of length ``m + 1`` where ``m`` is the
        number of distinct scores: the point ``(0, 0)`` at threshold ``+inf``,
        then one point per distinct score in decreasing order, ending at
        ``(1, 1)``.

    Raises
    ------
    ValueError
        On bad labels or scores, unequal lengths, or a single class in ``y_true``.

    See Also
    --------
    roc_auc : Area under this curve.
    sklearn.metrics.roc_curve : Same positional order ``(fpr, tpr,
        thresholds)`` and the same points as its ``drop_intermediate=False``;
        its default ``drop_intermediate=True`` removes collinear points.
        scikit-learn only warns (and returns NaN rates) when a class is
        missing; here that is a ``ValueError``.

    Notes
    -----
    For each threshold :math:`\tau` the point is

    .. math::

        \bigl(\mathrm{FPR}(\tau), \mathrm{TPR}(\tau)\bigr)
        = \Bigl(\frac{\#\{i: y_i = 0,\ s_i \ge \tau\}}{n_-},\quad
                \frac{\#\{i: y_i = 1,\ s_i \ge \tau\}}{n_+}\Bigr).

    A tie group holding both classes produces one diagonal step, never an
    L-shaped pair of points that no threshold can produce.  Cost: one sort,
    :math:`O(n \log n)`.

    References
    ----------
    .. [1] Fawcett, T. (2006). An introduction to ROC analysis. *Pattern
           Recognition Letters*, 27(8), 861-874.

    Examples
    --------
    >>> from autograder.reference import roc_curve
    >>> fpr, tpr, thresholds = roc_curve([1, 0, 1, 0], [0.9, 0.8, 0.7, 0.1])
    >>> fpr
    array([0. , 0. , 0.5, 0.5, 1. ])
    >>> tpr
    array([0. , 0.5, 0.5, 1. , 1. ])
    >>> thresholds
    array([inf, 0.9, 0.8, 0.7, 0.1])
    """
    positive, scores, n_pos, n_neg = _validated(y_true, y_score)
    values, tps, fps, _, _ = _binary_clf_curve(positive, scores, n_pos, n_neg)
    # Build each output and drop its source at once, so at most four long arrays coexist.
    thresholds = np.empty(values.shape[0] + 1)
    thresholds[0] = np.inf
    thresholds[1:] = values[::-1]
    del values
    fpr = np.divide(fps[::-1], n_neg)
    del fps
    tpr = np.divide(tps[::-1], n_pos)
    return RocCurve(fpr=fpr, tpr=tpr, thresholds=thresholds)


def _trapezoid_auc(tps: np.ndarray, fps: np.ndarray, n_pos: int, n_neg: int) -> float:
    """Exact integer trapezoid over the kernel's counts, divided once by ``2 n+ n-``.

    Twice the area is the sum over steps of ``dFP * (TP_g + TP_{g+1})``; splitting it
    into two integer dot products avoids a temporary for the heights.
    """
    d_fp = fps[:-1] - fps[1:]
    twice_area = int(np.dot(d_fp, tps[:-1])) + int(np.dot(d_fp, tps[1:]))
    return twice_area / (2.0 * n_pos * n_neg)


def roc_auc(y_true: ArrayLike, y_score: ArrayLike) -> float:
    r"""Area under the ROC curve by the trapezoid rule over :func:`roc_curve`.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Labels 0/1 (booleans read as ``True`` = 1); both classes must be present.
    y_score : array-like of shape (n,)
        Real, finite scores.

    Returns
    -------
    float
        AUC in [0, 1]; 0.5 for constant scores, 1 for a perfect ranking.

    Raises
    ------
    ValueError
        On bad labels or scores, unequal lengths, or a single class in ``y_true``.

    See Also
    --------
    pairwise_auc : The same number, counted over positive/negative pairs.
    sklearn.metrics.roc_auc_score : Equal value (to 1e-12) on binary input;
        scikit-learn also offers ``max_fpr`` (standardised partial AUC),
        multiclass averaging and sample weights.
    sklearn.metrics.auc : Trapezoid area under any given curve.

    Notes
    -----
    .. math::

        \mathrm{AUC} = \sum_{k=1}^{m} (\mathrm{FPR}_k - \mathrm{FPR}_{k-1})\,
                       \frac{\mathrm{TPR}_k + \mathrm{TPR}_{k-1}}{2}

    The sum is accumulated in exact integer counts and divided once by
    :math:`2 n_+ n_-`, so it equals :func:`pairwise_auc` (ties between a
    positive and a negative count 1/2; a tie group is one diagonal segment).
    It is invariant under any strictly increasing transformation of the scores.

    References
    ----------
    .. [1] Fawcett, T. (2006). An introduction to ROC analysis. *Pattern
           Recognition Letters*, 27(8), 861-874.
    .. [2] Hanley, J. A., & McNeil, B. J. (1982). The meaning and use of the
           area under a receiver operating characteristic (ROC) curve.
           *Radiology*, 143(1), 29-36.

    Examples
    --------
    The Fawcett (2006) table used in the course:

    >>> from autograder.reference import roc_auc
    >>> roc_auc([1, 1, 0, 1, 1, 1, 0, 0, 1, 0],
    ...         [.9, .8, .7, .6, .55, .54, .53, .52, .51, .505])
    0.75
    """
    positive, scores, n_pos, n_neg = _validated(y_true, y_score)
    _, tps, fps, _, _ = _binary_clf_curve(positive, scores, n_pos, n_neg, with_values=False)
    return _trapezoid_auc(tps, fps, n_pos, n_neg)


def pairwise_auc(y_true: ArrayLike, y_score: ArrayLike) -> float:
    r"""AUC in Mann-Whitney form: the share of positive/negative pairs ranked correctly.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Labels 0/1 (booleans read as ``True`` = 1); both classes must be present.
    y_score : array-like of shape (n,)
        Real, finite scores.

    Returns
    -------
    float
        The share of pairs in [0, 1], ties counted 1/2.

    Raises
    ------
    ValueError
        On bad labels or scores, unequal lengths, or a single class in ``y_true``.

    See Also
    --------
    roc_auc : The trapezoid area, equal to this value.
    sklearn.metrics.roc_auc_score : Equal value on binary input (computed as
        the trapezoid area).

    Notes
    -----
    .. math::

        \mathrm{AUC} = \frac{1}{n_+ n_-}\sum_{i:y_i=1}\sum_{j:y_j=0}
                       \Bigl([s_i > s_j] + \tfrac12 [s_i = s_j]\Bigr)

    It is the Mann-Whitney :math:`U` statistic divided by :math:`n_+ n_-`: the
    probability that a random positive scores above a random negative.
    Computed in :math:`O(n \log n)` without forming the :math:`n_+ \times n_-`
    matrix: both classes are sorted and, for every positive, the negatives
    strictly below and tied with it are counted by binary search.

    References
    ----------
    .. [1] Mann, H. B., & Whitney, D. R. (1947). On a test of whether one of
           two random variables is stochastically larger than the other.
           *The Annals of Mathematical Statistics*, 18(1), 50-60.
    .. [2] Hanley, J. A., & McNeil, B. J. (1982). The meaning and use of the
           area under a receiver operating characteristic (ROC) curve.
           *Radiology*, 143(1), 29-36.

    Examples
    --------
    One positive/negative tie at 0.5 counts 1/2, so 3.5 of 4 pairs:

    >>> from autograder.reference import pairwise_auc
    >>> pairwise_auc([1, 1, 0, 0], [0.9, 0.5, 0.5, 0.2])
    0.875
    """
    positive, scores, n_pos, n_neg = _validated(y_true, y_score)
    pos = np.sort(np.compress(positive, scores))
    neg = np.sort(np.compress(~positive, scores))
    below = np.searchsorted(neg, pos, side="left")
    at_or_below = np.searchsorted(neg, pos, side="right")
    twice_wins = int(below.sum()) + int(at_or_below.sum())  # 2*(#greater) + #tied
    return twice_wins / (2.0 * n_pos * n_neg)


def pr_curve(y_true: ArrayLike, y_score: ArrayLike) -> PrCurve:
    r"""Precision-recall points, one per distinct score, thresholds decreasing.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Labels 0/1 (booleans read as ``True`` = 1); both classes must be present.
    y_score : array-like of shape (n,)
        Real, finite scores.

    Returns
    -------
    PrCurve
        ``(precision, recall, thresholds)``, each of length ``m`` (the number
        of distinct scores), highest threshold first.

    Raises
    ------
    ValueError
        On bad labels or scores, unequal lengths, or a single class in ``y_true``.

    See Also
    --------
    average_precision : The step-wise area under these points.
    sklearn.metrics.precision_recall_curve : Same positional order
        ``(precision, recall, thresholds)``, but thresholds *increasing* and
        one more precision/recall value: the appended plotting point
        ``(precision 1, recall 0)`` without a threshold.  Reversed and without
        that last point, its arrays equal these.

    Notes
    -----
    For the rule ``score >= thresholds[k]``,

    .. math::

        P_k = \frac{TP_k}{TP_k + FP_k}, \qquad R_k = \frac{TP_k}{n_+}.

    Every listed threshold predicts at least one positive, so no precision
    here is 0/0.  The point ``(recall 0, precision 1)`` that plots often
    prepend is a drawing convention and is not included.

    References
    ----------
    .. [1] Davis, J., & Goadrich, M. (2006). The relationship between
           Precision-Recall and ROC curves. In *Proceedings of the 23rd
           International Conference on Machine Learning (ICML)*, 233-240.

    Examples
    --------
    >>> from autograder.reference import pr_curve
    >>> precision, recall, thresholds = pr_curve([1, 0, 1, 0], [0.4, 0.3, 0.2, 0.1])
    >>> precision.round(4)
    array([1.    , 0.5   , 0.6667, 0.5   ])
    >>> recall
    array([0.5, 0.5, 1. , 1. ])
    >>> thresholds
    array([0.4, 0.3, 0.2, 0.1])
    """
    positive, scores, n_pos, n_neg = _validated(y_true, y_score)
    values, tps, fps, _, _ = _binary_clf_curve(positive, scores, n_pos, n_neg)
    thresholds = values[::-1].copy()
    del values
    tps = tps[-2::-1]  # drop the +inf sentinel, highest threshold first
    fps = fps[-2::-1]
    fps += tps  # predicted positives at each threshold (the kernel's arrays are private)
    precision = np.divide(tps, fps)
    del fps
    recall = np.divide(tps, n_pos)
    return PrCurve(precision=precision, recall=recall, thresholds=thresholds)


def average_precision(y_true: ArrayLike, y_score: ArrayLike) -> float:
    r"""Average precision: precision at each tie group, weighted by the recall it adds.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Labels 0/1 (booleans read as ``True`` = 1); both classes must be present.
    y_score : array-like of shape (n,)
        Real, finite scores.

    Returns
    -------
    float
        AP in (0, 1]; 1 for a perfect ranking, about the share of positives
        for an uninformative one.

    Raises
    ------
    ValueError
        On bad labels or scores, unequal lengths, or a single class in ``y_true``.

    See Also
    --------
    pr_curve : The points the sum runs over.
    sklearn.metrics.average_precision_score : Equal value (to 1e-12) on
        binary input; neither interpolates precision.

    Notes
    -----
    .. math::

        \mathrm{AP} = \sum_{k=1}^{m} (R_k - R_{k-1})\, P_k, \qquad R_0 = 0,

    over the points of :func:`pr_curve`.  A tie group with no positive adds
    nothing, and a group holding several positives contributes their recall
    increase times the group's precision (ties are never split).  Equal to the
    mean, over positives, of the precision at the group where each positive
    enters.  Unlike the trapezoid under the PR curve it never interpolates
    linearly between points, which would be optimistic.

    References
    ----------
    .. [1] Davis, J., & Goadrich, M. (2006). The relationship between
           Precision-Recall and ROC curves. In *Proceedings of the 23rd
           International Conference on Machine Learning (ICML)*, 233-240.
    .. [2] Manning, C. D., Raghavan, P., & Schütze, H. (2008). *Introduction
           to Information Retrieval*, chapter 8. Cambridge University Press.

    Examples
    --------
    >>> from autograder.reference import average_precision
    >>> average_precision([1, 0, 1, 0], [0.4, 0.3, 0.2, 0.1])  # (1 + 2/3) / 2
    0.8333333333333333
    """
    positive, scores, n_pos, n_neg = _validated(y_true, y_score)
    return _average_precision(positive, scores, n_pos, n_neg)


def _average_precision(positive: np.ndarray, scores: np.ndarray, n_pos: int, n_neg: int) -> float:
    """AP of validated input over the kernel's counts (shared with the bootstrap of :mod:`.intervals`)."""
    _, all_tps, fps, _, _ = _binary_clf_curve(positive, scores, n_pos, n_neg, with_values=False)
    tps = all_tps[:-1]
    d_tp = tps - all_tps[1:]  # positives entering with each tie group
    entered = np.flatnonzero(d_tp)  # groups without a positive add nothing
    d_tp = d_tp[entered]
    tps = tps[entered]
    precision = tps / (tps + fps[entered])
    return float(np.sum(d_tp * precision) / n_pos)  # no BLAS call: exact, thread-free


def d_prime(auc: float) -> float:
    r"""Separation :math:`d'` of the equal-variance binormal model with this AUC.

    Parameters
    ----------
    auc : float
        A finite real number in the closed interval [0, 1].  Inside (0, 1)
        the result is finite; ``auc = 1`` gives ``+inf`` and ``auc = 0``
        gives ``-inf`` (the limits); ``auc = 0.5`` gives 0.

    Returns
    -------
    float
        :math:`d'` in standard deviations of either class's scores.

    Raises
    ------
    ValueError
        If ``auc`` is not a real number in [0, 1] (NaN and ``bool`` included).

    See Also
    --------
    roc_auc : The AUC to convert.
    scipy.stats.norm.ppf : :math:`\Phi^{-1}`; scikit-learn has no
        :math:`d'` function.

    Notes
    -----
    With negative scores :math:`N(0, 1)` and positive scores :math:`N(d', 1)`
    the difference of a positive and a negative score is :math:`N(d', 2)`, so

    .. math::

        \mathrm{AUC} = \Phi\!\left(\frac{d'}{\sqrt2}\right)
        \quad\Longleftrightarrow\quad
        d' = \sqrt2\,\Phi^{-1}(\mathrm{AUC}).

    An AUC close to 1 hides large differences in separation: 0.99 and 0.999
    are 3.29 and 4.37 standard deviations.

    References
    ----------
    .. [1] Green, D. M., & Swets, J. A. (1966). *Signal Detection Theory and
           Psychophysics*. Wiley.
    .. [2] Macmillan, N. A., & Creelman, C. D. (2005). *Detection Theory: A
           User's Guide* (2nd ed.). Lawrence Erlbaum Associates.

    Examples
    --------
    >>> from autograder.reference import d_prime
    >>> round(d_prime(0.99), 2), round(d_prime(0.999), 2)
    (3.29, 4.37)
    >>> d_prime(0.5)
    0.0
    """
    value = check_scalar(auc, "auc", min_val=0.0, max_val=1.0)
    if value == 1.0:
        return math.inf
    if value == 0.0:
        return -math.inf
    return math.sqrt(2.0) * NormalDist().inv_cdf(value)
