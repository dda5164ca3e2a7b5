"""Properties the course teaches, and the edge cases of 综合练习 7."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import autograder.reference as ref

from .strategies import labels_and_scores


@given(labels_and_scores(), st.sampled_from(["exp", "cube", "affine", "logit"]))
def test_auc_invariant_under_strictly_increasing_transform(data, kind):
    y, s = data
    u = (s - s.min()) / (np.ptp(s) or 1.0)  # in [0, 1], same order as s
    transform = {
        "exp": lambda v: np.exp(3 * v),
        "cube": lambda v: v**3 + v,
        "affine": lambda v: 7 * v - 2,
        "logit": lambda v: np.log((v + 0.5) / (1.5 - v)),
    }[kind]
    t = transform(u)
    assert ref.roc_auc(y, t) == ref.roc_auc(y, s)
    assert ref.average_precision(y, t) == ref.average_precision(y, s)


@given(labels_and_scores())
def test_auc_of_negated_scores(data):
    y, s = data
    assert abs(ref.roc_auc(y, -s) - (1 - ref.roc_auc(y, s))) <= 1e-12
    assert abs(ref.pairwise_auc(y, -s) - (1 - ref.pairwise_auc(y, s))) <= 1e-12


def test_non_strict_transform_creating_ties_can_change_auc():
    y = [1, 0, 1, 0]
    s = np.array([0.9, 0.8, 0.7, 0.1])
    assert ref.roc_auc(y, s) == 0.75
    flattened = np.minimum(s, 0.75)  # non-decreasing, merges 0.9 and 0.8 into one tie group
    assert ref.roc_auc(y, flattened) == 0.625


@given(labels_and_scores())
def test_roc_endpoints_and_monotonicity(data):
    y, s = data
    fpr, tpr, thresholds = ref.roc_curve(y, s)
    assert thresholds[0] == np.inf
    assert (fpr[0], tpr[0]) == (0.0, 0.0)
    assert (fpr[-1], tpr[-1]) == (1.0, 1.0)
    assert np.all(np.diff(fpr) >= 0) and np.all(np.diff(tpr) >= 0)
    assert np.all(np.diff(thresholds) < 0)
    assert len(thresholds) == len(np.unique(s)) + 1


@given(labels_and_scores())
def test_each_point_matches_binary_metrics_at_its_threshold(data):
    y, s = data
    fpr, tpr, thresholds = ref.roc_curve(y, s)
    for k in range(1, len(thresholds)):
        m = ref.binary_metrics(y, s, thresholds[k])
        assert (m.fpr, m.recall) == (fpr[k], tpr[k])


@given(labels_and_scores())
def test_tie_group_order_never_matters(data):
    y, s = data
    rng = np.random.default_rng(0)
    perm = rng.permutation(len(y))
    for a, b in zip(ref.roc_curve(y, s), ref.roc_curve(y[perm], s[perm])):
        np.testing.assert_array_equal(a, b)
    assert ref.average_precision(y, s) == ref.average_precision(y[perm], s[perm])


def test_tie_group_is_one_diagonal_step():
    # Two positives and one negative tied: one point, not an L-shaped pair.
    fpr, tpr, thresholds = ref.roc_curve([1, 1, 0, 0], [0.5, 0.5, 0.5, 0.1])
    assert thresholds.tolist() == [np.inf, 0.5, 0.1]
    assert fpr.tolist() == [0.0, 0.5, 1.0]
    assert tpr.tolist() == [0.0, 1.0, 1.0]


def test_ap_counts_a_tie_group_once_at_its_precision():
    # Positive and negative tied at the top: precision 1/2 for that group.
    assert ref.average_precision([1, 0, 1], [0.9, 0.9, 0.1]) == pytest.approx(0.5 * 0.5 + 0.5 * (2 / 3))


# --- 综合练习 7 edge cases -------------------------------------------------------------


def test_all_predicted_negative():
    m = ref.binary_metrics([1, 0, 1, 0], [0.1, 0.2, 0.3, 0.4], threshold=0.9)
    assert (m.tp, m.fp, m.tn, m.fn) == (0, 0, 2, 2)
    assert math.isnan(m.precision)  # 0/0
    assert m.recall == 0.0 and m.fpr == 0.0 and m.f1 == 0.0  # F1 = 0/(0+0+2)
    assert ref.binary_metrics([1, 0, 1, 0], [0.1, 0.2, 0.3, 0.4], 0.9, zero_division=0).precision == 0.0
    with pytest.raises(ref.UndefinedMetricError, match="precision"):
        ref.binary_metrics([1, 0, 1, 0], [0.1, 0.2, 0.3, 0.4], 0.9, zero_division="raise")


def test_all_predicted_positive():
    m = ref.binary_metrics([1, 0, 1, 0], [0.1, 0.2, 0.3, 0.4], threshold=0.0)
    assert (m.tp, m.fp, m.tn, m.fn) == (2, 2, 0, 0)
    assert m.recall == 1.0 and m.fpr == 1.0 and m.specificity == 0.0 and m.precision == 0.5


def test_perfect_and_reversed_ranking():
    y = [0, 0, 1, 1]
    s = [0.1, 0.2, 0.8, 0.9]
    assert ref.roc_auc(y, s) == 1.0 and ref.pairwise_auc(y, s) == 1.0 and ref.average_precision(y, s) == 1.0
    assert ref.roc_auc(y, [-v for v in s]) == 0.0 and ref.pairwise_auc(y, [-v for v in s]) == 0.0


def test_constant_scores():
    y = [1, 0, 0, 1, 0]
    s = [0.3] * 5
    fpr, tpr, thresholds = ref.roc_curve(y, s)
    assert fpr.tolist() == [0.0, 1.0] and tpr.tolist() == [0.0, 1.0]
    assert ref.roc_auc(y, s) == 0.5 and ref.pairwise_auc(y, s) == 0.5
    assert ref.average_precision(y, s) == pytest.approx(0.4)


def test_zero_denominators_of_f1_only_when_nothing_positive():
    # No positive labels and none predicted: TP = FP = FN = 0.
    m = ref.binary_metrics([0, 0], [0.1, 0.2], 0.5)
    assert math.isnan(m.f1) and math.isnan(m.recall) and math.isnan(m.precision)
    assert m.accuracy == 1.0 and m.fpr == 0.0
    with pytest.raises(ref.UndefinedMetricError, match="recall.*TP\\+FN"):
        ref.binary_metrics([0, 0], [0.1, 0.9], 0.5, zero_division="raise")  # precision 0/1 is fine
    # TP = 0 but FP + FN > 0: F1 is exactly 0, never NaN.
    assert ref.binary_metrics([1, 0], [0.1, 0.9], 0.5).f1 == 0.0


def test_no_epsilon_in_denominators():
    m = ref.metrics_from_counts(tp=1, fp=0, tn=10**9, fn=0)
    assert m.precision == 1.0 and m.recall == 1.0 and m.f1 == 1.0 and m.fpr == 0.0


@pytest.mark.parametrize("func", [ref.roc_curve, ref.roc_auc, ref.pairwise_auc, ref.pr_curve, ref.average_precision])
@pytest.mark.parametrize("labels", [[1, 1, 1], [0, 0, 0]])
def test_single_class_rejected_by_curves(func, labels):
    with pytest.raises(ValueError, match="y_true 中没有"):
        func(labels, [0.1, 0.2, 0.3])


def test_d_prime_domain():
    assert ref.d_prime(0.5) == 0.0
    assert ref.d_prime(1.0) == math.inf and ref.d_prime(0.0) == -math.inf
    assert ref.d_prime(0.25) == pytest.approx(-ref.d_prime(0.75))
    for bad in (1.5, -0.1, float("nan"), "0.9", True):
        with pytest.raises(ValueError):
            ref.d_prime(bad)


def test_calibration_curve_single_class_and_empty_bins():
    curve = ref.calibration_curve([0, 0, 0], [0.05, 0.07, 0.95], n_bins=10)
    assert curve.count.tolist() == [2, 1]
    assert curve.fraction_positive.tolist() == [0.0, 0.0]
    np.testing.assert_allclose(curve.bin_edges, [[0.0, 0.1], [0.9, 1.0]])


def test_calibration_bins_are_right_closed_like_sklearn():
    curve = ref.calibration_curve([1, 0, 1], [0.0, 0.5, 1.0], n_bins=2)
    assert curve.count.tolist() == [2, 1]  # 0.5 belongs to (0, 0.5] together with 0


def test_ece_hides_error_with_too_few_bins():
    # Seed 002: predictions 0.2 and 0.4 whose true rates are 0.4 and 0.2 -- one bin averages them.
    y = np.r_[np.ones(4), np.zeros(6), np.ones(2), np.zeros(8)]
    p = np.r_[np.full(10, 0.2), np.full(10, 0.4)]
    assert ref.expected_calibration_error(y, p, n_bins=1) == pytest.approx(0.0, abs=1e-12)
    assert ref.expected_calibration_error(y, p, n_bins=10) == pytest.approx(0.2)


def test_choose_threshold_rules_and_tie_rule():
    y = [1, 1, 0, 1, 0, 0]
    s = [0.9, 0.8, 0.7, 0.6, 0.5, 0.4]
    best_f1 = ref.choose_threshold(y, s, rule="f1")
    assert best_f1.threshold == 0.6 and best_f1.value == pytest.approx(6 / 7)
    cap = ref.choose_threshold(y, s, rule="fpr_cap", max_fpr=0.0)
    assert cap.threshold == 0.8 and cap.tpr == pytest.approx(2 / 3)
    # With zero costs every threshold ties; the highest (+inf, predict none) wins.
    assert ref.choose_threshold(y, s, rule="cost", c_fp=0, c_fn=0).threshold == np.inf
    expensive_misses = ref.choose_threshold(y, s, rule="cost", c_fp=1, c_fn=100, prior=0.5)
    assert expensive_misses.tpr == 1.0
    with pytest.raises(ValueError, match="rule"):
        ref.choose_threshold(y, s, rule="accuracy")
    with pytest.raises(ValueError, match="max_fpr"):
        ref.choose_threshold(y, s, rule="fpr_cap")


def test_expected_cost_formula():
    assert ref.expected_cost(0.8, 0.1, prior=0.2, c_fp=1, c_fn=5) == pytest.approx(1 * 0.8 * 0.1 + 5 * 0.2 * 0.2)
    with pytest.raises(ValueError, match="prior"):
        ref.expected_cost(0.8, 0.1, prior=0.0, c_fp=1, c_fn=5)
    with pytest.raises(ValueError, match="c_fp"):
        ref.expected_cost(0.8, 0.1, prior=0.5, c_fp=-1, c_fn=5)
