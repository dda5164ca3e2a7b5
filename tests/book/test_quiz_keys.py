"""The quiz keys are recomputed with autograder.reference; the structure of the data is checked too.

If a test here fails, the quiz data in book/quizzes/quizzes.yml disagrees with the reference
implementation (or with itself): fix the data, not the test.
"""

from __future__ import annotations

from fractions import Fraction

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
def test_twelve_quizzes_numbered_1_to_12():
    assert sorted(QUIZZES) == list(range(1, 13))


def test_three_groups_of_four():
    assert [tuple(g["range"]) for g in DATA["groups"]] == [(1, 4), (5, 8), (9, 12)]
    assert all(g["intro"].strip() and g["title"].strip() for g in DATA["groups"])


@pytest.mark.parametrize("number", range(1, 13))
def test_every_option_explained_and_one_correct(number):
    entry = QUIZZES[number]
    assert entry["stem"].strip()
    assert sum(bool(o["correct"]) for o in entry["options"]) == 1
    for option in entry["options"]:
        assert len(option["explanation"].strip()) >= 20, f"第 {number} 题的选项 {option['text']!r} 缺少解释"
    if entry["kind"] == "truefalse":
        assert [o["text"] for o in entry["options"]] == ["正确", "错误"]


@pytest.mark.parametrize("number", range(1, 13))
def test_math_is_written_with_single_backslashes(number):
    entry = QUIZZES[number]
    texts = [entry["stem"]] + [o["text"] for o in entry["options"]] + [o["explanation"] for o in entry["options"]]
    for text in texts:
        assert "\\\\" not in text, f"第 {number} 题含有双反斜杠：{text!r}"
        assert text.count("$") % 2 == 0, f"第 {number} 题的 $ 不成对：{text!r}"


def test_seed_kinds():
    kinds = {n: q["kind"] for n, q in QUIZZES.items()}
    assert [n for n, k in kinds.items() if k == "truefalse"] == [2, 3, 6, 8, 12]


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
