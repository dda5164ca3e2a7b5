"""Seeded data of the demo: pure functions, no Shiny, importable by the tests.

Tab 1 (指标随阈值变化) needs scores whose *class-conditional* distributions do
not depend on the positive share :math:`\\pi`, so that ROC and AUC stay exactly
fixed while precision, PR and AP move.  The design:

* each class gets ``m`` scores drawn from the seed (negatives first, then
  positives), whatever :math:`\\pi` is;
* :math:`\\pi` (a multiple of 1/100) is written as the reduced fraction
  ``a / (a + b)``; the data set holds every positive score ``a`` times and every
  negative score ``b`` times (integer sample weights written out as rows).

The empirical score distribution of each class is then the same for every
:math:`\\pi`, so the ROC curve and AUC are identical, and the share of positives
is exactly ``a / (a + b)``.

Tab 2 (训练集、验证集与测试集) uses one feature matrix from
:func:`sklearn.datasets.make_classification` split three ways by a seeded
permutation.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

__all__ = [
    "DemoInputError",
    "check_share",
    "PI_RESOLUTION",
    "DISTRIBUTIONS",
    "prior_weights",
    "class_scores",
    "ScoreData",
    "make_score_data",
    "WorkflowData",
    "make_workflow_data",
    "split_three",
]

#: Positive shares are read on a grid of 1/PI_RESOLUTION (the slider's step).
PI_RESOLUTION = 100

#: Score distributions offered in tab 1 (key -> Chinese label).
DISTRIBUTIONS = {"binormal": "双正态（logistic 变换到 [0, 1]）", "beta": "Beta 分布"}


class DemoInputError(ValueError):
    """An input of the demo is out of range; the message is Chinese and shown in the page."""


def _check_int(value: object, name: str, low: int, high: int) -> int:
    if value is None or isinstance(value, bool):
        raise DemoInputError(f"请为“{name}”输入一个整数（{low} 到 {high}）")
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise DemoInputError(f"“{name}”必须是整数，实际为 {value!r}") from None
    if not math.isfinite(number) or number != int(number):
        raise DemoInputError(f"“{name}”必须是整数，实际为 {value!r}")
    if not low <= number <= high:
        raise DemoInputError(f"“{name}”必须在 {low} 到 {high} 之间，实际为 {int(number)}")
    return int(number)


def _check_real(value: object, name: str, low: float, high: float) -> float:
    if value is None or isinstance(value, bool):
        raise DemoInputError(f"请为“{name}”输入一个数（{low} 到 {high}）")
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise DemoInputError(f"“{name}”必须是数，实际为 {value!r}") from None
    if not math.isfinite(number) or not low <= number <= high:
        raise DemoInputError(f"“{name}”必须在 {low} 到 {high} 之间，实际为 {value!r}")
    return number


def check_share(pi: object, name: str = "正类比例 π") -> float:
    """Validate a share of positives strictly inside (0, 1).

    Raises
    ------
    DemoInputError
        With a Chinese message for ``None``, non-numbers, 0, 1 or values outside.
    """
    value = _check_real(pi, name, 0.0, 1.0)
    if value <= 0.0:
        raise DemoInputError(f"{name} = 0：样本中没有正类，Recall、ROC、PR 与 AUC 都无定义。请取 0 与 1 之间的值。")
    if value >= 1.0:
        raise DemoInputError(f"{name} = 1：样本中没有负类，FPR、ROC 与 AUC 都无定义。请取 0 与 1 之间的值。")
    return value


def prior_weights(pi: object) -> tuple[int, int]:
    """Write the positive share ``pi`` (on the 1/100 grid) as a reduced fraction ``a / (a + b)``.

    Parameters
    ----------
    pi : float
        Share of positives, strictly between 0 and 1; rounded to the nearest 1/100.

    Returns
    -------
    (a, b) : tuple of int
        Copies of each positive and of each negative score; ``gcd(a, b) == 1``.

    Raises
    ------
    DemoInputError
        If ``pi`` rounds to 0 or 1 or is not a number.

    Examples
    --------
    >>> prior_weights(0.5), prior_weights(0.3), prior_weights(0.25)
    ((1, 1), (3, 7), (1, 3))
    """
    value = check_share(pi)
    a = int(round(value * PI_RESOLUTION))
    if a <= 0 or a >= PI_RESOLUTION:
        raise DemoInputError(f"正类比例 π = {value} 四舍五入到 1/{PI_RESOLUTION} 后为 0 或 1，样本中只剩一类；请取 0.01 到 0.99 之间的值。")
    b = PI_RESOLUTION - a
    g = math.gcd(a, b)
    return a // g, b // g


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-z))


def class_scores(m: object, dist: str, separation: object, seed: object, sigma: object = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Draw ``m`` negative and ``m`` positive scores in [0, 1] from the seed.

    Parameters
    ----------
    m : int
        Scores per class (10 to 2000).
    dist : {"binormal", "beta"}
        ``"binormal"``: latent :math:`x \\sim N(0, 1)` for negatives and
        :math:`N(d, \\sigma^2)` for positives, score :math:`\\operatorname{sigmoid}(d x - d^2/2)`,
        which is the true posterior probability when :math:`\\pi = 0.5` and
        :math:`\\sigma = 1`.  ``"beta"``: negatives :math:`\\mathrm{Beta}(2, 2 + 2d)`,
        positives :math:`\\mathrm{Beta}(2 + 2d, 2)`, scores used as probabilities as they are.
    separation : float
        :math:`d` in [0, 4]; 0 makes the two classes identical (AUC near 0.5).
    seed : int
        Seed of ``numpy.random.default_rng``; the negatives are drawn first.
    sigma : float
        Standard deviation of the positives' latent score (binormal only), in [0.25, 4].

    Returns
    -------
    (neg, pos) : tuple of ndarray of shape (m,)
        They do not depend on the positive share.
    """
    size = _check_int(m, "每类样本数 m", 10, 2000)
    d = _check_real(separation, "分离度 d", 0.0, 4.0)
    s = _check_real(sigma, "正类标准差 σ", 0.25, 4.0)
    rng = np.random.default_rng(_check_int(seed, "随机种子", 0, 2**31 - 1))
    if dist == "binormal":
        x_neg = rng.standard_normal(size)
        x_pos = d + s * rng.standard_normal(size)
        return _sigmoid(d * x_neg - d * d / 2.0), _sigmoid(d * x_pos - d * d / 2.0)
    if dist == "beta":
        return rng.beta(2.0, 2.0 + 2.0 * d, size), rng.beta(2.0 + 2.0 * d, 2.0, size)
    raise DemoInputError(f"未知的得分分布 {dist!r}；可选：{'、'.join(DISTRIBUTIONS)}")


