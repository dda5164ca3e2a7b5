"""Hypothesis strategies for binary labels with scores: heavy ties, imbalance, n = 2, constant scores."""

import numpy as np
from hypothesis import strategies as st


@st.composite
def labels_and_scores(draw, min_size=2, max_size=60, both_classes=True, probabilities=False):
    """Draw ``(y, s)`` with ``y`` in {0, 1} and real scores.

    Scores come from a small pool of values half of the time (heavy ties, possibly all
    equal) and are continuous otherwise; the positive share ranges from one sample to
    all but one.
    """
    n = draw(st.integers(min_size, max_size))
    if both_classes:
        n_pos = draw(st.integers(1, n - 1))
    else:
        n_pos = draw(st.integers(0, n))
    y = np.zeros(n, dtype=int)
    y[:n_pos] = 1
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    rng.shuffle(y)
    style = draw(st.sampled_from(["pool", "continuous", "constant", "rounded"]))
    if style == "pool":
        pool = rng.random(draw(st.integers(1, 4)))
        s = rng.choice(pool, size=n)
    elif style == "constant":
        s = np.full(n, rng.random())
    elif style == "rounded":
        s = np.round(rng.random(n), 1)
    else:
        s = rng.random(n)
    if not probabilities:
        shift = draw(st.sampled_from([0.0, -0.5, 10.0]))
        s = s * draw(st.sampled_from([1.0, 100.0])) + shift
    return y, s
