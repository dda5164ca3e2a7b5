"""The exercises of chapters 2-5 and their worked solutions: structure, and every number recomputed.

The solutions live only in the instructor edition (inside ``{instructor-only}``), where no code cell
computes their numbers; so each number a solution states is recomputed here with autograder.reference
and must appear, as written, in the solution's text.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from pathlib import Path
from statistics import NormalDist

import numpy as np
import pytest

import autograder.reference as ref

BOOK = Path(__file__).resolve().parents[2] / "book"
PAGES = {  # chapter page -> exercise label prefix
    "ap_auc/program.md": "ex-apauc",
    "calibration/recalibration.md": "ex-cal",
    "methodology/regression.md": "ex-meth",
    "case_study/index.md": "ex-cs",
}
Z = NormalDist().inv_cdf(0.975)


def page_text(page: str) -> str:
    return (BOOK / page).read_text(encoding="utf-8")


def solution(page: str, label: str) -> str:
    """The body of ``:::{solution} label`` (up to its closing fence)."""
    match = re.search(rf"^:::\{{solution\}} {label}\n(.*?)^:::$", page_text(page), flags=re.S | re.M)
    assert match, f"{page} 中没有 {label} 的解答"
    return match.group(1)


def public_part(page: str) -> str:
    """The page without its instructor-only blocks."""
    return re.sub(r"^::::\{instructor-only\}\n.*?^::::$", "", page_text(page), flags=re.S | re.M)


@pytest.mark.parametrize(("page", "prefix"), list(PAGES.items()))
def test_three_to_five_exercises_each_with_a_hidden_solution(page, prefix):
    text = page_text(page)
    labels = re.findall(rf"^:label: ({prefix}-\d+)$", text, flags=re.M)
    assert 3 <= len(labels) <= 5, labels
    hidden = re.findall(r"^::::\{instructor-only\}\n(.*?)^::::$", text, flags=re.S | re.M)
    assert len(hidden) == 1
    for label in labels:
        assert f":::{{solution}} {label}\n" in hidden[0], f"{label} 的解答不在 instructor-only 块内"
        assert f"{{solution}} {label}" not in public_part(page)
    # the exercises come before the quiz section, which ends the page
    assert text.index("::::{instructor-only}") < text.index("## 即时练习")


def _ranked(labels):
    scores = list(range(len(labels), 0, -1))
    return ref.average_precision(labels, scores), ref.roc_auc(labels, scores)


def test_apauc_1_one_swap_at_the_top_and_at_the_bottom():
    text = solution("ap_auc/program.md", "ex-apauc-1")
    base, top, bottom = (0, 1, 0, 1, 1, 0), (1, 0, 0, 1, 1, 0), (0, 1, 0, 1, 0, 1)
    (ap0, auc0), (ap1, auc1), (ap2, auc2) = _ranked(base), _ranked(top), _ranked(bottom)
    frac = lambda v: Fraction(v).limit_denominator(100)  # noqa: E731
    assert (frac(ap0), frac(auc0)) == (Fraction(8, 15), Fraction(4, 9))
    assert (frac(ap1), frac(auc1)) == (Fraction(7, 10), Fraction(5, 9))
    assert (frac(ap2), frac(auc2)) == (Fraction(1, 2), Fraction(1, 3))
    assert frac(ap1 - ap0) == Fraction(1, 6) and frac(ap0 - ap2) == Fraction(1, 30)
    assert frac(auc1 - auc0) == frac(auc0 - auc2) == Fraction(1, 9)
    for shown in (r"\tfrac{8}{15}\approx0.533", r"\tfrac49\approx0.444", r"\tfrac{7}{10}", r"\tfrac16\approx0.167",
                  r"\tfrac59\approx0.556", r"\tfrac1{30}\approx0.033", r"\tfrac39\approx0.333"):
        assert shown in text


def test_apauc_2_copying_negatives_keeps_auc_and_lowers_ap():
    rng = np.random.default_rng(2)
    y = rng.integers(0, 2, 60)
    s = rng.normal(size=60) + y
    for c in (2, 5):
        yc = np.r_[y, np.zeros(int((y == 0).sum()) * (c - 1), dtype=int)]
        sc = np.r_[s, np.tile(s[y == 0], c - 1)]
        assert ref.roc_auc(yc, sc) == pytest.approx(ref.roc_auc(y, s), abs=1e-12)
        assert ref.average_precision(yc, sc) < ref.average_precision(y, s)
    perfect = ([1, 1, 0, 0], [4, 3, 2, 1])
    assert ref.average_precision([1, 1, 0, 0, 0, 0], [4, 3, 2, 1, 2, 1]) == ref.average_precision(*perfect) == 1.0


def test_apauc_3_map():
    text = solution("ap_auc/program.md", "ex-apauc-3")
    aps = [_ranked(q)[0] for q in ((1, 0, 1), (0, 1), (1, 1, 0, 0))]
    assert [Fraction(a).limit_denominator(10) for a in aps] == [Fraction(5, 6), Fraction(1, 2), 1]
    assert Fraction(float(np.mean(aps))).limit_denominator(100) == Fraction(7, 9)
    assert r"\tfrac79\approx0.778" in text and round(float(np.mean(aps)), 3) == 0.778


def test_cal_1_three_bins_and_one_bin():
    text = solution("calibration/recalibration.md", "ex-cal-1")
    y = [1] + [0] * 4 + [1, 1, 0, 0] + [1] * 3 + [0] * 3
    p = [0.1] * 5 + [0.5] * 4 + [0.9] * 6
    three = ref.expected_calibration_error(y, p, n_bins=3)
    one = ref.expected_calibration_error(y, p, n_bins=1)
    assert three == pytest.approx(2.9 / 15) and f"{three:.3f}" in text
    assert f"{one:.3f}" in text and f"{np.mean(p):.3f}" in text
    assert one < three


def test_cal_2_temperature_two_recovers_calibration():
    rng = np.random.default_rng(3)
    s = rng.uniform(0.001, 0.999, 400_000)
    m = 1 / (1 + np.exp(-np.log(s / (1 - s)) / 2))  # the true calibration function of the page
    y = (rng.random(s.size) < m).astype(int)
    t2 = 1 / (1 + np.exp(-np.log(s / (1 - s)) / 2))
    assert ref.expected_calibration_error(y, t2, n_bins=10) < 0.005 < ref.expected_calibration_error(y, s, n_bins=10)
    assert ref.roc_auc(y, t2) == pytest.approx(ref.roc_auc(y, s), abs=1e-12)
    # part 3: at s = 0.5 every temperature reports 0.5, but m(0.5) = logit^-1(0.5)
    assert round(1 / (1 + math.exp(-0.5)), 2) == 0.62
    assert r"\operatorname{logit}^{-1}(0.5)\approx0.62" in solution("calibration/recalibration.md", "ex-cal-2")


def test_meth_1_recall_intervals():
    text = solution("methodology/regression.md", "ex-meth-1")
    est, low, high = ref.proportion_ci(18, 20)
    half = Z * math.sqrt(est * (1 - est) / 20)
    assert f"[{est - half:.3f},\\,{est + half:.3f}]" in text and f"{half:.3f}" in text
    assert f"[{low:.3f},\\,{high:.3f}]" in text
    center = (est + Z**2 / 40) / (1 + Z**2 / 20)
    assert f"{center:.3f}" in text and f"{(high - low) / 2:.3f}" in text
    need = (2 * Z * 0.3 / 0.1) ** 2
    assert math.ceil(need) == 139 and "139" in text
    wilson_width = [ref.proportion_ci(round(0.9 * n), n) for n in (139, 140)]
    assert all(w.high - w.low <= 0.105 for w in wilson_width)  # the approximation holds for Wilson too


def test_meth_2_wald_fails_at_p_095_with_n_20():
    text = solution("methodology/regression.md", "ex-meth-2")
    assert f"{0.95 ** 20:.2f}" in text
    n, p = 20, 0.95
    k = np.arange(n + 1)
    pmf = np.array([math.comb(n, j) * p**j * (1 - p) ** (n - j) for j in k])
    p_hat = k / n
    half = Z * np.sqrt(p_hat * (1 - p_hat) / n)
    wald = pmf[(p_hat - half <= p) & (p <= p_hat + half)].sum()
    wilson = pmf[[ref.proportion_ci(int(j), n).low <= p <= ref.proportion_ci(int(j), n).high for j in k]].sum()
    assert wald < 0.7 and abs(wilson - 0.95) < 0.03


def test_cs_1_small_sample_auc_intervals():
    text = solution("case_study/index.md", "ex-cs-1")
    y = np.array([0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1])
    s = np.array([0.1, 0.2, 0.2, 0.3, 0.3, 0.4, 0.5, 0.7, 0.9, 0.15, 0.45, 0.55, 0.75, 0.75, 0.85, 0.95, 0.75, 0.85, 0.95])
    assert "cs_labels = np.array([0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1])" in page_text("case_study/index.md")
    est, low, high = ref.auc_ci(y, s)
    assert est == 0.8 and high == 1.0 and est + (est - low) > 1  # clipped
    assert f"[{low:.3f},\\,{high:.3f}]" in text
    _, b_low, b_high = ref.auc_ci(y, s, method="bootstrap", random_state=0)
    assert f"[{b_low:.3f},\\,{b_high:.3f}]" in text


def test_cs_2_unequal_variance_binormal():
    text = solution("case_study/index.md", "ex-cs-2")
    for sigma in (1, 2):
        auc = NormalDist().cdf(1.5 / math.sqrt(1 + sigma**2))
        rng = np.random.default_rng(sigma)
        y = np.r_[np.ones(100_000, dtype=int), np.zeros(100_000, dtype=int)]
        sc = np.r_[rng.normal(1.5, sigma, 100_000), rng.normal(0, 1, 100_000)]
        assert abs(ref.roc_auc(y, sc) - auc) < 0.005
        assert f"{auc:.3f}" in text
        # Part 3: with sigma_+ = 2 the reference ROC curve of the sample dips below the diagonal near (1, 1),
        # with equal variances it does not; the solution says why.
        fpr, tpr, _ = ref.roc_curve(y, sc)
        below = (tpr < fpr - 0.002) & (fpr > 0.5)
        assert below.any() == (sigma == 2)
    assert "\\operatorname{TPR}<\\operatorname{FPR}" in text
