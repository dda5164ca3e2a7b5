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
    # one group per section of chapters 2-5 (quizzes 25-72); a page that also ends its chapter shows the
    # section's group right before the chapter's group
    (25, 27): "ap_auc/ap.md",
    (28, 29): "ap_auc/auc.md",
    (30, 31): "ap_auc/dprime.md",
    (32, 34): "ap_auc/det.md",
    (35, 37): "ap_auc/cost_curves.md",
    (38, 39): "ap_auc/program.md",
    (40, 41): "calibration/definition.md",
    (42, 43): "calibration/ece.md",
    (44, 45): "calibration/beyond_mean.md",
    (46, 47): "calibration/recalibration.md",
    (48, 49): "methodology/index.md",
    (50, 52): "methodology/resampling.md",
    (53, 54): "methodology/estimates.md",
    (55, 56): "methodology/intervals.md",
    (57, 59): "methodology/tests.md",
    (60, 62): "methodology/bias_variance.md",
    (63, 65): "methodology/multiclass.md",
    (66, 68): "methodology/multiclass_depth.md",
    (69, 70): "methodology/regression.md",
    (71, 72): "case_study/index.md",
}
CHAPTER_GROUPS = [(13, 15), (16, 18), (19, 21), (22, 24)]   # one review group per chapter 2-5, on its last page
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
    assert all(b - a + 1 == 3 for a, b in CHAPTER_GROUPS), "第 2-5 章各有一组 3 道的章末即时练习"
    assert all(2 <= b - a + 1 <= 3 for a, b in ranges if a > 24), "第 2-5 章每一节有 2-3 道即时练习"


_QUIZ_SECTION = re.compile(r"\(([a-z0-9-]+)\)=\n## 即时练习[^\n]*\n\n```\{quiz-group\} (\d+)-(\d+)\n```\n*")


@pytest.mark.parametrize(("group", "page"), list(GROUP_PAGES.items()), ids=[f"{p}:{a}-{b}" for (a, b), p in GROUP_PAGES.items()])
def test_group_is_the_last_thing_on_its_page_under_its_own_heading(group, page):
    """Each group sits under a labelled heading of its own, and only quiz sections follow it: the quizzes end the page."""
    text = (BOOK / page).read_text(encoding="utf-8").rstrip() + "\n"
    directive = f"```{{quiz-group}} {group[0]}-{group[1]}\n```\n"
    assert text.count(directive) == 1, f"{page} 应恰好显示一次第 {group[0]}-{group[1]} 题"
    before, after = text.split(directive)
    lines = before.rstrip().splitlines()
    assert lines[-1].startswith("## 即时练习"), f"{page}：即时练习前应有自己的二级标题，实际为 {lines[-1]!r}"
    assert re.fullmatch(r"\([a-z0-9-]+\)=", lines[-2]), f"{page}：即时练习的标题应有标签"
    assert _QUIZ_SECTION.sub("", after).strip() == "", f"{page}：第 {group[0]}-{group[1]} 题之后只能是别的即时练习"
    others = [p for p in BOOK.rglob("*.md") if p != BOOK / page and f"{{quiz-group}} {group[0]}-{group[1]}" in p.read_text(encoding="utf-8")]
    assert not others, f"第 {group[0]}-{group[1]} 题还出现在 {others}"


def test_a_page_ending_a_chapter_shows_the_section_group_before_the_chapter_group():
    for chapter_group in CHAPTER_GROUPS:
        page = GROUP_PAGES[chapter_group]
        text = (BOOK / page).read_text(encoding="utf-8").rstrip()
        assert text.endswith(f"```{{quiz-group}} {chapter_group[0]}-{chapter_group[1]}\n```"), page
        section_groups = [g for g, p in GROUP_PAGES.items() if p == page and g not in CHAPTER_GROUPS]
        assert len(section_groups) == 1, page


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


# ------------------------------------------------- sections of chapters 2-5 (quizzes 25-72)
def _in_order(labels):
    """Scores that keep the written order (highest first)."""
    return np.arange(len(labels), 0, -1, dtype=float)


