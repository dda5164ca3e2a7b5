"""Every worked example and exercise number of the seeds that the reference can reproduce."""

from fractions import Fraction

import numpy as np
import pytest

import autograder.reference as ref

FAWCETT_LABELS = [1, 1, 0, 1, 1, 1, 0, 0, 1, 0]
FAWCETT_SCORES = [0.9, 0.8, 0.7, 0.6, 0.55, 0.54, 0.53, 0.52, 0.51, 0.505]


def test_example_3_1_confusion_metrics():
    m = ref.metrics_from_counts(tp=50, fp=10, tn=30, fn=10)
    assert m.accuracy == pytest.approx(4 / 5, abs=1e-15)
    assert m.precision == pytest.approx(5 / 6, abs=1e-15)
    assert m.recall == pytest.approx(5 / 6, abs=1e-15)
    assert m.fpr == pytest.approx(1 / 4, abs=1e-15)
    assert m.specificity == pytest.approx(3 / 4, abs=1e-15)
    assert m.f1 == pytest.approx(5 / 6, abs=1e-15)


def test_example_3_1_through_binary_metrics_on_scores():
    # 50 TP, 10 FN, 10 FP, 30 TN as scores around a threshold of 0.5.
    y = np.r_[np.ones(60, int), np.zeros(40, int)]
    s = np.r_[np.full(50, 0.9), np.full(10, 0.1), np.full(10, 0.7), np.full(30, 0.2)]
    m = ref.binary_metrics(y, s, 0.5)
    assert (m.tp, m.fp, m.tn, m.fn) == (50, 10, 30, 10)
    assert m.accuracy == pytest.approx(0.8)


def test_fdr_prevalence_example():
    # Recall 0.8, FPR 0.01: FDR about 1.2 % at a 50 % prior, about 55.3 % at 1 %.
    fdr_half = 1 - ref.prevalence_corrected_precision(0.8, 0.01, 0.5)
    fdr_rare = 1 - ref.prevalence_corrected_precision(0.8, 0.01, 0.01)
    assert round(fdr_half * 100, 1) == 1.2
    assert round(fdr_rare * 100, 1) == 55.3


def test_fawcett_table_auc_is_three_quarters():
    assert ref.roc_auc(FAWCETT_LABELS, FAWCETT_SCORES) == 0.75
    assert ref.pairwise_auc(FAWCETT_LABELS, FAWCETT_SCORES) == 0.75
    curve = ref.roc_curve(FAWCETT_LABELS, FAWCETT_SCORES)
    # Steps up by 1/6 per positive and right by 1/4 per negative.
    assert set(np.round(np.diff(curve.tpr), 12)) <= {0.0, round(1 / 6, 12)}
    assert set(np.round(np.diff(curve.fpr), 12)) <= {0.0, 0.25}


def test_exercise_2_roc_points_and_auc():
    curve = ref.roc_curve([1, 0, 1, 0], [0.9, 0.8, 0.7, 0.1])
    points = list(zip(curve.fpr.tolist(), curve.tpr.tolist()))
    assert points == [(0, 0), (0, 0.5), (0.5, 0.5), (0.5, 1), (1, 1)]
    assert ref.roc_auc([1, 0, 1, 0], [0.9, 0.8, 0.7, 0.1]) == 0.75


def test_exercise_4_f1_identity():
    m = ref.metrics_from_counts(tp=30, fp=10, tn=0, fn=20)
    assert m.precision == pytest.approx(0.75)
    assert m.recall == pytest.approx(0.6)
    assert m.f1 == pytest.approx(2 * 0.75 * 0.6 / (0.75 + 0.6))
    assert Fraction(m.f1).limit_denominator(100) == Fraction(2, 3)


def test_example_3_2_brier():
    assert ref.brier_score([1, 0, 1, 0], [0.9, 0.8, 0.7, 0.1]) == pytest.approx(0.1875, abs=1e-15)
    assert ref.brier_baseline([1, 0, 1, 0]) == 0.25


def test_quiz_1_numbers():
    m = ref.metrics_from_counts(tp=24, fp=6, tn=62, fn=8)
    assert tuple(round(v, 3) for v in (m.accuracy, m.precision, m.recall, m.fpr)) == (0.86, 0.8, 0.75, 0.088)


def test_quiz_5_pairwise_auc_with_tie():
    assert ref.pairwise_auc([1, 1, 0, 0], [0.9, 0.5, 0.5, 0.2]) == 0.875
    assert ref.roc_auc([1, 1, 0, 0], [0.9, 0.5, 0.5, 0.2]) == 0.875


def test_quiz_7_average_precision():
    assert ref.average_precision([1, 0, 1, 0], [4, 3, 2, 1]) == pytest.approx(5 / 6, abs=1e-15)


def test_quiz_9_brier_two_samples():
    assert ref.brier_score([1, 0], [0.8, 0.3]) == pytest.approx(0.065, abs=1e-15)
    assert ref.brier_score([1, 0], [0.5, 0.5]) == 0.25


def test_quiz_11_single_sample_brier():
    assert ref.brier_score([1], [0.9]) < ref.brier_score([1], [0.6])


def test_seed_001_ap_and_auc():
    scores = [0.9, 0.8, 0.7, 0.6, 0.6, 0.5, 0.5, 0.4, 0.3]
    labels = [1, 1, 0, 1, 0, 0, 0, 1, 0]
    assert ref.average_precision(labels, scores) == pytest.approx(0.775, abs=1e-15)
    assert ref.roc_auc(labels, scores) == pytest.approx(0.725, abs=1e-15)
    assert ref.pairwise_auc(labels, scores) == pytest.approx(0.725, abs=1e-15)


def test_seed_001_d_prime_example():
    assert round(ref.d_prime(0.99), 2) == 3.29
    assert round(ref.d_prime(0.999), 2) == 4.37


def test_seed_004_nineteen_samples_auc_is_0_8():
    labels = [0] * 9 + [1] * 10
    proba = [0.1, 0.2, 0.2, 0.3, 0.3, 0.4, 0.5, 0.7, 0.9, 0.15, 0.45, 0.55, 0.75, 0.75, 0.85, 0.95, 0.75, 0.85, 0.95]
    assert ref.roc_auc(labels, proba) == pytest.approx(0.8, abs=1e-15)


def test_seed_002_predictors_jia_and_yi():
    # Two equally likely groups with true positive rates 0.2 and 0.8.
    y = np.r_[np.ones(2), np.zeros(8), np.ones(8), np.zeros(2)]
    jia = np.r_[np.full(10, 0.2), np.full(10, 0.8)]
    yi = np.r_[np.full(10, 0.05), np.full(10, 0.95)]
    for p in (jia, yi):
        assert ref.binary_metrics(y, p, 0.5).accuracy == pytest.approx(0.8)
    assert ref.expected_calibration_error(y, jia, n_bins=10) == pytest.approx(0.0, abs=1e-12)
    assert ref.expected_calibration_error(y, yi, n_bins=10) == pytest.approx(0.15, abs=1e-12)
