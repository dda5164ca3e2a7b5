"""Sphinx extension: the course's licences on every page's footer.

The footer's copyright line (``templates/copyright.html``) is :func:`coursebook.licence.notice` with links: the
licences' deeds and the page 版权与许可.  The PDF's cover prints the same statement (:mod:`coursebook.pdf`).

A site built beside the book, whose pages are not the book's (the guides, in the book's folder ``guide/``), sets
``licence_book_root`` to the path from its own root to the book's: its footer then links the book's page.
"""

from __future__ import annotations

import html
from typing import Any

from sphinx.application import Sphinx

from coursebook import licence


def _footer(app: Sphinx, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    book_root = app.config.licence_book_root
    if book_root:
        page = f"{context['pathto']('', 1)}{book_root}{licence.PAGE}.html"
    else:
        page = context["pathto"](licence.PAGE)

    def link(text: str, target: str) -> str:
        if target == licence.PAGE:
            return f'<a href="{html.escape(page)}">{html.escape(text)}</a>'
        return f'<a href="{html.escape(target)}" rel="license">{html.escape(text)}</a>'

    context["course_licence_notice"] = licence.notice(html.escape(app.config.author), html.escape(app.config.copyright), link)


def setup(app: Sphinx) -> dict[str, Any]:
    """Give every page's template the footer's licence statement.

    The statement is also a configuration value that rebuilds the HTML: an incremental build rewrites only the
    pages whose source changed, so without it a changed statement would stay old on every other page.
    """
    app.add_config_value("course_licence_notice", licence.notice("{author}", "{copyright}"), "html")
    app.add_config_value("licence_book_root", "", "html", types=[str])
    app.connect("html-page-context", _footer)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
