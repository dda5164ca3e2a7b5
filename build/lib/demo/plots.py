"""Matplotlib figures of tab 1 (Chinese labels; fonts come from ``coursebook.setup_plotting``).

Every legend has a row of its own under the data (:func:`_figure`, :func:`_legend_below`): an axes without
frame or ticks that holds only the legend, so the layout engine (Shiny replaces constrained layout by tight
layout) places it like any axes.  The legend then can neither cover a curve, a point or a bar whatever the
inputs, nor be cut off at the figure's edge, at any width Shiny draws the figure.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import matplotlib as mpl
import numpy as np
from matplotlib.figure import Figure
from matplotlib.transforms import blended_transform_factory

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


#: Height of the legend's row against the data's (three legend lines at 8 pt in a 330 px high figure).
LEGEND_ROW = 0.3


def _figure(rows: tuple[float, ...] = (1.0,), legend_row: float = LEGEND_ROW) -> tuple[Figure, list]:
    """A figure with one data axes per entry of ``rows`` (relative heights) and a last row for the legend."""
    fig = Figure(figsize=(3.2, 3.2), layout="tight")
    axes = fig.subplots(len(rows) + 1, 1, gridspec_kw={"height_ratios": [*rows, legend_row]})
    return fig, list(axes)


def _legend_below(source, legend_axes) -> None:
    """The legend of ``source``'s labelled artists, alone in ``legend_axes`` (no frame, ticks or data), centred
    on the figure's width (the axes is as narrow as the data's, which leave room for the y label)."""
    legend_axes.set_axis_off()
    handles, labels = source.get_legend_handles_labels()
    across = blended_transform_factory(legend_axes.figure.transFigure, legend_axes.transAxes)
    legend_axes.legend(handles, labels, loc="center", bbox_to_anchor=(0.5, 0.5), bbox_transform=across, ncols=1,
                       frameon=False, handlelength=1.8, borderaxespad=0.0)


@_small
def roc_figure(r: Tab1Result) -> Figure:
    """ROC curve with the diagonal, the current operating point and the AUC."""
    fig, (ax, legend) = _figure()
    ax.plot([0, 1], [0, 1], ls="--", color=COLORS["reference"], lw=1, label="随机猜测")
    ax.plot(r.roc.fpr, r.roc.tpr, color=COLORS["curve"], lw=2, label=f"ROC（AUC = {fmt(r.auc)}）")
    m = r.metrics
    ax.plot([m.fpr], [m.recall], "o", color=COLORS["fp"], ms=8, label=f"工作点 τ = {r.threshold:.2f}")
    ax.set(xlim=(-0.02, 1.02), ylim=(-0.02, 1.02), xlabel="假正例率 FPR", ylabel="真正例率 TPR")
    _legend_below(ax, legend)
    return fig


@_small
def pr_figure(r: Tab1Result) -> Figure:
    """PR curve (step form matching AP), the baseline π and the operating point."""
    fig, (ax, legend) = _figure()
    pi = share(r.data)
    recall = np.concatenate(([0.0], r.pr.recall))
    precision = np.concatenate(([r.pr.precision[0]], r.pr.precision))
    grid = np.linspace(0.0, 1.0, 101)
    ax.plot(grid, np.full_like(grid, pi), ls="--", color=COLORS["reference"], lw=1, label=f"基线 π = {pi:.2f}")
    ax.step(recall, precision, where="pre", color=COLORS["curve"], lw=2, label=f"PR（AP = {fmt(r.ap)}）")
    m = r.metrics
    if not math.isnan(m.precision):
        ax.plot([m.recall], [m.precision], "o", color=COLORS["fp"], ms=8, label=f"工作点 τ = {r.threshold:.2f}")
    ax.set(xlim=(-0.02, 1.02), ylim=(-0.02, 1.02), xlabel="召回率 Recall", ylabel="精确率 Precision")
    _legend_below(ax, legend)
    return fig


@_small
def reliability_figure(r: Tab1Result) -> Figure:
    """Reliability diagram with the sample count of every non-empty bin below it."""
    fig, (top, bottom, legend) = _figure((3.0, 1.0), legend_row=0.25)
    bottom.sharex(top)
    top.tick_params(labelbottom=False)
    c = r.calibration
    top.plot([0, 1], [0, 1], ls="--", color=COLORS["reference"], lw=1, label="完美校准")
    top.plot(c.mean_predicted, c.fraction_positive, "o-", color=COLORS["curve"], lw=2, label=f"各箱正类占比（ECE = {fmt(r.ece)}）")
    top.set(xlim=(-0.02, 1.02), ylim=(-0.02, 1.02), ylabel="实际正类占比")
    _legend_below(top, legend)
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
    fig, (ax, legend) = _figure(legend_row=0.3)
    bins = np.linspace(0, 1, 41)
    ax.hist(r.data.neg, bins=bins, density=True, alpha=0.55, color=COLORS["negative"], label="负类")
    ax.hist(r.data.pos, bins=bins, density=True, alpha=0.55, color=COLORS["positive"], label="正类")
    ax.axvline(r.threshold, color="black", lw=1.5, label=f"阈值 τ = {r.threshold:.2f}")
    ax.set(xlim=(0, 1), xlabel="得分（预测概率）", ylabel="密度（与 π 无关）")
    _legend_below(ax, legend)
    return fig


def message_figure(text: str) -> Figure:
    """A placeholder with a short message, shown instead of a plot while the inputs are invalid."""
    with mpl.rc_context(SMALL):
        fig = Figure(figsize=(3.2, 3.2), layout="tight")
        ax = fig.add_subplot()
        ax.set_axis_off()
        ax.text(0.5, 0.5, text, ha="center", va="center", wrap=True, color=COLORS["reference"])
    return fig
