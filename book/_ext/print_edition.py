"""Sphinx extension: the single-page HTML that ``make pdf`` prints with Debian's chromium.

``jupyter-book build --builder singlehtml`` assembles every page of ``_toc.yml`` into one HTML file;
``coursebook.pdf`` then prints it.  This extension makes that build work:

Sphinx looks up the HTML visitors of custom nodes under the builder's name first and falls back to
its format (``html``) only when no extension registered anything for ``singlehtml``.  Some extension
does (so the quiz nodes, sphinx-jupyterbook-latex's ``HiddenCellNode``, ... had no visitor there and the
build crashed); every ``html`` visitor missing for ``singlehtml`` is copied over.

The single page has no search (the print shows none, ``coursebook.pdf`` ignores the page's request for the
index): the build indexes no words (the Chinese segmentation of the whole book cost about 5 s of CPU per
build).  Nothing changes in the HTML build of the site.
"""

from __future__ import annotations

from typing import Any

from sphinx.application import Sphinx


def _inherit_html_visitors(app: Sphinx) -> None:
    if app.builder.name != "singlehtml":
        return
    app.builder.search = False  # no search index (read before the builder writes: prepare_writing)
    handlers = app.registry.translation_handlers
    single = handlers.setdefault("singlehtml", {})
    for name, pair in handlers.get("html", {}).items():
        single.setdefault(name, pair)


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the single-page fixes."""
    app.connect("builder-inited", _inherit_html_visitors)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
