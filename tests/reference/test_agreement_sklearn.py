"""Agreement with scikit-learn, the course's "trusted library", on hypothesis-generated inputs.

The curves unpack positionally in scikit-learn's order (``fpr, tpr, thresholds``;
``precision, recall, thresholds``; ``prob_true, prob_pred, *_``), and the tests below unpack
them exactly as scikit-learn code would.  Documented differences (each asserted below):

* ``roc_curve`` keeps every distinct score: it equals scikit-learn's ``drop_intermediate=False``.
* ``pr_curve`` lists thresholds in decreasing order and has no final ``(recall 0, precision 1)``
  point; scikit-learn orders thresholds increasingly and appends that plotting point.
* ``calibration_curve`` also returns the bin counts and edges after scikit-learn's two arrays.
* ``log_loss`` never clips: a confident mistake (p = 0 for a positive) is ``inf``;
  scikit-learn clips to machine epsilon and returns a large finite number.
* ``fbeta_score``, ``matthews_corrcoef`` and ``balanced_accuracy`` take predicted labels like
  scikit-learn's and agree with it; where a denominator is 0 they return NaN by default
  (scikit-learn: 0.0, or for balanced accuracy with one class, the recall of that class).
"""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn import calibration as skcal
from sklearn import metrics as skm

import autograder.reference as ref

from .strategies import labels_and_scores

TOL = 1e-12


@given(labels_and_scores())
def test_roc_curve_equals_sklearn_without_dropping(data):
    y, s = data
    fpr, tpr, thresholds = ref.roc_curve(y, s)
    sk_fpr, sk_tpr, sk_thr = skm.roc_curve(y, s, drop_intermediate=False)
    np.testing.assert_allclose(fpr, sk_fpr, atol=TOL, rtol=0)
    np.testing.assert_allclose(tpr, sk_tpr, atol=TOL, rtol=0)
    np.testing.assert_array_equal(thresholds, sk_thr)


@given(labels_and_scores())
def test_roc_auc_and_pairwise_equal_sklearn(data):
    y, s = data
    expected = skm.roc_auc_score(y, s)
    assert abs(ref.roc_auc(y, s) - expected) <= TOL
    assert abs(ref.pairwise_auc(y, s) - expected) <= TOL
    assert abs(ref.roc_auc(y, s) - ref.pairwise_auc(y, s)) <= TOL


@given(labels_and_scores())
def test_average_precision_equals_sklearn(data):
    y, s = data
    assert abs(ref.average_precision(y, s) - skm.average_precision_score(y, s)) <= TOL


@given(labels_and_scores())
def test_pr_curve_equals_sklearn_minus_plotting_point(data):
    y, s = data
    precision, recall, thresholds = ref.pr_curve(y, s)
    sk_p, sk_r, sk_t = skm.precision_recall_curve(y, s, drop_intermediate=False)
    # scikit-learn: increasing thresholds, then the appended (recall 0, precision 1).
    assert sk_p[-1] == 1.0 and sk_r[-1] == 0.0
    np.testing.assert_allclose(precision, sk_p[:-1][::-1], atol=TOL, rtol=0)
    np.testing.assert_allclose(recall, sk_r[:-1][::-1], atol=TOL, rtol=0)
    np.testing.assert_array_equal(thresholds, sk_t[::-1])


@given(labels_and_scores(min_size=1, both_classes=False, probabilities=True))
def test_brier_equals_sklearn(data):
    y, p = data
    assert abs(ref.brier_score(y, p) - skm.brier_score_loss(y, p, labels=[0, 1])) <= TOL


@given(labels_and_scores(probabilities=True))
def test_log_loss_equals_sklearn_inside_open_interval(data):
    y, p = data
    p = np.clip(p, 1e-6, 1 - 1e-6)
    assert abs(ref.log_loss(y, p) - skm.log_loss(y, p, labels=[0, 1])) <= 1e-10


def test_log_loss_does_not_clip_confident_mistakes():
    assert ref.log_loss([1, 0], [0.0, 0.0]) == np.inf
    assert ref.log_loss([1, 0], [1.0, 0.0]) == 0.0
    assert np.isfinite(skm.log_loss([1, 0], [0.0, 0.0], labels=[0, 1]))  # the documented difference


