"""Dominance between two ROC curves, compared as the piecewise-linear curves they are."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

_TOL = 1e-12


def _roc_polyline(fpr: ArrayLike, tpr: ArrayLike, name: str) -> tuple[np.ndarray, np.ndarray]:
    """The vertices of a ROC curve in the order they are walked (FPR, then TPR, increasing).

    Raises ``ValueError`` when the points cannot be the vertices of one ROC curve: unequal lengths, no point,
    a value outside [0, 1] or not finite, or a TPR that falls while the FPR rises.
    """
    x, y = np.asarray(fpr, dtype=float).ravel(), np.asarray(tpr, dtype=float).ravel()
    if x.shape != y.shape or x.size == 0:
        raise ValueError(f"曲线 {name} 的 FPR 与 TPR 必须是等长、非空的数组（现在是 {x.size} 个与 {y.size} 个）")
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))) or x.min() < 0 or y.min() < 0 or x.max() > 1 or y.max() > 1:
        raise ValueError(f"曲线 {name} 的坐标必须是 [0, 1] 中的有限数")
    order = np.lexsort((y, x))
    x, y = x[order], y[order]
    if np.any(np.diff(y) < -_TOL):
        raise ValueError(f"曲线 {name} 不是一条 ROC 曲线：按 FPR 排好后 TPR 有下降")
    return x, y


def _heights(x: np.ndarray, y: np.ndarray, at: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The lowest and the highest TPR of the polyline above each FPR in ``at`` (``-inf`` left of the curve).

    Between two vertices the curve is the straight segment joining them; above a vertex it may be vertical
    (several vertices with the same FPR), hence two heights.  Right of the last vertex both heights are the
    last TPR: the best a curve offers at an FPR beyond its end is its last point.
    """
    lo_i = np.searchsorted(x, at, side="left")
    hi_i = np.searchsorted(x, at, side="right") - 1
    low, high = np.full(at.shape, -np.inf), np.full(at.shape, -np.inf)
    on_vertex = (lo_i < x.size) & (lo_i <= hi_i)
    low[on_vertex], high[on_vertex] = y[lo_i[on_vertex]], y[hi_i[on_vertex]]
    between = ~on_vertex & (lo_i > 0) & (lo_i < x.size)
    k = lo_i[between]
    t = (at[between] - x[k - 1]) / (x[k] - x[k - 1])
    low[between] = high[between] = y[k - 1] + t * (y[k] - y[k - 1])
    right = lo_i >= x.size
    low[right] = high[right] = y[-1]
    return low, high


def covers(fpr_a: ArrayLike, tpr_a: ArrayLike, fpr_b: ArrayLike, tpr_b: ArrayLike) -> bool:
    """Whether ROC curve a dominates ROC curve b: no point of b, on a vertex or a segment, lies above a.

    A ROC curve is the polyline through its operating points in order; a group of tied scores enters as a
    whole and draws a sloping segment, and every point of a segment is an operating point (classify the
    tied group at random).  So "every operating point of b is matched by one of a with no higher FPR and no
    lower TPR" is a statement about the whole polylines, and comparing only the vertices is not enough: a
    diagonal segment of b can pass above a vertex of a while both of b's ends are dominated.

    Parameters
    ----------
    fpr_a, tpr_a : array-like of shape (n_a,)
        The vertices of curve a (any order; ``autograder.reference.roc_curve`` gives them in order).
    fpr_b, tpr_b : array-like of shape (n_b,)
        The vertices of curve b.

    Returns
    -------
    bool
        ``True`` when, for every FPR ``x`` covered by b, the highest TPR of a at some FPR ``<= x`` is at
        least every TPR of b at ``x``.  Both curves are monotone, so that is a at ``x`` itself.

    Raises
    ------
    ValueError
        When either set of points is not a ROC curve (see ``_roc_polyline``).

    Notes
    -----
    Between two consecutive FPRs of the union of both curves' vertices both curves are straight, so their
    difference is linear there and its minimum lies at an end: the check compares the two curves at every
    vertex FPR of either curve, from the right (highest points above that FPR) and from the left (lowest
    points: the end of the segment arriving there).  O((n_a + n_b) log(n_a + n_b)).
    """
    xa, ya = _roc_polyline(fpr_a, tpr_a, "a")
    xb, yb = _roc_polyline(fpr_b, tpr_b, "b")
    if xb[0] < xa[0] - _TOL:
        return False                       # b reaches an FPR lower than any point of a
    knots = np.unique(np.r_[xa, xb])
    knots = knots[(knots >= xb[0]) & (knots <= xb[-1])]
    a_low, a_high = _heights(xa, ya, knots)
    b_low, b_high = _heights(xb, yb, knots)
    arriving = knots > xb[0]               # at b's first FPR, nothing of b arrives from the left
    return bool(np.all(b_high <= a_high + _TOL) and np.all(b_low[arriving] <= a_low[arriving] + _TOL))
