"""Tab 1 computations and number formatting, separate from the Shiny wiring.

Displayed numbers follow one format, documented for the tests:

* counts: the integer, e.g. ``123``;
* rates, scores and probabilities: ``f"{x:.4f}"`` (four decimals, e.g. ``0.8808``);
* an undefined value (zero denominator, NaN): the text ``无定义``.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from autograder.reference import (
    BinaryMetrics,
    CalibrationCurve,
    PrCurve,
    RocCurve,
    average_precision,
    binary_metrics,
    brier_baseline,
    brier_score,
    calibration_curve,
    expected_calibration_error,
    pr_curve,
    prevalence_corrected_precision,
    roc_auc,
    roc_curve,
)

from .data import DemoInputError, ScoreData, check_share, make_score_data

__all__ = ["UNDEFINED", "fmt", "fmt_threshold", "Tab1Result", "compute_tab1", "check_bins"]

#: Text shown for an undefined metric.
UNDEFINED = "无定义"


def fmt(value: Any) -> str:
    """Format a metric for display: four decimals, or ``无定义`` for NaN/None."""
    if value is None:
        return UNDEFINED
    x = float(value)
    if math.isnan(x):
        return UNDEFINED
    return f"{x:.4f}"


def fmt_threshold(value: float) -> str:
    """Format a threshold; ``+inf`` (predict no positive) becomes ``+∞``."""
    return "+∞" if math.isinf(value) and value > 0 else f"{value:.4f}"


def check_bins(n_bins: object) -> int:
    """Validate the number of calibration bins (1 to 50) with a Chinese message."""
    if n_bins is None or isinstance(n_bins, bool):
        raise DemoInputError("请输入校准分箱数（1 到 50 的整数）")
    try:
        value = float(n_bins)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise DemoInputError(f"校准分箱数必须是整数，实际为 {n_bins!r}") from None
    if not math.isfinite(value) or value != int(value):
        raise DemoInputError(f"校准分箱数必须是整数，实际为 {n_bins!r}")
    if value < 1:
        raise DemoInputError(f"校准分箱数为 {int(value)}：至少需要 1 个分箱才能画校准曲线、计算 ECE。")
    if value > 50:
        raise DemoInputError(f"校准分箱数 {int(value)} 太多（最多 50）：每箱样本太少，估计只剩噪声。")
    return int(value)


class Tab1Result(NamedTuple):
    """Everything tab 1 shows for one setting of the controls."""

    data: ScoreData
    threshold: float
    metrics: BinaryMetrics
    roc: RocCurve
    auc: float
    pr: PrCurve
    ap: float
    brier: float
    brier_base: float
    calibration: CalibrationCurve
    ece: float
    n_bins: int
    strategy: str
    deploy_prior: float | None
    deploy_precision: float | None
    deploy_error: str | None


def compute_tab1(
    m: object,
    pi: object,
    dist: str,
    separation: object,
    sigma: object,
    seed: object,
    threshold: object,
    n_bins: object,
    strategy: str,
    deploy_prior: object,
) -> Tab1Result:
    """Build the seeded data and compute every tab-1 number with :mod:`autograder.reference`.

    Raises
    ------
    ValueError
        :class:`DemoInputError` or a reference error, both with Chinese messages.
    """
    data = make_score_data(m, pi, dist, separation, seed, sigma)
    if threshold is None:
        raise DemoInputError("请设置阈值 τ")
    tau = float(threshold)  # type: ignore[arg-type]
    bins = check_bins(n_bins)
    metrics = binary_metrics(data.y_true, data.y_score, tau)
    deploy_precision = None
    deploy_error = None
    prior = None
    try:
        prior = check_share(deploy_prior, "部署时正类比例 π′")
        deploy_precision = prevalence_corrected_precision(metrics.recall, metrics.fpr, prior)
    except ValueError as exc:
        deploy_error = str(exc)
    return Tab1Result(
        data=data,
        threshold=tau,
        metrics=metrics,
        roc=roc_curve(data.y_true, data.y_score),
        auc=roc_auc(data.y_true, data.y_score),
        pr=pr_curve(data.y_true, data.y_score),
        ap=average_precision(data.y_true, data.y_score),
        brier=brier_score(data.y_true, data.y_score),
        brier_base=brier_baseline(data.y_true),
        calibration=calibration_curve(data.y_true, data.y_score, n_bins=bins, strategy=strategy),
        ece=expected_calibration_error(data.y_true, data.y_score, n_bins=bins, strategy=strategy),
        n_bins=bins,
        strategy=strategy,
        deploy_prior=prior,
        deploy_precision=deploy_precision,
        deploy_error=deploy_error,
    )


def share(data: ScoreData) -> float:
    """Share of positives in the data set (exactly a / (a + b))."""
    return float(np.mean(data.y_true == 1))
