"""The quiz keys are recomputed with autograder.reference; the structure of the data is checked too.

If a test here fails, the quiz data in book/quizzes/quizzes.yml disagrees with the reference
implementation (or with itself): fix the data, not the test.
"""

from __future__ import annotations

import hashlib
import json
import re
from fractions import Fraction
from itertools import combinations
from statistics import NormalDist
from pathlib import Path

import numpy as np
import pytest

import autograder.reference as ref

from .quizdata import load, numbers_in, quiz_ext

DATA = load()
QUIZZES = DATA["quizzes"]


def correct_option(number: int) -> dict:
    (option,) = [o for o in QUIZZES[number]["options"] if o["correct"]]
    return option


def option_values(number: int) -> list[list[Fraction]]:
    return [numbers_in(o["text"]) for o in QUIZZES[number]["options"]]


def assert_key(number: int, expected: list[float], decimals: int | None = None) -> None:
    """Exactly the correct option states ``expected`` (rounded to ``decimals`` when given)."""
    values = option_values(number)

    def matches(vals: list[Fraction]) -> bool:
        if len(vals) != len(expected):
            return False
        if decimals is None:
            return all(abs(float(v) - e) < 1e-9 for v, e in zip(vals, expected))
        return all(abs(float(v) - round(e, decimals)) < 10 ** -(decimals + 3) for v, e in zip(vals, expected))

    hits = [i for i, vals in enumerate(values) if matches(vals)]
    correct = [i for i, o in enumerate(QUIZZES[number]["options"]) if o["correct"]]
    assert hits == correct, f"第 {number} 题：按参考实现应选 {expected}，各选项为 {values}，标为正确的是 {correct}"


# ------------------------------------------------------------------------------------ structure
SEED = range(1, 13)  # the twelve quizzes of the seed documents, on the pages of chapter 1
# where each group is shown: chapter 1 (seed groups) and one group per later chapter, on its last page
GROUP_PAGES = {
    (1, 4): "binary/thresholds_costs.md",
    (5, 8): "binary/pr.md",
    (9, 12): "binary/probability.md",
    (13, 15): "ap_auc/program.md",
    (16, 18): "calibration/recalibration.md",
    (19, 21): "methodology/regression.md",
    (22, 24): "case_study/index.md",
}
BOOK = Path(__file__).resolve().parents[2] / "book"


