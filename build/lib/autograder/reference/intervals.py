r"""Uncertainty of a metric: confidence intervals for a proportion, AUC and AP, and the paired DeLong test.

A metric computed on a test set is an estimate; these functions say how far it
may be from the value on the population the test set was drawn from.

* :func:`proportion_ci` -- Wilson score and Clopper-Pearson intervals for any
  metric that is a count over a count (accuracy, recall, specificity, ...);
* :func:`auc_ci` -- DeLong's asymptotic interval or a stratified bootstrap
  interval (percentile or BCa) for the ROC-AUC;
* :func:`ap_ci` -- a stratified bootstrap interval for average precision;
* :func:`delong_test` -- DeLong's paired test of two AUCs on one test set.

Two private kernels carry the work, in the style of :mod:`.ranking`:
:func:`_placements` (the structural components of DeLong et al., from which
the AUC, its variance, the covariance of two AUCs and the jackknife follow) and
:func:`_bootstrap_interval` (a percentile or BCa interval from the replicates
of a stratified bootstrap; AP's replicates come from the ranking kernel,
AUC's from the placements of the resampled data, without re-sorting).  The beta quantile
that Clopper-Pearson needs is computed here from the regularized incomplete
beta function, so the package stays pure NumPy.
"""

from __future__ import annotations

import math
import numbers
from statistics import NormalDist
from typing import Any, Callable, NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from ._validation import (
    UndefinedMetricError,
    check_binary_labels,
    check_both_classes,
    check_option,
    check_same_length,
    check_scalar,
    check_scores,
)
from .ranking import _average_precision, _binary_clf_curve, _trapezoid_auc, _validated

__all__ = ["ConfidenceInterval", "DelongTest", "proportion_ci", "auc_ci", "ap_ci", "delong_test"]

_NORMAL = NormalDist()


class ConfidenceInterval(NamedTuple):
    """A point estimate and its confidence interval ``(estimate, low, high)``.

    Attributes
    ----------
    estimate : float
        The metric on the data given (``k / n``, the AUC or the AP).
    low, high : float
        Bounds of the interval, ``low <= high``, both inside [0, 1].
    """

    estimate: float
    low: float
    high: float


class DelongTest(NamedTuple):
    """Result of :func:`delong_test`: ``(auc_a, auc_b, z, p_value)``."""

    auc_a: float
    auc_b: float
    z: float
    p_value: float


# --------------------------------------------------------------------------------- validation
def _check_confidence(confidence: Any) -> float:
    return check_scalar(confidence, "confidence", min_val=0.0, max_val=1.0, include_boundaries="neither", description="置信水平")


def _check_random_state(random_state: Any) -> np.random.Generator:
    if random_state is None:
        return np.random.default_rng()
    if isinstance(random_state, np.random.Generator):
        return random_state
    seed = check_scalar(random_state, "random_state", numbers.Integral, min_val=0, description="随机种子，也可以是 None 或 numpy.random.Generator")
    return np.random.default_rng(seed)


def _check_two_per_class(n_pos: int, n_neg: int, what: str) -> None:
    if n_pos < 2 or n_neg < 2:
        raise ValueError(f"{what}需要每一类至少 2 个样本，实际正类 {n_pos} 个、负类 {n_neg} 个")


def _z(confidence: float) -> float:
    return _NORMAL.inv_cdf(0.5 + confidence / 2.0)


# ------------------------------------------------------------------------------- proportion
def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 10_000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-16:
            return h
    raise ArithmeticError("incomplete beta continued fraction did not converge")  # pragma: no cover


