"""Sphinx extension: a line break inside Chinese prose is not a space.

Pages wrap long Chinese paragraphs over several source lines.  HTML keeps each line break as white
space, and browsers such as Chromium draw it as a space between two Chinese characters ("对角线 下方").
This extension removes a line break (and the spaces around it) when the characters on both sides are
Chinese characters or full-width punctuation, in the prose of every page (text nodes outside code,
math and raw output), once the document is resolved.

A typeset inline formula is an atomic box (an SVG, ``static_math.py``): the browser may break a line
right after it, so that a line (on a phone, or in the PDF) began with the comma that follows the formula
("，其中 ..."), or right before it, after an opening bracket.  Full-width punctuation that closes or
follows a formula (，。、；：！？）」 ...) and an opening bracket before it (（「“ ...) are kept with the
formula: the three go into one ``<span class="cjk-nobreak">`` that does not wrap inside
(``_static/course.css``); the line breaks before the bracket or after the punctuation instead.

A code name in a table cell (``ps1_threshold_metrics`` in the table of the assignments page) breaks only
after an underscore or a dot: the rendered page gets a ``<wbr>`` there (``code.literal`` inside a table
does not break anywhere else, ``_static/course.css``), instead of a break every few letters in a narrow
column on a phone.  Done on the page's HTML, so the search index and copied text keep the whole name.
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


#: Full-width punctuation that must not begin a line (it closes or follows what stands before it).
CLOSING = "，。、；：！？）》」』】〕〉”’…％"
#: Full-width punctuation that must not end a line (it opens what follows it).
OPENING = "（《「『【〔〈“‘"
_CLOSING_RUN = re.compile(f"^[{CLOSING}]+")
_OPENING_RUN = re.compile(f"[{OPENING}]+$")
NOBREAK_CLASS = "cjk-nobreak"
#: Bump when what the extension does to a page changes.
VERSION = "3"
_TABLE = re.compile(r"<table\b.*?</table>", re.DOTALL)
#: The words of an inline code name (Sphinx writes each as ``<span class="pre">``).
_CODE_WORD = re.compile(r'(<code class="[^"]*\bliteral\b[^"]*">)(.*?)(</code>)', re.DOTALL)
_PRE_TEXT = re.compile(r'(<span class="pre">)([^<]*)(</span>)')
_NAME_BREAK = re.compile(r"(?<=[_.])(?=[A-Za-z])")


def break_code_names_in_tables(html: str) -> str:
    """``html`` with a ``<wbr>`` after each underscore or dot inside a code name that stands in a table
    (where a letter follows it); everything else unchanged."""
    def in_pre(match: re.Match) -> str:
        return match.group(1) + _NAME_BREAK.sub("<wbr>", match.group(2)) + match.group(3)

    def in_code(match: re.Match) -> str:
        return match.group(1) + _PRE_TEXT.sub(in_pre, match.group(2)) + match.group(3)

    return _TABLE.sub(lambda table: _CODE_WORD.sub(in_code, table.group(0)), html)


def _page_context(app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree) -> None:
    body = context.get("body")
    if isinstance(body, str) and "<table" in body:
        context["body"] = break_code_names_in_tables(body)


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
        index = _index(parent, text)
        before = parent[index - 1].astext()[-1:] if index > 0 else ""
        after = parent[index + 1].astext()[:1] if index + 1 < len(parent) else ""
        joined = join_cjk_lines(before + str(text) + after)
        joined = joined[len(before):len(joined) - len(after)]
        if joined != str(text):  # (by position: replace() and remove() would find an equal string first)
            if joined:
                parent[index] = nodes.Text(joined)
            else:
                del parent[index]


def _index(parent: nodes.Element, child: nodes.Node) -> int:
    return next(i for i, node in enumerate(parent.children) if node is child)  # Text == str: not .index()


def keep_punctuation_with_formulas(doctree: nodes.Node) -> int:
    """Wrap each inline formula with the full-width punctuation right after it and the opening bracket
    right before it in an inline node of class ``cjk-nobreak``; the number of formulas wrapped."""
    wrapped = 0
    for math in list(doctree.findall(nodes.math)):
        parent = math.parent
        if parent is None or any(isinstance(a, VERBATIM) for a in _ancestors(math)):
            continue
        index = _index(parent, math)
        after = parent[index + 1] if index + 1 < len(parent) and isinstance(parent[index + 1], nodes.Text) else None
        before = parent[index - 1] if index > 0 and isinstance(parent[index - 1], nodes.Text) else None
        trail = _CLOSING_RUN.search(str(after)) if after is not None else None
        lead = _OPENING_RUN.search(str(before)) if before is not None else None
        if trail is None and lead is None:
            continue
        box = nodes.inline("", "", classes=[NOBREAK_CLASS])
        if trail is not None:  # from the end backwards: the indexes before it stay valid
            rest = str(after)[trail.end():]
            if rest:
                parent[index + 1] = nodes.Text(rest)
            else:
                del parent[index + 1]
        parent[index] = box
        if lead is not None:
            rest = str(before)[:lead.start()]
            if rest:
                parent[index - 1] = nodes.Text(rest)
            else:
                del parent[index - 1]
            box += nodes.Text(lead.group(0))
        box += math
        if trail is not None:
            box += nodes.Text(trail.group(0))
        wrapped += 1
    return wrapped


def _resolved(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    _remove_breaks(app, doctree, docname)
    keep_punctuation_with_formulas(doctree)


def _ancestors(node: nodes.Node):
    parent = node.parent
    while parent is not None:
        yield parent
        parent = parent.parent


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the clean-up of resolved documents."""
    # a new or changed value makes the HTML builders write every page again (the changes are made when a
    # page is written, on its resolved doctree), not only the pages whose source changed
    app.add_config_value("course_cjk_breaks_version", VERSION, "html")
    app.connect("doctree-resolved", _resolved)
    app.connect("html-page-context", _page_context)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