def _seed_digest() -> tuple[str, str]:
    entries = json.dumps([QUIZZES[n] for n in SEED], ensure_ascii=False, sort_keys=True)
    groups = json.dumps(DATA["groups"][:3], ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(entries.encode()).hexdigest(), hashlib.sha256(groups.encode()).hexdigest()


def test_quizzes_numbered_without_gaps_and_seed_twelve_kept():
    assert sorted(QUIZZES) == list(range(1, len(QUIZZES) + 1))
    assert set(SEED) <= set(QUIZZES)


def test_seed_quizzes_unchanged():
    """The twelve seed quizzes and their three groups are exactly as the course received them.

    Two wordings changed since (issue 41: no 12 Chinese characters shared with a seed): quiz 9's stem says
    “标签依次是 … 报告的正类概率依次是”, quiz 10's key “在对角线下方：模型在这一段把正类概率报高了（高估）”.
    Questions, numbers, options and keys are the seed's.
    """
    assert _seed_digest() == (
        "d2a231cb582ad6649082a5652b9ecb2e0b971c373a4d1efd962f2ab01508ec2a",
        "c0084c8cbcbfc09bc744c1cddffe358d146b1928c3e43365cbe41d043c7e0db2",
    ), "第 1-12 题（种子题）或它们的三个分组被改动了"


def test_groups_cover_every_quiz_once():
    ranges = [tuple(g["range"]) for g in DATA["groups"]]
    assert ranges == list(GROUP_PAGES)
    covered = [n for a, b in ranges for n in range(a, b + 1)]
    assert covered == sorted(QUIZZES)
    assert all(g["intro"].strip() and g["title"].strip() for g in DATA["groups"])
    assert all(3 <= b - a + 1 <= 5 for a, b in ranges if a > 12), "每章新增 3-5 道即时练习"


@pytest.mark.parametrize(("group", "page"), list(GROUP_PAGES.items()), ids=[p for p in GROUP_PAGES.values()])
def test_group_is_the_last_thing_on_its_page_under_its_own_heading(group, page):
    text = (BOOK / page).read_text(encoding="utf-8").rstrip()
    directive = f"```{{quiz-group}} {group[0]}-{group[1]}\n```"
    assert text.endswith(directive), f"{page} 应以第 {group[0]}-{group[1]} 题结束"
    before = text[: -len(directive)].rstrip().splitlines()
    assert before[-1].startswith("## 即时练习"), f"{page}：即时练习前应有自己的二级标题，实际为 {before[-1]!r}"
    assert re.fullmatch(r"\([a-z0-9-]+\)=", before[-2]), f"{page}：即时练习的标题应有标签"
    others = [p for p in BOOK.rglob("*.md") if p != BOOK / page and f"{{quiz-group}} {group[0]}-{group[1]}" in p.read_text(encoding="utf-8")]
    assert not others, f"第 {group[0]}-{group[1]} 题还出现在 {others}"


@pytest.mark.parametrize("number", sorted(QUIZZES))
def test_every_option_explained_and_one_correct(number):
    entry = QUIZZES[number]
    assert entry["stem"].strip()
    assert sum(bool(o["correct"]) for o in entry["options"]) == 1
    for option in entry["options"]:
        assert len(option["explanation"].strip()) >= 20, f"第 {number} 题的选项 {option['text']!r} 缺少解释"
    if entry["kind"] == "truefalse":
        assert [o["text"] for o in entry["options"]] == ["正确", "错误"]


@pytest.mark.parametrize("number", sorted(QUIZZES))
def test_math_is_written_with_single_backslashes(number):
    entry = QUIZZES[number]
    texts = [entry["stem"]] + [o["text"] for o in entry["options"]] + [o["explanation"] for o in entry["options"]]
    for text in texts:
        assert "\\\\" not in text, f"第 {number} 题含有双反斜杠：{text!r}"
        assert text.count("$") % 2 == 0, f"第 {number} 题的 $ 不成对：{text!r}"


def test_seed_kinds():
    kinds = {n: QUIZZES[n]["kind"] for n in SEED}
    assert [n for n, k in kinds.items() if k == "truefalse"] == [2, 3, 6, 8, 12]


def test_new_stems_are_not_copies_of_seed_stems():
    seed_stems = {QUIZZES[n]["stem"] for n in SEED}
    assert not [n for n in QUIZZES if n > 12 and QUIZZES[n]["stem"] in seed_stems]


def test_loader_rejects_two_correct_options(tmp_path):
    bad = tmp_path / "q.yml"
    bad.write_text(
        "quizzes:\n  - number: 1\n    kind: single\n    stem: s\n    options:\n"
        "      - {text: a, correct: true, explanation: x}\n      - {text: b, correct: true, explanation: y}\n",
        encoding="utf-8",
    )
    with pytest.raises(quiz_ext.QuizDataError):
        quiz_ext.load_quizzes(bad)


# ------------------------------------------------------------------------------ numeric keys
def test_quiz_1_fixed_threshold_metrics():
    d = QUIZZES[1]["data"]
    for key in ("tp", "fp", "fn", "tn"):
        assert f"\\operatorname{{{key.upper()}}}={d[key]}" in QUIZZES[1]["stem"]
    m = ref.metrics_from_counts(tp=d["tp"], fp=d["fp"], tn=d["tn"], fn=d["fn"])
    assert_key(1, [m.accuracy, m.precision, m.recall, m.fpr], decimals=3)
    # the distractor D is the specificity, A swaps precision and recall
    assert [float(v) for v in option_values(1)[3]][3] == round(m.specificity, 3)
    assert [float(v) for v in option_values(1)[0]][1:3] == [round(m.recall, 3), round(m.precision, 3)]


def test_quiz_2_lowering_threshold():
    rng = np.random.default_rng(0)
    y = np.r_[np.ones(200, dtype=int), np.zeros(300, dtype=int)]
    s = np.r_[rng.beta(3, 2, 200), rng.beta(2, 3, 300)]
    taus = np.linspace(0.99, 0.01, 50)
    ms = [ref.binary_metrics(y, s, t) for t in taus]
    assert np.all(np.diff([m.recall for m in ms]) >= 0) and np.all(np.diff([m.fpr for m in ms]) >= 0)
    precision_steps = np.diff([m.precision for m in ms if not np.isnan(m.precision)])
    assert (precision_steps > 0).any() and (precision_steps < 0).any()
    assert correct_option(2)["text"] == "正确"


def test_quiz_3_negative_predicted_positive_is_fp():
    c = ref.confusion_counts([0], [1])
    assert (c.fp, c.tn) == (1, 0)
    assert correct_option(3)["text"] == "正确"


def test_quiz_4_recall_undefined_without_positives():
    m = ref.binary_metrics([0, 0, 0], [0.2, 0.7, 0.9], 0.5)
    assert np.isnan(m.recall)
    with pytest.raises(ref.UndefinedMetricError):
        ref.binary_metrics([0, 0, 0], [0.2, 0.7, 0.9], 0.5, zero_division="raise")
    assert "约定" in correct_option(4)["text"]


def test_quiz_5_pairwise_auc():
    d = QUIZZES[5]["data"]
    y = [1] * len(d["positive"]) + [0] * len(d["negative"])
    s = d["positive"] + d["negative"]
    auc = ref.pairwise_auc(y, s)
    assert abs(auc - ref.roc_auc(y, s)) < 1e-12
    assert_key(5, [auc])
    # distractor B counts the tie as 0
    pos, neg = np.array(d["positive"]), np.array(d["negative"])
    ties_as_zero = np.mean(pos[:, None] > neg[None, :])
    assert float(option_values(5)[1][0]) == ties_as_zero


def test_quiz_6_uninformative_baselines():
    prior = QUIZZES[6]["data"]["prevalence"]
    rng = np.random.default_rng(6)
    n = 200_000
    y = (rng.random(n) < prior).astype(int)
    s = rng.random(n)  # scores independent of the labels
    assert abs(ref.roc_auc(y, s) - 0.5) < 0.01
    assert abs(ref.average_precision(y, s) - prior) < 0.01
    assert correct_option(6)["text"] == "错误"


def test_quiz_7_average_precision():
    labels = QUIZZES[7]["data"]["labels"]
    scores = np.arange(len(labels), 0, -1, dtype=float)  # already sorted from high to low
    ap = ref.average_precision(labels, scores)
    assert_key(7, [ap])
    assert Fraction(ap).limit_denominator(100) == Fraction(5, 6)
    # distractors: B is the ROC-AUC of the same ranking, C the trapezoidal PR area from (0, 1)
    assert float(option_values(7)[1][0]) == pytest.approx(ref.roc_auc(labels, scores))
    c = ref.pr_curve(labels, scores)
    recall = np.r_[0.0, c.recall]
    precision = np.r_[1.0, c.precision]
    trapezoid = float(np.sum(np.diff(recall) * (precision[1:] + precision[:-1]) / 2))
    assert float(option_values(7)[2][0]) == pytest.approx(trapezoid)


def test_quiz_8_roc_points_are_thresholds_of_one_model():
    y, s = [1, 1, 0, 1, 0], [0.9, 0.8, 0.7, 0.4, 0.2]
    curve = ref.roc_curve(y, s)
    for t, f, r in zip(curve.thresholds, curve.fpr, curve.tpr):
        if np.isfinite(t):
            m = ref.binary_metrics(y, s, t)
            assert (m.fpr, m.recall) == (f, r)
    assert correct_option(8)["text"] == "正确"


def test_quiz_9_brier():
    d = QUIZZES[9]["data"]
    bs = ref.brier_score(d["labels"], d["probs"])
    constant = ref.brier_score(d["labels"], [d["constant"]] * len(d["labels"]))
    assert constant == pytest.approx(ref.brier_baseline(d["labels"]))
    assert_key(9, [bs, constant])
    assert float(option_values(9)[1][0]) == pytest.approx(bs * len(d["labels"]))  # forgot to divide by n


def test_quiz_10_reading_a_calibration_point():
    d = QUIZZES[10]["data"]
    # five samples predicted 0.8, three of them positive: one bin at (0.80, 0.60)
    curve = ref.calibration_curve([1, 1, 1, 0, 0], [d["mean_predicted"]] * 5, n_bins=10)
    point = (float(curve.mean_predicted[0]), float(curve.fraction_positive[0]))
    assert point == pytest.approx((d["mean_predicted"], d["fraction_positive"]))
    below_diagonal = point[1] < point[0]  # fewer positives than predicted: over-estimation
    assert below_diagonal
    key = correct_option(10)["text"]
    assert numbers_in(key)[:2] == [Fraction("0.80"), Fraction("0.60")]
    assert "下方" in key and "高估" in key


def test_quiz_11_single_sample_brier():
    d = QUIZZES[11]["data"]
    a = ref.brier_score([d["label"]], [d["prob_a"]])
    b = ref.brier_score([d["label"]], [d["prob_b"]])
    assert a < b
    assert correct_option(11)["text"] == "模型甲"
    assert f"{a:.2f}" in correct_option(11)["explanation"] and f"{b:.2f}" in correct_option(11)["explanation"]


def test_quiz_12_one_bin_on_the_diagonal_is_not_calibration():
    # one bin exactly calibrated, another far off
    y = [1, 0, 1, 0] + [0] * 10
    p = [0.5, 0.5, 0.5, 0.5] + [0.9] * 10
    curve = ref.calibration_curve(y, p, n_bins=10)
    gaps = np.abs(curve.mean_predicted - curve.fraction_positive)
    assert gaps.min() == pytest.approx(0.0) and gaps.max() > 0.5
    assert ref.expected_calibration_error(y, p, n_bins=10) > 0.5
    assert correct_option(12)["text"] == "正确"


# ------------------------------------------------------------------ chapters 2-5 (quizzes 13-24)
def test_quiz_13_average_precision_with_a_tie_group():
    d = QUIZZES[13]["data"]
    y, s = d["labels"], d["scores"]
    assert_key(13, [ref.average_precision(y, s)], decimals=3)
    assert Fraction(ref.average_precision(y, s)).limit_denominator(100) == Fraction(34, 45)
    # distractors: B breaks the tie with the positive first, C is the ROC-AUC, D the share of positives
    positive_first = ref.average_precision(y, [0.9, 0.71, 0.7, 0.4, 0.2])
    assert float(option_values(13)[1][0]) == round(positive_first, 3)
    assert float(option_values(13)[2][0]) == round(ref.roc_auc(y, s), 3)
    assert float(option_values(13)[3][0]) == round(float(np.mean(y)), 3)
    # D's explanation: the expected AP of a random ranking of these 5 samples (3 positive), by exhausting the
    # 10 placements of the positives in a strict ranking -- not the share of positives (issue 41)
    ranking = np.arange(len(y), 0, -1)
    placements = [[int(i in places) for i in range(len(y))] for places in combinations(range(len(y)), sum(y))]
    expected = float(np.mean([ref.average_precision(p, ranking) for p in placements]))
    assert len(placements) == 10 and f"${expected:.3f}$" in QUIZZES[13]["options"][3]["explanation"]
    assert expected > float(np.mean(y)) + 0.1


def test_quiz_14_auc_of_two_halves_is_not_the_auc():
    rng = np.random.default_rng(14)
    gaps = []
    for _ in range(20):
        y = rng.permutation(np.r_[np.ones(20, dtype=int), np.zeros(20, dtype=int)])
        s = rng.normal(size=40) + y
        halves = [ref.roc_auc(y[:20], s[:20]), ref.roc_auc(y[20:], s[20:])]
        gaps.append(abs(np.mean(halves) - ref.roc_auc(y, s)))
    assert max(gaps) > 0.01
    assert correct_option(14)["text"] == "错误"


def test_quiz_15_d_prime():
    auc = QUIZZES[15]["data"]["auc"]
    assert_key(15, [ref.d_prime(auc)], decimals=2)
    z = NormalDist().inv_cdf(auc)
    assert "1.405" in QUIZZES[15]["stem"] and round(z, 3) == 1.405
    assert [float(v[0]) for v in option_values(15)] == [round(z, 2), round(ref.d_prime(auc), 2), round(2 * z, 2), round(auc * np.sqrt(2), 2)]


def test_quiz_16_ece_weighted_by_bin_counts():
    d = QUIZZES[16]["data"]
    low, high = d["low"], d["high"]
    y = [1] * low["positives"] + [0] * (low["n"] - low["positives"]) + [1] * high["positives"] + [0] * (high["n"] - high["positives"])
    p = [low["prob"]] * low["n"] + [high["prob"]] * high["n"]
    ece = ref.expected_calibration_error(y, p, n_bins=2)
    assert_key(16, [ece], decimals=3)
    curve = ref.calibration_curve(y, p, n_bins=2)
    gaps = np.abs(curve.fraction_positive - curve.mean_predicted)
    assert [float(v[0]) for v in option_values(16)[1:]] == [round(gaps.mean(), 3), round(gaps.max(), 3), round(gaps.sum(), 3)]


def test_quiz_17_zero_ece_can_hide_opposite_errors():
    d = QUIZZES[17]["data"]
    n = d["n_each"]
    y, p = [], []
    for prob, rate in zip(d["probs"], d["rates"]):
        k = round(rate * n)
        y += [1] * k + [0] * (n - k)
        p += [prob] * n
    assert ref.expected_calibration_error(y, p, n_bins=d["n_bins"]) == pytest.approx(0.0, abs=1e-12)
    fine = ref.calibration_curve(y, p, n_bins=100)  # one bin per reported value
    assert np.abs(fine.fraction_positive - fine.mean_predicted).min() == pytest.approx(0.1)
    assert correct_option(17)["text"] == "错误"


def test_quiz_18_only_isotonic_recalibration_can_change_auc():
    from sklearn.isotonic import IsotonicRegression
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(18)
    y_val, y_test = rng.integers(0, 2, 400), rng.integers(0, 2, 400)
    s_val, s_test = rng.normal(size=400) + y_val, rng.normal(size=400) + y_test
    auc = ref.roc_auc(y_test, s_test)
    platt = LogisticRegression().fit(s_val[:, None], y_val)
    assert platt.coef_[0, 0] > 0
    assert ref.roc_auc(y_test, platt.predict_proba(s_test[:, None])[:, 1]) == pytest.approx(auc, abs=1e-12)
    p = 1 / (1 + np.exp(-s_test))
    temperature = 1 / (1 + np.exp(-np.log(p / (1 - p)) / 2.5))
    assert ref.roc_auc(y_test, temperature) == pytest.approx(auc, abs=1e-12)
    iso = IsotonicRegression(out_of_bounds="clip").fit(s_val, y_val).predict(s_test)
    assert np.unique(iso).size < np.unique(s_test).size  # ties created
    assert abs(ref.roc_auc(y_test, iso) - auc) > 1e-3
    assert correct_option(18)["text"] == "保序回归"


def test_quiz_19_bootstrap_out_of_bag_probability():
    m = QUIZZES[19]["data"]["m"]
    exact = (1 - 1 / m) ** m
    rng = np.random.default_rng(19)
    draws = rng.integers(0, m, size=(200_000, m))
    assert abs(np.mean((draws != 0).all(axis=1)) - exact) < 0.005
    assert_key(19, [exact], decimals=3)
    assert [float(v[0]) for v in option_values(19)[1:]] == [round(np.exp(-1), 3), round(1 - np.exp(-1), 3), round(1 / m, 3)]


def test_quiz_20_wilson_interval_with_no_error():
    d = QUIZZES[20]["data"]
    est, low, high = ref.proportion_ci(d["k"], d["n"])
    assert_key(20, [low, high], decimals=3)
    cp_high = ref.proportion_ci(d["k"], d["n"], method="clopper-pearson").high
    assert round(cp_high, 3) == round(high, 3)  # the explanation says Clopper-Pearson gives about the same
    assert [float(v) for v in option_values(20)[2]] == [0.0, 3 / d["n"]]
    assert [float(v) for v in option_values(20)[3]] == [0.0, 1 / d["n"]]


def test_quiz_21_overlapping_intervals_yet_a_significant_paired_test():
    rng = np.random.default_rng(21)
    n = 300
    y = np.r_[np.ones(n // 2, dtype=int), np.zeros(n // 2, dtype=int)]
    a = rng.normal(size=n) + 1.2 * y
    b = a + rng.normal(scale=0.5, size=n) - 0.25 * y  # the same scores, a little noisier and weaker
    _, low_a, high_a = ref.auc_ci(y, a)
    _, low_b, high_b = ref.auc_ci(y, b)
    assert max(low_a, low_b) < min(high_a, high_b)  # the two intervals overlap
    assert ref.delong_test(y, a, b).p_value < 0.05
    assert correct_option(21)["text"] == "错误"


def test_quiz_22_inverting_the_predictions():
    d = QUIZZES[22]["data"]
    y = np.r_[np.ones(10, dtype=int), np.zeros(10, dtype=int)]
    pred = np.r_[np.ones(round(d["tpr"] * 10), dtype=int), np.zeros(10 - round(d["tpr"] * 10), dtype=int),
                 np.ones(round(d["fpr"] * 10), dtype=int), np.zeros(10 - round(d["fpr"] * 10), dtype=int)]
    before = ref.binary_metrics(y, pred, 1)
    after = ref.binary_metrics(y, 1 - pred, 1)
    assert (before.fpr, before.recall) == (d["fpr"], d["tpr"])
    assert_key(22, [after.fpr, after.recall])


def test_quiz_23_tripling_the_negatives():
    rng = np.random.default_rng(23)
    y = np.r_[np.ones(50, dtype=int), np.zeros(150, dtype=int)]
    s = rng.normal(size=200) + y
    y3 = np.r_[y, np.zeros(300, dtype=int)]
    s3 = np.r_[s, s[50:], s[50:]]
    assert ref.roc_auc(y3, s3) == pytest.approx(ref.roc_auc(y, s), abs=1e-12)
    np.testing.assert_allclose(ref.roc_curve(y3, s3).fpr, ref.roc_curve(y, s).fpr)
    m, m3 = ref.binary_metrics(y, s, 0.5), ref.binary_metrics(y3, s3, 0.5)
    assert m.fp > 0 and m3.precision < m.precision and m3.recall == m.recall
    assert correct_option(23)["text"] == "正确"


def test_quiz_24_binormal_auc():
    d = QUIZZES[24]["data"]["d"]
    rng = np.random.default_rng(24)
    y = np.r_[np.ones(100_000, dtype=int), np.zeros(100_000, dtype=int)]
    s = rng.normal(size=y.size) + d * y
    theory = NormalDist().cdf(d / np.sqrt(2))
    assert abs(ref.roc_auc(y, s) - theory) < 0.005
    assert abs(ref.d_prime(theory) - d) < 1e-12
    assert_key(24, [theory], decimals=3)
    assert [float(v[0]) for v in option_values(24)[1:]] == [round(NormalDist().cdf(d), 3), 0.5, round(NormalDist().cdf(d * np.sqrt(2)), 3)]
