"""Small, seeded experiment tools behind the answers of the chapter 评价二分类模型.

One job per function:

* measuring: :func:`median_time` (``time.perf_counter``, median of repeats after
  warm-up runs), :func:`peak_memory` (``tracemalloc``) and :func:`count_sort_calls`
  (every ``sort``/``argsort``/``lexsort``/``partition`` method called, with the length
  of the array sorted);
* ROC algorithms to compare with the reference: :func:`naive_roc`, which rescans all
  samples once per distinct threshold (:math:`O(nm)`), and :func:`max_roc_gap`;
* threshold selection on validation scores: :func:`balanced_resample`,
  :func:`select_threshold` and :func:`evaluate_threshold`;
* model size: :func:`count_parameters`;
* output: :func:`markdown_table` (tables that a page prints from code).

Every metric is computed with :mod:`autograder.reference`.
"""

from __future__ import annotations

import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike

import autograder.reference as ref

__all__ = [
    "median_time",
    "peak_memory",
    "count_sort_calls",
    "naive_roc",
    "max_roc_gap",
    "balanced_resample",
    "select_threshold",
    "TestReport",
    "evaluate_threshold",
    "count_parameters",
    "markdown_table",
]

_SORT_NAMES = frozenset({"sort", "argsort", "lexsort", "partition", "argpartition"})


def median_time(fn: Callable[[], Any], *, repeats: int = 5, warmup: int = 1) -> float:
    """Median wall-clock seconds of ``fn()`` over ``repeats`` runs, after ``warmup`` unmeasured runs.

    Parameters
    ----------
    fn : callable
        Called without arguments; its result is discarded.
    repeats : int
        Number of measured runs (at least 1).
    warmup : int
        Number of runs before measuring (imports, caches, page faults).
    """
    if repeats < 1 or warmup < 0:
        raise ValueError("repeats 至少为 1，warmup 不能为负")
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def peak_memory(fn: Callable[[], Any]) -> tuple[Any, int]:
    """Run ``fn()`` once under ``tracemalloc``; return its result and the peak traced bytes.

    NumPy reports its array buffers to ``tracemalloc``, so the peak includes the
    temporary arrays of a vectorised computation.  Memory held before the call is
    not counted.
    """
    was_tracing = tracemalloc.is_tracing()
    if not was_tracing:
        tracemalloc.start()
    tracemalloc.reset_peak()
    base, _ = tracemalloc.get_traced_memory()
    try:
        result = fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        if not was_tracing:
            tracemalloc.stop()
    return result, max(0, peak - base)


def count_sort_calls(fn: Callable[[], Any]) -> tuple[Any, list[int]]:
    """Run ``fn()`` once and record every NumPy sort-family method call.

    ``np.sort``, ``np.argsort``, ``np.unique`` and the ``ndarray`` methods all end in
    a C-level ``sort``/``argsort``/``lexsort``/``partition`` method of an array; a
    profiler hook sees each such call together with the array it is bound to.

    Returns
    -------
    result, sizes
        The result of ``fn()`` and, for each sort call in order, the length of the
        array sorted.
    """
    sizes: list[int] = []

    def hook(frame: Any, event: str, arg: Any) -> None:
        if event == "c_call" and getattr(arg, "__name__", None) in _SORT_NAMES:
            owner = getattr(arg, "__self__", None)
            if isinstance(owner, np.ndarray):
                sizes.append(int(owner.size))
            elif owner is not None and getattr(owner, "__name__", "") == "numpy":  # np.lexsort
                sizes.append(-1)

    previous = sys.getprofile()
    sys.setprofile(hook)
    try:
        result = fn()
    finally:
        sys.setprofile(previous)
    return result, sizes


def naive_roc(y_true: ArrayLike, y_score: ArrayLike) -> ref.RocCurve:
    r"""ROC points by rescanning all samples once per distinct threshold, :math:`O(nm)`.

    The thresholds are :math:`+\infty` and the :math:`m` distinct scores in decreasing
    order; for each one the rule ``score >= threshold`` is applied to all ``n``
    samples again.  Same output layout as :func:`autograder.reference.roc_curve`.
    """
    positive = ref._validation.check_binary_labels(y_true, "y_true")
    scores = ref._validation.check_scores(y_score, "y_score")
    ref._validation.check_same_length(positive, scores, "y_true", "y_score")
    n_pos, n_neg = ref._validation.check_both_classes(positive, "y_true")
    distinct = np.unique(scores)[::-1]  # one sort, only to list the thresholds
    thresholds = np.concatenate(([np.inf], distinct))
    tps = np.empty(thresholds.shape[0], dtype=np.int64)
    fps = np.empty(thresholds.shape[0], dtype=np.int64)
    for k, tau in enumerate(thresholds):
        predicted = scores >= tau
        tp = np.count_nonzero(predicted & positive)
        tps[k] = tp
        fps[k] = np.count_nonzero(predicted) - tp
    return ref.RocCurve(fpr=fps / n_neg, tpr=tps / n_pos, thresholds=thresholds)


