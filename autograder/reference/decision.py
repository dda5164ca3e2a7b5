r"""Threshold tools for deployment: prior-corrected precision, expected cost, threshold choice.

When the validation set's class mix differs from the deployment prior
:math:`\pi` (for instance after re-sampling), precision and cost computed on it
must be re-weighted.  With :math:`\mathrm{TPR}` and :math:`\mathrm{FPR}` from
validation,

.. math::

    \mathrm{Precision}_\pi = \frac{\pi\,\mathrm{TPR}}{\pi\,\mathrm{TPR} + (1-\pi)\,\mathrm{FPR}},
    \qquad
    \widetilde{\mathcal C} = c_{FP}(1-\pi)\,\mathrm{FPR} + c_{FN}\,\pi\,(1-\mathrm{TPR}).

:func:`choose_threshold` scans the candidates ``+inf`` (predict no positive)
and every distinct validation score, and applies one of three rules.  **Tie
rule**: when several thresholds reach the same best value, the *highest*
threshold wins (the fewest positive predictions).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from ._validation import UndefinedMetricError, check_threshold, check_zero_division
from .ranking import roc_curve

__all__ = ["ThresholdChoice", "prevalence_corrected_precision", "expected_cost", "choose_threshold"]


class ThresholdChoice(NamedTuple):
    """The chosen threshold and its validation operating point.

    ``value`` is the criterion reached (F1, expected cost per sample, or TPR
    under the FPR cap).  ``threshold`` may be ``+inf``, meaning "predict no
    positive".
    """

    threshold: float
    value: float
    tpr: float
    fpr: float
    rule: str


def _check_rate(value: Any, name: str) -> np.ndarray:
    arr = np.asarray(value)
    if arr.dtype.kind not in "iuf" or not np.all(np.isfinite(arr)) or np.any((arr < 0) | (arr > 1)):
        raise ValueError(f"{name} 必须是 [0, 1] 内的有限实数（或此类数组），实际为 {value!r}")
    return arr.astype(np.float64)


def _check_prior(prior: Any) -> float:
    pi = check_threshold(prior, "prior")
    if not 0.0 < pi < 1.0:
        raise ValueError(f"prior（部署时正类比例）必须位于开区间 (0, 1)，实际为 {pi!r}")
    return pi


def _check_cost(value: Any, name: str) -> float:
    c = check_threshold(value, name)
    if c < 0:
        raise ValueError(f"{name} 必须是非负数，实际为 {c!r}")
    return c


def prevalence_corrected_precision(tpr: ArrayLike, fpr: ArrayLike, prior: float, *, zero_division: Any = "nan") -> float | np.ndarray:
    r"""Precision expected at deployment prior ``prior`` from validation TPR and FPR.

    Parameters
    ----------
    tpr, fpr : float or array-like
        Rates in [0, 1] (broadcast together).
    prior : float
        Deployment share of positives, in the open interval (0, 1).
    zero_division : {"nan", 0, "raise"}
        Result where :math:`\pi\mathrm{TPR} + (1-\pi)\mathrm{FPR} = 0` (no positive predicted).

    Returns
    -------
    float or ndarray
        A float for scalar inputs.

    Examples
    --------
    The course's example: Recall 0.8 and FPR 0.01 give a false discovery rate
    of about 1.2 % at a 50 % prior and about 55.3 % at a 1 % prior.

    >>> round(1 - prevalence_corrected_precision(0.8, 0.01, 0.5), 4)
    0.0124
    >>> round(1 - prevalence_corrected_precision(0.8, 0.01, 0.01), 4)
    0.5531
    """
    policy = check_zero_division(zero_division)
    t = _check_rate(tpr, "tpr")
    f = _check_rate(fpr, "fpr")
    pi = _check_prior(prior)
    numerator = pi * t
    denominator = numerator + (1.0 - pi) * f
    empty = denominator == 0
    if np.any(empty) and policy == "raise":
        raise UndefinedMetricError("precision_π 无定义：分母 π·TPR+(1−π)·FPR 为 0（没有预测正类）")
    fill = np.nan if policy == "nan" else float(policy)
    with np.errstate(invalid="ignore", divide="ignore"):
        result = np.where(empty, fill, numerator / np.where(empty, 1.0, denominator))
    return float(result) if result.ndim == 0 else result


def expected_cost(tpr: ArrayLike, fpr: ArrayLike, *, prior: float, c_fp: float, c_fn: float) -> float | np.ndarray:
    r"""Expected misclassification cost per deployed sample.

    .. math:: \widetilde{\mathcal C} = c_{FP}(1-\pi)\,\mathrm{FPR} + c_{FN}\,\pi\,\mathrm{FNR},
              \quad \mathrm{FNR} = 1 - \mathrm{TPR}

    Multiply by the number of deployed samples for a total; that factor does
    not move the best threshold.
    """
    t = _check_rate(tpr, "tpr")
    f = _check_rate(fpr, "fpr")
    pi = _check_prior(prior)
    a = _check_cost(c_fp, "c_fp")
    b = _check_cost(c_fn, "c_fn")
    result = a * (1.0 - pi) * f + b * pi * (1.0 - t)
    return float(result) if np.ndim(result) == 0 else result


def choose_threshold(
    y_true: ArrayLike,
    y_score: ArrayLike,
    *,
    rule: str = "f1",
    prior: float | None = None,
    c_fp: float = 1.0,
    c_fn: float = 1.0,
    max_fpr: float | None = None,
) -> ThresholdChoice:
    r"""Choose a threshold on *validation* scores, never on the test set.

    Parameters
    ----------
    y_true, y_score : array-like of shape (n,)
        Validation labels (both classes present) and scores.
    rule : {"f1", "cost", "fpr_cap"}
        ``"f1"`` maximises :math:`F_1` built from :math:`\mathrm{Precision}_\pi`
        and TPR; ``"cost"`` minimises :func:`expected_cost`; ``"fpr_cap"``
        maximises TPR subject to ``FPR <= max_fpr``.
    prior : float, optional
        Deployment share of positives; defaults to the validation share (then
        ``"f1"`` is the ordinary validation F1).
    c_fp, c_fn : float
        Unit costs of a false positive and a false negative (rule ``"cost"``).
    max_fpr : float
        FPR cap in [0, 1] (rule ``"fpr_cap"``).

    Returns
    -------
    ThresholdChoice
        Ties in the criterion go to the highest threshold.
    """
    curve = roc_curve(y_true, y_score)
    if prior is None:
        labels = np.asarray(y_true)
        pi = float(np.count_nonzero(labels == 1) / labels.shape[0])
    else:
        pi = _check_prior(prior)
    thresholds, fpr, tpr = curve
    if rule == "f1":
        precision = prevalence_corrected_precision(tpr, fpr, pi, zero_division=0)
        denominator = precision + tpr
        with np.errstate(invalid="ignore", divide="ignore"):
            score = np.where(denominator > 0, 2 * precision * tpr / np.where(denominator > 0, denominator, 1.0), 0.0)
        best = int(np.argmax(score))  # argmax returns the first maximum = highest threshold
    elif rule == "cost":
        score = expected_cost(tpr, fpr, prior=pi, c_fp=c_fp, c_fn=c_fn)
        best = int(np.argmin(score))
    elif rule == "fpr_cap":
        if max_fpr is None:
            raise ValueError('rule="fpr_cap" 需要给出 max_fpr')
        cap = float(_check_rate(max_fpr, "max_fpr"))
        allowed = fpr <= cap
        score = np.where(allowed, tpr, -1.0)
        best = int(np.argmax(score))
    else:
        raise ValueError(f'rule 只能是 "f1"、"cost" 或 "fpr_cap"，实际为 {rule!r}')
    return ThresholdChoice(float(thresholds[best]), float(score[best]), float(tpr[best]), float(fpr[best]), rule)
