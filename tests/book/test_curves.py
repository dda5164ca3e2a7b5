"""coursebook.covers: dominance between two ROC curves, segments included (used by the ROC-AUC page)."""

from __future__ import annotations

import numpy as np
import pytest

import autograder.reference as ref
from coursebook import covers


def test_a_curve_covers_itself_and_a_worse_one():
    fpr, tpr = np.array([0.0, 0.2, 1.0]), np.array([0.0, 0.7, 1.0])
    assert covers(fpr, tpr, fpr, tpr)
    assert covers(fpr, tpr, [0.0, 0.3, 1.0], [0.0, 0.6, 1.0])
    assert not covers(fpr, tpr, [0.0, 0.1, 1.0], [0.0, 0.5, 1.0])   # a reaches only 0.35 at FPR 0.1


def test_crossing_curves_cover_neither_way():
    a = ([0.0, 0.1, 0.5, 1.0], [0.0, 0.6, 0.7, 1.0])
    b = ([0.0, 0.1, 0.5, 1.0], [0.0, 0.4, 0.9, 1.0])
    assert not covers(*a, *b) and not covers(*b, *a)


def test_a_diagonal_segment_above_a_vertex_is_not_covered():
    """Issue 41: b is all ties (one diagonal segment, AUC 0.5); both ends of b are points of a, yet at FPR 0.9
    b reaches TPR 0.9 and a only 0.1.  The old vertex-only comparison said a covers b; AUC(a) is 0.10."""
    a = ([0.0, 0.9, 1.0], [0.0, 0.1, 1.0])
    b = ([0.0, 1.0], [0.0, 1.0])
    assert not covers(*a, *b)
    assert covers(*b, *a)
    assert np.trapezoid(a[1], a[0]) == pytest.approx(0.10) and np.trapezoid(b[1], b[0]) == pytest.approx(0.5)


def test_a_segment_of_a_covers_a_vertex_of_b():
    """The other half of the comparison: a point of b between two vertices of a is covered by a's segment."""
    a = ([0.0, 0.0, 1.0], [0.0, 0.5, 1.0])          # vertical, then one straight segment: TPR 0.75 at FPR 0.5
    assert covers(*a, [0.0, 0.5, 1.0], [0.0, 0.75, 1.0])
    assert not covers(*a, [0.0, 0.5, 1.0], [0.0, 0.76, 1.0])


def test_a_segment_arriving_from_the_left_counts():
    """b rises along a slope into a vertical step of a: the heights just left of the step decide."""
    a = ([0.0, 0.5, 0.5, 1.0], [0.0, 0.2, 0.9, 1.0])
    assert not covers(*a, [0.0, 0.5, 1.0], [0.0, 0.3, 1.0])      # just left of FPR 0.5, b is above a
    assert covers(*a, [0.0, 0.5, 1.0], [0.0, 0.2, 1.0])


def test_tied_scores_from_the_reference():
    """Scores with a tie group: the tied model's diagonal passes above the other's corner."""
    y = np.array([1, 0, 1, 0, 1, 0])
    tied = np.array([0.5, 0.5, 0.5, 0.5, 0.5, 0.5])
    corner = np.array([0.1, 0.9, 0.2, 0.8, 0.3, 0.7])             # negatives first: ROC along the bottom, then up
    rt, rc = ref.roc_curve(y, tied), ref.roc_curve(y, corner)
    assert not covers(rc.fpr, rc.tpr, rt.fpr, rt.tpr)
    assert covers(rt.fpr, rt.tpr, rc.fpr, rc.tpr)


def test_shifted_positives_dominate():
    rng = np.random.default_rng(0)
    pos, neg = rng.normal(0.5, 1, 300), rng.normal(0, 1, 300)
    y = np.r_[np.ones(300, dtype=int), np.zeros(300, dtype=int)]
    rb, rw = ref.roc_curve(y, np.r_[pos + 0.5, neg]), ref.roc_curve(y, np.r_[pos, neg])
    assert covers(rb.fpr, rb.tpr, rw.fpr, rw.tpr)
    assert not covers(rw.fpr, rw.tpr, rb.fpr, rb.tpr)


def test_dominance_implies_no_smaller_auc_on_random_curves():
    """Whenever a covers b, AUC(a) >= AUC(b): the property the AUC page states, checked on random tied curves."""
    rng = np.random.default_rng(1)
    y = np.r_[np.ones(8, dtype=int), np.zeros(8, dtype=int)]
    checked = 0
    for _ in range(3000):
        sa, sb = rng.integers(0, 4, 16), rng.integers(0, 4, 16)     # few distinct scores: many ties
        ra, rb = ref.roc_curve(y, sa), ref.roc_curve(y, sb)
        if covers(ra.fpr, ra.tpr, rb.fpr, rb.tpr):
            checked += 1
            assert ref.roc_auc(y, sa) >= ref.roc_auc(y, sb) - 1e-12
    assert checked > 50


@pytest.mark.parametrize(("fpr", "tpr", "problem"), [
    ([0.0, 0.5], [0.0], "等长"),
    ([], [], "非空"),
    ([0.0, 1.5], [0.0, 1.0], "[0, 1]"),
    ([0.0, np.nan], [0.0, 1.0], "[0, 1]"),
    ([0.0, 0.5, 1.0], [0.0, 0.8, 0.3], "TPR 有下降"),
])
def test_bad_points_are_named(fpr, tpr, problem):
    with pytest.raises(ValueError, match=problem.replace("[", r"\[").replace("]", r"\]")):
        covers([0.0, 1.0], [0.0, 1.0], fpr, tpr)