def test_quiz_25_break_even_point():
    labels = QUIZZES[25]["data"]["labels"]
    n_pos = sum(labels)
    bep = sum(labels[:n_pos]) / n_pos
    # the definition: the place where precision equals recall
    equal = [sum(labels[:k]) / k for k in range(1, len(labels) + 1) if sum(labels[:k]) and sum(labels[:k]) / k == sum(labels[:k]) / n_pos]
    assert equal == [bep]
    assert_key(25, [bep], decimals=3)
    ap = ref.average_precision(labels, _in_order(labels))
    assert [float(v[0]) for v in option_values(25)[1:]] == [round(ap, 3), round(float(np.mean(labels)), 3), round(sum(labels[:5]) / n_pos, 3)]


def test_quiz_26_ap_and_bep_can_disagree():
    a, b = [1, 1, 0, 0, 0, 0, 1, 1, 0, 0], [0, 1, 1, 1, 0, 0, 0, 0, 0, 1]
    ap_a, ap_b = ref.average_precision(a, _in_order(a)), ref.average_precision(b, _in_order(b))
    assert ap_a > ap_b and sum(a[:4]) < sum(b[:4])
    assert correct_option(26)["text"] == "错误"


def test_quiz_27_ap_is_the_rectangle_area():
    rng = np.random.default_rng(27)
    y = rng.integers(0, 2, 200)
    s = rng.normal(size=200) + y
    c = ref.pr_curve(y, s)
    recall, precision = np.r_[0.0, c.recall], np.r_[1.0, c.precision]
    rectangles = float(np.sum(np.diff(recall) * precision[1:]))
    trapezoid = float(np.sum(np.diff(recall) * (precision[1:] + precision[:-1]) / 2))
    assert rectangles == pytest.approx(ref.average_precision(y, s), abs=1e-12) and abs(trapezoid - rectangles) > 1e-6
    assert "矩形" in correct_option(27)["text"]


def test_quiz_28_one_positive_jumps_over_every_negative():
    d = QUIZZES[28]["data"]
    y = [0] * d["n_neg"] + [1] * (d["n_pos"] - 1) + [1]
    rng = np.random.default_rng(28)
    s = rng.permutation(np.arange(1.0, len(y) + 1))
    s[-1] = s.min() - 1                      # the last positive below everything
    before = ref.roc_auc(y, s)
    s[-1] = s.max() + 1                      # ... then above everything
    after = ref.roc_auc(y, s)
    assert_key(28, [after - before], decimals=3)
    assert after - before == pytest.approx(d["n_neg"] / (d["n_pos"] * d["n_neg"]))


def test_quiz_29_same_auc_different_precision():
    rng = np.random.default_rng(29)
    precisions = []
    for prior in (0.01, 0.5):
        n = 200_000
        y = (rng.random(n) < prior).astype(int)
        s = rng.normal(size=n) + 1.5 * y
        assert ref.roc_auc(y, s) == pytest.approx(NormalDist().cdf(1.5 / np.sqrt(2)), abs=0.01)
        precisions.append(ref.binary_metrics(y, s, 1.0).precision)
    assert precisions[1] - precisions[0] > 0.5
    assert correct_option(29)["text"] == "错误"


def test_quiz_30_d_prime_gain():
    d = QUIZZES[30]["data"]
    gain = ref.d_prime(d["auc_high"]) - ref.d_prime(d["auc_low"])
    assert_key(30, [gain], decimals=2)
    z_low, z_high = NormalDist().inv_cdf(d["auc_low"]), NormalDist().inv_cdf(d["auc_high"])
    assert "1.645" in QUIZZES[30]["stem"] and round(z_low, 3) == 1.645 and round(z_high, 3) == 2.326
    assert [float(v[0]) for v in option_values(30)[1:]] == [round(d["auc_high"] - d["auc_low"], 2), round(z_high - z_low, 2),
                                                           round(2 * (z_high - z_low), 2)]


