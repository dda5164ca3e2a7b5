"""Figures with Chinese text render with no missing-glyph warning."""

from __future__ import annotations

import re
import warnings

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from coursebook import COLORS, setup_plotting  # noqa: E402

GLYPH = re.compile(r"missing from (current )?font|Glyph \d+", re.IGNORECASE)


def render(fig) -> None:
    fig.canvas.draw()
    fig.savefig(__import__("io").BytesIO(), format="png")
    fig.savefig(__import__("io").BytesIO(), format="svg")
    plt.close(fig)


def test_chinese_figure_has_no_missing_glyphs(tmp_path):
    setup_plotting()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fig, ax = plt.subplots()
        ax.plot([0, 0.5, 1], [0, 0.8, 1], color=COLORS["curve"], label="ROC 曲线（得分 ≥ τ 判为正类）")
        ax.set_xlabel("假正率 FPR")
        ax.set_ylabel("召回率（真正率）TPR −0.5")
        ax.set_title("混淆矩阵：真正例、假正例、真负例、假负例；校准曲线 π≈10 %")
        ax.legend()
        render(fig)
    messages = [str(w.message) for w in caught if GLYPH.search(str(w.message))]
    assert not messages, messages


def test_missing_glyph_would_be_detected():
    """Guard the guard: without the CJK font, matplotlib does warn, and the pattern catches it."""
    with matplotlib.rc_context({"font.family": "sans-serif", "font.sans-serif": ["DejaVu Sans"]}):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fig, ax = plt.subplots()
            ax.set_title("混淆矩阵")
            render(fig)
    assert any(GLYPH.search(str(w.message)) for w in caught)
