"""Sphinx extension: a line break inside Chinese prose is not a space.

Pages wrap long Chinese paragraphs over several source lines.  HTML keeps each line break as white
space, and browsers such as Chromium draw it as a space between two Chinese characters ("对角线 下方").
This extension removes a line break (and the spaces around it) when the characters on both sides are
Chinese characters or full-width punctuation, in the prose of every page (text nodes outside code,
math and raw output), once the document is resolved.
"""

from __future__ import annotations

import re
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx

_CJK = "\u3000-\u303f\u4e00-\u9fff\uff00-\uffef\u201c\u201d\u2018\u2019"
CJK_BREAK = re.compile(rf"(?<=[{_CJK}])[ \t]*\n[ \t]*(?=[{_CJK}])")
#: Nodes whose text is shown verbatim.
VERBATIM = (nodes.literal_block, nodes.literal, nodes.math, nodes.math_block, nodes.raw, nodes.comment,
            nodes.doctest_block)


def join_cjk_lines(text: str) -> str:
    """``text`` with every line break between two Chinese characters removed."""
    return CJK_BREAK.sub("", text)


def _remove_breaks(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    for text in list(doctree.findall(nodes.Text)):
        if "\n" not in text or any(isinstance(a, VERBATIM) for a in _ancestors(text)):
            continue
        # A line break may sit at the edge of a text node (MyST keeps a soft break with the text
        # before or after it, or as a node of its own): look at the neighbouring characters too.
        parent = text.parent
        index = next(i for i, child in enumerate(parent.children) if child is text)  # Text == str: not .index()
        before = parent[index - 1].astext()[-1:] if index > 0 else ""
        after = parent[index + 1].astext()[:1] if index + 1 < len(parent) else ""
        joined = join_cjk_lines(before + str(text) + after)
        joined = joined[len(before):len(joined) - len(after)]
        if joined != str(text):  # (by position: replace() and remove() would find an equal string first)
            if joined:
                parent[index] = nodes.Text(joined)
            else:
                del parent[index]


def _ancestors(node: nodes.Node):
    parent = node.parent
    while parent is not None:
        yield parent
        parent = parent.parent


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the clean-up of resolved documents."""
    app.connect("doctree-resolved", _remove_breaks)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
