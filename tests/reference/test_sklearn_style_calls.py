"""A call written the scikit-learn way either means the same here or fails loudly; it never computes something else.

Each test writes the call exactly as scikit-learn code would (positional unpacking, predicted
labels as ``y_pred``) and checks it against scikit-learn itself.
"""

import numpy as np
import pytest
from sklearn import calibration as skcal
from sklearn import metrics as skm

import autograder.reference as ref

Y = np.array([1, 1, 0, 1, 0, 0, 1, 0, 1, 0])
S = np.array([0.9, 0.8, 0.8, 0.6, 0.55, 0.5, 0.5, 0.3, 0.2, 0.1])
PRED = (S >= 0.5).astype(int)


def test_roc_curve_unpacks_like_sklearn():
    fpr, tpr, thresholds = ref.roc_curve(Y, S)
    sk_fpr, sk_tpr, sk_thr = skm.roc_curve(Y, S, drop_intermediate=False)
    np.testing.assert_array_equal(fpr, sk_fpr)
    np.testing.assert_array_equal(tpr, sk_tpr)
    np.testing.assert_array_equal(thresholds, sk_thr)


def test_roc_curve_keeps_the_points_sklearn_drops_by_default():
    fpr, tpr, thresholds = ref.roc_curve(Y, S)
    sk_fpr, sk_tpr, sk_thr = skm.roc_curve(Y, S)  # default drop_intermediate=True: a subset of the points
    ours = set(zip(fpr.tolist(), tpr.tolist(), thresholds.tolist()))
    assert set(zip(sk_fpr.tolist(), sk_tpr.tolist(), sk_thr.tolist())) <= ours
    with pytest.raises(TypeError, match="drop_intermediate"):
        ref.roc_curve(Y, S, drop_intermediate=False)  # not an argument here: loud, not ignored


def test_pr_curve_unpacks_like_precision_recall_curve():
    precision, recall, thresholds = ref.pr_curve(Y, S)
    sk_p, sk_r, sk_t = skm.precision_recall_curve(Y, S)
    # scikit-learn: thresholds increasing plus the plotting point (precision 1, recall 0) at the end.
    np.testing.assert_allclose(precision, sk_p[:-1][::-1], atol=1e-12, rtol=0)
    np.testing.assert_allclose(recall, sk_r[:-1][::-1], atol=1e-12, rtol=0)
    np.testing.assert_array_equal(thresholds, sk_t[::-1])


def test_calibration_curve_unpacks_like_sklearn_or_fails_loudly():
    p = S  # already in [0, 1]
    with pytest.raises(ValueError, match="too many values to unpack"):
        prob_true, prob_pred = ref.calibration_curve(Y, p, n_bins=5)  # four fields: never a silent mix-up
    prob_true, prob_pred, *_ = ref.calibration_curve(Y, p, n_bins=5)
    sk_true, sk_pred = skcal.calibration_curve(Y, p, n_bins=5)
    np.testing.assert_allclose(prob_true, sk_true, atol=1e-12, rtol=0)
    np.testing.assert_allclose(prob_pred, sk_pred, atol=1e-12, rtol=0)


def test_quantile_edges_equal_sklearn_even_when_an_edge_hits_a_sample():
    # Found by hypothesis: np.percentile(p, np.linspace(0, 100, 4)) differs from scikit-learn's
    # np.percentile(p, np.linspace(0, 1, 4) * 100) in the last bit and moved 0.38367755 to another bin.
    y = np.zeros(34, int)
    y[15] = 1
    p = np.array([0.64718951, 0.61538511, 0.38367755, 0.99720994, 0.98083534, 0.68554198, 0.65045928, 0.68844673,
                  0.38892142, 0.13509651, 0.72148834, 0.52535432, 0.31024188, 0.48583536, 0.88948783, 0.93404352,
                  0.3577952, 0.57152983, 0.32186939, 0.59430003, 0.33791123, 0.391619, 0.89027435, 0.22715759,
                  0.62318714, 0.08401534, 0.83264415, 0.78709831, 0.23936944, 0.87648423, 0.05856803, 0.33611706,
                  0.15027947, 0.45033937])
    prob_true, prob_pred, count, _ = ref.calibration_curve(y, p, n_bins=3, strategy="quantile")
    sk_true, sk_pred = skcal.calibration_curve(y, p, n_bins=3, strategy="quantile")
    np.testing.assert_allclose(prob_pred, sk_pred, atol=1e-12, rtol=0)
    np.testing.assert_allclose(prob_true, sk_true, atol=1e-12, rtol=0)
    assert count.tolist() == [11, 12, 11]


