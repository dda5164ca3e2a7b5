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

import numbers
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from ._validation import UndefinedMetricError, check_option, check_rates, check_scalar, check_zero_division
from .ranking import roc_curve

__all__ = ["ThresholdChoice", "prevalence_corrected_precision", "expected_cost", "choose_threshold"]


class ThresholdChoice(NamedTuple):
    """The chosen threshold and its validation operating point.

    Attributes
    ----------
    threshold : float
        The chosen threshold; ``+inf`` means "predict no positive".
    value : float
        The criterion reached: F1, expected cost per sample, or TPR under the
        FPR cap.
    tpr, fpr : float
        The validation operating point at ``threshold``.
    rule : str
        The rule applied.
    """

    threshold: float
    value: float
    tpr: float
    fpr: float
    rule: str


def _check_prior(prior: Any) -> float:
    return check_scalar(prior, "prior", numbers.Real, min_val=0.0, max_val=1.0, include_boundaries="neither",
                        description="部署时正类比例")


def _check_cost(value: Any, name: str, what: str) -> float:
    return check_scalar(value, name, numbers.Real, min_val=0.0, description=f"{what}的单位代价")


def prevalence_corrected_precision(tpr: ArrayLike, fpr: ArrayLike, prior: float, *, zero_division: Any = "nan") -> float | np.ndarray:
    r"""Precision expected at deployment prior ``prior`` from validation TPR and FPR.

    Parameters
    ----------
    tpr, fpr : float or array-like
        Rates in [0, 1] (broadcast together), e.g. one ROC point or a whole
        :func:`roc_curve`.
    prior : float
        Deployment share of positives :math:`\pi`, in the open interval (0, 1).
    zero_division : {"nan", 0, "raise"}, default "nan"
        Result where :math:`\pi\,\mathrm{TPR} + (1-\pi)\,\mathrm{FPR} = 0`
        (no positive predicted).

    Returns
    -------
    float or ndarray
        :math:`\mathrm{Precision}_\pi`; a float for scalar inputs.

    Raises
    ------
    ValueError
        If a rate is outside [0, 1] or not finite, if ``prior`` is not in
        (0, 1), or if ``zero_division`` is invalid.
    UndefinedMetricError
        Under ``zero_division="raise"`` when a denominator is 0.

    See Also
    --------
    expected_cost : Cost at the same deployment prior.
    sklearn.metrics.precision_score : Precision at the prior *of the sample
        it is given*; it cannot re-weight to another prior.
    sklearn.metrics.class_likelihood_ratios : The prior-free
        :math:`\mathrm{LR}_+ = \mathrm{TPR}/\mathrm{FPR}`; the posterior odds
        here are :math:`\mathrm{LR}_+` times the prior odds.

    Notes
    -----
    By Bayes' theorem, with :math:`\pi = P(Y=1)` and the rule's rates,

    .. math::

        \mathrm{Precision}_\pi = P(Y=1 \mid \hat Y=1)
        = \frac{\pi\,\mathrm{TPR}}{\pi\,\mathrm{TPR} + (1-\pi)\,\mathrm{FPR}}.

    TPR and FPR do not depend on the class mix, precision does: a rare
    positive class makes even a small FPR dominate the denominator.

    References
    ----------
    .. [1] Altman, D. G., & Bland, J. M. (1994). Diagnostic tests 2:
           predictive values. *BMJ*, 309(6947), 102.
    .. [2] Fawcett, T. (2006). An introduction to ROC analysis. *Pattern
           Recognition Letters*, 27(8), 861-874.

    Examples
    --------
    The course's example: Recall 0.8 and FPR 0.01 give a false discovery rate
    of about 1.2 % at a 50 % prior and about 55.3 % at a 1 % prior.

    >>> from autograder.reference import prevalence_corrected_precision
    >>> round(1 - prevalence_corrected_precision(0.8, 0.01, 0.5), 4)
    0.0123
    >>> round(1 - prevalence_corrected_precision(0.8, 0.01, 0.01), 4)
    0.5531
    """
    policy = check_zero_division(zero_division)
    t = check_rates(tpr, "tpr")
    f = check_rates(fpr, "fpr")
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

    Parameters
    ----------
    tpr, fpr : float or array-like
        Rates in [0, 1] (broadcast together).
    prior : float
        Deployment share of positives :math:`\pi`, in the open interval (0, 1).
    c_fp, c_fn : float
        Unit costs of a false positive and a false negative, finite and
        non-negative.

    Returns
    -------
    float or ndarray
        Expected cost per sample; a float for scalar inputs.

    Raises
    ------
    ValueError
        If a rate is outside [0, 1] or not finite, if ``prior`` is not in
        (0, 1), or if a cost is negative or not a finite real number.

    See Also
    --------
    choose_threshold : Minimises this cost over a validation ROC curve
        (``rule="cost"``).
    sklearn.model_selection.TunedThresholdClassifierCV : Tunes an estimator's
        threshold by cross-validation for a scorer (a cost can be written as
        one with ``sklearn.metrics.make_scorer``); scikit-learn has no
        prior-corrected cost function.

    Notes
    -----
    .. math::

        \widetilde{\mathcal C} = c_{FP}\,(1-\pi)\,\mathrm{FPR} + c_{FN}\,\pi\,\mathrm{FNR},
        \qquad \mathrm{FNR} = 1 - \mathrm{TPR}.

    Multiply by the number of deployed samples for a total; that factor does
    not move the best threshold.  Only the ratio :math:`c_{FP} : c_{FN}`
    matters for the choice.

    References
    ----------
    .. [1] Elkan, C. (2001). The foundations of cost-sensitive learning. In
           *Proceedings of the 17th International Joint Conference on Artificial
           Intelligence (IJCAI)*, 973-978.
    .. [2] Drummond, C., & Holte, R. C. (2006). Cost curves: An improved method
           for visualizing classifier performance. *Machine Learning*, 65(1),
           95-130.

    Examples
    --------
    >>> from autograder.reference import expected_cost
    >>> round(expected_cost(0.8, 0.1, prior=0.2, c_fp=1, c_fn=5), 12)  # 0.8*0.1 + 5*0.2*0.2
    0.28
    """
    t = check_rates(tpr, "tpr")
    f = check_rates(fpr, "fpr")
    pi = _check_prior(prior)
    a = _check_cost(c_fp, "c_fp", "假阳性")
    b = _check_cost(c_fn, "c_fn", "假阴性")
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
    rule : {"f1", "cost", "fpr_cap"}, default "f1"
        ``"f1"`` maximises :math:`F_1` built from :math:`\mathrm{Precision}_\pi`
        and TPR; ``"cost"`` minimises :func:`expected_cost`; ``"fpr_cap"``
        maximises TPR subject to ``FPR <= max_fpr``.
    prior : float, optional
        Deployment share of positives, in (0, 1); defaults to the validation
        share (then ``"f1"`` is the ordinary validation F1).
    c_fp, c_fn : float, default 1.0
        Unit costs of a false positive and a false negative (rule ``"cost"``),
        finite and non-negative.
    max_fpr : float, optional
        FPR cap in [0, 1]; required by rule ``"fpr_cap"``.

    Returns
    -------
    ThresholdChoice
        ``(threshold, value, tpr, fpr, rule)``; ties in the criterion go to the
        highest threshold.

    Raises
    ------
    ValueError
        On bad labels or scores, a single class, an unknown ``rule``, a bad
        ``prior``, cost or ``max_fpr``, or ``rule="fpr_cap"`` without
        ``max_fpr``.

    See Also
    --------
    roc_curve : The candidate thresholds and their rates.
    sklearn.model_selection.TunedThresholdClassifierCV : Tunes the threshold
        of an *estimator* by cross-validation (refitting it) for any scorer;
        this function only scans given validation scores, can re-weight to a
        deployment prior, and documents its tie rule.

    Notes
    -----
    With :math:`(\mathrm{FPR}_k, \mathrm{TPR}_k)` the points of
    :func:`roc_curve` (threshold ``+inf`` included), the rules pick

    .. math::

        \text{f1:}\quad &\arg\max_k \frac{2\,\mathrm{Precision}_{\pi,k}\,\mathrm{TPR}_k}
                                         {\mathrm{Precision}_{\pi,k} + \mathrm{TPR}_k},\\
        \text{cost:}\quad &\arg\min_k\ c_{FP}(1-\pi)\,\mathrm{FPR}_k + c_{FN}\,\pi\,(1-\mathrm{TPR}_k),\\
        \text{fpr\_cap:}\quad &\arg\max_k\ \{\mathrm{TPR}_k : \mathrm{FPR}_k \le \alpha\}.

    For calibrated probabilities at the validation prior, the cost rule's
    threshold approaches :math:`c_{FP}/(c_{FP}+c_{FN})` (Elkan, 2001).

    References
    ----------
    .. [1] Elkan, C. (2001). The foundations of cost-sensitive learning. In
           *Proceedings of the 17th International Joint Conference on Artificial
           Intelligence (IJCAI)*, 973-978.
    .. [2] Lipton, Z. C., Elkan, C., & Naryanaswamy, B. (2014). Optimal
           thresholding of classifiers to maximize F1 measure. In *Machine
           Learning and Knowledge Discovery in Databases (ECML PKDD)*, 225-239.

    Examples
    --------
    >>> from autograder.reference import choose_threshold
    >>> y = [1, 1, 0, 1, 0, 0]
    >>> s = [0.9, 0.8, 0.7, 0.6, 0.5, 0.4]
    >>> choose_threshold(y, s, rule="f1").threshold
    0.6
    >>> choose_threshold(y, s, rule="fpr_cap", max_fpr=0.0).threshold
    0.8
    >>> choose_threshold(y, s, rule="cost", c_fp=0, c_fn=0).threshold  # all tie: highest wins
    inf
    """
    rule = check_option(rule, "rule", ("f1", "cost", "fpr_cap"))
    a = _check_cost(c_fp, "c_fp", "假阳性")
    b = _check_cost(c_fn, "c_fn", "假阴性")
    cap = None if max_fpr is None else check_scalar(max_fpr, "max_fpr", numbers.Real, min_val=0.0, max_val=1.0)
    if rule == "fpr_cap" and cap is None:
        raise ValueError('rule="fpr_cap" 需要给出 max_fpr')
    fpr, tpr, thresholds = roc_curve(y_true, y_score)
    if prior is None:
        labels = np.asarray(y_true)
        pi = float(np.count_nonzero(labels == 1) / labels.shape[0])
    else:
        pi = _check_prior(prior)
    if rule == "f1":
        precision = prevalence_corrected_precision(tpr, fpr, pi, zero_division=0)
        denominator = precision + tpr
        with np.errstate(invalid="ignore", divide="ignore"):
            score = np.where(denominator > 0, 2 * precision * tpr / np.where(denominator > 0, denominator, 1.0), 0.0)
        best = int(np.argmax(score))  # argmax returns the first maximum = highest threshold
    elif rule == "cost":
        score = expected_cost(tpr, fpr, prior=pi, c_fp=a, c_fn=b)
        best = int(np.argmin(score))
    else:
        score = np.where(fpr <= cap, tpr, -1.0)
        best = int(np.argmax(score))
    return ThresholdChoice(float(thresholds[best]), float(score[best]), float(tpr[best]), float(fpr[best]), rule)
