"""coursebook.covers: dominance between two curves of operating points (used by the ROC-AUC and PR pages)."""

from __future__ import annotations

import numpy as np

import autograder.reference as ref
from coursebook import covers


def test_a_point_set_covers_itself_and_a_worse_one():
    fpr, tpr = np.array([0.0, 0.2, 1.0]), np.array([0.0, 0.7, 1.0])
    assert covers(fpr, tpr, fpr, tpr, smaller_x_is_better=True)
    assert covers(fpr, tpr, [0.0, 0.3, 1.0], [0.0, 0.6, 1.0], smaller_x_is_better=True)
    assert not covers(fpr, tpr, [0.1], [0.5], smaller_x_is_better=True)   # no point of a with FPR <= 0.1 reaches 0.5


def test_crossing_curves_cover_neither_way():
    a = ([0.0, 0.1, 0.5, 1.0], [0.0, 0.6, 0.7, 1.0])
    b = ([0.0, 0.1, 0.5, 1.0], [0.0, 0.4, 0.9, 1.0])
    assert not covers(*a, *b, smaller_x_is_better=True) and not covers(*b, *a, smaller_x_is_better=True)


def test_pr_direction():
    recall, precision = [0.25, 0.5, 1.0], [1.0, 0.8, 0.5]
    assert covers(recall, precision, [0.5, 0.9], [0.7, 0.5], smaller_x_is_better=False)
    assert not covers(recall, precision, [0.6], [0.9], smaller_x_is_better=False)


def test_shifted_positives_dominate_in_both_planes():
    rng = np.random.default_rng(0)
    pos, neg = rng.normal(0.5, 1, 300), rng.normal(0, 1, 300)
    y = np.r_[np.ones(300, dtype=int), np.zeros(300, dtype=int)]
    better, worse = np.r_[pos + 0.5, neg], np.r_[pos, neg]
    rb, rw = ref.roc_curve(y, better), ref.roc_curve(y, worse)
    pb, pw = ref.pr_curve(y, better), ref.pr_curve(y, worse)
    assert covers(rb.fpr, rb.tpr, rw.fpr, rw.tpr, smaller_x_is_better=True)
    assert covers(pb.recall, pb.precision, pw.recall, pw.precision, smaller_x_is_better=False)
    assert not covers(rw.fpr, rw.tpr, rb.fpr, rb.tpr, smaller_x_is_better=True)
