"""Helpers shared by every page of the book: figure style with Chinese fonts.

Every page starts with::

    from coursebook import setup_plotting
    setup_plotting()

The names below are imported on first use, so that a program that needs only :mod:`coursebook.deployment`
(the feedback pages of the grading service, the demo) does not import matplotlib for it.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {"setup_plotting": ".style", "find_cjk_font": ".style", "CJK_FONT_FAMILY": ".style", "COLORS": ".style",
            "covers": ".curves"}
__all__ = ["setup_plotting", "find_cjk_font", "CJK_FONT_FAMILY", "COLORS", "covers"]


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'coursebook' has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name], __name__), name)
