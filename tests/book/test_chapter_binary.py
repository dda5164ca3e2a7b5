"""Static and numerical checks of the pages roc, auc, pr, probability and summary of book/binary."""

from __future__ import annotations

import re
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from autograder import reference as ref

CHAPTER = Path(__file__).resolve().parents[2] / "book" / "binary"
PAGES = ["roc", "auc", "pr", "probability", "summary"]
FAWCETT_Y = [1, 1, 0, 1, 1, 1, 0, 0, 1, 0]
FAWCETT_S = [0.9, 0.8, 0.7, 0.6, 0.55, 0.54, 0.53, 0.52, 0.51, 0.505]


def _text(page: str) -> str:
    return (CHAPTER / f"{page}.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("page", PAGES)
def test_equation_labels_carry_the_page_prefix(page: str) -> None:
    prefix = {"probability": "prob"}.get(page, page)
    for label in re.findall(r"\$\$ \((eq-[A-Za-z0-9-]+)\)", _text(page)):
        assert label.startswith(f"eq-{prefix}-"), label


@pytest.mark.parametrize("page, group", [("pr", "5-8"), ("probability", "9-12")])
def test_quiz_group_is_the_last_thing_on_the_page(page: str, group: str) -> None:
    assert _text(page).rstrip().endswith(f"```{{quiz-group}} {group}\n```")


def test_roc_page_embeds_two_offline_animations() -> None:
    text = _text("roc")
    assert text.count("display(roc_animation(") == 2
    assert "frame_player(anim" in text  # coursebook.animation: palette frames, loaded when played


# --- the numbers the pages state, recomputed independently -----------------------------------------


def test_fawcett_steps_and_auc() -> None:
    y = np.array(FAWCETT_Y)
    assert (Fraction(1, int(y.sum())), Fraction(1, int((1 - y).sum()))) == (Fraction(1, 6), Fraction(1, 4))
    curve = ref.roc_curve(FAWCETT_Y, FAWCETT_S)
    assert np.isinf(curve.thresholds[0]) and (curve.fpr[0], curve.tpr[0]) == (0, 0) and (curve.fpr[-1], curve.tpr[-1]) == (1, 1)
    # the four horizontal steps of the seed, read off the reference's curve: (1/4)(2/6) + (1/4)(5/6) + (1/4)(5/6) + (1/4)(6/6)
    heights = []
    for i in range(1, len(curve.fpr)):
        width = Fraction(float(curve.fpr[i] - curve.fpr[i - 1])).limit_denominator(100)
        if width and curve.tpr[i] == curve.tpr[i - 1]:  # a step to the right (a negative), at the height reached
            heights += [Fraction(float(curve.tpr[i])).limit_denominator(100)] * int(width / Fraction(1, 4))
    assert heights == [Fraction(2, 6), Fraction(5, 6), Fraction(5, 6), Fraction(6, 6)]
    assert sum(Fraction(1, 4) * h for h in heights) == Fraction(3, 4)
    assert ref.roc_auc(FAWCETT_Y, FAWCETT_S) == ref.pairwise_auc(FAWCETT_Y, FAWCETT_S) == 0.75
    assert ref.roc_auc(FAWCETT_Y, -np.array(FAWCETT_S)) == 0.25


def test_auc_matches_scikit_learn_and_transforms() -> None:
    sklearn = pytest.importorskip("sklearn.metrics")
    s = np.array(FAWCETT_S)
    assert abs(sklearn.roc_auc_score(FAWCETT_Y, s) - 0.75) < 1e-12
    assert abs(sklearn.average_precision_score(FAWCETT_Y, s) - ref.average_precision(FAWCETT_Y, s)) < 1e-12
    for g in (np.log(s / (1 - s)), np.exp(5 * s), s**3):
        assert ref.roc_auc(FAWCETT_Y, g) == 0.75
    assert ref.roc_auc(FAWCETT_Y, np.floor(s * 10 + 1e-9) / 10) != 0.75


def test_example_3_2_and_brier_decomposition() -> None:
    assert abs(ref.brier_score([1, 0, 1, 0], [0.9, 0.8, 0.7, 0.1]) - 0.1875) < 1e-12
    assert ref.brier_baseline([1, 0, 1, 0]) == 0.25
    # a constant forecast p against labels with base rate q scores (p - q)^2 + q(1 - q): computed by the reference
    for p in (0.0, 0.2, 0.5, 0.9):
        for positives in (1, 3, 7):
            y, q = [1] * positives + [0] * (10 - positives), positives / 10
            assert abs(ref.brier_score(y, [p] * 10) - ((p - q) ** 2 + q * (1 - q))) < 1e-12


def test_reference_rejects_invalid_inputs_with_messages() -> None:
    cases = [
        (ref.roc_auc, [1, 0, 1], [0.9, np.nan, 0.3], "NaN"),
        (ref.roc_auc, [1, 0, 1], [0.9, np.inf, 0.3], "无穷大"),
        (ref.roc_auc, [1, 0, 1], np.array([0.9, 0.2, 0.3]) + 0j, "复数"),
        (ref.roc_auc, [1, 0, 2], [0.9, 0.2, 0.3], "非法值"),
        (ref.brier_score, [1, 0, 1], [1.2, 0.2, 0.3], "[0, 1]"),
    ]
    for fn, y, s, word in cases:
        with pytest.raises(ValueError, match=re.escape(word)):
            fn(y, s)


@pytest.mark.slow
def test_built_pages(book_html: Path) -> None:
    roc = (book_html / "book" / "binary" / "roc.html").read_text(encoding="utf-8")
    assert roc.count('class="animation course-anim"') == 2  # coursebook.animation.frame_player
    assert "font-awesome" not in roc
    for page, numbers in (("pr", range(5, 9)), ("probability", range(9, 13))):
        html = (book_html / "book" / "binary" / f"{page}.html").read_text(encoding="utf-8")
        for n in numbers:
            assert f'id="quiz-{n}"' in html
