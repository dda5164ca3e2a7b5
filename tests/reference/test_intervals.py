"""Confidence intervals and the paired DeLong test, checked against independent computations.

* proportions: statsmodels' ``proportion_confint`` (``wilson`` and ``beta``), and the exact coverage of
  Clopper-Pearson, summed over the binomial distribution;
* DeLong: a brute-force O(n^2) implementation written from the placement-value definition of DeLong et al.
  (1988), with the full 2x2 covariance matrix for the paired test;
* a published example: the rating data of Hanley & McNeil (1982, Table 1);
* the bootstrap: the AUC replicates equal the ranking kernel's AUC of the same resampled data, the
  percentile interval equals the quantiles of those replicates, BCa is computed from its textbook formula
  with a brute-force jackknife, and the same random_state gives the same interval.
"""

from __future__ import annotations

import itertools
import math
from statistics import NormalDist

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

import autograder.reference as ref
from autograder.reference import intervals

Z = NormalDist()


# ------------------------------------------------------------------------------- proportions
PROPORTION_CASES = [(0, 1), (1, 1), (0, 20), (20, 20), (1, 20), (7, 20), (86, 100), (1, 1000), (999, 1000), (500, 1000), (3, 100_000)]


@pytest.mark.parametrize(("k", "n"), PROPORTION_CASES)
@pytest.mark.parametrize("confidence", [0.8, 0.95, 0.99])
@pytest.mark.parametrize(("method", "sm_method"), [("wilson", "wilson"), ("clopper-pearson", "beta")])
def test_proportion_ci_equals_statsmodels(k, n, confidence, method, sm_method):
    est, low, high = ref.proportion_ci(k, n, method=method, confidence=confidence)
    sm_low, sm_high = proportion_confint(k, n, alpha=1 - confidence, method=sm_method)
    assert est == k / n
    assert low == pytest.approx(sm_low, abs=1e-12, rel=1e-9)
    assert high == pytest.approx(sm_high, abs=1e-12, rel=1e-9)
    assert 0.0 <= low <= est <= high <= 1.0


def test_clopper_pearson_bounds_are_beta_quantiles_at_the_edges():
    # k = 0 and k = n have closed forms: (alpha/2)^(1/n)
    n, alpha = 30, 0.05
    assert ref.proportion_ci(0, n, method="clopper-pearson").high == pytest.approx(1 - (alpha / 2) ** (1 / n), rel=1e-12)
    assert ref.proportion_ci(n, n, method="clopper-pearson").low == pytest.approx((alpha / 2) ** (1 / n), rel=1e-12)


@pytest.mark.parametrize("n", [10, 37])
def test_clopper_pearson_never_undercovers_and_wilson_sometimes_does(n):
    """Exact coverage, summed over the binomial distribution, at 199 values of p."""
    cp = [ref.proportion_ci(k, n, method="clopper-pearson") for k in range(n + 1)]
    wilson = [ref.proportion_ci(k, n) for k in range(n + 1)]
    ks = np.arange(n + 1)
    cp_cov, w_cov = [], []
    for p in np.linspace(0.005, 0.995, 199):
        pmf = stats.binom.pmf(ks, n, p)
        cp_cov.append(sum(pmf[k] for k in ks if cp[k].low <= p <= cp[k].high))
        w_cov.append(sum(pmf[k] for k in ks if wilson[k].low <= p <= wilson[k].high))
    assert min(cp_cov) >= 0.95 - 1e-12
    assert min(w_cov) < 0.95 < np.mean(w_cov) + 0.01  # Wilson: near nominal on average, below it at some p
    assert np.mean(w_cov) < np.mean(cp_cov)


def test_incomplete_beta_against_scipy():
    for a, b, x in itertools.product([0.5, 1, 3, 40, 900], [1, 2.5, 60, 1000], [1e-6, 0.01, 0.3, 0.5, 0.97, 1 - 1e-9]):
        assert intervals._betainc(a, b, x) == pytest.approx(stats.beta.cdf(x, a, b), rel=1e-10, abs=1e-300)


# ------------------------------------------------------------------------------------ DeLong
def brute_force_components(y, s):
    """Placement values from the definition: psi(x, y) = 1 if x > y, 1/2 if x = y, 0 otherwise."""
    y = np.asarray(y).astype(bool)
    s = np.asarray(s, dtype=float)
    pos, neg = s[y], s[~y]
    psi = np.array([[1.0 if xi > yj else 0.5 if xi == yj else 0.0 for yj in neg] for xi in pos])
    return psi.mean(axis=1), psi.mean(axis=0), psi.mean()