def test_quiz_31_classic_d_prime_moves_when_variances_differ():
    rng = np.random.default_rng(31)
    n = 50_000
    pos, neg = rng.normal(2.0, 2.0, n), rng.normal(0.0, 1.0, n)
    classic = [NormalDist().inv_cdf(np.mean(pos >= t)) - NormalDist().inv_cdf(np.mean(neg >= t)) for t in (0.0, 1.5)]
    assert abs(classic[0] - classic[1]) > 0.5
    assert correct_option(31)["text"] == "错误"


def _det_points(d: float, sd_pos: float = 1.0, n: int = 40_000, seed: int = 32):
    rng = np.random.default_rng(seed)
    y = np.r_[np.ones(n, dtype=int), np.zeros(n, dtype=int)]
    c = ref.roc_curve(y, np.r_[rng.normal(d, sd_pos, n), rng.normal(0.0, 1.0, n)])
    fnr = 1 - c.tpr
    inside = (c.fpr > 0.02) & (c.fpr < 0.98) & (fnr > 0.02) & (fnr < 0.98)
    z = NormalDist()
    return np.array([z.inv_cdf(v) for v in c.fpr[inside]]), np.array([z.inv_cdf(v) for v in fnr[inside]])


def test_quiz_32_det_line_of_equal_variances():
    x, y = _det_points(1.5)
    slope, intercept = np.polyfit(x, y, 1)
    assert abs(slope + 1) < 0.05 and abs(intercept + 1.5) < 0.05
    assert "-1" in correct_option(32)["text"]


def test_quiz_33_equal_error_rate():
    d = QUIZZES[33]["data"]["d"]
    eer = NormalDist().cdf(-d / 2)
    x, y = _det_points(d)
    crossing = NormalDist().cdf(float(np.interp(0.0, (y - x)[::-1], x[::-1])))   # where FNR = FPR on the fitted points
    assert abs(crossing - eer) < 0.01
    assert_key(33, [eer], decimals=3)
    assert [float(v[0]) for v in option_values(33)[1:]] == [round(NormalDist().cdf(-d / np.sqrt(2)), 3), round(NormalDist().cdf(-d), 3),
                                                           round(NormalDist().cdf(d / 2), 3)]


def test_quiz_34_det_is_the_flipped_z_roc():
    rng = np.random.default_rng(34)
    y = rng.integers(0, 2, 500)
    c = ref.roc_curve(y, rng.normal(size=500) + y)
    inner = (c.tpr > 0) & (c.tpr < 1)
    z = NormalDist()
    assert np.allclose([z.inv_cdf(1 - t) for t in c.tpr[inner]], [-z.inv_cdf(t) for t in c.tpr[inner]], atol=1e-9)
    assert correct_option(34)["text"] == "正确"


def test_quiz_35_cost_sensitive_error_rate():
    d = QUIZZES[35]["data"]
    value = (d["c_fn"] * d["fn"] + d["c_fp"] * d["fp"]) / d["n"]
    # the same number as the reference's expected cost with the sample's own share of positives
    n_pos = 20
    tpr, fpr = 1 - d["fn"] / n_pos, d["fp"] / (d["n"] - n_pos)
    assert ref.expected_cost(tpr, fpr, prior=n_pos / d["n"], c_fp=d["c_fp"], c_fn=d["c_fn"]) == pytest.approx(value)
    assert_key(35, [value], decimals=3)
    assert [float(v[0]) for v in option_values(35)[1:]] == [(d["fn"] + d["fp"]) / d["n"],
                                                           (d["c_fp"] * d["fn"] + d["c_fn"] * d["fp"]) / d["n"], value / d["c_fn"]]


def test_quiz_36_normalized_cost_of_one_point():
    d = QUIZZES[36]["data"]
    nc = d["pc"] * (1 - d["tpr"]) + (1 - d["pc"]) * d["fpr"]
    # with prior 0.5 and equal costs (PC 0.5) the normalising factor is 1: NC is the reference's expected cost
    assert ref.expected_cost(d["tpr"], d["fpr"], prior=0.5, c_fp=1, c_fn=1) == pytest.approx(nc)
    assert_key(36, [nc], decimals=3)
    assert [float(v[0]) for v in option_values(36)[1:]] == pytest.approx([d["pc"] * d["tpr"] + (1 - d["pc"]) * d["fpr"], 1 - d["tpr"], d["fpr"]])


