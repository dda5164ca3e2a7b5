"""Helpers shared by every page of the book: figure style with Chinese fonts.

Every page starts with::

    from coursebook import setup_plotting
    setup_plotting()
"""

from .curves import covers
from .style import CJK_FONT_FAMILY, COLORS, find_cjk_font, setup_plotting

__all__ = ["setup_plotting", "find_cjk_font", "CJK_FONT_FAMILY", "COLORS", "covers"]
