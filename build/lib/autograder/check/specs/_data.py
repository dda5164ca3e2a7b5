"""Seeded random inputs shared by the specs (heavy ties, class imbalance)."""

from __future__ import annotations

import numpy as np


def labels_scores(seed: int, n: int, pos_rate: float, decimals: int | None) -> tuple[np.ndarray, np.ndarray]:
    """Labels with roughly ``pos_rate`` positives (both classes present) and scores rounded for ties."""
    g = np.random.default_rng(seed)
    y = (g.random(n) < pos_rate).astype(np.int64)
    y[0], y[1] = 1, 0
    s = g.normal(size=n) + 0.8 * y
    if decimals is not None:
        s = np.round(s, decimals)
    return y, s


def labels_probs(seed: int, n: int, pos_rate: float, decimals: int | None) -> tuple[np.ndarray, np.ndarray]:
    """Labels and probabilities in [0, 1], optionally rounded (ties, exact bin edges)."""
    g = np.random.default_rng(seed)
    y = (g.random(n) < pos_rate).astype(np.int64)
    p = np.clip(0.5 * g.random(n) + 0.45 * y, 0.0, 1.0)
    if decimals is not None:
        p = np.round(p, decimals)
    return y, p
