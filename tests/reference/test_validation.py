"""Bad input gets a ValueError that names the argument and the problem; nothing is coerced."""

import numpy as np
import pytest

import autograder.reference as ref

GOOD_Y = [0, 1, 0, 1]
GOOD_S = [0.1, 0.4, 0.35, 0.8]

SCORE_FUNCS = {
    "binary_metrics": lambda y, s: ref.binary_metrics(y, s, 0.5),
    "roc_curve": ref.roc_curve,
    "roc_auc": ref.roc_auc,
    "pairwise_auc": ref.pairwise_auc,
    "pr_curve": ref.pr_curve,
    "average_precision": ref.average_precision,
    "brier_score": ref.brier_score,
    "log_loss": ref.log_loss,
    "calibration_curve": ref.calibration_curve,
    "expected_calibration_error": ref.expected_calibration_error,
    "fbeta_score": lambda y, s: ref.fbeta_score(y, s, 0.5),
    "matthews_corrcoef": lambda y, s: ref.matthews_corrcoef(y, s, 0.5),
    "balanced_accuracy": lambda y, s: ref.balanced_accuracy(y, s, 0.5),
    "choose_threshold": ref.choose_threshold,
}

BAD_LABELS = {
    "half": ([0, 0.5, 0, 1], "非法值 0.5"),
    "two": ([0, 2, 0, 1], "非法值 2"),
    "minus_one": ([0, -1, 0, 1], "非法值 -1"),
    "string_one": (["0", "1", "0", "1"], "字符串"),
    "nan": ([0, np.nan, 0, 1], "非法值 nan"),
    "inf": ([0, np.inf, 0, 1], "非法值 inf"),
    "complex": (np.array([0, 1, 0, 1], dtype=complex), "复数"),
    "object": (np.array([0, 1, None, 1], dtype=object), "object"),
    "empty": ([], "空数组"),
    "2d": ([[0, 1, 0, 1]], "一维"),
    "scalar": (1, "一维"),
    "none": (None, "None"),
}

BAD_SCORES = {
    "nan": ([0.1, np.nan, 0.3, 0.4], "NaN"),
    "inf": ([0.1, np.inf, 0.3, 0.4], "无穷大"),
    "neg_inf": ([0.1, -np.inf, 0.3, 0.4], "无穷大"),
    "complex": (np.array([0.1, 0.2, 0.3, 0.4], dtype=complex), "复数"),
    "strings": (["0.1", "0.2", "0.3", "0.4"], "字符串"),
    "bool": ([True, False, True, False], "布尔"),
    "object": (np.array([0.1, None, 0.3, 0.4], dtype=object), "object"),
    "2d": ([[0.1, 0.2, 0.3, 0.4]], "一维"),
}


@pytest.mark.parametrize("func_name", SCORE_FUNCS)
@pytest.mark.parametrize("case", BAD_LABELS)
def test_bad_labels_rejected(func_name, case):
    labels, message = BAD_LABELS[case]
    with pytest.raises(ValueError, match=message) as info:
        SCORE_FUNCS[func_name](labels, GOOD_S if case not in ("empty",) else [])
    assert "y_true" in str(info.value)


@pytest.mark.parametrize("func_name", SCORE_FUNCS)
@pytest.mark.parametrize("case", BAD_SCORES)
def test_bad_scores_rejected(func_name, case):
    scores, message = BAD_SCORES[case]
    with pytest.raises(ValueError, match=message) as info:
        SCORE_FUNCS[func_name](GOOD_Y, scores)
    assert "y_score" in str(info.value) or "y_prob" in str(info.value)


@pytest.mark.parametrize("func_name", SCORE_FUNCS)
def test_mismatched_lengths_rejected(func_name):
    with pytest.raises(ValueError, match="长度不一致"):
        SCORE_FUNCS[func_name](GOOD_Y, GOOD_S[:3])


@pytest.mark.parametrize("func", [ref.brier_score, ref.log_loss, ref.calibration_curve, ref.expected_calibration_error])
@pytest.mark.parametrize("bad", [-0.1, 1.0000001, 2.0])
def test_probabilities_outside_unit_interval_rejected(func, bad):
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        func([0, 1], [0.5, bad])


@pytest.mark.parametrize("threshold", [np.nan, np.inf, -np.inf, "0.5", None, True, 1j, [0.5], np.array([0.5, 0.6])])
def test_bad_threshold_rejected(threshold):
    with pytest.raises(ValueError, match="threshold"):
        ref.binary_metrics(GOOD_Y, GOOD_S, threshold)


