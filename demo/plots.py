"""Matplotlib figures of tab 1 (Chinese labels; fonts come from ``coursebook.setup_plotting``)."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import matplotlib as mpl
import numpy as np
from matplotlib.figure import Figure

from coursebook import COLORS

from .views import Tab1Result, fmt, share

__all__ = ["roc_figure", "pr_figure", "reliability_figure", "score_figure", "message_figure"]


#: Compact text for figures about 300 px wide (Shiny sizes the figure to its container).
SMALL = {"font.size": 9, "axes.titlesize": 9, "axes.labelsize": 9, "xtick.labelsize": 8, "ytick.labelsize": 8, "legend.fontsize": 8}


def _small(draw: Callable[[Tab1Result], Figure]) -> Callable[[Tab1Result], Figure]:
    """Create the figure's artists under the compact font sizes."""

    @functools.wraps(draw)
    def wrapper(r: Tab1Result) -> Figure:
        with mpl.rc_context(SMALL):
            return draw(r)

    return wrapper


def _figure() -> tuple[Figure, object]:
    fig = Figure(figsize=(3.2, 3.2), layout="constrained")
    return fig, fig.add_subplot()


@_small
def roc_figure(r: Tab1Result) -> Figure:
    """ROC curve with the diagonal, the current operating point and the AUC."""
    fig, ax = _figure()
    ax.plot([0, 1], [0, 1], ls="--", color=COLORS["reference"], lw=1, label="随机猜测")
    ax.plot(r.roc.fpr, r.roc.tpr, color=COLORS["curve"], lw=2, label=f"ROC（AUC = {fmt(r.auc)}）")
    m = r.metrics
    ax.plot([m.fpr], [m.recall], "o", color=COLORS["fp"], ms=8, label=f"工作点 τ = {r.threshold:.2f}")
    ax.set(xlim=(-0.02, 1.02), ylim=(-0.02, 1.02), xlabel="假正例率 FPR", ylabel="真正例率 TPR")
    ax.legend(loc="lower right")
    return fig


@_small
def pr_figure(r: Tab1Result) -> Figure:
    """PR curve (step form matching AP), the baseline π and the operating point."""
    fig, ax = _figure()
    pi = share(r.data)
    recall = np.concatenate(([0.0], r.pr.recall))
    precision = np.concatenate(([r.pr.precision[0]], r.pr.precision))
    # the baseline as a polyline (not axhline) so that loc="best" keeps the legend off it as well
    grid = np.linspace(0.0, 1.0, 101)
    ax.plot(grid, np.full_like(grid, pi), ls="--", color=COLORS["reference"], lw=1, label=f"基线 π = {pi:.2f}")
    ax.step(recall, precision, where="pre", color=COLORS["curve"], lw=2, label=f"PR（AP = {fmt(r.ap)}）")
    m = r.metrics
    if not math.isnan(m.precision):
        ax.plot([m.recall], [m.precision], "o", color=COLORS["fp"], ms=8, label=f"工作点 τ = {r.threshold:.2f}")
    ax.set(xlim=(-0.02, 1.02), ylim=(-0.02, 1.02), xlabel="召回率 Recall", ylabel="精确率 Precision")
    ax.legend(loc="best", frameon=True, framealpha=0.85)  # the baseline moves with π: find the emptiest spot
    return fig


@_small
def reliability_figure(r: Tab1Result) -> Figure:
    """Reliability diagram with the sample count of every non-empty bin below it."""
    fig = Figure(figsize=(3.2, 3.2), layout="constrained")
    top, bottom = fig.subplots(2, 1, sharex=True, gridspec_kw={"height_ratios": [3, 1]})
    c = r.calibration
    top.plot([0, 1], [0, 1], ls="--", color=COLORS["reference"], lw=1, label="完美校准")
    top.plot(c.mean_predicted, c.fraction_positive, "o-", color=COLORS["curve"], lw=2, label=f"各箱正类占比（ECE = {fmt(r.ece)}）")
    top.set(xlim=(-0.02, 1.02), ylim=(-0.02, 1.02), ylabel="实际正类占比")
    top.legend(loc="upper left")
    lows, highs = c.bin_edges[:, 0], c.bin_edges[:, 1]
    bottom.bar(lows, c.count, width=highs - lows, align="edge", color=COLORS["negative"], alpha=0.5, edgecolor="white")
    if c.count.size <= 20:
        for x, n in zip((lows + highs) / 2, c.count):
            bottom.annotate(str(int(n)), (x, n), ha="center", va="bottom", fontsize=6)
    bottom.set(xlabel="平均预测概率", ylabel="样本数")
    bottom.set_ylim(0, c.count.max() * 1.35)
    return fig


@_small
def score_figure(r: Tab1Result) -> Figure:
    """Class-conditional score histograms (densities, independent of π) and the threshold."""
    fig, ax = _figure()
    bins = np.linspace(0, 1, 41)
    ax.hist(r.data.neg, bins=bins, density=True, alpha=0.55, color=COLORS["negative"], label="负类")
    ax.hist(r.data.pos, bins=bins, density=True, alpha=0.55, color=COLORS["positive"], label="正类")
    ax.axvline(r.threshold, color="black", lw=1.5, label=f"阈值 τ = {r.threshold:.2f}")
    ax.set(xlim=(0, 1), xlabel="得分（预测概率）", ylabel="密度（与 π 无关）")
    ax.legend(loc="upper center")
    return fig


def message_figure(text: str) -> Figure:
    """A placeholder with a short message, shown instead of a plot while the inputs are invalid."""
    with mpl.rc_context(SMALL):
        fig, ax = _figure()
        ax.set_axis_off()
        ax.text(0.5, 0.5, text, ha="center", va="center", wrap=True, color=COLORS["reference"])
    return fig