class ScoreData(NamedTuple):
    """Tab 1 data: labels and scores, plus how they were built."""

    y_true: np.ndarray  # int64 0/1, negatives first
    y_score: np.ndarray  # float64 in [0, 1]
    neg: np.ndarray  # the m distinct negative draws
    pos: np.ndarray  # the m distinct positive draws
    a: int  # copies of each positive
    b: int  # copies of each negative


def make_score_data(m: object, pi: object, dist: str, separation: object, seed: object, sigma: object = 1.0) -> ScoreData:
    """Build the tab-1 data set for one setting of the controls.

    Every positive draw appears ``a`` times and every negative draw ``b`` times,
    with ``a / (a + b) = pi`` (see :func:`prior_weights`), so only the class
    counts depend on ``pi``.

    Raises
    ------
    DemoInputError
        On any out-of-range input (Chinese message).
    """
    a, b = prior_weights(pi)
    neg, pos = class_scores(m, dist, separation, seed, sigma)
    y_score = np.concatenate((np.tile(neg, b), np.tile(pos, a)))
    y_true = np.concatenate((np.zeros(neg.size * b, dtype=np.int64), np.ones(pos.size * a, dtype=np.int64)))
    return ScoreData(y_true, y_score, neg, pos, a, b)


class WorkflowData(NamedTuple):
    """Tab 2 data: one feature matrix split into training, validation and test parts."""

    X_train: np.ndarray
    y_train: np.ndarray
    X_val: np.ndarray
    y_val: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray


def split_three(n: int, seed: int, fractions: tuple[float, float, float] = (0.6, 0.2, 0.2)) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Indices of a seeded three-way split (training, validation, test), disjoint and covering ``range(n)``."""
    order = np.random.default_rng(seed).permutation(n)
    n_train = int(round(fractions[0] * n))
    n_val = int(round(fractions[1] * n))
    return order[:n_train], order[n_train : n_train + n_val], order[n_train + n_val :]


def make_workflow_data(n: object, pi: object, seed: object, *, n_features: int = 20, flip_y: float = 0.05) -> WorkflowData:
    """Generate one seeded data set and split it 60 % / 20 % / 20 %.

    Features come from :func:`sklearn.datasets.make_classification` (4
    informative of ``n_features``, label noise ``flip_y``), with class weights
    ``(1 - pi, pi)``.  The split uses a permutation seeded with ``seed + 1``.
    No split is checked here for having both classes: the caller reports that.
    """
    from sklearn.datasets import make_classification

    size = _check_int(n, "样本量 n", 50, 20000)
    share = check_share(pi)
    rng_seed = _check_int(seed, "随机种子", 0, 2**31 - 2)
    X, y = make_classification(
        n_samples=size,
        n_features=n_features,
        n_informative=4,
        n_redundant=2,
        weights=[1.0 - share, share],
        flip_y=flip_y,
        class_sep=1.0,
        random_state=rng_seed,
    )
    train, val, test = split_three(size, rng_seed + 1)
    return WorkflowData(X[train], y[train], X[val], y[val], X[test], y[test])
