"""coursebook.multiclass, the multiclass metrics of the page 多分类：一致性、排序与概率: each against
scikit-learn where it has the metric, else against a brute force written here from the definition."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from sklearn import metrics

import autograder.reference as ref
from coursebook import multiclass as mc


def _random_case(seed: int, n: int = 120, k: int = 4, tie_levels: int | None = None):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    y[:k] = np.arange(k)                       # every class present
    logits = rng.normal(size=(n, k)) + 1.5 * np.eye(k)[y]
    if tie_levels:                              # coarse scores: many ties inside a row and across rows
        logits = np.round(logits * tie_levels) / tie_levels
    probs = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    pred = rng.integers(0, k, n)
    pred = np.where(rng.random(n) < 0.6, y, pred)
    return y, pred, logits, probs


@pytest.mark.parametrize("seed", range(6))
def test_kappa_and_mcc_match_scikit_learn(seed):
    y, pred, _, _ = _random_case(seed, k=3 + seed % 3)
    assert mc.cohen_kappa(y, pred) == pytest.approx(metrics.cohen_kappa_score(y, pred), abs=1e-12)
    assert mc.multiclass_mcc(y, pred) == pytest.approx(metrics.matthews_corrcoef(y, pred), abs=1e-12)
    np.testing.assert_array_equal(mc.confusion_matrix(y, pred), metrics.confusion_matrix(y, pred))


def test_mcc_of_two_classes_is_the_binary_mcc():
    rng = np.random.default_rng(1)
    y, pred = rng.integers(0, 2, 300), rng.integers(0, 2, 300)
    assert mc.multiclass_mcc(y, pred) == pytest.approx(ref.matthews_corrcoef(y, pred), abs=1e-12)


def test_kappa_from_its_definition():
    """(observed agreement - chance agreement) / (1 - chance agreement), chance from the two margins."""
    y, pred, _, _ = _random_case(7, k=5)
    m = mc.confusion_matrix(y, pred)
    n = m.sum()
    observed = np.trace(m) / n
    chance = sum((m[i].sum() / n) * (m[:, i].sum() / n) for i in range(5))
    assert mc.cohen_kappa(y, pred) == pytest.approx((observed - chance) / (1 - chance), abs=1e-12)


def test_undefined_cases_are_nan():
    assert np.isnan(mc.cohen_kappa([1, 1, 1], [1, 1, 1]))
    assert np.isnan(mc.multiclass_mcc([0, 1, 2], [1, 1, 1]))


@pytest.mark.parametrize(("seed", "tie_levels"), [(0, None), (1, None), (2, 1), (3, 2), (4, 1)])
def test_top_w_accuracy_matches_scikit_learn_with_ties(seed, tie_levels):
    y, _, logits, _ = _random_case(seed, k=5, tie_levels=tie_levels)
    for w in range(1, 5):
        expected = metrics.top_k_accuracy_score(y, logits, k=w, labels=np.arange(5))
        assert mc.top_w_accuracy(y, logits, w) == pytest.approx(expected, abs=1e-12)
    assert mc.top_w_accuracy(y, logits, 5) == 1.0


def test_top_one_accuracy_is_accuracy_without_ties():
    y, _, logits, _ = _random_case(8, k=4)
    assert mc.top_w_accuracy(y, logits, 1) == pytest.approx(np.mean(logits.argmax(axis=1) == y))


@pytest.mark.parametrize(("seed", "k", "tie_levels"), [(0, 3, None), (1, 4, None), (2, 5, 1), (3, 4, 2)])
def test_hand_till_is_scikit_learn_ovo_and_ovr_matches_too(seed, k, tie_levels):
    y, _, _, probs = _random_case(seed, k=k, tie_levels=tie_levels)
    assert mc.hand_till_auc(y, probs) == pytest.approx(metrics.roc_auc_score(y, probs, multi_class="ovo"), abs=1e-12)
    np.testing.assert_allclose(mc.ovr_auc(y, probs), metrics.roc_auc_score(y, probs, multi_class="ovr", average=None),
                               atol=1e-12)


def test_hand_till_by_brute_force_over_sample_pairs():
    """AUC(i|j): over every (sample of class i, sample of class j), score of class i higher (ties 1/2)."""
    y, _, logits, _ = _random_case(11, n=60, k=3, tie_levels=1)
    k = 3
    pair_means = []
    for i, j in itertools.combinations(range(k), 2):
        both = []
        for a, b in ((i, j), (j, i)):
            wins = [1.0 if logits[p, a] > logits[q, a] else 0.5 if logits[p, a] == logits[q, a] else 0.0
                    for p in np.flatnonzero(y == a) for q in np.flatnonzero(y == b)]
            both.append(np.mean(wins))
        pair_means.append(np.mean(both))
    assert mc.hand_till_auc(y, logits) == pytest.approx(np.mean(pair_means), abs=1e-12)


def test_copying_one_class_keeps_hand_till_and_moves_ovr():
    y, _, _, probs = _random_case(5, k=3)
    extra = y == 2
    y2, p2 = np.r_[y, np.repeat(y[extra], 4)], np.r_[probs, np.repeat(probs[extra], 4, axis=0)]
    assert mc.hand_till_auc(y2, p2) == pytest.approx(mc.hand_till_auc(y, probs), abs=1e-12)
    assert abs(mc.ovr_auc(y2, p2)[0] - mc.ovr_auc(y, probs)[0]) > 1e-3


def _ece_by_hand(event: np.ndarray, prob: np.ndarray, n_bins: int) -> float:
    """Equal-width bins, right-closed, the first one also holding 0 (the reference's rule)."""
    bins = np.clip(np.ceil(prob * n_bins).astype(int) - 1, 0, n_bins - 1)
    return sum(np.sum(bins == b) / prob.size * abs(event[bins == b].mean() - prob[bins == b].mean())
               for b in range(n_bins) if np.any(bins == b))


def test_calibration_errors_by_hand():
    y, _, _, probs = _random_case(3, n=400, k=4)
    by_class = [_ece_by_hand((y == c).astype(float), probs[:, c], 10) for c in range(4)]
    assert mc.classwise_ece(y, probs) == pytest.approx(np.mean(by_class), abs=1e-12)
    correct = (probs.argmax(axis=1) == y).astype(float)
    assert mc.top_label_ece(y, probs) == pytest.approx(_ece_by_hand(correct, probs.max(axis=1), 10), abs=1e-12)


def test_top_label_calibrated_yet_classwise_not():
    """Reports (0.6, 0.2, 0.2) when the truth is (0.6, 0.4, 0): the top label is right 60 % of the time."""
    y = np.array([0] * 60 + [1] * 40)
    probs = np.tile([0.6, 0.2, 0.2], (100, 1))
    assert mc.top_label_ece(y, probs) == pytest.approx(0.0, abs=1e-12)
    assert mc.classwise_ece(y, probs) == pytest.approx((0 + 0.2 + 0.2) / 3)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: mc.cohen_kappa([0, 1], [0, 1, 1]), "长度不同"),
        (lambda: mc.cohen_kappa([0, -1], [0, 1]), "负数"),
        (lambda: mc.cohen_kappa([0, 1.5], [0, 1]), "不是整数"),
        (lambda: mc.cohen_kappa([True, False], [0, 1]), "整数类别编号"),
        (lambda: mc.cohen_kappa([], []), "非空"),
        (lambda: mc.top_w_accuracy([0, 1], [[0.5, 0.5], [0.2, 0.8]], 3), "w 必须"),
        (lambda: mc.top_w_accuracy([0, 1], [0.5, 0.5], 1), "二维数组"),
        (lambda: mc.hand_till_auc([0, 0, 1], np.eye(3)), "全部 3 个类别"),
        (lambda: mc.classwise_ece([0, 1], [[0.5, 0.6], [0.2, 0.8]]), "概率分布"),
        (lambda: mc.top_label_ece([0, 2], [[0.5, 0.5], [0.2, 0.8]]), "只有 2 列"),
        (lambda: mc.hand_till_auc([0, 1], [[np.nan, 1.0], [0.0, 1.0]]), "有限的实数"),
    ],
)
def test_bad_input_is_rejected_with_a_message(call, message):
    with pytest.raises(ValueError, match=message):
        call()