def brute_force_delong(y, scores):
    """AUCs and the covariance matrix S = S10/m + S01/n of DeLong et al. (1988), for k score vectors."""
    comps = [brute_force_components(y, s) for s in scores]
    v10 = np.array([c[0] for c in comps])
    v01 = np.array([c[1] for c in comps])
    aucs = np.array([c[2] for c in comps])
    m, n = v10.shape[1], v01.shape[1]
    s10 = (v10 - aucs[:, None]) @ (v10 - aucs[:, None]).T / (m - 1)
    s01 = (v01 - aucs[:, None]) @ (v01 - aucs[:, None]).T / (n - 1)
    return aucs, s10 / m + s01 / n


def random_case(seed, n=60, ties=False):
    rng = np.random.default_rng(seed)
    y = rng.random(n) < 0.4
    y[:2], y[2:4] = True, False
    a = rng.normal(size=n) + 1.2 * y
    b = 0.6 * a + rng.normal(size=n) + 0.3 * y
    if ties:
        a, b = np.round(a), np.round(b * 2) / 2
    return y.astype(int), a, b


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("ties", [False, True])
def test_delong_interval_equals_brute_force(seed, ties):
    y, a, _ = random_case(seed, ties=ties)
    (auc,), cov = brute_force_delong(y, [a])
    half = Z.inv_cdf(0.975) * math.sqrt(cov[0, 0])
    est, low, high = ref.auc_ci(y, a)
    assert est == pytest.approx(auc, abs=1e-12) and est == ref.roc_auc(y, a)
    assert low == pytest.approx(max(0.0, auc - half), abs=1e-12)
    assert high == pytest.approx(min(1.0, auc + half), abs=1e-12)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("ties", [False, True])
def test_delong_test_equals_brute_force(seed, ties):
    y, a, b = random_case(seed, ties=ties)
    aucs, cov = brute_force_delong(y, [a, b])
    contrast = np.array([1.0, -1.0])
    z = (aucs[0] - aucs[1]) / math.sqrt(contrast @ cov @ contrast)
    result = ref.delong_test(y, a, b)
    assert result.auc_a == pytest.approx(aucs[0], abs=1e-12) and result.auc_b == pytest.approx(aucs[1], abs=1e-12)
    assert result.z == pytest.approx(z, rel=1e-9)
    assert result.p_value == pytest.approx(2 * stats.norm.sf(abs(z)), rel=1e-9)
    swapped = ref.delong_test(y, b, a)
    assert swapped.z == pytest.approx(-result.z) and swapped.p_value == pytest.approx(result.p_value)


def test_paired_test_uses_the_covariance():
    """Two strongly correlated scores: the paired variance is far smaller than the sum of the two variances."""
    y, a, _ = random_case(11, n=200)
    b = a + np.random.default_rng(1).normal(scale=0.2, size=a.shape[0])
    (auc_a, auc_b), cov = brute_force_delong(y, [a, b])
    independent_z = (auc_a - auc_b) / math.sqrt(cov[0, 0] + cov[1, 1])
    assert abs(ref.delong_test(y, a, b).z) > 2 * abs(independent_z)


HANLEY_MCNEIL_NORMAL = [33, 6, 6, 11, 2]  # ratings 1 (definitely normal) ... 5 (definitely abnormal)
HANLEY_MCNEIL_ABNORMAL = [3, 2, 2, 11, 33]


def hanley_mcneil_data():
    ratings = np.arange(1, 6)
    y = np.r_[np.zeros(sum(HANLEY_MCNEIL_NORMAL), dtype=int), np.ones(sum(HANLEY_MCNEIL_ABNORMAL), dtype=int)]
    s = np.r_[np.repeat(ratings, HANLEY_MCNEIL_NORMAL), np.repeat(ratings, HANLEY_MCNEIL_ABNORMAL)]
    return y, s


def test_hanley_mcneil_published_example():
    """Hanley & McNeil (1982), Table 1: 109 CT images rated on a five-point scale.

    The paper reports the area 0.893 and, from its own exponential approximation, the standard error
    0.032.  DeLong's variance is a different (nonparametric) estimator, so only closeness is expected;
    the exact DeLong value is pinned by the brute-force computation.
    """
    y, s = hanley_mcneil_data()
    est, low, high = ref.auc_ci(y, s)
    assert round(est, 3) == 0.893
    (auc,), cov = brute_force_delong(y, [s])
    se = (high - low) / (2 * Z.inv_cdf(0.975))
    assert se == pytest.approx(math.sqrt(cov[0, 0]), rel=1e-9)
    assert abs(se - 0.032) < 0.003
    # the paper's approximation, from its formula (Q1 = A/(2-A), Q2 = 2A^2/(1+A)), gives the published 0.032
    n_a, n_n = sum(HANLEY_MCNEIL_ABNORMAL), sum(HANLEY_MCNEIL_NORMAL)
    q1, q2 = est / (2 - est), 2 * est**2 / (1 + est)
    se_hm = math.sqrt((est * (1 - est) + (n_a - 1) * (q1 - est**2) + (n_n - 1) * (q2 - est**2)) / (n_a * n_n))
    assert round(se_hm, 3) == 0.032


