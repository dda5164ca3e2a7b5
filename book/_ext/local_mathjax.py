"""Sphinx extension: serve MathJax 3 from the built site instead of a CDN.

The book must read offline (and its browser tests run without network), so the MathJax 3 that Sphinx
would load from a CDN is copied from the pinned PyPI package ``django-static-mathjax`` (import name
``mathjax``; MathJax 3.2.2, no dependencies) into ``_static/mathjax/`` and ``mathjax_path`` points there.
Only the parts a page can load are copied: the combined ``tex-mml-chtml.js`` component, the CHTML fonts,
the TeX extensions it may autoload and the menu/accessibility components.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx
from sphinx.util import logging

logger = logging.getLogger(__name__)

COMPONENT = "tex-mml-chtml.js"
PARTS = (COMPONENT, "output/chtml", "input/tex/extensions", "input/mml", "ui", "a11y", "adaptors")
TARGET = "mathjax"


def mathjax_es5() -> Path | None:
    """Directory ``es5`` of the installed MathJax 3 distribution, or None when it is not installed."""
    try:
        import mathjax  # django-static-mathjax
    except ImportError:
        return None
    es5 = Path(mathjax.__file__).parent / "static" / "mathjax" / "es5"
    return es5 if (es5 / COMPONENT).is_file() else None


def _configure(app: Sphinx, config: Any) -> None:
    if mathjax_es5() is None:
        logger.info("django-static-mathjax is not installed: MathJax is loaded from the Sphinx default CDN")
        return
    config.mathjax_path = f"{TARGET}/{COMPONENT}"
    # Formulas at the size of the text around them.  By default MathJax scales them to match the
    # surrounding font's x-height, which in a Chinese font is large: formulas came out 27% larger than
    # the text and wider than a phone's column.
    options = dict(config.mathjax3_config or {})
    options["chtml"] = {"matchFontHeight": False, **dict(options.get("chtml") or {})}
    config.mathjax3_config = options


def _copy(app: Sphinx, exception: Exception | None) -> None:
    es5 = mathjax_es5()
    if exception is not None or es5 is None or app.builder.format != "html":
        return
    dest = Path(app.outdir) / "_static" / TARGET
    for part in PARTS:
        src = es5 / part
        out = dest / part
        if src.is_dir():
            shutil.copytree(src, out, dirs_exist_ok=True)
        elif src.is_file() and (not out.exists() or out.stat().st_size != src.stat().st_size):
            out.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, out)


def setup(app: Sphinx) -> dict[str, Any]:
    """Point ``mathjax_path`` to the local copy and copy it after the build."""
    app.connect("config-inited", _configure)
    app.connect("build-finished", _copy)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