def max_roc_gap(a: ref.RocCurve, b: ref.RocCurve) -> float:
    """Largest absolute difference between two ROC point lists with the same thresholds.

    Raises ``ValueError`` if the curves have different numbers of points or
    different thresholds (a silent truncation would hide a missing point).
    """
    if a.fpr.shape != b.fpr.shape or not np.array_equal(a.thresholds[1:], b.thresholds[1:]):
        raise ValueError("两条 ROC 曲线的阈值不同，不能逐点比较")
    return float(max(np.max(np.abs(a.fpr - b.fpr)), np.max(np.abs(a.tpr - b.tpr))))


def balanced_resample(y: ArrayLike, rng: np.random.Generator) -> np.ndarray:
    """Indices of a class-balanced subsample: all minority samples and as many majority ones.

    The majority class is subsampled without replacement; the returned indices are sorted.
    """
    labels = np.asarray(y)
    pos = np.flatnonzero(labels == 1)
    neg = np.flatnonzero(labels == 0)
    small, large = (pos, neg) if pos.size <= neg.size else (neg, pos)
    kept = rng.choice(large, size=small.size, replace=False)
    return np.sort(np.concatenate((small, kept)))


def select_threshold(
    y_val: ArrayLike, s_val: ArrayLike, *, rule: str, prior: float | None = None, c_fp: float = 1.0, c_fn: float = 1.0
) -> ref.ThresholdChoice:
    """Choose a threshold on validation scores only (a thin, named wrapper of the reference).

    ``rule="fixed"`` returns 0.5 without looking at the data (its ``value`` is NaN);
    ``"f1"`` and ``"cost"`` call :func:`autograder.reference.choose_threshold`, whose
    candidates are ``+inf`` and every distinct validation score and whose ties go to
    the highest threshold.  ``prior=None`` uses the validation share of positives
    (no correction).
    """
    if rule == "fixed":
        return ref.ThresholdChoice(0.5, float("nan"), float("nan"), float("nan"), "fixed")
    return ref.choose_threshold(y_val, s_val, rule=rule, prior=prior, c_fp=c_fp, c_fn=c_fn)


class TestReport(NamedTuple):
    """One evaluation of a fixed threshold on the test set."""

    __test__ = False  # not a pytest test class

    threshold: float
    tp: int
    fp: int
    tn: int
    fn: int
    precision: float
    recall: float
    f1: float
    cost: float


def evaluate_threshold(y_test: ArrayLike, s_test: ArrayLike, threshold: float, *, c_fp: float, c_fn: float) -> TestReport:
    """Confusion matrix, Precision, Recall, F1 and total cost ``c_fp*FP + c_fn*FN`` at one threshold.

    ``threshold = +inf`` (predict no positive) is allowed; Precision is then NaN.
    """
    labels = np.asarray(y_test)
    scores = np.asarray(s_test, dtype=np.float64)
    predicted = (scores >= threshold).astype(np.int64)  # +inf is a valid comparison here
    counts = ref.confusion_counts(labels, predicted)
    m = ref.metrics_from_counts(*counts, zero_division="nan")
    cost = c_fp * counts.fp + c_fn * counts.fn
    return TestReport(float(threshold), counts.tp, counts.fp, counts.tn, counts.fn, m.precision, m.recall, m.f1, float(cost))


def count_parameters(model: Any) -> int:
    """Number of fitted weights and biases of a scikit-learn linear model or MLP.

    Accepts a fitted ``LogisticRegression``, ``MLPClassifier`` or a ``Pipeline``
    ending in one (preprocessing steps such as ``StandardScaler`` hold statistics,
    not trained parameters, and are not counted).
    """
    est = model.steps[-1][1] if hasattr(model, "steps") else model
    if hasattr(est, "coefs_"):
        return int(sum(w.size for w in est.coefs_) + sum(b.size for b in est.intercepts_))
    if hasattr(est, "coef_"):
        return int(est.coef_.size + np.size(est.intercept_))
    raise TypeError(f"无法统计 {type(est).__name__} 的参数量")


def markdown_table(headers: list[str], rows: list[list[Any]], align: str | None = None) -> str:
    """A Markdown pipe table; cells are converted with ``str`` (format numbers before).

    Parameters
    ----------
    headers : list of str
        Column titles.
    rows : list of list
        One list per row, as long as ``headers``.
    align : str, optional
        One letter per column, ``l``, ``c`` or ``r`` (default: all left).
    """
    width = len(headers)
    if any(len(row) != width for row in rows):
        raise ValueError("表格每一行的列数必须与表头相同")
    marks = {"l": ":--", "c": ":-:", "r": "--:"}
    align = align or "l" * width
    if len(align) != width or set(align) - set(marks):
        raise ValueError("align 必须为每一列给出 l、c 或 r")
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join(marks[a] for a in align) + "|"]
    lines += ["| " + " | ".join(str(cell).replace("|", "\\|") for cell in row) + " |" for row in rows]
    return "\n".join(lines)