def test_perfect_separation_gives_a_zero_width_delong_interval():
    y = [0, 0, 0, 1, 1, 1]
    s = [0.1, 0.2, 0.3, 0.7, 0.8, 0.9]
    assert ref.auc_ci(y, s) == (1.0, 1.0, 1.0)
    with pytest.raises(ref.UndefinedMetricError, match="方差为 0"):
        ref.delong_test(y, s, s)


# --------------------------------------------------------------------------------- bootstrap
def test_auc_replicates_equal_the_kernel_on_the_same_resample():
    y, a, _ = random_case(3, n=80, ties=True)
    positive = y.astype(bool)
    reps = intervals._auc_replicates(positive, a, 50, np.random.default_rng(5))
    # replay the same draws (block order: negatives, then positives) and compute each AUC from scratch
    rng = np.random.default_rng(5)
    pos, neg = a[positive], np.sort(a[~positive])
    draws_neg = rng.integers(0, neg.shape[0], (50, neg.shape[0]))
    draws_pos = rng.integers(0, pos.shape[0], (50, pos.shape[0]))
    for b in range(50):
        sample_y = np.r_[np.ones(pos.shape[0]), np.zeros(neg.shape[0])]
        sample_s = np.r_[pos[draws_pos[b]], neg[draws_neg[b]]]
        assert reps[b] == pytest.approx(ref.roc_auc(sample_y, sample_s), abs=1e-12)


def test_percentile_interval_is_the_quantiles_of_the_replicates():
    y, a, _ = random_case(4, n=90)
    reps = intervals._auc_replicates(y.astype(bool), a, 400, np.random.default_rng(9))
    est, low, high = ref.auc_ci(y, a, method="bootstrap", interval="percentile", n_boot=400, random_state=9)
    assert (low, high) == tuple(np.quantile(reps, [0.025, 0.975]))
    assert est == ref.roc_auc(y, a)


@pytest.mark.parametrize("metric", ["auc", "ap"])
def test_bca_from_its_formula_with_a_brute_force_jackknife(metric):
    y, a, _ = random_case(8, n=50, ties=True)
    positive = y.astype(bool)
    n_boot, seed = 300, 21
    metric_fn = ref.roc_auc if metric == "auc" else ref.average_precision
    if metric == "auc":
        reps = intervals._auc_replicates(positive, a, n_boot, np.random.default_rng(seed))
        got = ref.auc_ci(y, a, method="bootstrap", interval="bca", n_boot=n_boot, random_state=seed)
    else:
        reps = intervals._ap_replicates(positive, a, n_boot, np.random.default_rng(seed))
        got = ref.ap_ci(y, a, interval="bca", n_boot=n_boot, random_state=seed)
    est = metric_fn(y, a)
    jack = np.array([metric_fn(np.delete(y, i), np.delete(a, i)) for i in range(y.shape[0])])
    d = jack.mean() - jack
    acc = np.sum(d**3) / (6 * np.sum(d**2) ** 1.5)
    z0 = stats.norm.ppf((np.sum(reps < est) + 0.5 * np.sum(reps == est)) / n_boot)
    levels = [stats.norm.cdf(z0 + (z0 + zq) / (1 - acc * (z0 + zq))) for zq in stats.norm.ppf([0.025, 0.975])]
    assert got.estimate == pytest.approx(est, abs=1e-12)
    assert (got.low, got.high) == pytest.approx(tuple(np.quantile(reps, levels)), abs=1e-12)


def test_ap_replicates_are_average_precision_of_the_resample():
    y, a, _ = random_case(2, n=40)
    positive = y.astype(bool)
    reps = intervals._ap_replicates(positive, a, 20, np.random.default_rng(3))
    rng = np.random.default_rng(3)
    pos, neg = a[positive], a[~positive]
    for b in range(20):
        sample = np.r_[pos[rng.integers(0, pos.shape[0], pos.shape[0])], neg[rng.integers(0, neg.shape[0], neg.shape[0])]]
        labels = np.r_[np.ones(pos.shape[0]), np.zeros(neg.shape[0])]
        assert reps[b] == pytest.approx(ref.average_precision(labels, sample), abs=1e-12)