def test_quiz_37_points_inside_the_hull_never_win():
    # (0, 0.5), (0.4, 0.6), (0.8, 1): the middle point lies under the chord (0.4 -> 0.75)
    fpr, tpr = np.array([0.0, 0.0, 0.4, 0.8, 1.0]), np.array([0.0, 0.5, 0.6, 1.0, 1.0])
    pc = np.linspace(0, 1, 10_001)
    nc = pc[:, None] * (1 - tpr[None, :]) + (1 - pc[:, None]) * fpr[None, :]
    assert np.all(nc[:, 2] > nc.min(axis=1) + 1e-12)
    assert correct_option(37)["text"] == "错误"


def test_quiz_38_the_program_sorts_once():
    text = (BOOK / "ap_auc" / "program.md").read_text(encoding="utf-8")
    assert "np.unique" in text and "唯一 $O(n\\log n)$ 的一步" in text
    assert "np.unique" in correct_option(38)["text"]


def test_quiz_39_breaking_ties_changes_ap():
    y = np.array([0, 1, 1, 0])
    s = np.array([0.9, 0.7, 0.7, 0.1])
    order = np.argsort(-s, kind="stable")
    tp = np.cumsum(y[order])
    by_sample = float(np.mean((tp / np.arange(1, 5))[y[order] == 1]))
    assert abs(by_sample - ref.average_precision(y, s)) > 0.01
    assert correct_option(39)["text"] == "错误"


def test_quiz_40_a_constant_report_is_calibrated_and_useless():
    rng = np.random.default_rng(40)
    y = (rng.random(50_000) < 0.3).astype(int)
    p = np.full(y.size, y.mean())
    assert ref.expected_calibration_error(y, p) == pytest.approx(0.0, abs=1e-12)
    assert ref.roc_auc(y, p) == 0.5
    assert correct_option(40)["text"] == "错误"


def test_quiz_41_brier_of_two_groups():
    d = QUIZZES[41]["data"]
    w, m, s = (np.array(d[k]) for k in ("shares", "rates", "reports"))
    brier = float(w @ (m * (1 - s) ** 2 + (1 - m) * s**2))
    ybar = float(w @ m)
    assert brier == pytest.approx(float(w @ (m - s) ** 2) + ybar * (1 - ybar) - float(w @ (m - ybar) ** 2))
    counts = [1000, 1000]
    y = np.concatenate([np.r_[np.ones(round(r * c)), np.zeros(c - round(r * c))] for r, c in zip(m, counts)]).astype(int)
    p = np.concatenate([np.full(c, v) for v, c in zip(s, counts)])
    assert ref.brier_score(y, p) == pytest.approx(brier)
    assert_key(41, [brier], decimals=2)
    assert [float(v[0]) for v in option_values(41)[1:]] == [round(float(w @ (m * (1 - m))), 2), round(float(w @ (m - s) ** 2), 2),
                                                           round(ybar * (1 - ybar), 2)]


def test_quiz_42_noise_floor_halves_with_four_times_the_data():
    rng = np.random.default_rng(42)

    def floor(n):
        return np.mean([ref.expected_calibration_error((rng.random(n) < (s := rng.random(n))).astype(int), s)
                        for _ in range(400)])

    ratio = floor(4_000) / floor(1_000)
    assert abs(ratio - 0.5) < 0.08
    assert correct_option(42)["text"] == "一半"


def test_quiz_43_equal_frequency_edges_come_from_the_data():
    y = np.array([0, 1, 0, 1, 1, 0, 1, 1])
    a, b = np.linspace(0.05, 0.4, 8), np.linspace(0.5, 0.95, 8)
    curve_a = ref.calibration_curve(y, a, n_bins=2, strategy="quantile")
    curve_b = ref.calibration_curve(y, b, n_bins=2, strategy="quantile")
    assert not np.allclose(curve_a.mean_predicted, curve_b.mean_predicted - 0.45)   # edges follow each data set
    assert correct_option(43)["text"] == "错误"


