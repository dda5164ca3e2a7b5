"""Dominance between two curves of operating points (ROC or PR), for the pages that compare models."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike


def covers(x_a: ArrayLike, y_a: ArrayLike, x_b: ArrayLike, y_b: ArrayLike, *, smaller_x_is_better: bool) -> bool:
    """Whether every point of curve b is matched by a point of curve a that is no worse in both coordinates.

    Parameters
    ----------
    x_a, y_a : array-like of shape (n_a,)
        Points of curve a (for example ``fpr, tpr`` of a ROC curve or ``recall, precision`` of a PR curve).
    x_b, y_b : array-like of shape (n_b,)
        Points of curve b.
    smaller_x_is_better : bool
        ``True`` for ROC curves (a lower false positive rate is better), ``False`` for PR curves
        (a higher recall is better).  A larger ``y`` is always better.

    Returns
    -------
    bool
        ``True`` when curve a dominates curve b: for each point of b some point of a has an ``x`` at
        least as good and a ``y`` at least as large.  O((n_a + n_b) log n_a).
    """
    x_a, y_a, x_b, y_b = (np.asarray(v, dtype=float) for v in (x_a, y_a, x_b, y_b))
    if not smaller_x_is_better:          # turn "larger x is better" into "smaller x is better"
        x_a, x_b = -x_a, -x_b
    order = np.argsort(x_a, kind="stable")
    xs = x_a[order]
    best = np.maximum.accumulate(y_a[order])          # best y among the points of a with x <= xs[k]
    idx = np.searchsorted(xs, x_b, side="right") - 1
    if np.any(idx < 0):
        return False
    return bool(np.all(best[idx] >= y_b - 1e-12))