@given(labels_and_scores(probabilities=True), st.integers(1, 12), st.sampled_from(["uniform", "quantile"]))
def test_calibration_curve_equals_sklearn_plus_counts(data, n_bins, strategy):
    y, p = data
    curve = ref.calibration_curve(y, p, n_bins=n_bins, strategy=strategy)
    prob_true, prob_pred, *_ = curve
    sk_true, sk_pred = skcal.calibration_curve(y, p, n_bins=n_bins, strategy=strategy)
    np.testing.assert_allclose(prob_true, sk_true, atol=TOL, rtol=0)
    np.testing.assert_allclose(prob_pred, sk_pred, atol=TOL, rtol=0)
    assert curve.count.sum() == len(y)
    assert (curve.count > 0).all()
    assert curve.bin_edges.shape == (len(curve.count), 2)
    # Every mean prediction lies inside its bin.
    assert np.all(curve.mean_predicted >= curve.bin_edges[:, 0] - TOL)
    assert np.all(curve.mean_predicted <= curve.bin_edges[:, 1] + TOL)


@pytest.mark.filterwarnings("ignore:A single label was found")
@given(labels_and_scores(min_size=1, both_classes=False), st.floats(-1, 11))
def test_binary_metrics_equal_sklearn(data, threshold):
    y, s = data
    pred = (s >= threshold).astype(int)
    m = ref.binary_metrics(y, s, threshold, zero_division=0)
    tn, fp, fn, tp = skm.confusion_matrix(y, pred, labels=[0, 1]).ravel()
    assert (m.tp, m.fp, m.tn, m.fn) == (tp, fp, tn, fn)
    assert m.accuracy == pytest.approx(skm.accuracy_score(y, pred), abs=TOL)
    assert m.precision == pytest.approx(skm.precision_score(y, pred, zero_division=0), abs=TOL)
    assert m.recall == pytest.approx(skm.recall_score(y, pred, zero_division=0), abs=TOL)
    assert m.f1 == pytest.approx(skm.f1_score(y, pred, zero_division=0), abs=TOL)
    assert ref.matthews_corrcoef(y, s >= threshold, zero_division=0) == pytest.approx(skm.matthews_corrcoef(y, pred), abs=1e-12)
    for beta in (0.5, 2.0):
        assert ref.fbeta_score(y, s >= threshold, beta=beta, zero_division=0) == pytest.approx(
            skm.fbeta_score(y, pred, beta=beta, zero_division=0), abs=TOL
        )
    if 0 < y.sum() < len(y):
        assert ref.balanced_accuracy(y, pred) == pytest.approx(skm.balanced_accuracy_score(y, pred), abs=TOL)


@pytest.mark.filterwarnings("ignore::UserWarning", "ignore::sklearn.exceptions.UndefinedMetricWarning")
def test_prediction_metrics_differ_from_sklearn_only_at_zero_denominators():
    # Same call as scikit-learn, positional (y_true, y_pred): equal wherever defined ...
    y, pred = [1, 1, 0, 1, 0], [1, 0, 0, 1, 0]
    assert ref.fbeta_score(y, pred, beta=2.0) == pytest.approx(skm.fbeta_score(y, pred, beta=2.0), abs=TOL)
    assert ref.matthews_corrcoef(y, pred) == pytest.approx(skm.matthews_corrcoef(y, pred), abs=TOL)
    assert ref.balanced_accuracy(y, pred) == pytest.approx(skm.balanced_accuracy_score(y, pred), abs=TOL)
    # ... and NaN, never a silent number, where a denominator is 0 (scikit-learn returns a number).
    assert np.isnan(ref.fbeta_score([0, 0], [0, 0], beta=2.0)) and skm.fbeta_score([0, 0], [0, 0], beta=2.0) == 0.0
    assert np.isnan(ref.matthews_corrcoef([1, 1, 0], [1, 1, 1])) and skm.matthews_corrcoef([1, 1, 0], [1, 1, 1]) == 0.0
    assert np.isnan(ref.balanced_accuracy([1, 1], [1, 0])) and skm.balanced_accuracy_score([1, 1], [1, 0]) == 0.5
    # zero_division=0 reproduces scikit-learn's value for F-beta and MCC.
    assert ref.fbeta_score([0, 0], [0, 0], beta=2.0, zero_division=0) == 0.0
    assert ref.matthews_corrcoef([1, 1, 0], [1, 1, 1], zero_division=0) == 0.0