def test_quiz_44_matching_means_is_not_calibration():
    y = np.r_[np.ones(40), np.zeros(60), np.ones(20), np.zeros(80)].astype(int)
    p = np.r_[np.full(100, 0.2), np.full(100, 0.4)]
    assert p.mean() == pytest.approx(y.mean())
    assert ref.expected_calibration_error(y, p, n_bins=10) == pytest.approx(0.2)
    assert correct_option(44)["text"] == "错误"


def test_quiz_45_calibrated_overall_not_within_groups():
    d = QUIZZES[45]["data"]
    groups = [np.r_[np.ones(round(r * 100)), np.zeros(100 - round(r * 100))].astype(int) for r in d["rates"]]
    p = np.full(100, d["report"])
    overall = ref.expected_calibration_error(np.concatenate(groups), np.r_[p, p])
    within = [ref.expected_calibration_error(g, p) for g in groups]
    assert within[0] == pytest.approx(within[1])
    assert_key(45, [overall, within[0]], decimals=3)


def test_quiz_46_temperature_two():
    d = QUIZZES[46]["data"]
    logit = np.log(d["report"] / (1 - d["report"]))
    scaled = 1 / (1 + np.exp(-logit / d["temperature"]))
    assert "2.197" in QUIZZES[46]["stem"] and round(logit, 3) == 2.197
    assert_key(46, [scaled], decimals=2)
    assert [float(v[0]) for v in option_values(46)[1:]] == [d["report"] / d["temperature"],
                                                           round(1 / (1 + np.exp(-logit * d["temperature"])), 3), d["report"]]


def test_quiz_47_isotonic_on_its_own_validation_set():
    from sklearn.isotonic import IsotonicRegression

    rng = np.random.default_rng(47)
    s = rng.random(4_000)
    y = (rng.random(s.size) < 1 / (1 + np.exp(-np.log(s / (1 - s)) / 2))).astype(int)
    iso = IsotonicRegression(out_of_bounds="clip", y_min=0, y_max=1).fit(s[:2000], y[:2000])
    on_fit = ref.expected_calibration_error(y[:2000], iso.predict(s[:2000]))
    on_new = ref.expected_calibration_error(y[2000:], iso.predict(s[2000:]))
    assert on_fit < 0.005 < on_new
    assert correct_option(47)["text"] == "错误"


def test_quiz_48_and_49_the_tree_depth_is_set_before_training():
    from sklearn.datasets import load_breast_cancer
    from sklearn.model_selection import train_test_split
    from sklearn.tree import DecisionTreeClassifier

    X, y = load_breast_cancer(return_X_y=True)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=1 / 3, random_state=0, stratify=y)
    errors = {d: (1 - DecisionTreeClassifier(max_depth=d, random_state=0).fit(X_tr, y_tr).score(X_tr, y_tr),
                  1 - DecisionTreeClassifier(max_depth=d, random_state=0).fit(X_tr, y_tr).score(X_te, y_te)) for d in range(1, 12)}
    deepest = max(errors)
    assert errors[deepest][0] == 0.0 and min(e[1] for e in errors.values()) < errors[deepest][1]   # zero training error, not the best test error
    assert "max_depth" in DecisionTreeClassifier().get_params()      # set before fitting, not learned
    assert correct_option(48)["text"] == "决策树的最大深度" and correct_option(49)["text"] == "错误"


def test_quiz_50_each_sample_tested_once():
    from sklearn.model_selection import KFold

    k, n = 5, 37
    tested, trained = np.zeros(n, dtype=int), np.zeros(n, dtype=int)
    for train, test in KFold(n_splits=k, shuffle=True, random_state=0).split(np.zeros((n, 1))):
        tested[test] += 1
        trained[train] += 1
    assert set(tested) == {1} and set(trained) == {k - 1}
    assert correct_option(50)["text"] == "测试 $1$ 次，训练 $k-1$ 次"


