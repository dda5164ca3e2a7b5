"""Bad input gets a ValueError that names the argument and the problem; nothing is coerced."""

import numbers

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
    "choose_threshold": ref.choose_threshold,
    "auc_ci": ref.auc_ci,
    "auc_ci_bootstrap": lambda y, s: ref.auc_ci(y, s, method="bootstrap", n_boot=100, random_state=0),
    "ap_ci": lambda y, s: ref.ap_ci(y, s, n_boot=100, random_state=0),
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


PRED_FUNCS = {
    "confusion_counts": ref.confusion_counts,
    "fbeta_score": lambda y, p: ref.fbeta_score(y, p, beta=2.0),
    "matthews_corrcoef": ref.matthews_corrcoef,
    "balanced_accuracy": ref.balanced_accuracy,
}
GOOD_P = [0, 1, 1, 1]


@pytest.mark.parametrize("func_name", PRED_FUNCS)
@pytest.mark.parametrize("case", BAD_LABELS)
@pytest.mark.parametrize("argument", ["y_true", "y_pred"])
def test_bad_labels_and_predictions_rejected(func_name, case, argument):
    bad, message = BAD_LABELS[case]
    args = (bad, GOOD_P if case != "empty" else []) if argument == "y_true" else (GOOD_Y, bad)
    with pytest.raises(ValueError, match=message) as info:
        PRED_FUNCS[func_name](*args)
    assert argument in str(info.value)


@pytest.mark.parametrize("func_name", PRED_FUNCS)
def test_prediction_metrics_reject_unequal_lengths(func_name):
    with pytest.raises(ValueError, match="长度不一致"):
        PRED_FUNCS[func_name](GOOD_Y, GOOD_P[:3])


def test_confusion_counts_validates_predictions():
    assert ref.confusion_counts([1, 0, 1], [1, 1, 0]) == (1, 1, 0, 1)
    with pytest.raises(ValueError, match="y_pred"):
        ref.confusion_counts([1, 0, 1], [1, 0.7, 0])


def test_calibration_arguments_validated():
    with pytest.raises(ValueError, match="n_bins.*大于或等于 1 的整数，实际为 0"):
        ref.calibration_curve([0, 1], [0.2, 0.8], n_bins=0)
    with pytest.raises(ValueError, match="n_bins.*整数.*2.5"):
        ref.calibration_curve([0, 1], [0.2, 0.8], n_bins=2.5)
    with pytest.raises(ValueError, match="n_bins.*不能是布尔值"):
        ref.calibration_curve([0, 1], [0.2, 0.8], n_bins=True)
    with pytest.raises(ValueError, match='strategy 只能是 "uniform" 或 "quantile"'):
        ref.calibration_curve([0, 1], [0.2, 0.8], strategy="kmeans")
    assert ref.calibration_curve([0, 1], [0.2, 0.8], n_bins=np.int64(2)).count.tolist() == [1, 1]


# --- scalar arguments: one validator (check_scalar), the same rules everywhere --------------------

SCALAR_ARGS = {
    # name: (call with the value, valid value, invalid values with the problem the message names)
    "threshold": (lambda v: ref.binary_metrics(GOOD_Y, GOOD_S, v), 0.5, {np.nan: "有限实数", -np.inf: "有限实数"}),
    "beta": (lambda v: ref.fbeta_score(GOOD_Y, GOOD_P, beta=v), 2.0, {0.0: "大于 0", -1: "大于 0", np.inf: "有限实数"}),
    "n_bins": (lambda v: ref.calibration_curve(GOOD_Y, GOOD_S, n_bins=v), 3, {0: "大于或等于 1", -2: "大于或等于 1", 3.0: "不会取整"}),
    "prior": (lambda v: ref.prevalence_corrected_precision(0.8, 0.1, v), 0.3, {0.0: "开区间 \\(0, 1\\)", 1.0: "开区间", 1.5: "开区间"}),
    "c_fp": (lambda v: ref.expected_cost(0.8, 0.1, prior=0.3, c_fp=v, c_fn=1), 2.0, {-0.5: "大于或等于 0", np.nan: "有限实数"}),
    "c_fn": (lambda v: ref.expected_cost(0.8, 0.1, prior=0.3, c_fp=1, c_fn=v), 2.0, {-1: "大于或等于 0"}),
    "max_fpr": (lambda v: ref.choose_threshold(GOOD_Y, GOOD_S, rule="fpr_cap", max_fpr=v), 0.5, {1.5: "闭区间 \\[0, 1\\]", -0.1: "闭区间"}),
    "auc": (ref.d_prime, 0.75, {1.5: "闭区间 \\[0, 1\\]", np.nan: "有限实数"}),
    "tp": (lambda v: ref.metrics_from_counts(v, 1, 1, 1), 2, {-1: "大于或等于 0", 1.0: "不会取整"}),
    "k": (lambda v: ref.proportion_ci(v, 5), 2, {-1: "闭区间 \\[0, 5\\]", 6: "闭区间", 2.0: "不会取整"}),
    "n": (lambda v: ref.proportion_ci(0, v), 5, {0: "大于或等于 1", 5.0: "不会取整"}),
    "confidence": (lambda v: ref.proportion_ci(2, 5, confidence=v), 0.9, {0.0: "开区间 \\(0, 1\\)", 1.0: "开区间", 95: "开区间"}),
    "n_boot": (lambda v: ref.ap_ci(GOOD_Y, GOOD_S, n_boot=v, random_state=0), 100, {99: "闭区间", 2000.0: "不会取整"}),
}
TYPE_PROBLEMS = [(True, "布尔值"), (np.bool_(False), "布尔值"), ("0.5", "实际类型为 str"), (None, "实际类型为 NoneType"),
                 (1j, "复数"), ((0.5,), "实际类型为 tuple"), (np.array([0.5, 0.6]), "必须是标量")]


