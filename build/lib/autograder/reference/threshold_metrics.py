r"""Fixed-threshold metrics computed from the confusion matrix.

Two kinds of input, kept apart by name:

* :func:`binary_metrics` (a course name, no scikit-learn twin) takes *scores*
  and a threshold; a sample is predicted positive iff ``score >= threshold``.
* :func:`confusion_counts`, :func:`fbeta_score`, :func:`matthews_corrcoef` and
  :func:`balanced_accuracy` take *predicted labels* ``y_pred``, exactly like
  their scikit-learn namesakes.  Threshold scores first, e.g.
  ``fbeta_score(y_true, y_score >= 0.5, beta=2)``; scores passed as ``y_pred``
  are rejected with a message saying so, never thresholded silently.

From the counts :math:`TP, FP, TN, FN`:

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
import numbers
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from ._validation import (
    check_binary_labels,
    check_same_length,
    check_scalar,
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

# Appended to the error for a y_pred holding values other than 0/1 (typically scores).
_PREDICTIONS_HINT = (
    "。y_pred 是预测标签（0/1 或布尔值），与 scikit-learn 同名参数的含义相同；"
    "手头是得分或概率时，请先按阈值转换，例如 y_pred = y_score >= threshold"
)


class ConfusionCounts(NamedTuple):
    """The four cells of a binary confusion matrix (Python ``int``).

    Attributes
    ----------
    tp, fp, tn, fn : int
        True positives, false positives, true negatives, false negatives.

    Notes
    -----
    The order is ``(tp, fp, tn, fn)``.  scikit-learn's ``confusion_matrix``
    returns the 2x2 array ``[[tn, fp], [fn, tp]]`` whose ``.ravel()`` is
    ``(tn, fp, fn, tp)``; read the fields by name.
    """

    tp: int
    fp: int
    tn: int
    fn: int


class BinaryMetrics(NamedTuple):
    """Confusion counts and the fixed-threshold metrics derived from them.

    Attributes
    ----------
    tp, fp, tn, fn : int
        Confusion counts.
    accuracy, precision, recall, fpr, specificity, f1 : float
        The metrics of the module docstring; NaN (or 0.0) where the
        ``zero_division`` policy applied.
    """

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


def _labels_and_predictions(y_true: ArrayLike, y_pred: ArrayLike) -> ConfusionCounts:
    positive = check_binary_labels(y_true, "y_true")
    predicted = check_binary_labels(y_pred, "y_pred", hint=_PREDICTIONS_HINT)
    check_same_length(positive, predicted, "y_true", "y_pred")
    return _counts(positive, predicted)


def confusion_counts(y_true: ArrayLike, y_pred: ArrayLike) -> ConfusionCounts:
    r"""Count TP, FP, TN and FN from true and predicted 0/1 labels.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        True labels, only 0 and 1 (booleans read as ``True`` = 1).
    y_pred : array-like of shape (n,)
        Predicted labels, only 0 and 1 (booleans read as ``True`` = 1).  Scores
        are rejected: threshold them first (``y_score >= threshold``).

    Returns
    -------
    ConfusionCounts
        ``(tp, fp, tn, fn)`` as Python integers; they sum to ``n``.

    Raises
    ------
    ValueError
        On empty, non-1-D, non-binary or unequal-length inputs.

    See Also
    --------
    binary_metrics : Counts and metrics from scores and a threshold.
    sklearn.metrics.confusion_matrix : Returns the 2x2 array
        ``[[TN, FP], [FN, TP]]`` (rows true class, columns predicted class);
        here the counts are a named tuple in the order ``(tp, fp, tn, fn)``.

    Notes
    -----
    With :math:`\hat y_i` the prediction,

    .. math::

        TP = \sum_i [y_i = 1][\hat y_i = 1],\quad FP = \sum_i [y_i = 0][\hat y_i = 1],

        TN = \sum_i [y_i = 0][\hat y_i = 0],\quad FN = \sum_i [y_i = 1][\hat y_i = 0].

    References
    ----------
    .. [1] Fawcett, T. (2006). An introduction to ROC analysis. *Pattern
           Recognition Letters*, 27(8), 861-874.

    Examples
    --------
    >>> from autograder.reference import confusion_counts
    >>> confusion_counts([1, 1, 0, 0], [1, 0, 1, 0])
    ConfusionCounts(tp=1, fp=1, tn=1, fn=1)
    >>> confusion_counts([1, 0, 1], [0.9, 0.2, 0.4])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    ValueError: y_pred 只能含有标签 0 和 1，发现非法值 0.9, 0.2, 0.4。...请先按阈值转换，例如 y_pred = y_score >= threshold
    """
    return _labels_and_predictions(y_true, y_pred)


def metrics_from_counts(tp: int, fp: int, tn: int, fn: int, *, zero_division: Any = "nan") -> BinaryMetrics:
    r"""Derive the fixed-threshold metrics from confusion-matrix counts.

    Parameters
    ----------
    tp, fp, tn, fn : int
        Non-negative integer counts (not ``bool``, not ``float``) with a
        positive total.
    zero_division : {"nan", 0, "raise"}, default "nan"
        What a metric with a zero denominator returns; ``"raise"`` raises
        :class:`~autograder.reference.UndefinedMetricError`.

    Returns
    -------
    BinaryMetrics
        The counts followed by accuracy, precision, recall, FPR, specificity
        and F1.

    Raises
    ------
    ValueError
        If a count is not a non-negative integer, if all four are 0, or if
        ``zero_division`` is not one of the three policies.
    UndefinedMetricError
        Under ``zero_division="raise"``, for the first metric with a zero
        denominator.

    See Also
    --------
    binary_metrics : The same metrics from labels, scores and a threshold.
    sklearn.metrics.precision_recall_fscore_support : Takes labels and
        predictions, not counts; its ``zero_division`` defaults to ``"warn"``
        (0.0 with a warning) where this function returns NaN.

    Notes
    -----
    The formulas are those of the module docstring; F1 uses the count form

    .. math:: F_1 = \frac{2TP}{2TP+FP+FN},

    which equals :math:`2PR/(P+R)` whenever both are defined and is 0 (not
    0/0) when :math:`TP = 0 < FP + FN`.

    References
    ----------
    .. [1] Fawcett, T. (2006). An introduction to ROC analysis. *Pattern
           Recognition Letters*, 27(8), 861-874.
    .. [2] van Rijsbergen, C. J. (1979). *Information Retrieval* (2nd ed.),
           chapter 7. Butterworths.

    Examples
    --------
    例3.1 of the course (TP 50, TN 30, FP 10, FN 10):

    >>> from autograder.reference import metrics_from_counts
    >>> m = metrics_from_counts(50, 10, 30, 10)
    >>> round(m.accuracy, 4), round(m.precision, 4), m.fpr
    (0.8, 0.8333, 0.25)
    >>> metrics_from_counts(0, 0, 5, 0).precision
    nan
    """
    policy = check_zero_division(zero_division)
    tp, fp, tn, fn = (check_scalar(v, name, numbers.Integral, min_val=0) for name, v in (("tp", tp), ("fp", fp), ("tn", tn), ("fn", fn)))
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


def binary_metrics(y_true: ArrayLike, y_score: ArrayLike, threshold: float, *, zero_division: Any = "nan") -> BinaryMetrics:
    r"""Confusion counts and fixed-threshold metrics for the rule ``score >= threshold``.

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
        :class:`~autograder.reference.UndefinedMetricError` naming the metric
        and its empty denominator.  Any other value is a ``ValueError``.

    Returns
    -------
    BinaryMetrics
        ``tp, fp, tn, fn, accuracy, precision, recall, fpr, specificity, f1``.

    Raises
    ------
    ValueError
        On bad labels, scores, threshold or policy (see :mod:`._validation`).
    UndefinedMetricError
        Under ``zero_division="raise"`` when a denominator is 0.

    See Also
    --------
    metrics_from_counts : The same metrics from counts.
    sklearn.metrics.precision_recall_fscore_support : scikit-learn computes
        these metrics one function at a time from *predicted labels*; the
        equivalent input is ``y_pred = y_score >= threshold``.  Its
        ``zero_division`` defaults to ``"warn"`` (0.0 with a warning).

    Notes
    -----
    A score equal to the threshold counts as positive:

    .. math::

        \hat y_i = [s_i \ge \tau], \qquad
        TP(\tau) = \#\{i : y_i = 1,\ s_i \ge \tau\}, \quad
        FP(\tau) = \#\{i : y_i = 0,\ s_i \ge \tau\},

    and the metrics are those of :func:`metrics_from_counts`.

    References
    ----------
    .. [1] Fawcett, T. (2006). An introduction to ROC analysis. *Pattern
           Recognition Letters*, 27(8), 861-874.

    Examples
    --------
    >>> from autograder.reference import binary_metrics
    >>> m = binary_metrics([1, 0, 1, 0], [0.9, 0.8, 0.7, 0.1], threshold=0.7)
    >>> (m.tp, m.fp, m.tn, m.fn), m.precision, m.fpr
    ((2, 1, 1, 0), 0.6666666666666666, 0.5)
    >>> binary_metrics([1, 0], [0.2, 0.1], threshold=0.5).precision  # nothing predicted positive
    nan
    """
    policy = check_zero_division(zero_division)
    positive = check_binary_labels(y_true, "y_true")
    scores = check_scores(y_score, "y_score")
    check_same_length(positive, scores, "y_true", "y_score")
    tau = check_threshold(threshold, "threshold")
    return metrics_from_counts(*_counts(positive, scores >= tau), zero_division=policy)


def fbeta_score(y_true: ArrayLike, y_pred: ArrayLike, *, beta: float = 1.0, zero_division: Any = "nan") -> float:
    r"""F-beta score of predicted labels, as scikit-learn's ``fbeta_score``.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        True labels, only 0 and 1 (booleans read as ``True`` = 1).
    y_pred : array-like of shape (n,)
        *Predicted labels*, only 0 and 1 or booleans -- not scores.  From
        scores, pass ``y_score >= threshold``.
    beta : float, default 1.0
        Finite real number greater than 0; recall weighs :math:`\beta` times
        as much as precision (``beta > 1`` favours recall).
    zero_division : {"nan", 0, "raise"}, default "nan"
        Result when :math:`TP = FP = FN = 0` (no positive, none predicted).

    Returns
    -------
    float
        :math:`F_\beta` in [0, 1], or NaN / 0.0 under ``zero_division``.

    Raises
    ------
    ValueError
        If ``y_pred`` holds anything but 0 and 1 (scores, for instance; the
        message says how to threshold them), on other bad labels, or if
        ``beta`` or ``zero_division`` is invalid.
    UndefinedMetricError
        Under ``zero_division="raise"`` when :math:`TP = FP = FN = 0`.

    See Also
    --------
    sklearn.metrics.fbeta_score : Same arguments and value for binary 0/1
        labels.  Differences: scikit-learn requires ``beta`` (here it defaults
        to 1), also accepts ``zero_division`` 1, ``np.nan`` and ``"warn"`` (its
        default, 0.0 with a warning; here the default is NaN), and handles
        other labels, ``pos_label``, ``average`` and sample weights, which
        this function does not take.
    binary_metrics : F1 together with the other metrics, from scores and a
        threshold.

    Notes
    -----
    .. math::

        F_\beta = \frac{(1+\beta^2)\,TP}{(1+\beta^2)\,TP + \beta^2 FN + FP}
                = \frac{(1+\beta^2)\,P\,R}{\beta^2 P + R}.

    The count form is used, so :math:`F_\beta = 0` whenever :math:`TP = 0`
    and :math:`FP + FN > 0`; only :math:`TP = FP = FN = 0` is 0/0.

    References
    ----------
    .. [1] van Rijsbergen, C. J. (1979). *Information Retrieval* (2nd ed.),
           chapter 7. Butterworths.
    .. [2] Chinchor, N. (1992). MUC-4 evaluation metrics. In *Proceedings of
           the Fourth Message Understanding Conference*, 22-29.

    Examples
    --------
    >>> import numpy as np
    >>> from autograder.reference import fbeta_score
    >>> y_true = [1, 1, 0, 1, 0]
    >>> y_score = np.array([0.9, 0.4, 0.35, 0.8, 0.1])
    >>> round(fbeta_score(y_true, y_score >= 0.5, beta=2.0), 4)
    0.7143
    >>> fbeta_score(y_true, y_score, beta=2.0)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    ValueError: y_pred 只能含有标签 0 和 1，发现非法值 0.9, 0.4, 0.35, 0.8, 0.1。...例如 y_pred = y_score >= threshold
    """
    policy = check_zero_division(zero_division)
    b = check_scalar(beta, "beta", numbers.Real, min_val=0, include_boundaries="neither")
    tp, fp, _tn, fn = _labels_and_predictions(y_true, y_pred)
    b2 = b * b
    return safe_divide((1 + b2) * tp, (1 + b2) * tp + b2 * fn + fp, policy, "fbeta", "(1+β²)TP+β²FN+FP")


def matthews_corrcoef(y_true: ArrayLike, y_pred: ArrayLike, *, zero_division: Any = "nan") -> float:
    r"""Matthews correlation coefficient of predicted labels, as scikit-learn's ``matthews_corrcoef``.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        True labels, only 0 and 1 (booleans read as ``True`` = 1).
    y_pred : array-like of shape (n,)
        *Predicted labels*, only 0 and 1 or booleans -- not scores.  From
        scores, pass ``y_score >= threshold``.
    zero_division : {"nan", 0, "raise"}, default "nan"
        Result when the denominator is 0, i.e. when a row or a column of the
        confusion matrix is empty (one true class only, or one predicted class
        only).

    Returns
    -------
    float
        MCC in [-1, 1], or NaN / 0.0 under ``zero_division``.

    Raises
    ------
    ValueError
        If ``y_pred`` holds anything but 0 and 1 (the message says how to
        threshold scores), on other bad labels, or if ``zero_division`` is
        invalid.
    UndefinedMetricError
        Under ``zero_division="raise"`` when the denominator is 0.

    See Also
    --------
    sklearn.metrics.matthews_corrcoef : Same arguments and value whenever the
        denominator is positive.  With a zero denominator scikit-learn returns
        0.0 without a warning; here the default is NaN (``zero_division=0``
        gives scikit-learn's value).  scikit-learn also takes multiclass labels
        and sample weights.

    Notes
    -----
    .. math::

        \mathrm{MCC} = \frac{TP\cdot TN - FP\cdot FN}
                            {\sqrt{(TP+FP)(TP+FN)(TN+FP)(TN+FN)}}

    It is Pearson's correlation between the true and the predicted 0/1
    labels (the :math:`\phi` coefficient).  Integer arithmetic keeps the
    numerator exact.

    References
    ----------
    .. [1] Matthews, B. W. (1975). Comparison of the predicted and observed
           secondary structure of T4 phage lysozyme. *Biochimica et Biophysica
           Acta (BBA) - Protein Structure*, 405(2), 442-451.
    .. [2] Chicco, D., & Jurman, G. (2020). The advantages of the Matthews
           correlation coefficient (MCC) over F1 score and accuracy in binary
           classification evaluation. *BMC Genomics*, 21, 6.

    Examples
    --------
    >>> import numpy as np
    >>> from autograder.reference import matthews_corrcoef
    >>> y_true = [1, 1, 0, 1, 0]
    >>> y_score = np.array([0.9, 0.4, 0.35, 0.8, 0.1])
    >>> round(matthews_corrcoef(y_true, y_score >= 0.5), 4)
    0.6667
    >>> matthews_corrcoef([1, 1, 0], [1, 1, 1])  # one predicted class: 0/0
    nan
    """
    policy = check_zero_division(zero_division)
    tp, fp, tn, fn = _labels_and_predictions(y_true, y_pred)
    product = (tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)
    denominator = math.sqrt(product)
    return safe_divide(tp * tn - fp * fn, denominator, policy, "mcc", "√((TP+FP)(TP+FN)(TN+FP)(TN+FN))")


def balanced_accuracy(y_true: ArrayLike, y_pred: ArrayLike, *, zero_division: Any = "nan") -> float:
    r"""Balanced accuracy ``(TPR + TNR) / 2`` of predicted labels.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        True labels, only 0 and 1 (booleans read as ``True`` = 1).
    y_pred : array-like of shape (n,)
        *Predicted labels*, only 0 and 1 or booleans -- not scores.  From
        scores, pass ``y_score >= threshold``.
    zero_division : {"nan", 0, "raise"}, default "nan"
        Applied to a rate whose class is absent from ``y_true``: with one
        class only the result is NaN under ``"nan"``, the missing rate counts
        as 0 under ``0``, and ``"raise"`` raises.

    Returns
    -------
    float
        Balanced accuracy in [0, 1], or NaN.

    Raises
    ------
    ValueError
        If ``y_pred`` holds anything but 0 and 1 (the message says how to
        threshold scores), on other bad labels, or if ``zero_division`` is
        invalid.
    UndefinedMetricError
        Under ``zero_division="raise"`` when ``y_true`` holds one class only.

    See Also
    --------
    sklearn.metrics.balanced_accuracy_score : Same arguments and value when
        both classes are present.  With one class only scikit-learn warns and
        returns the recall of the class present; here the default is NaN.
        scikit-learn also offers ``adjusted=True`` (chance-corrected) and
        sample weights.

    Notes
    -----
    .. math::

        \mathrm{BA} = \frac12\left(\frac{TP}{TP+FN} + \frac{TN}{TN+FP}\right)
                    = \frac{\mathrm{TPR} + \mathrm{TNR}}{2}.

    Unlike accuracy it does not depend on the share of positives: a constant
    prediction scores 0.5.

    References
    ----------
    .. [1] Brodersen, K. H., Ong, C. S., Stephan, K. E., & Buhmann, J. M.
           (2010). The balanced accuracy and its posterior distribution. In
           *Proceedings of the 20th International Conference on Pattern
           Recognition*, 3121-3124.

    Examples
    --------
    >>> import numpy as np
    >>> from autograder.reference import balanced_accuracy
    >>> y_true = [1, 1, 0, 1, 0]
    >>> y_score = np.array([0.9, 0.4, 0.35, 0.8, 0.1])
    >>> round(balanced_accuracy(y_true, y_score >= 0.5), 4)
    0.8333
    >>> balanced_accuracy([0, 0, 0, 0, 1], [0, 0, 0, 0, 0])  # always negative
    0.5
    """
    policy = check_zero_division(zero_division)
    tp, fp, tn, fn = _labels_and_predictions(y_true, y_pred)
    tpr = safe_divide(tp, tp + fn, policy, "recall", "TP+FN（真实正类数）")
    tnr = safe_divide(tn, tn + fp, policy, "specificity", "TN+FP（真实负类数）")
    return (tpr + tnr) / 2.0