def test_quiz_51_and_52_keys():
    assert correct_option(51)["text"] == "正确" and correct_option(52)["text"] == "错误"


def test_quiz_53_point_632():
    d = QUIZZES[53]["data"]
    value = 0.368 * d["apparent"] + 0.632 * d["loo_bootstrap"]
    assert_key(53, [value], decimals=3)
    assert [float(v[0]) for v in option_values(53)[1:]] == [round((d["apparent"] + d["loo_bootstrap"]) / 2, 3),
                                                           round(0.632 * d["apparent"] + 0.368 * d["loo_bootstrap"], 3), d["loo_bootstrap"]]


def test_quiz_54_the_winner_is_biased_upwards():
    rng = np.random.default_rng(54)
    scores = rng.binomial(500, 0.8, size=(5_000, 20)) / 500          # twenty equally good configurations
    assert scores.max(axis=1).mean() - 0.8 > 0.02 and abs(scores[:, 0].mean() - 0.8) < 0.002
    assert correct_option(54)["text"] == "错误"


def test_quiz_55_recall_interval_depends_on_the_positives():
    widths = {}
    for n_neg in (9_960, 99_960):                                # ten thousand or a hundred thousand samples
        y = np.r_[np.ones(40, dtype=int), np.zeros(n_neg, dtype=int)]
        s = np.r_[np.ones(30), np.zeros(10), np.zeros(n_neg)]    # 30 of the 40 positives found
        m = ref.binary_metrics(y, s, 0.5)
        ci = ref.proportion_ci(m.tp, m.tp + m.fn)
        widths[n_neg] = ci.high - ci.low
    assert widths[9_960] == widths[99_960]
    assert ref.proportion_ci(3, 4).high - ref.proportion_ci(3, 4).low > widths[9_960]   # fewer positives: wider
    assert "40" in correct_option(55)["text"]


def test_quiz_56_wilson_near_one():
    d = QUIZZES[56]["data"]
    est, low, high = ref.proportion_ci(d["k"], d["n"])
    assert_key(56, [low, high], decimals=3)
    z = NormalDist().inv_cdf(0.975)
    half = z * np.sqrt(est * (1 - est) / d["n"])
    cp = ref.proportion_ci(d["k"], d["n"], method="clopper-pearson")
    assert [float(v) for v in option_values(56)[1]] == [round(est - half, 3), round(est + half, 3)]
    assert [float(v) for v in option_values(56)[2]] == [round(cp.low, 3), round(cp.high, 3)]
    explanation = correct_option(56)["explanation"]
    assert f"{(low + high) / 2:.3f}" in explanation and f"{(high - low) / 2:.3f}" in explanation


def test_quiz_57_mcnemar_statistic():
    d = QUIZZES[57]["data"]
    n01, n10 = d["n01"], d["n10"]
    value = (abs(n01 - n10) - 1) ** 2 / (n01 + n10)
    assert_key(57, [value], decimals=2)
    assert [float(v[0]) for v in option_values(57)[1:]] == [(n01 - n10) ** 2 / (n01 + n10), (abs(n01 - n10) - 2) ** 2 / (n01 + n10),
                                                           abs(n01 - n10) / (n01 + n10)]


def test_quiz_58_overlapping_training_sets_make_folds_correlated():
    assert correct_option(58)["text"] == "错误"


def test_quiz_59_nemenyi_critical_difference():
    from scipy import stats

    d = QUIZZES[59]["data"]
    q = stats.studentized_range.ppf(0.95, d["n_algorithms"], np.inf) / np.sqrt(2)
    assert round(q, 3) == d["q_alpha"]
    L, N = d["n_algorithms"], d["n_datasets"]
    assert_key(59, [q * np.sqrt(L * (L + 1) / (6 * N))], decimals=3)
    assert [float(v[0]) for v in option_values(59)[1:]] == [round(q * np.sqrt(L * (L + 1) / (12 * N)), 3),
                                                           round(np.sqrt(L * (L + 1) / (6 * N)), 3),
                                                           round(q * np.sqrt(L * (L + 1) / (3 * N)), 3)]