@pytest.mark.parametrize("name", SCALAR_ARGS)
def test_scalar_argument_accepts_its_valid_value(name):
    call, good, _ = SCALAR_ARGS[name]
    call(good)
    call(np.array(good))  # a 0-d array holds a scalar


@pytest.mark.parametrize("name", SCALAR_ARGS)
def test_scalar_argument_out_of_range_named_in_message(name):
    call, _, bad = SCALAR_ARGS[name]
    for value, problem in bad.items():
        with pytest.raises(ValueError, match=f"^{name}.*必须是.*{problem}") as info:
            call(value)
        assert "实际" in str(info.value) or "不能" in str(info.value)


@pytest.mark.parametrize("name", SCALAR_ARGS)
@pytest.mark.parametrize(("value", "problem"), TYPE_PROBLEMS, ids=[repr(v) for v, _ in TYPE_PROBLEMS])
def test_scalar_argument_of_wrong_type_rejected(name, value, problem):
    call, _, _ = SCALAR_ARGS[name]
    pattern = f"^{name}.*{problem}"
    if name == "max_fpr" and value is None:  # None means "not given": the rule says it is needed
        pattern = "需要给出 max_fpr"
    with pytest.raises(ValueError, match=pattern):
        call(value)


def test_check_scalar_bounds_like_sklearn():
    from autograder.reference._validation import check_scalar

    assert check_scalar(0, "x", min_val=0, include_boundaries="left", max_val=1) == 0.0
    with pytest.raises(ValueError, match=r"x 必须是位于半开区间 \[0, 1\) 内的有限实数，实际为 1.0"):
        check_scalar(1, "x", min_val=0, max_val=1, include_boundaries="left")
    with pytest.raises(ValueError, match=r"x 必须是位于半开区间 \(0, 1\] 内的有限实数，实际为 0.0"):
        check_scalar(0, "x", min_val=0, max_val=1, include_boundaries="right")
    assert check_scalar(1, "x", min_val=0, max_val=1, include_boundaries="right") == 1.0
    with pytest.raises(ValueError, match="x 必须是小于 1 的有限实数"):
        check_scalar(1, "x", max_val=1, include_boundaries="neither")
    assert type(check_scalar(np.int64(3), "k", numbers.Integral)) is int
    assert type(check_scalar(np.float32(0.5), "t")) is float
    for bad_call in (dict(include_boundaries="left"), dict(include_boundaries="right"), dict(include_boundaries="all")):
        with pytest.raises(ValueError, match="include_boundaries"):
            check_scalar(0.5, "x", **bad_call)


def test_option_arguments_listed_in_message():
    with pytest.raises(ValueError, match='rule 只能是 "f1"、"cost" 或 "fpr_cap"，实际为 \'accuracy\''):
        ref.choose_threshold(GOOD_Y, GOOD_S, rule="accuracy")
    with pytest.raises(ValueError, match='zero_division 只能是 "nan"、0 或 "raise"，实际为 1'):
        ref.fbeta_score(GOOD_Y, GOOD_P, zero_division=1)


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
    assert ref.roc_curve(GOOD_Y, GOOD_S)._fields == ("fpr", "tpr", "thresholds")
    assert ref.pr_curve(GOOD_Y, GOOD_S)._fields == ("precision", "recall", "thresholds")
    assert ref.calibration_curve(GOOD_Y, GOOD_S)._fields == ("fraction_positive", "mean_predicted", "count", "bin_edges")
    assert type(ref.roc_auc(GOOD_Y, GOOD_S)) is float
