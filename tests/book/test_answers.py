"""Fast checks of the code behind book/binary/answers.md (no book build).

* :mod:`coursebook.experiments`: the naive ROC equals the reference on tied data, the
  threshold selection follows the tie rule, the measuring helpers count what they claim;
* the instructor solutions of exercises 5-7 printed on the page run and pass their own tests.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import autograder.reference as ref
from coursebook import experiments as ex

ANSWERS = Path(__file__).resolve().parents[2] / "book" / "binary" / "answers.md"


@pytest.mark.parametrize("seed", range(20))
def test_naive_roc_equals_reference_on_tied_data(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 300))
    y = rng.integers(0, 2, n)
    y[:2] = [0, 1]  # both classes present
    s = rng.integers(0, int(rng.integers(1, 12)), n) / 4.0  # few distinct values: many ties
    naive = ex.naive_roc(y, s)
    reference = ref.roc_curve(y, s)
    assert np.array_equal(naive.thresholds, reference.thresholds)
    assert ex.max_roc_gap(naive, reference) == 0.0
    assert (naive.fpr[0], naive.tpr[0], naive.fpr[-1], naive.tpr[-1]) == (0.0, 0.0, 1.0, 1.0)


def test_naive_roc_rejects_bad_labels_and_single_class():
    with pytest.raises(ValueError):
        ex.naive_roc([0, 2, 1], [0.1, 0.2, 0.3])
    with pytest.raises(ValueError):
        ex.naive_roc([1, 1], [0.1, 0.2])


def test_max_roc_gap_refuses_different_thresholds():
    a = ref.roc_curve([1, 0, 1, 0], [0.9, 0.8, 0.7, 0.1])
    b = ref.roc_curve([1, 0, 1, 0], [0.9, 0.8, 0.7, 0.2])
    with pytest.raises(ValueError):
        ex.max_roc_gap(a, b)


def test_select_threshold_tie_goes_to_highest_threshold():
    # Expected cost with prior 0.5 and unit costs: 0.25 at both 0.9 and 0.7 -> 0.9 wins.
    y, s = [1, 0, 1, 0], [0.9, 0.8, 0.7, 0.1]
    choice = ex.select_threshold(y, s, rule="cost", prior=0.5, c_fp=1.0, c_fn=1.0)
    assert choice.threshold == 0.9
    assert choice.value == pytest.approx(0.25)


@pytest.mark.parametrize("seed", range(15))
@pytest.mark.parametrize("rule", ["f1", "cost"])
def test_select_threshold_matches_brute_force(seed, rule):
    rng = np.random.default_rng(100 + seed)
    n = 60
    y = rng.integers(0, 2, n)
    y[:2] = [0, 1]
    s = rng.integers(0, 10, n) / 10.0
    prior, c_fp, c_fn = 0.2, 1.0, 3.0
    candidates = np.r_[np.inf, np.unique(s)[::-1]]  # +inf and every distinct validation score, highest first
    values = []
    for tau in candidates:
        pred = s >= tau
        tpr = np.sum(pred & (y == 1)) / np.sum(y == 1)
        fpr = np.sum(pred & (y == 0)) / np.sum(y == 0)
        if rule == "cost":
            values.append(c_fp * (1 - prior) * fpr + c_fn * prior * (1 - tpr))
        else:
            den = prior * tpr + (1 - prior) * fpr
            precision = prior * tpr / den if den > 0 else 0.0
            values.append(2 * precision * tpr / (precision + tpr) if precision + tpr > 0 else 0.0)
    values = np.array(values)
    best = values.min() if rule == "cost" else values.max()
    expected = candidates[np.flatnonzero(np.isclose(values, best, rtol=0, atol=1e-12))[0]]  # highest tied threshold
    choice = ex.select_threshold(y, s, rule=rule, prior=prior, c_fp=c_fp, c_fn=c_fn)
    assert choice.threshold == expected


def test_select_threshold_fixed_ignores_data():
    assert ex.select_threshold([0, 1], [0.2, 0.9], rule="fixed").threshold == 0.5


def test_balanced_resample_keeps_all_minority_and_balances():
    y = np.r_[np.ones(30, int), np.zeros(270, int)]
    idx = ex.balanced_resample(y, np.random.default_rng(0))
    assert np.all(np.diff(idx) > 0)
    assert y[idx].sum() == 30 and len(idx) == 60
    assert set(np.flatnonzero(y == 1)) <= set(idx.tolist())


def test_evaluate_threshold_counts_and_cost():
    r = ex.evaluate_threshold([1, 0, 1, 0], [0.9, 0.8, 0.7, 0.1], 0.75, c_fp=2.0, c_fn=5.0)
    assert (r.tp, r.fp, r.tn, r.fn) == (1, 1, 1, 1)
    assert r.cost == 2.0 * 1 + 5.0 * 1
    none = ex.evaluate_threshold([1, 0], [0.9, 0.1], float("inf"), c_fp=1.0, c_fn=1.0)
    assert (none.tp, none.fp) == (0, 0) and np.isnan(none.precision) and none.cost == 1.0


def test_count_sort_calls_sees_numpy_sorts():
    a = np.arange(7.0)[::-1].copy()
    _, sizes = ex.count_sort_calls(lambda: (np.sort(a), np.argsort(a[:3]), np.unique(a[:5])))
    assert sizes[:2] == [7, 3] and len(sizes) >= 3
    _, none = ex.count_sort_calls(lambda: a.sum())
    assert none == []


def test_median_time_and_peak_memory():
    calls = []
    t = ex.median_time(lambda: calls.append(1), repeats=3, warmup=2)
    assert len(calls) == 5 and t >= 0
    result, peak = ex.peak_memory(lambda: np.ones(1_000_000).sum())
    assert result == 1_000_000 and peak >= 8_000_000  # one float64 array of 10**6 elements


def test_count_parameters():
    from sklearn.linear_model import LogisticRegression
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X = np.random.default_rng(0).normal(size=(40, 3))
    y = (X[:, 0] > 0).astype(int)
    assert ex.count_parameters(LogisticRegression().fit(X, y)) == 4
    mlp = make_pipeline(StandardScaler(), MLPClassifier(hidden_layer_sizes=(5,), max_iter=20, random_state=0))
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mlp.fit(X, y)
    assert ex.count_parameters(mlp) == 3 * 5 + 5 + 5 * 1 + 1


def test_markdown_table():
    assert ex.markdown_table(["a", "b"], [[1, "x|y"]], "lr").splitlines() == ["| a | b |", "|:--|--:|", "| 1 | x\\|y |"]
    with pytest.raises(ValueError):
        ex.markdown_table(["a"], [[1, 2]])


def _instructor_solution_code() -> str:
    text = ANSWERS.read_text(encoding="utf-8")
    block = re.search(r"^::::\{instructor-only\}\n(.*?)^::::$", text, flags=re.S | re.M)
    assert block, "answers.md 中没有 instructor-only 块"
    parts = re.findall(r"```python\n(.*?)```", block.group(1), flags=re.S)
    assert len(parts) == 3, "应有第 5、6、7 题三段解答代码"
    return "\n\n".join(parts)


def test_instructor_solutions_run_and_pass_their_tests(tmp_path):
    module = tmp_path / "test_solutions_5_7.py"
    module.write_text(_instructor_solution_code(), encoding="utf-8")
    assert pytest.main(["-q", "-p", "no:cacheprovider", str(module)]) == 0


def test_instructor_solutions_agree_with_reference():
    namespace: dict = {}
    exec(compile(_instructor_solution_code(), "solutions_5_7", "exec"), namespace)  # noqa: S102 - the course's own solution code
    rng = np.random.default_rng(57)
    for _ in range(30):
        n = int(rng.integers(2, 80))
        y = rng.integers(0, 2, n)
        y[:2] = [0, 1]
        s = rng.integers(0, 7, n) / 6.0
        m = namespace["threshold_metrics"](y, s, 0.5)
        r = ref.binary_metrics(y, s, 0.5)
        assert (m.tp, m.fp, m.tn, m.fn) == (r.tp, r.fp, r.tn, r.fn)
        np.testing.assert_allclose(m[4:], r[4:], equal_nan=True)
        roc = namespace["roc_scan"](y, s)
        curve = ref.roc_curve(y, s)
        assert np.array_equal(roc.thresholds, curve.thresholds)
        np.testing.assert_allclose(roc.fpr, curve.fpr)
        np.testing.assert_allclose(roc.tpr, curve.tpr)
        assert roc.auc == pytest.approx(ref.roc_auc(y, s), abs=1e-12)
        assert namespace["pairwise_auc_half"](y, s) == pytest.approx(ref.pairwise_auc(y, s), abs=1e-12)