def test_quiz_60_bias_variance_noise():
    d = QUIZZES[60]["data"]
    bias2 = (d["mean_prediction"] - d["truth"]) ** 2
    # a simulation with exactly these parts: predictions N(2.5, 0.3) and labels N(2.0, 0.2)
    rng = np.random.default_rng(60)
    f = rng.normal(d["mean_prediction"], np.sqrt(d["variance"]), 400_000)
    y_obs = rng.normal(d["truth"], np.sqrt(d["noise"]), f.size)
    assert np.mean((f - y_obs) ** 2) == pytest.approx(bias2 + d["variance"] + d["noise"], rel=0.01)
    assert_key(60, [bias2 + d["variance"] + d["noise"]], decimals=2)
    assert [float(v[0]) for v in option_values(60)[1:]] == [bias2 + d["variance"], np.sqrt(bias2) + d["variance"] + d["noise"],
                                                           d["variance"] + d["noise"]]


def test_quiz_61_and_62_keys():
    assert correct_option(61)["text"] == "正确" and "下限" in correct_option(62)["text"]


def test_quiz_63_per_class_f1():
    d = QUIZZES[63]["data"]
    precision, recall = d["correct"] / d["predicted_count"], d["correct"] / d["true_count"]
    f1 = 2 * d["correct"] / (d["true_count"] + d["predicted_count"])
    assert f1 == pytest.approx(2 * precision * recall / (precision + recall))
    assert_key(63, [f1], decimals=3)
    assert [float(v[0]) for v in option_values(63)[1:]] == [recall, precision, (precision + recall) / 2]


def test_quiz_64_micro_f1_is_accuracy():
    from sklearn.metrics import f1_score

    rng = np.random.default_rng(64)
    y, p = rng.integers(0, 4, 300), rng.integers(0, 4, 300)
    assert f1_score(y, p, average="micro") == pytest.approx(np.mean(y == p))
    assert correct_option(64)["text"] == "正确"


def test_quiz_65_one_vs_one_classifiers():
    from sklearn.datasets import load_digits
    from sklearn.multiclass import OneVsOneClassifier
    from sklearn.linear_model import LogisticRegression

    k = QUIZZES[65]["data"]["n_classes"]
    X, y = load_digits(n_class=k, return_X_y=True)
    ovo = OneVsOneClassifier(LogisticRegression(max_iter=200)).fit(X[:400] / 16, y[:400])
    assert len(ovo.estimators_) == k * (k - 1) // 2
    assert_key(65, [k * (k - 1) / 2])


def test_quiz_66_cohen_kappa():
    from sklearn.metrics import cohen_kappa_score

    d = QUIZZES[66]["data"]
    chance = float(np.dot(d["true_shares"], d["predicted_shares"]))
    kappa = (d["accuracy"] - chance) / (1 - chance)
    # a confusion matrix with these margins and this accuracy, checked with scikit-learn
    m = np.array([[32, 14, 4], [8, 22, 0], [0, 4, 16]])
    assert np.allclose(m.sum(axis=1) / 100, d["true_shares"]) and np.allclose(m.sum(axis=0) / 100, d["predicted_shares"])
    assert np.trace(m) / 100 == d["accuracy"]
    t = np.repeat(np.repeat(np.arange(3), 3), m.ravel())
    p = np.repeat(np.tile(np.arange(3), 3), m.ravel())
    assert cohen_kappa_score(t, p) == pytest.approx(kappa)
    assert_key(66, [kappa], decimals=3)
    assert [float(v[0]) for v in option_values(66)[1:]] == [d["accuracy"], round(d["accuracy"] - chance, 3), round(chance, 3)]