def _betainc(a: float, b: float, x: float) -> float:
    """Regularized incomplete beta function :math:`I_x(a, b)` for ``a, b > 0``."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _betacf(a, b, x) / a
    return 1.0 - math.exp(log_front) * _betacf(b, a, 1.0 - x) / b


def _beta_ppf(q: float, a: float, b: float) -> float:
    """Quantile of the Beta(a, b) distribution by bisection on :func:`_betainc` (to the last bit)."""
    lo, hi = 0.0, 1.0
    for _ in range(1100):  # enough halvings to reach the smallest positive doubles
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if _betainc(a, b, mid) < q:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def proportion_ci(k: int, n: int, *, method: str = "wilson", confidence: float = 0.95) -> ConfidenceInterval:
    r"""Confidence interval for a proportion :math:`k/n` (accuracy, recall, specificity, ...).

    Parameters
    ----------
    k : int
        Number of successes (e.g. correctly classified samples, or true
        positives for recall), an integer with ``0 <= k <= n``.
    n : int
        Number of trials (all samples for accuracy, all actual positives for
        recall), an integer ``>= 1``.
    method : {"wilson", "clopper-pearson"}, default "wilson"
        ``"wilson"``: the score interval, whose coverage stays close to the
        nominal level on average; ``"clopper-pearson"``: the exact interval,
        whose coverage is never below the nominal level (so it is wider).
    confidence : float, default 0.95
        Confidence level, in the open interval (0, 1).

    Returns
    -------
    ConfidenceInterval
        ``(estimate, low, high)`` with ``estimate = k / n`` and
        ``0 <= low <= estimate <= high <= 1``.

    Raises
    ------
    ValueError
        If ``k`` or ``n`` is not an integer (``bool`` and ``3.0`` included),
        ``n < 1``, ``k`` outside ``[0, n]``, ``method`` unknown or
        ``confidence`` outside (0, 1).

    See Also
    --------
    auc_ci : Interval for the ROC-AUC, which is not a proportion of
        independent trials.
    statsmodels.stats.proportion.proportion_confint : Same intervals with
        ``method="wilson"`` and ``method="beta"``; it takes ``alpha = 1 -
        confidence``, also offers the Wald interval (not offered here: its
        coverage collapses near 0 and 1) and accepts non-integer counts.
        scikit-learn has no interval for a metric.

    Notes
    -----
    With :math:`\hat p = k/n` and :math:`z = \Phi^{-1}\bigl(\tfrac{1+c}{2}\bigr)`
    for the confidence level :math:`c`, Wilson's interval is the set of
    :math:`p` whose score test does not reject:

    .. math::

        \frac{\hat p + \frac{z^2}{2n}}{1 + \frac{z^2}{n}}
        \;\pm\;
        \frac{z}{1 + \frac{z^2}{n}}
        \sqrt{\frac{\hat p (1 - \hat p)}{n} + \frac{z^2}{4n^2}}.

    Clopper-Pearson inverts two one-sided binomial tests; with
    :math:`\alpha = 1 - c` its bounds are beta quantiles,

    .. math::

        p_L = B\bigl(\tfrac{\alpha}{2};\, k,\, n - k + 1\bigr), \qquad
        p_U = B\bigl(1 - \tfrac{\alpha}{2};\, k + 1,\, n - k\bigr),

    with :math:`p_L = 0` when :math:`k = 0` and :math:`p_U = 1` when
    :math:`k = n`.  The beta quantile is found by bisection on the regularized
    incomplete beta function (continued fraction), to double precision.

    References
    ----------
    .. [1] Wilson, E. B. (1927). Probable inference, the law of succession,
           and statistical inference. *Journal of the American Statistical
           Association*, 22(158), 209-212.
    .. [2] Clopper, C. J., & Pearson, E. S. (1934). The use of confidence or
           fiducial limits illustrated in the case of the binomial.
           *Biometrika*, 26(4), 404-413.
    .. [3] Brown, L. D., Cai, T. T., & DasGupta, A. (2001). Interval
           estimation for a binomial proportion. *Statistical Science*, 16(2),
           101-133.

    Examples
    --------
    Accuracy 86 of 100:

    >>> from autograder.reference import proportion_ci
    >>> est, low, high = proportion_ci(86, 100)
    >>> est, round(low, 4), round(high, 4)
    (0.86, 0.7786, 0.9147)
    >>> [round(v, 4) for v in proportion_ci(86, 100, method="clopper-pearson")[1:]]
    [0.7763, 0.9213]

    With no success at all the interval still has width:

    >>> [round(v, 4) for v in proportion_ci(0, 20)]
    [0.0, 0.0, 0.1611]
    """
    n = check_scalar(n, "n", numbers.Integral, min_val=1, description="试验次数")
    k = check_scalar(k, "k", numbers.Integral, min_val=0, max_val=n, description=f"成功次数，不能超过 n={n}")
    method = check_option(method, "method", ("wilson", "clopper-pearson"))
    confidence = _check_confidence(confidence)
    estimate = k / n
    if method == "wilson":
        z = _z(confidence)
        z2 = z * z
        denominator = 1.0 + z2 / n
        center = (estimate + z2 / (2 * n)) / denominator
        half = z / denominator * math.sqrt(estimate * (1.0 - estimate) / n + z2 / (4.0 * n * n))
        low, high = max(0.0, center - half), min(1.0, center + half)
        # exact bounds at the edges (rounding may leave 1e-17 there)
        low = 0.0 if k == 0 else low
        high = 1.0 if k == n else high
    else:
        alpha = 1.0 - confidence
        low = 0.0 if k == 0 else _beta_ppf(alpha / 2.0, k, n - k + 1)
        high = 1.0 if k == n else _beta_ppf(1.0 - alpha / 2.0, k + 1, n - k)
    return ConfidenceInterval(estimate=estimate, low=min(low, estimate), high=max(high, estimate))


# ----------------------------------------------------------------------------------- DeLong
def _placements(positive: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""DeLong's structural components (placement values) of every positive and every negative.

    ``v10[i]`` is the share of negatives that positive ``i`` outranks (ties 1/2),
    ``v01[j]`` the share of positives that outrank negative ``j``; both means equal
    the AUC.  Two sorts and four binary searches: :math:`O(n \log n)`.
    """
    pos = np.compress(positive, scores)
    neg = np.compress(~positive, scores)
    neg_sorted = np.sort(neg)
    pos_sorted = np.sort(pos)
    v10 = (np.searchsorted(neg_sorted, pos, side="left") + np.searchsorted(neg_sorted, pos, side="right")) / (2.0 * neg.shape[0])
    above = 2 * pos.shape[0] - np.searchsorted(pos_sorted, neg, side="right") - np.searchsorted(pos_sorted, neg, side="left")
    v01 = above / (2.0 * pos.shape[0])
    return v10, v01


