"""The demo's figures as Shiny draws them: every legend inside the figure and clear of the data.

Shiny sizes a figure to its output element (at 96 px per inch times the device's pixel ratio) and replaces a
constrained layout by a tight one before saving it; :func:`_as_shiny_draws` does the same.  The sizes are
those of the output elements in the browser at 375 and 1280 px (``SIZES``; the browser test
``test_plot_sizes_are_the_ones_checked_here`` measures them), for several inputs, including extreme ones.
"""

from __future__ import annotations

import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.transforms import Bbox

from coursebook import setup_plotting
from demo.plots import pr_figure, reliability_figure, roc_figure, score_figure
from demo.views import compute_tab1

#: (figure, width px, height px): the narrowest and widest each output element gets at 375 and 1280 px.
SIZES = {
    "roc_plot": [(250, 380), (340, 380)],
    "pr_plot": [(250, 380), (340, 380)],
    "reliability_plot": [(250, 380), (340, 380)],
    "score_plot": [(170, 300), (340, 320)],
}
FIGURES = {"roc_plot": roc_figure, "pr_plot": pr_figure, "reliability_plot": reliability_figure, "score_plot": score_figure}
setup_plotting()  # the app's fonts (Noto CJK): label widths as in the app
INPUTS = [  # (pi, threshold, separation): the defaults, a low share with a low threshold, a high one, no separation
    (0.5, 0.5, 1.5), (0.05, 0.02, 3.0), (0.95, 0.98, 0.5), (0.5, 0.0, 0.0)]


def _as_shiny_draws(fig, width: int, height: int) -> None:
    dpi = fig.get_dpi()
    fig.set_size_inches(width / dpi, height / dpi)
    fig.set_layout_engine("tight")
    FigureCanvasAgg(fig).draw()


def _data_boxes(fig) -> list[Bbox]:
    """The plot areas (in pixels) of the axes that draw data: every axes that is not the legend's own."""
    return [ax.get_window_extent() for ax in fig.axes if ax.axison]


@pytest.mark.parametrize("name", list(FIGURES))
@pytest.mark.parametrize("pi, threshold, sep", INPUTS)
def test_every_legend_is_inside_the_figure_and_off_the_data(name, pi, threshold, sep):
    r = compute_tab1(200, pi, "binormal", sep, 1.0, 1, threshold, 10, "uniform", 0.05)
    for width, height in SIZES[name]:
        fig = FIGURES[name](r)
        _as_shiny_draws(fig, width, height)
        whole = fig.bbox
        legends = [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None] + list(fig.legends)
        assert len(legends) == 1, f"{name}: {len(legends)} legends"
        legend = legends[0]
        box = legend.get_window_extent()
        where = f"{name} at {width}x{height} (π={pi}, τ={threshold}): legend {box.bounds}"
        assert whole.x0 - 0.5 <= box.x0 and box.x1 <= whole.x1 + 0.5 and whole.y0 - 0.5 <= box.y0 and box.y1 <= whole.y1 + 0.5, \
            f"{where} reaches out of the figure {whole.bounds}"
        for text in legend.get_texts():  # no label cut at the figure's edge
            t = text.get_window_extent()
            assert whole.x0 - 0.5 <= t.x0 and t.x1 <= whole.x1 + 0.5, f"{where}: “{text.get_text()}” is cut"
        for data in _data_boxes(fig):
            assert not box.overlaps(data), f"{where} covers the plot area {data.bounds}"
        assert len(legend.get_texts()) >= 2  # every labelled artist is in it