def test_quiz_67_top_two_accuracy():
    from sklearn.metrics import top_k_accuracy_score

    from coursebook.multiclass import top_w_accuracy

    d = QUIZZES[67]["data"]
    y, s = np.array(d["labels"]), np.array(d["scores"])
    value = top_w_accuracy(y, s, 2)
    assert value == top_k_accuracy_score(y, s, k=2, labels=np.arange(4))
    written = [numbers_in(m) for m in re.findall(r"\$\(([^$]*)\)\$", QUIZZES[67]["stem"])]
    assert written == [[Fraction(str(v)) for v in row] for row in s]     # the stem states exactly these scores
    assert_key(67, [value])
    assert [float(v[0]) for v in option_values(67)[1:]] == [top_w_accuracy(y, s, 1), top_w_accuracy(y, s, 3), 0.25]


def test_quiz_68_copies_move_ovr_not_hand_till():
    from coursebook.multiclass import hand_till_auc, ovr_auc

    rng = np.random.default_rng(68)
    y = rng.integers(0, 3, 300)
    logits = rng.normal(size=(300, 3)) + 1.2 * np.eye(3)[y]
    probs = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    extra = y == 1
    y3, p3 = np.r_[y, np.repeat(y[extra], 2)], np.r_[probs, np.repeat(probs[extra], 2, axis=0)]
    assert hand_till_auc(y3, p3) == pytest.approx(hand_till_auc(y, probs), abs=1e-12)
    assert abs(ovr_auc(y3, p3).mean() - ovr_auc(y, probs).mean()) > 1e-4
    assert correct_option(68)["text"] == "错误"


def test_quiz_69_r_squared():
    from sklearn.metrics import mean_squared_error, r2_score

    d = QUIZZES[69]["data"]
    y, f = np.array(d["y"]), np.array(d["f"])
    r2 = r2_score(y, f)
    assert_key(69, [r2], decimals=2)
    sse, sst = float(np.sum((y - f) ** 2)), float(np.sum((y - y.mean()) ** 2))
    assert [float(v[0]) for v in option_values(69)[1:]] == [round(sse / sst, 2), round(mean_squared_error(y, f), 2),
                                                           round(1 - (sse / y.size) / (sst / (y.size - 1)), 2)]


def test_quiz_70_rmse_is_at_least_mae():
    rng = np.random.default_rng(70)
    for _ in range(200):
        e = np.abs(rng.normal(size=int(rng.integers(1, 30))))
        rmse, mae = np.sqrt(np.mean(e**2)), np.mean(e)
        assert rmse >= mae - 1e-12 and rmse**2 - mae**2 == pytest.approx(np.var(e), abs=1e-12)
    assert correct_option(70)["text"] == "正确"


def test_quiz_71_a_tie_group_is_a_slanted_segment():
    d = QUIZZES[71]["data"]
    y = [1] * d["group_pos"] + [0] * d["group_neg"] + [1] * (d["n_pos"] - d["group_pos"]) + [0] * (d["n_neg"] - d["group_neg"])
    s = [0.9] * (d["group_pos"] + d["group_neg"]) + [0.1] * (len(y) - d["group_pos"] - d["group_neg"])
    c = ref.roc_curve(y, s)
    assert (c.fpr[1], c.tpr[1]) == pytest.approx((d["group_neg"] / d["n_neg"], d["group_pos"] / d["n_pos"]))
    assert numbers_in(correct_option(71)["text"]) == [1, d["n_neg"], d["group_pos"], d["n_pos"]]
    assert "斜线" in correct_option(71)["text"]


def test_quiz_72_dropping_collinear_points_keeps_the_area():
    from sklearn.metrics import auc, roc_curve

    rng = np.random.default_rng(72)
    y = rng.integers(0, 2, 300)
    s = np.round(rng.normal(size=300) + y, 1)
    fpr, tpr, _ = roc_curve(y, s)
    fpr_all, tpr_all, _ = roc_curve(y, s, drop_intermediate=False)
    assert fpr.size < fpr_all.size and auc(fpr, tpr) == pytest.approx(ref.roc_auc(y, s), abs=1e-12)
    assert correct_option(72)["text"] == "错误"