@pytest.mark.parametrize(
    "call",
    [
        lambda y, s, r: ref.auc_ci(y, s, method="bootstrap", random_state=r),
        lambda y, s, r: ref.auc_ci(y, s, method="bootstrap", interval="percentile", random_state=r),
        lambda y, s, r: ref.ap_ci(y, s, n_boot=300, random_state=r),
    ],
    ids=["auc-bca", "auc-percentile", "ap-bca"],
)
def test_same_random_state_same_interval(call):
    y, a, _ = random_case(5, n=70)
    first = call(y, a, 42)
    assert call(y, a, 42) == first
    assert call(y, a, np.random.default_rng(42)) == first  # a Generator seeded alike draws alike
    assert call(y, a, 43) != first


def test_bootstrap_interval_shrinks_with_more_data():
    rng = np.random.default_rng(0)
    widths = []
    for n in (60, 600):
        y = np.r_[np.ones(n // 2, dtype=int), np.zeros(n // 2, dtype=int)]
        s = rng.normal(size=n) + y
        _, low, high = ref.auc_ci(y, s, method="bootstrap", random_state=1)
        widths.append(high - low)
    assert widths[1] < 0.5 * widths[0]


def test_bca_undefined_when_every_replicate_is_on_one_side():
    # all replicates above the estimate: z0 = Phi^-1(0) is infinite
    with pytest.raises(ref.UndefinedMetricError, match="BCa 区间无定义"):
        intervals._bootstrap_interval(0.5, np.array([0.6, 0.7, 0.8]), lambda: np.zeros(3), interval="bca", confidence=0.95)
    # a degenerate (constant) replicate distribution is one point, not an error
    assert intervals._bootstrap_interval(1.0, np.ones(5), lambda: np.ones(3), interval="bca", confidence=0.95) == (1.0, 1.0, 1.0)


# -------------------------------------------------------------------------------- validation
def test_interval_options_validated():
    y, s = [0, 1, 0, 1, 1], [0.1, 0.9, 0.3, 0.4, 0.8]
    with pytest.raises(ValueError, match='method 只能是 "wilson" 或 "clopper-pearson"'):
        ref.proportion_ci(3, 10, method="wald")
    with pytest.raises(ValueError, match='method 只能是 "delong" 或 "bootstrap"'):
        ref.auc_ci(y, s, method="hanley")
    with pytest.raises(ValueError, match='interval 只能是 "percentile" 或 "bca"'):
        ref.auc_ci(y, s, method="bootstrap", interval="basic")
    with pytest.raises(ValueError, match='interval 只能是 "percentile" 或 "bca"'):
        ref.ap_ci(y, s, interval="BCa")
    with pytest.raises(ValueError, match='interval 只用于 method="bootstrap"'):
        ref.auc_ci(y, s, interval="bca")
    with pytest.raises(ValueError, match="random_state 只用于"):
        ref.auc_ci(y, s, random_state=0)
    with pytest.raises(ValueError, match="random_state（随机种子"):
        ref.ap_ci(y, s, random_state=-1)
    with pytest.raises(ValueError, match="random_state（随机种子.*不能是布尔值"):
        ref.ap_ci(y, s, random_state=True)


@pytest.mark.parametrize(
    "call",
    [
        lambda y, s: ref.auc_ci(y, s),
        lambda y, s: ref.auc_ci(y, s, method="bootstrap"),
        lambda y, s: ref.ap_ci(y, s),
        lambda y, s: ref.delong_test(y, s, s),
    ],
    ids=["delong", "bootstrap", "ap", "test"],
)
def test_two_samples_per_class_needed(call):
    with pytest.raises(ValueError, match="每一类至少 2 个样本，实际正类 1 个、负类 3 个"):
        call([1, 0, 0, 0], [0.9, 0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match="没有正类"):
        call([0, 0, 0, 0], [0.9, 0.1, 0.2, 0.3])


def test_delong_test_names_the_bad_argument():
    y = [0, 1, 0, 1]
    with pytest.raises(ValueError, match="score_b 含有非有限值"):
        ref.delong_test(y, [0.1, 0.2, 0.3, 0.4], [0.1, np.nan, 0.3, 0.4])
    with pytest.raises(ValueError, match="y_true 与 score_a 长度不一致"):
        ref.delong_test(y, [0.1, 0.2, 0.3], [0.1, 0.2, 0.3, 0.4])
    with pytest.raises(ValueError, match="score_a 是布尔数组"):
        ref.delong_test(y, [True, False, True, False], [0.1, 0.2, 0.3, 0.4])
