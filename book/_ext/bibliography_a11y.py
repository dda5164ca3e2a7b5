"""Sphinx extension: the bibliography's entries are list items for assistive technology.

docutils writes the citations of ``{bibliography}`` (sphinxcontrib-bibtex) as
``<div role="list" class="citation-list">`` holding ``<div role="doc-biblioentry">`` entries; ARIA
requires the children of a list to be list items, and ``doc-biblioentry`` is deprecated (DPUB-ARIA 1.1),
so axe reports the page (aria-required-children).  This extension gives the entries ``role="listitem"``
in the rendered body of every page (HTML and the single-page build of the PDF edition); the markup is
otherwise unchanged.
"""

from __future__ import annotations

from typing import Any

ENTRY_ROLE = 'role="doc-biblioentry"'


def entries_as_list_items(app, pagename: str, templatename: str, context: dict[str, Any], doctree) -> None:
    """``html-page-context``: replace the deprecated entry role by ``listitem`` in the page body."""
    body = context.get("body")
    if isinstance(body, str) and ENTRY_ROLE in body:
        context["body"] = body.replace(ENTRY_ROLE, 'role="listitem"')


def setup(app) -> dict[str, Any]:
    app.connect("html-page-context", entries_as_list_items)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
