"""Matplotlib style and CJK font set-up, in one place for the whole book.

The font file comes from the pinned PyPI package ``mplfonts`` (Noto Sans CJK SC),
so a fresh machine gets the same glyphs without system fonts.  The file is
registered with ``fontManager.addfont`` on every call, which sidesteps a stale
matplotlib font cache that would otherwise hide a newly installed font.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib as mpl
from matplotlib import font_manager

CJK_FONT_FAMILY = "Noto Sans CJK SC"

#: Colours of the four confusion-matrix cells, used consistently across figures.
COLORS = {
    "tp": "#30a14e",
    "tn": "#1f77b4",
    "fp": "#d62728",
    "fn": "#9467bd",
    "positive": "#d62728",
    "negative": "#1f77b4",
    "curve": "#1f4e79",
    "reference": "#7f7f7f",
}


def find_cjk_font() -> Path:
    """Return the path of the bundled Noto Sans CJK SC font file.

    Raises
    ------
    FileNotFoundError
        If the ``mplfonts`` package (a pinned dependency) is missing its font.
    """
    import mplfonts

    path = Path(mplfonts.__file__).parent / "fonts" / "NotoSansCJKsc-Regular.otf"
    if not path.is_file():
        raise FileNotFoundError(f"找不到中文字体文件 {path}；请重新运行 make setup")
    return path


def setup_plotting() -> None:
    """Register the CJK font and apply the book's figure style to matplotlib."""
    font_manager.fontManager.addfont(str(find_cjk_font()))
    mpl.rcParams.update(
        {
            "font.family": "sans-serif",
            "font.sans-serif": [CJK_FONT_FAMILY, "DejaVu Sans"],
            "axes.unicode_minus": False,  # CJK fonts may lack U+2212
            "figure.figsize": (6.0, 4.0),
            "figure.dpi": 110,
            "savefig.dpi": 150,
            "axes.grid": True,
            "grid.alpha": 0.3,
            "axes.spines.top": False,
            "axes.spines.right": False,
            "legend.frameon": False,
            "animation.html": "jshtml",
        }
    )
