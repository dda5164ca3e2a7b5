"""Unit tests of the demo's seeded data, tab-1 numbers and tab-2 workflow (no browser)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from autograder.reference import average_precision, binary_metrics, brier_score, expected_calibration_error, roc_auc, roc_curve
from demo.__main__ import DEFAULT_HOST, DEFAULT_PORT
from demo.data import DemoInputError, class_scores, make_score_data, make_workflow_data, prior_weights, split_three
from demo.views import UNDEFINED, check_bins, compute_tab1, fmt, fmt_threshold
from demo.workflow import Rule, run_workflow



def _has_chinese(text: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" for ch in text)


@pytest.mark.parametrize(("pi", "expected"), [(0.5, (1, 1)), (0.3, (3, 7)), (0.25, (1, 3)), (0.01, (1, 99)), (0.99, (99, 1)), (0.37, (37, 63))])
def test_prior_weights_reduced_fraction(pi, expected):
    a, b = prior_weights(pi)
    assert (a, b) == expected
    assert math.gcd(a, b) == 1


@pytest.mark.parametrize("bad", [0, 0.0, 1, 1.0, 0.004, 0.996, -0.1, 1.5, None, "x", float("nan")])
def test_prior_weights_rejects_one_class_or_garbage(bad):
    with pytest.raises(DemoInputError) as info:
        prior_weights(bad)
    assert _has_chinese(str(info.value))


@pytest.mark.parametrize("dist", ["binormal", "beta"])
def test_class_scores_do_not_depend_on_pi_and_auc_is_exactly_invariant(dist):
    base = make_score_data(150, 0.5, dist, 1.2, 7)
    reference_auc = roc_auc(base.y_true, base.y_score)
    fpr0, tpr0, _ = roc_curve(base.y_true, base.y_score)
    aps = set()
    for pi in (0.01, 0.1, 0.3, 0.37, 0.5, 0.8, 0.99):
        d = make_score_data(150, pi, dist, 1.2, 7)
        np.testing.assert_array_equal(d.neg, base.neg)
        np.testing.assert_array_equal(d.pos, base.pos)
        assert d.y_true.mean() == d.a / (d.a + d.b)
        assert abs(d.y_true.mean() - pi) < 1e-12
        assert roc_auc(d.y_true, d.y_score) == reference_auc  # exact, not approximate
        fpr, tpr, _ = roc_curve(d.y_true, d.y_score)
        np.testing.assert_array_equal(fpr, fpr0)
        np.testing.assert_array_equal(tpr, tpr0)
        aps.add(round(average_precision(d.y_true, d.y_score), 6))
    assert len(aps) == 7  # AP moves with pi


def test_scores_are_seeded_probabilities():
    n1, p1 = class_scores(100, "binormal", 1.5, 3)
    n2, p2 = class_scores(100, "binormal", 1.5, 3)
    n3, _ = class_scores(100, "binormal", 1.5, 4)
    np.testing.assert_array_equal(n1, n2)
    np.testing.assert_array_equal(p1, p2)
    assert not np.array_equal(n1, n3)
    for arr in (n1, p1, *class_scores(100, "beta", 2.0, 3)):
        assert arr.shape == (100,) and np.all((arr >= 0) & (arr <= 1))


def test_binormal_score_is_posterior_at_even_prior():
    # With pi = 0.5 and sigma = 1 the score sigmoid(d x - d^2/2) is calibrated: large sample, small ECE.
    d = make_score_data(2000, 0.5, "binormal", 1.5, 0)
    assert expected_calibration_error(d.y_true, d.y_score, 10, "uniform") < 0.03


@pytest.mark.parametrize(
    "kwargs",
    [
        {"m": 5},
        {"m": None},
        {"m": 2.5},
        {"separation": -1},
        {"separation": 9},
        {"seed": -1},
        {"seed": None},
        {"dist": "cauchy"},
        {"sigma": 0},
    ],
)
def test_make_score_data_bad_inputs_have_chinese_messages(kwargs):
    args = {"m": 100, "pi": 0.5, "dist": "binormal", "separation": 1.0, "seed": 0, "sigma": 1.0} | kwargs
    with pytest.raises(DemoInputError) as info:
        make_score_data(**args)
    assert _has_chinese(str(info.value))


@pytest.mark.parametrize("bad", [0, -3, 51, None, 2.5])
def test_check_bins_rejects(bad):
    with pytest.raises(DemoInputError) as info:
        check_bins(bad)
    assert _has_chinese(str(info.value))


def test_formatting_rules():
    assert fmt(0.123456) == "0.1235"
    assert fmt(float("nan")) == UNDEFINED
    assert fmt(None) == UNDEFINED
    assert fmt(1) == "1.0000"
    assert fmt_threshold(float("inf")) == "+∞"


def test_compute_tab1_matches_reference():
    r = compute_tab1(120, 0.3, "beta", 1.0, 1.0, 5, 0.45, 8, "quantile", 0.02)
    d = make_score_data(120, 0.3, "beta", 1.0, 5)
    assert r.metrics == binary_metrics(d.y_true, d.y_score, 0.45)
    assert r.auc == roc_auc(d.y_true, d.y_score)
    assert r.brier == brier_score(d.y_true, d.y_score)
    assert r.ece == expected_calibration_error(d.y_true, d.y_score, 8, "quantile")
    assert r.calibration.count.sum() == d.y_true.size
    assert r.deploy_error is None and 0 <= r.deploy_precision <= 1


def test_compute_tab1_undefined_precision_and_bad_prior():
    r = compute_tab1(50, 0.5, "beta", 1.0, 1.0, 0, 1.0, 10, "uniform", 0.0)
    assert r.metrics.tp + r.metrics.fp == 0 and math.isnan(r.metrics.precision)
    assert fmt(r.metrics.precision) == UNDEFINED
    assert r.deploy_precision is None and _has_chinese(r.deploy_error)


def test_split_three_is_a_partition():
    tr, va, te = split_three(101, 3)
    together = np.concatenate((tr, va, te))
    assert sorted(together.tolist()) == list(range(101))
    assert (len(tr), len(va), len(te)) == (61, 20, 20)


@pytest.mark.parametrize("rule", [Rule("f1"), Rule("cost", c_fp=1.0, c_fn=5.0), Rule("fpr_cap", max_fpr=0.1)])
def test_workflow_optimistic_choice_is_never_worse_on_test(rule):
    data = make_workflow_data(400, 0.3, 2)
    r = run_workflow(data, rule, 2)
    assert 0 <= r.chosen < len(r.candidates)
    if rule.name == "fpr_cap":
        # the optimistic choice respects the cap on test; the honest one may break it there
        assert r.optimistic_metrics.fpr <= rule.max_fpr
        if r.test_metrics.fpr <= rule.max_fpr:
            assert r.optimistic_value >= r.test_value
    elif rule.maximise:
        assert r.optimistic_value >= r.test_value
    else:
        assert r.optimistic_value <= r.test_value
    # the honest test numbers are the reference's at the threshold chosen on validation
    val_choice = r.candidates[r.chosen].val_choice
    assert r.threshold == val_choice.threshold


def test_workflow_reports_a_split_without_positives():
    data = make_workflow_data(50, 0.02, 0)
    assert int(data.y_test.sum()) == 0
    with pytest.raises(DemoInputError, match="测试集.*没有正类"):
        run_workflow(data, Rule("f1"), 0)


def test_default_host_and_port():
    assert DEFAULT_HOST == "127.0.0.1"
    assert DEFAULT_PORT == 8050