@pytest.mark.parametrize("y_pred", [PRED, PRED.astype(bool), PRED.astype(float)], ids=["int", "bool", "float"])
def test_prediction_metrics_called_like_sklearn_agree(y_pred):
    assert ref.fbeta_score(Y, y_pred, beta=2.0) == pytest.approx(skm.fbeta_score(Y, y_pred, beta=2.0), abs=1e-12)
    assert ref.fbeta_score(Y, y_pred, beta=0.5) == pytest.approx(skm.fbeta_score(Y, y_pred, beta=0.5), abs=1e-12)
    assert ref.matthews_corrcoef(Y, y_pred) == pytest.approx(skm.matthews_corrcoef(Y, y_pred), abs=1e-12)
    assert ref.balanced_accuracy(Y, y_pred) == pytest.approx(skm.balanced_accuracy_score(Y, y_pred), abs=1e-12)
    tn, fp, fn, tp = skm.confusion_matrix(Y, y_pred).ravel()
    assert ref.confusion_counts(Y, y_pred) == (tp, fp, tn, fn)
    # Named fields: reading them by name is the same as scikit-learn's ravel() order.
    c = ref.confusion_counts(Y, y_pred)
    assert (c.tn, c.fp, c.fn, c.tp) == (tn, fp, fn, tp)


@pytest.mark.parametrize(
    "call",
    [
        lambda: ref.fbeta_score(Y, S, beta=2.0),
        lambda: ref.matthews_corrcoef(Y, S),
        lambda: ref.balanced_accuracy(Y, S),
        lambda: ref.confusion_counts(Y, S),
    ],
    ids=["fbeta_score", "matthews_corrcoef", "balanced_accuracy", "confusion_counts"],
)
def test_scores_passed_as_predictions_rejected_with_the_fix(call):
    # scikit-learn also refuses continuous y_pred; here the message says how to threshold.
    with pytest.raises(ValueError, match=r"y_pred 只能含有标签 0 和 1.*y_pred = y_score >= threshold"):
        call()


@pytest.mark.parametrize(
    "call",
    [
        lambda: ref.fbeta_score(Y, S, 0.5, beta=2.0),
        lambda: ref.matthews_corrcoef(Y, S, 0.5),
        lambda: ref.balanced_accuracy(Y, S, 0.5),
    ],
    ids=["fbeta_score", "matthews_corrcoef", "balanced_accuracy"],
)
def test_a_threshold_argument_is_refused_not_reinterpreted(call):
    with pytest.raises(TypeError, match="positional argument"):
        call()


def test_sklearn_only_options_are_refused_not_ignored():
    with pytest.raises(TypeError, match="average"):
        ref.fbeta_score(Y, PRED, beta=2.0, average="binary")
    with pytest.raises(TypeError, match="adjusted"):
        ref.balanced_accuracy(Y, PRED, adjusted=True)
    with pytest.raises(TypeError, match="sample_weight"):
        ref.matthews_corrcoef(Y, PRED, sample_weight=np.ones(len(Y)))
    for policy in ("warn", 1, np.nan):  # scikit-learn's other zero_division values
        with pytest.raises(ValueError, match="zero_division"):
            ref.fbeta_score(Y, PRED, beta=2.0, zero_division=policy)


def test_thresholding_first_equals_binary_metrics():
    m = ref.binary_metrics(Y, S, 0.5)
    assert ref.fbeta_score(Y, S >= 0.5) == m.f1
    assert ref.balanced_accuracy(Y, S >= 0.5) == pytest.approx((m.recall + m.specificity) / 2, abs=1e-15)