def _auc(positive: np.ndarray, scores: np.ndarray, n_pos: int, n_neg: int) -> float:
    """The AUC exactly as :func:`.ranking.roc_auc` computes it (integer trapezoid over the ranking kernel)."""
    _, tps, fps, _, _ = _binary_clf_curve(positive, scores, n_pos, n_neg, with_values=False)
    return _trapezoid_auc(tps, fps, n_pos, n_neg)


def _delong_var(positive: np.ndarray, scores: np.ndarray) -> float:
    """DeLong's variance of the AUC, :math:`S_{10}/n_+ + S_{01}/n_-`."""
    v10, v01 = _placements(positive, scores)
    return float(v10.var(ddof=1) / v10.shape[0] + v01.var(ddof=1) / v01.shape[0])


# -------------------------------------------------------------------------------- bootstrap
# Replicates are drawn in blocks so that a block's count matrices stay near 4 MB.
_BLOCK_CELLS = 500_000


def _auc_replicates(positive: np.ndarray, scores: np.ndarray, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    r"""AUC of ``n_boot`` stratified bootstrap samples, without re-sorting any of them.

    Sort the negatives once and find, for every positive, how many negatives lie
    strictly below it and at or below it.  A replicate is a multiset of positives
    and one of negatives; with :math:`D_b(t)` the number of drawn negatives among
    the ``t`` smallest, the replicate's AUC is
    :math:`\sum_{\text{drawn } i} \tfrac12\bigl(D_b(\mathrm{lo}_i) + D_b(\mathrm{hi}_i)\bigr)/(n_+ n_-)`,
    exactly the trapezoid AUC of the resampled data (ties count 1/2).
    """
    pos = np.compress(positive, scores)
    neg = np.sort(np.compress(~positive, scores))
    n_pos, n_neg = pos.shape[0], neg.shape[0]
    lo = np.searchsorted(neg, pos, side="left")
    hi = np.searchsorted(neg, pos, side="right")
    out = np.empty(n_boot)
    block = max(1, _BLOCK_CELLS // (n_pos + n_neg))
    for start in range(0, n_boot, block):
        b = min(block, n_boot - start)
        draws_neg = rng.integers(0, n_neg, (b, n_neg))
        draws_pos = rng.integers(0, n_pos, (b, n_pos))
        counts = np.bincount((draws_neg + (np.arange(b) * n_neg)[:, None]).ravel(), minlength=b * n_neg).reshape(b, n_neg)
        below = np.zeros((b, n_neg + 1), dtype=np.int64)
        np.cumsum(counts, axis=1, out=below[:, 1:])
        twice = np.take_along_axis(below, lo[draws_pos], axis=1).sum(axis=1) + np.take_along_axis(below, hi[draws_pos], axis=1).sum(axis=1)
        out[start : start + b] = twice / (2.0 * n_pos * n_neg)
    return out


def _ap_replicates(positive: np.ndarray, scores: np.ndarray, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """AP of ``n_boot`` stratified bootstrap samples (one ranking-kernel call each)."""
    pos = np.compress(positive, scores)
    neg = np.compress(~positive, scores)
    n_pos, n_neg = pos.shape[0], neg.shape[0]
    labels = np.r_[np.ones(n_pos, dtype=bool), np.zeros(n_neg, dtype=bool)]
    out = np.empty(n_boot)
    for b in range(n_boot):
        sample = np.concatenate((pos[rng.integers(0, n_pos, n_pos)], neg[rng.integers(0, n_neg, n_neg)]))
        out[b] = _average_precision(labels, sample, n_pos, n_neg)
    return out


def _auc_jackknife(positive: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """Leave-one-out AUCs from the placements: dropping positive i removes its ``v10``, negative j its ``v01``."""
    v10, v01 = _placements(positive, scores)
    out = np.empty(scores.shape[0])
    out[positive] = (v10.sum() - v10) / (v10.shape[0] - 1)
    out[~positive] = (v01.sum() - v01) / (v01.shape[0] - 1)
    return out


def _ap_jackknife(positive: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """Leave-one-out APs (one ranking-kernel call per sample)."""
    n = scores.shape[0]
    n_pos = int(np.count_nonzero(positive))
    keep = np.ones(n, dtype=bool)
    out = np.empty(n)
    for i in range(n):
        keep[i] = False
        dropped_positive = int(positive[i])
        out[i] = _average_precision(positive[keep], scores[keep], n_pos - dropped_positive, n - 1 - (n_pos - dropped_positive))
        keep[i] = True
    return out


def _bootstrap_interval(
    estimate: float,
    replicates: np.ndarray,
    jackknife: Callable[[], np.ndarray],
    *,
    interval: str,
    confidence: float,
) -> ConfidenceInterval:
    r"""Percentile or BCa interval from bootstrap replicates (the shared interval kernel).

    ``"percentile"`` takes the quantiles :math:`\alpha/2` and :math:`1-\alpha/2` of the
    replicates.  ``"bca"`` reads them at shifted levels, using the bias correction
    :math:`z_0` (share of replicates below the estimate, ties counted 1/2, since AUC
    and AP are discrete) and the acceleration :math:`a` from the leave-one-out values
    that ``jackknife()`` returns (called only for BCa).
    """
    alpha = 1.0 - confidence
    levels = [alpha / 2.0, 1.0 - alpha / 2.0]
    if interval == "bca" and not np.all(replicates == replicates[0]):  # a degenerate distribution has one quantile
        n_boot = replicates.shape[0]
        share = (np.count_nonzero(replicates < estimate) + 0.5 * np.count_nonzero(replicates == estimate)) / n_boot
        if share <= 0.0 or share >= 1.0:
            raise UndefinedMetricError(
                f"BCa 区间无定义：{n_boot} 个自助样本的指标全部位于估计值同一侧，偏差校正 z0 为无穷；"
                '可改用 interval="percentile" 或增加 n_boot'
            )
        z0 = _NORMAL.inv_cdf(share)
        jack = jackknife()
        deviation = jack.mean() - jack
        spread = float(np.sum(deviation**2))
        acceleration = 0.0 if spread == 0.0 else float(np.sum(deviation**3)) / (6.0 * spread**1.5)
        shifted = []
        for level in levels:
            w = z0 + _NORMAL.inv_cdf(level)
            shifted.append(_NORMAL.cdf(z0 + w / (1.0 - acceleration * w)))
        levels = shifted
    low, high = np.quantile(replicates, levels)
    return ConfidenceInterval(estimate=float(estimate), low=float(low), high=float(high))


def _check_bootstrap(n_boot: Any, interval: Any) -> tuple[int, str]:
    n_boot = check_scalar(n_boot, "n_boot", numbers.Integral, min_val=100, max_val=1_000_000, description="自助重抽样次数")
    interval = check_option(interval, "interval", ("percentile", "bca"))
    return n_boot, interval


# ----------------------------------------------------------------------------------- public
def auc_ci(
    y_true: ArrayLike,
    y_score: ArrayLike,
    *,
    method: str = "delong",
    confidence: float = 0.95,
    interval: str | None = None,
    n_boot: int = 2000,
    random_state: int | np.random.Generator | None = None,
) -> ConfidenceInterval:
    r"""Confidence interval for the ROC-AUC: DeLong's variance or a stratified bootstrap.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Labels 0/1 (booleans read as ``True`` = 1); each class needs at least
        2 samples.
    y_score : array-like of shape (n,)
        Real, finite scores.
    method : {"delong", "bootstrap"}, default "delong"
        ``"delong"``: normal approximation with DeLong's nonparametric
        variance (fast, no randomness); ``"bootstrap"``: stratified bootstrap.
    confidence : float, default 0.95
        Confidence level, in the open interval (0, 1).
    interval : {"bca", "percentile"}, optional
        Only with ``method="bootstrap"`` (default ``"bca"``): how the
        replicates become an interval.  ``"percentile"`` reads off their
        quantiles; ``"bca"`` (bias-corrected and accelerated) first shifts
        those quantiles to correct for the bias and the skewness of the AUC's
        sampling distribution, which matters near AUC = 1.  Giving it with
        ``method="delong"`` is an error, not silently ignored.
    n_boot : int, default 2000
        Number of bootstrap replicates (100 to 1 000 000); only with
        ``method="bootstrap"``.
    random_state : int, numpy.random.Generator or None, default None
        Seed of the resampling; the same integer gives the same interval.

    Returns
    -------
    ConfidenceInterval
        ``(estimate, low, high)``; ``estimate`` equals :func:`roc_auc`.

    Raises
    ------
    ValueError
        On bad labels or scores, unequal lengths, fewer than 2 samples of a
        class, an unknown ``method`` or ``interval``, ``interval`` or a
        non-default ``n_boot``/``random_state`` with ``method="delong"``,
        ``confidence`` outside (0, 1) or ``n_boot`` outside [100, 1e6].
    UndefinedMetricError
        With ``interval="bca"`` when every replicate lies on one side of the
        estimate (the bias correction is infinite).

    See Also
    --------
    delong_test : Paired comparison of two AUCs with the same variance.
    ap_ci : The stratified bootstrap for average precision.
    roc_auc : The point estimate.
    sklearn.metrics.roc_auc_score : Point estimate only; scikit-learn has no
        interval for it.

    Notes
    -----
    With the placement values :math:`V_{10}(x_i)` (share of negatives below
    positive :math:`i`, ties 1/2) and :math:`V_{01}(y_j)` (share of positives
    above negative :math:`j`), whose means both equal the AUC :math:`\hat A`,
    DeLong's variance is

    .. math::

        \widehat{\operatorname{Var}}(\hat A) = \frac{S_{10}}{n_+} + \frac{S_{01}}{n_-},
        \qquad
        S_{10} = \frac{1}{n_+ - 1}\sum_i \bigl(V_{10}(x_i) - \hat A\bigr)^2,

    (:math:`S_{01}` likewise), and the interval is
    :math:`\hat A \pm z\,\sqrt{\widehat{\operatorname{Var}}}`, clipped to
    [0, 1].  The bootstrap resamples the positives and the negatives
    separately (stratified), so every replicate keeps the class sizes of the
    test set.  BCa uses

    .. math::

        \alpha_{1,2} = \Phi\Bigl(z_0 + \frac{z_0 + z_{\alpha/2,\,1-\alpha/2}}
                                    {1 - a\,(z_0 + z_{\alpha/2,\,1-\alpha/2})}\Bigr),

    with :math:`z_0 = \Phi^{-1}` (share of replicates below :math:`\hat A`,
    ties counted 1/2) and the acceleration :math:`a` from the jackknife
    (:math:`n` extra AUCs, so BCa costs :math:`n` more kernel calls).

    References
    ----------
    .. [1] DeLong, E. R., DeLong, D. M., & Clarke-Pearson, D. L. (1988).
           Comparing the areas under two or more correlated receiver operating
           characteristic curves: a nonparametric approach. *Biometrics*,
           44(3), 837-845.
    .. [2] Efron, B., & Tibshirani, R. J. (1993). *An Introduction to the
           Bootstrap*, chapters 13-14. Chapman & Hall.
    .. [3] Hanley, J. A., & McNeil, B. J. (1982). The meaning and use of the
           area under a receiver operating characteristic (ROC) curve.
           *Radiology*, 143(1), 29-36.

    Examples
    --------
    The Fawcett (2006) table used in the course:

    >>> from autograder.reference import auc_ci
    >>> y = [1, 1, 0, 1, 1, 1, 0, 0, 1, 0]
    >>> s = [.9, .8, .7, .6, .55, .54, .53, .52, .51, .505]
    >>> est, low, high = auc_ci(y, s)
    >>> est, round(low, 3), round(high, 3)
    (0.75, 0.392, 1.0)
    >>> est, low, high = auc_ci(y, s, method="bootstrap", interval="percentile", random_state=0)
    >>> low <= est <= high
    True
    """
    positive, scores, n_pos, n_neg = _validated(y_true, y_score)
    method = check_option(method, "method", ("delong", "bootstrap"))
    confidence = _check_confidence(confidence)
    _check_two_per_class(n_pos, n_neg, "AUC 的置信区间")
    if method == "delong":
        if interval is not None:
            raise ValueError(f'interval 只用于 method="bootstrap"；method="delong" 时不能给出 interval={interval!r}')
        if n_boot != 2000 or random_state is not None:
            raise ValueError('n_boot 与 random_state 只用于 method="bootstrap"；DeLong 区间不抽样')
        auc = _auc(positive, scores, n_pos, n_neg)
        half = _z(confidence) * math.sqrt(_delong_var(positive, scores))
        return ConfidenceInterval(estimate=auc, low=max(0.0, auc - half), high=min(1.0, auc + half))
    n_boot, interval = _check_bootstrap(n_boot, "bca" if interval is None else interval)
    rng = _check_random_state(random_state)
    return _bootstrap_interval(
        _auc(positive, scores, n_pos, n_neg),
        _auc_replicates(positive, scores, n_boot, rng),
        lambda: _auc_jackknife(positive, scores),
        interval=interval,
        confidence=confidence,
    )


def ap_ci(
    y_true: ArrayLike,
    y_score: ArrayLike,
    *,
    interval: str = "bca",
    confidence: float = 0.95,
    n_boot: int = 2000,
    random_state: int | np.random.Generator | None = None,
) -> ConfidenceInterval:
    r"""Stratified bootstrap confidence interval for average precision.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Labels 0/1 (booleans read as ``True`` = 1); each class needs at least
        2 samples.
    y_score : array-like of shape (n,)
        Real, finite scores.
    interval : {"bca", "percentile"}, default "bca"
        How the replicates become an interval (see :func:`auc_ci`).
    confidence : float, default 0.95
        Confidence level, in the open interval (0, 1).
    n_boot : int, default 2000
        Number of bootstrap replicates (100 to 1 000 000).
    random_state : int, numpy.random.Generator or None, default None
        Seed of the resampling; the same integer gives the same interval.

    Returns
    -------
    ConfidenceInterval
        ``(estimate, low, high)``; ``estimate`` equals :func:`average_precision`.

    Raises
    ------
    ValueError
        On bad labels or scores, unequal lengths, fewer than 2 samples of a
        class, an unknown ``interval``, ``confidence`` outside (0, 1) or
        ``n_boot`` outside [100, 1e6].
    UndefinedMetricError
        With ``interval="bca"`` when every replicate lies on one side of the
        estimate.

    See Also
    --------
    auc_ci : The same bootstrap for the ROC-AUC, plus DeLong's interval.
    average_precision : The point estimate.
    sklearn.metrics.average_precision_score : Point estimate only.

    Notes
    -----
    AP has no simple variance formula like DeLong's, so only the bootstrap is
    offered.  Replicate :math:`b` draws :math:`n_+` of the positives and
    :math:`n_-` of the negatives with replacement and computes

    .. math::

        \mathrm{AP}^{*}_b = \sum_{k} (R^{*}_k - R^{*}_{k-1})\, P^{*}_k ;

    the percentile interval is
    :math:`[\mathrm{AP}^{*}_{(\alpha/2)}, \mathrm{AP}^{*}_{(1-\alpha/2)}]` and BCa
    shifts the two levels as in :func:`auc_ci`.  Because the resampling is
    stratified, each replicate keeps the test set's numbers of positives and
    negatives, so its base rate -- the AP of an uninformative ranking -- does
    not move from replicate to replicate.  With
    few positives AP depends on the ranks of a handful of samples and its
    interval is wide; the BCa jackknife costs :math:`n` extra AP computations.

    References
    ----------
    .. [1] Efron, B., & Tibshirani, R. J. (1993). *An Introduction to the
           Bootstrap*, chapters 13-14 (percentile and BCa intervals).
           Chapman & Hall.
    .. [2] Efron, B. (1987). Better bootstrap confidence intervals.
           *Journal of the American Statistical Association*, 82(397),
           171-185.

    Examples
    --------
    >>> from autograder.reference import ap_ci
    >>> y = [1, 1, 0, 1, 1, 1, 0, 0, 1, 0]
    >>> s = [.9, .8, .7, .6, .55, .54, .53, .52, .51, .505]
    >>> est, low, high = ap_ci(y, s, interval="percentile", random_state=0)
    >>> round(est, 4), low <= est <= high
    (0.8417, True)
    """
    positive, scores, n_pos, n_neg = _validated(y_true, y_score)
    n_boot, interval = _check_bootstrap(n_boot, interval)
    confidence = _check_confidence(confidence)
    _check_two_per_class(n_pos, n_neg, "AP 的置信区间")
    rng = _check_random_state(random_state)
    return _bootstrap_interval(
        _average_precision(positive, scores, n_pos, n_neg),
        _ap_replicates(positive, scores, n_boot, rng),
        lambda: _ap_jackknife(positive, scores),
        interval=interval,
        confidence=confidence,
    )


def delong_test(y_true: ArrayLike, score_a: ArrayLike, score_b: ArrayLike) -> DelongTest:
    r"""DeLong's paired test of two ROC-AUCs measured on the same test set.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Labels 0/1 (booleans read as ``True`` = 1); each class needs at least
        2 samples.
    score_a, score_b : array-like of shape (n,)
        Two models' real, finite scores for the *same* samples, in the same
        order.

    Returns
    -------
    DelongTest
        ``(auc_a, auc_b, z, p_value)``: the two AUCs, the statistic
        :math:`z = (\hat A_a - \hat A_b)/\mathrm{SE}` and its two-sided p-value
        :math:`2\,\Phi(-|z|)`.

    Raises
    ------
    ValueError
        On bad labels or scores, unequal lengths or fewer than 2 samples of a
        class.
    UndefinedMetricError
        When the variance of the difference is 0 (for example two scores
        that rank every pair alike), so that :math:`z` is 0/0 or infinite.

    See Also
    --------
    auc_ci : DeLong's interval for one AUC.
    roc_auc : The AUCs compared.
    sklearn.metrics.roc_auc_score : Point estimates only; scikit-learn has
        no test comparing two AUCs.

    Notes
    -----
    Both AUCs are measured on the same samples, so they are correlated; the
    test uses the covariance of the placement values of the two models:

    .. math::

        \widehat{\operatorname{Var}}(\hat A_a - \hat A_b)
        = \frac{S_{10}^{aa} + S_{10}^{bb} - 2 S_{10}^{ab}}{n_+}
        + \frac{S_{01}^{aa} + S_{01}^{bb} - 2 S_{01}^{ab}}{n_-},

    where :math:`S_{10}^{ab}` is the sample covariance (divisor
    :math:`n_+ - 1`) of the placements :math:`V_{10}` of the positives under
    the two scores, and :math:`S_{01}^{ab}` likewise for the negatives.
    Treating the AUCs as independent would ignore a usually positive
    covariance and make the test too cautious.

    References
    ----------
    .. [1] DeLong, E. R., DeLong, D. M., & Clarke-Pearson, D. L. (1988).
           Comparing the areas under two or more correlated receiver operating
           characteristic curves: a nonparametric approach. *Biometrics*,
           44(3), 837-845.
    .. [2] Sun, X., & Xu, W. (2014). Fast implementation of DeLong's
           algorithm for comparing the areas under correlated receiver
           operating characteristic curves. *IEEE Signal Processing Letters*,
           21(11), 1389-1393.

    Examples
    --------
    >>> from autograder.reference import delong_test
    >>> y = [1, 1, 0, 1, 1, 1, 0, 0, 1, 0]
    >>> a = [.9, .8, .7, .6, .55, .54, .53, .52, .51, .505]
    >>> b = [.9, .8, .3, .6, .55, .54, .53, .52, .51, .505]
    >>> auc_a, auc_b, z, p = delong_test(y, a, b)
    >>> auc_a, round(auc_b, 4), round(z, 3), round(p, 3)
    (0.75, 0.9167, -0.953, 0.34)
    """
    positive = check_binary_labels(y_true, "y_true")
    scores_a = check_scores(score_a, "score_a")
    scores_b = check_scores(score_b, "score_b")
    check_same_length(positive, scores_a, "y_true", "score_a")
    check_same_length(positive, scores_b, "y_true", "score_b")
    n_pos, n_neg = check_both_classes(positive, "y_true")
    _check_two_per_class(n_pos, n_neg, "DeLong 检验")
    v10_a, v01_a = _placements(positive, scores_a)
    v10_b, v01_b = _placements(positive, scores_b)
    auc_a, auc_b = _auc(positive, scores_a, n_pos, n_neg), _auc(positive, scores_b, n_pos, n_neg)
    d10 = v10_a - v10_b  # Var(a - b) = Var a + Var b - 2 Cov(a, b), computed on the differences
    d01 = v01_a - v01_b
    var = float(d10.var(ddof=1) / n_pos + d01.var(ddof=1) / n_neg)
    if not var > 0.0:
        raise UndefinedMetricError(
            f"DeLong 检验无定义：两组得分的 AUC 差（{auc_a - auc_b:+.4g}）的方差为 0，"
            "例如两组得分对每一对正负样本的排序都相同"
        )
    z = (auc_a - auc_b) / math.sqrt(var)
    p_value = 2.0 * _NORMAL.cdf(-abs(z))
    return DelongTest(auc_a=auc_a, auc_b=auc_b, z=z, p_value=min(1.0, p_value))
