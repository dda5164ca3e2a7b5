"""Multiclass metrics the book teaches beyond per-class averages: Cohen's kappa, the multiclass MCC,
top-w accuracy, the Hand-Till AUC and two multiclass calibration errors.

Classes are the integers ``0 .. K-1``.  Every binary quantity (the pairwise AUCs, the ECE of one
event) is delegated to :mod:`autograder.reference`, so the multiclass numbers inherit its tie rules
and its binning.  Inputs are checked first; a bad input raises :class:`ValueError` with a message
in Chinese that names the argument and the problem (readers call these functions from the pages).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

import autograder.reference as ref

__all__ = [
    "class_labels",
    "confusion_matrix",
    "cohen_kappa",
    "multiclass_mcc",
    "top_w_accuracy",
    "hand_till_auc",
    "ovr_auc",
    "classwise_ece",
    "top_label_ece",
]


def class_labels(values: ArrayLike, name: str, n_classes: int | None = None) -> np.ndarray:
    """``values`` as a 1-D integer array of class labels in ``0 .. n_classes-1``.

    Parameters
    ----------
    values : array-like of shape (n,)
        Class labels: integers (floats equal to an integer are accepted), at least one.
    name : str
        The argument's name, used in the error message.
    n_classes : int, optional
        Number of classes K; when given, every label must be below it.

    Returns
    -------
    numpy.ndarray of int64

    Raises
    ------
    ValueError
        If ``values`` is not a non-empty 1-D array of non-negative integers (below ``n_classes``).
    """
    arr = np.asarray(values)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} 必须是非空的一维数组，实际形状为 {arr.shape}")
    if arr.dtype.kind == "b" or arr.dtype.kind not in "iuf":
        raise ValueError(f"{name} 必须由整数类别编号组成，实际 dtype 为 {arr.dtype}")
    if arr.dtype.kind == "f" and not (np.all(np.isfinite(arr)) and np.all(arr == np.round(arr))):
        raise ValueError(f"{name} 含有不是整数的值，类别编号只能是 0、1、2 …")
    labels = arr.astype(np.int64)
    if labels.min() < 0:
        raise ValueError(f"{name} 含有负数 {labels.min()}，类别编号从 0 开始")
    if n_classes is not None and labels.max() >= n_classes:
        raise ValueError(f"{name} 含有类别 {labels.max()}，而类别只有 0 到 {n_classes - 1}")
    return labels


def _scores(values: ArrayLike, name: str, n_samples: int) -> np.ndarray:
    arr = np.asarray(values)
    if arr.ndim != 2 or arr.shape[0] != n_samples or arr.shape[1] < 2:
        raise ValueError(f"{name} 必须是 ({n_samples}, K) 的二维数组（每行一个样本、每列一个类别，K ≥ 2），"
                         f"实际形状为 {arr.shape}")
    if arr.dtype.kind not in "iuf" or not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} 只能含有有限的实数")
    return arr.astype(float)


def _probabilities(values: ArrayLike, name: str, n_samples: int) -> np.ndarray:
    probs = _scores(values, name, n_samples)
    if probs.min() < 0 or probs.max() > 1 or not np.allclose(probs.sum(axis=1), 1.0, atol=1e-9):
        raise ValueError(f"{name} 的每一行必须是一个概率分布：取值在 [0, 1] 内，且每行之和为 1")
    return probs


def confusion_matrix(y_true: ArrayLike, y_pred: ArrayLike, n_classes: int | None = None) -> np.ndarray:
    """The K x K confusion matrix: entry ``[i, j]`` counts samples of true class i predicted as j.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n,)
        True and predicted class labels ``0 .. K-1``.
    n_classes : int, optional
        K; by default one more than the largest label seen in either array.

    Returns
    -------
    numpy.ndarray of shape (K, K), int64

    Raises
    ------
    ValueError
        On bad labels or arrays of different lengths.
    """
    t = class_labels(y_true, "y_true", n_classes)
    p = class_labels(y_pred, "y_pred", n_classes)
    if t.size != p.size:
        raise ValueError(f"y_true 与 y_pred 的长度不同：{t.size} 与 {p.size}")
    k = n_classes if n_classes is not None else int(max(t.max(), p.max())) + 1
    return np.bincount(t * k + p, minlength=k * k).reshape(k, k)


def _agreement_terms(matrix: np.ndarray) -> tuple[float, float, np.ndarray, np.ndarray]:
    """``n``, the diagonal sum, the true counts ``n_i`` and the predicted counts ``n̂_i``."""
    n = float(matrix.sum())
    return n, float(np.trace(matrix)), matrix.sum(axis=1).astype(float), matrix.sum(axis=0).astype(float)


def cohen_kappa(y_true: ArrayLike, y_pred: ArrayLike) -> float:
    r"""Cohen's kappa: agreement beyond the agreement of two independent labellings with the same margins.

    .. math::

        \kappa = \frac{n\sum_i n_{ii} - \sum_i n_i \hat n_i}{n^2 - \sum_i n_i \hat n_i}

    Returns
    -------
    float
        In [-1, 1]; NaN when both labellings put every sample into one and the same class
        (the chance agreement is then 1 and the ratio is 0/0).

    See Also
    --------
    sklearn.metrics.cohen_kappa_score : the same value (unweighted).
    """
    n, diag, true_counts, pred_counts = _agreement_terms(confusion_matrix(y_true, y_pred))
    chance = float(true_counts @ pred_counts)
    denominator = n * n - chance
    return float((n * diag - chance) / denominator) if denominator != 0 else math.nan


def multiclass_mcc(y_true: ArrayLike, y_pred: ArrayLike) -> float:
    r"""Matthews correlation coefficient for K classes (Gorodkin's :math:`R_K`).

    .. math::

        \mathrm{MCC} = \frac{n\sum_i n_{ii} - \sum_i n_i \hat n_i}
                            {\sqrt{\bigl(n^2 - \sum_i \hat n_i^2\bigr)\bigl(n^2 - \sum_i n_i^2\bigr)}}

    For K = 2 it is the binary MCC of the four counts.

    Returns
    -------
    float
        At most 1; NaN when the true or the predicted labels hold a single class (0/0).

    See Also
    --------
    sklearn.metrics.matthews_corrcoef : the same value where defined (it returns 0 where this returns NaN).
    """
    n, diag, true_counts, pred_counts = _agreement_terms(confusion_matrix(y_true, y_pred))
    denominator = math.sqrt((n * n - float(pred_counts @ pred_counts)) * (n * n - float(true_counts @ true_counts)))
    return float((n * diag - float(true_counts @ pred_counts)) / denominator) if denominator != 0 else math.nan


def top_w_accuracy(y_true: ArrayLike, scores: ArrayLike, w: int) -> float:
    """Share of samples whose true class is among the ``w`` classes with the highest scores.

    Ties between class scores are broken in favour of the larger class index (the rule of
    scikit-learn's ``top_k_accuracy_score``), so the value does not depend on how a sort orders ties.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        True class labels ``0 .. K-1``.
    scores : array-like of shape (n, K)
        One score per class (probabilities or any real scores; larger means more likely).
    w : int
        How many top-ranked classes count as a hit, ``1 <= w <= K``.

    Returns
    -------
    float
    """
    t = class_labels(y_true, "y_true")
    s = _scores(scores, "scores", t.size)
    k = s.shape[1]
    if isinstance(w, bool) or not isinstance(w, (int, np.integer)) or not 1 <= w <= k:
        raise ValueError(f"w 必须是 1 到 {k} 之间的整数，实际为 {w!r}")
    if t.max() >= k:
        raise ValueError(f"y_true 含有类别 {t.max()}，而 scores 只有 {k} 列")
    own = s[np.arange(t.size), t][:, None]
    index = np.arange(k)[None, :]
    ahead = (s > own) | ((s == own) & (index > t[:, None]))   # classes ranked before the true class
    return float(np.mean(ahead.sum(axis=1) < w))


def _pair_auc(t: np.ndarray, s: np.ndarray, i: int, j: int) -> float:
    """AUC of class i against class j, ranking the samples of the two classes by the score of class i."""
    mask = (t == i) | (t == j)
    return ref.roc_auc((t[mask] == i).astype(int), s[mask, i])


def hand_till_auc(y_true: ArrayLike, scores: ArrayLike) -> float:
    r"""The multiclass AUC of Hand and Till (2001), the average over all pairs of classes

    .. math::

        M = \frac{2}{K(K-1)}\sum_{i<j}\frac{\mathrm{AUC}_{i\mid j}+\mathrm{AUC}_{j\mid i}}{2},

    where :math:`\mathrm{AUC}_{i\mid j}` ranks the samples of classes i and j by the score of class i.
    Every class 0 .. K-1 must occur in ``y_true``.

    See Also
    --------
    sklearn.metrics.roc_auc_score : ``multi_class="ovo"`` gives the same value (it needs
        probabilities that sum to one; this function takes any real scores).
    """
    t = class_labels(y_true, "y_true")
    s = _scores(scores, "scores", t.size)
    k = s.shape[1]
    missing = sorted(set(range(k)) - set(np.unique(t).tolist()))
    if missing or t.max() >= k:
        raise ValueError(f"y_true 必须恰好含有 scores 的全部 {k} 个类别（缺少 {missing}）")
    pairs = [(_pair_auc(t, s, i, j) + _pair_auc(t, s, j, i)) / 2 for i in range(k) for j in range(i + 1, k)]
    return float(np.mean(pairs))


def ovr_auc(y_true: ArrayLike, scores: ArrayLike) -> np.ndarray:
    """One AUC per class, one-vs-rest: class c against all other samples, ranked by the score of class c.

    Returns
    -------
    numpy.ndarray of shape (K,)

    See Also
    --------
    sklearn.metrics.roc_auc_score : ``multi_class="ovr", average=None``.
    """
    t = class_labels(y_true, "y_true")
    s = _scores(scores, "scores", t.size)
    if t.max() >= s.shape[1]:
        raise ValueError(f"y_true 含有类别 {t.max()}，而 scores 只有 {s.shape[1]} 列")
    return np.array([ref.roc_auc((t == c).astype(int), s[:, c]) for c in range(s.shape[1])])


def classwise_ece(y_true: ArrayLike, probs: ArrayLike, n_bins: int = 10) -> float:
    """Classwise ECE: the binary ECE of "the sample is of class c" against ``probs[:, c]``, averaged over classes.

    Each class's ECE is :func:`autograder.reference.expected_calibration_error` with ``n_bins``
    equal-width bins.
    """
    t = class_labels(y_true, "y_true")
    p = _probabilities(probs, "probs", t.size)
    if t.max() >= p.shape[1]:
        raise ValueError(f"y_true 含有类别 {t.max()}，而 probs 只有 {p.shape[1]} 列")
    return float(np.mean([ref.expected_calibration_error((t == c).astype(int), p[:, c], n_bins=n_bins)
                          for c in range(p.shape[1])]))


def top_label_ece(y_true: ArrayLike, probs: ArrayLike, n_bins: int = 10) -> float:
    """Top-label (confidence) ECE: the binary ECE of "the predicted class is right" against the largest probability.

    The predicted class is the column of the largest probability (the first such column on a tie).
    """
    t = class_labels(y_true, "y_true")
    p = _probabilities(probs, "probs", t.size)
    if t.max() >= p.shape[1]:
        raise ValueError(f"y_true 含有类别 {t.max()}，而 probs 只有 {p.shape[1]} 列")
    predicted = p.argmax(axis=1)
    return ref.expected_calibration_error((predicted == t).astype(int), p.max(axis=1), n_bins=n_bins)