@pytest.mark.parametrize("threshold", [0, 1, 0.5, np.float32(0.5), np.int64(0), np.array(0.5)])
def test_real_scalar_thresholds_accepted(threshold):
    ref.binary_metrics(GOOD_Y, GOOD_S, threshold)


@pytest.mark.parametrize("policy", ["NaN", "zero", 1, 1.0, False, None, float("nan"), "warn"])
def test_bad_zero_division_rejected(policy):
    with pytest.raises(ValueError, match="zero_division"):
        ref.binary_metrics(GOOD_Y, GOOD_S, 0.5, zero_division=policy)


def test_bad_zero_division_rejected_even_when_no_denominator_is_zero():
    with pytest.raises(ValueError, match="zero_division"):
        ref.binary_metrics([0, 1], [0.1, 0.9], 0.5, zero_division=1)


@pytest.mark.parametrize("policy", ["nan", 0, 0.0, "raise"])
def test_valid_zero_division_accepted(policy):
    assert ref.binary_metrics(GOOD_Y, GOOD_S, 0.5, zero_division=policy).tp == 1


def test_boolean_labels_mean_true_is_positive():
    as_bool = ref.binary_metrics([False, True, False, True], GOOD_S, 0.5)
    as_int = ref.binary_metrics(GOOD_Y, GOOD_S, 0.5)
    assert as_bool == as_int
    assert ref.roc_auc(np.array(GOOD_Y, dtype=bool), GOOD_S) == ref.roc_auc(GOOD_Y, GOOD_S)


def test_float_labels_equal_to_zero_and_one_accepted_without_rounding():
    assert ref.roc_auc([0.0, 1.0, 0.0, 1.0], GOOD_S) == ref.roc_auc(GOOD_Y, GOOD_S)
    with pytest.raises(ValueError):
        ref.roc_auc([0.0, 0.9999999, 0.0, 1.0], GOOD_S)


def test_integer_scores_accepted_and_huge_integers_rejected():
    assert ref.roc_auc(GOOD_Y, [1, 4, 3, 8]) == ref.roc_auc(GOOD_Y, GOOD_S)
    with pytest.raises(ValueError, match="2\\*\\*53"):
        ref.roc_auc(GOOD_Y, np.array([1, 2**60, 3, 4], dtype=np.int64))


def test_confusion_counts_validates_predictions():
    assert ref.confusion_counts([1, 0, 1], [1, 1, 0]) == (1, 1, 0, 1)
    with pytest.raises(ValueError, match="y_pred"):
        ref.confusion_counts([1, 0, 1], [1, 0.7, 0])


def test_calibration_arguments_validated():
    with pytest.raises(ValueError, match="n_bins"):
        ref.calibration_curve([0, 1], [0.2, 0.8], n_bins=0)
    with pytest.raises(ValueError, match="n_bins"):
        ref.calibration_curve([0, 1], [0.2, 0.8], n_bins=2.5)
    with pytest.raises(ValueError, match="strategy"):
        ref.calibration_curve([0, 1], [0.2, 0.8], strategy="kmeans")


def test_inputs_are_not_modified():
    y = np.array(GOOD_Y)
    s = np.array(GOOD_S)
    for func in (ref.roc_curve, ref.pr_curve, ref.average_precision, ref.pairwise_auc):
        func(y, s)
    np.testing.assert_array_equal(s, GOOD_S)
    np.testing.assert_array_equal(y, GOOD_Y)


def test_results_are_namedtuples_with_plain_python_counts():
    m = ref.binary_metrics(GOOD_Y, GOOD_S, 0.5)
    assert m._fields == ("tp", "fp", "tn", "fn", "accuracy", "precision", "recall", "fpr", "specificity", "f1")
    assert all(type(v) is int for v in m[:4]) and all(type(v) is float for v in m[4:])
    assert ref.roc_curve(GOOD_Y, GOOD_S)._fields == ("thresholds", "fpr", "tpr")
    assert ref.pr_curve(GOOD_Y, GOOD_S)._fields == ("thresholds", "precision", "recall")
    assert ref.calibration_curve(GOOD_Y, GOOD_S)._fields == ("mean_predicted", "fraction_positive", "count", "bin_edges")
    assert type(ref.roc_auc(GOOD_Y, GOOD_S)) is float
