"""The rules of a stylesheet that no page of the site can match, removed (used by ``page_speed.py``).

The theme's stylesheet (pydata-sphinx-theme: Bootstrap 5 and the theme, 397 kB, 66 kB compressed) styles
far more components than the course's pages have.  A rule is kept when each class its selector requires
occurs in the site: in a ``class`` attribute of a page, or anywhere in a script (a class that a script adds
later, e.g. Bootstrap's ``show``, appears there as a word).  The check is conservative: classes inside
``:not()``, ``:is()``, ``:where()`` and ``:has()`` are not required, tag, id and attribute selectors are
never judged, and at-rules other than ``@media``/``@supports``/``@layer`` blocks are kept as they are.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import tinycss2

CLASS_ATTR = re.compile(r'\bclass="([^"]*)"')
WORD = re.compile(r"[A-Za-z_][\w-]*")
_FUNCTIONAL = re.compile(r":(?:not|is|where|has|-webkit-any|-moz-any)\(")
_CLASS = re.compile(r"\.(-?[_a-zA-Z][\w-]*)")
GROUPING = {"media", "supports", "layer", "container"}


def used_classes(pages: Iterable[str], scripts: Iterable[str]) -> set[str]:
    """Every class a page or a script may put on an element: class attributes, and every word of the scripts."""
    used: set[str] = set()
    for page in pages:
        for value in CLASS_ATTR.findall(page):
            used.update(value.split())
        for script in re.findall(r"<script[^>]*>(.*?)</script>", page, re.S):
            used.update(WORD.findall(script))
    for script in scripts:
        used.update(WORD.findall(script))
    return used


def _without_functional(selector: str) -> str:
    """``selector`` with the arguments of ``:not()``/``:is()``/... removed (their classes are not required)."""
    out, i = [], 0
    for match in _FUNCTIONAL.finditer(selector):
        if match.start() < i:
            continue
        out.append(selector[i:match.start()])
        depth, j = 1, match.end()
        while j < len(selector) and depth:
            depth += {"(": 1, ")": -1}.get(selector[j], 0)
            j += 1
        i = j
    out.append(selector[i:])
    return "".join(out)


def _split_selectors(prelude: str) -> list[str]:
    """The comma-separated selectors of a rule's prelude (commas inside parentheses do not split)."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(prelude):
        depth += {"(": 1, ")": -1, "[": 1, "]": -1}.get(char, 0)
        if char == "," and depth == 0:
            parts.append(prelude[start:i])
            start = i + 1
    parts.append(prelude[start:])
    return [p.strip() for p in parts if p.strip()]


def selector_matches_site(selector: str, used: set[str]) -> bool:
    """Whether every class that ``selector`` requires is in ``used``."""
    if "\\" in selector:  # escaped characters in a class name: not judged
        return True
    return all(name in used for name in _CLASS.findall(_without_functional(selector)))


def _rules(nodes: list, used: set[str]) -> str:
    out = []
    for node in nodes:
        if node.type == "qualified-rule":
            prelude = tinycss2.serialize(node.prelude).strip()
            if prelude.startswith(("from", "to")) or prelude[:1].isdigit():  # inside @keyframes
                out.append(node.serialize())
                continue
            alive = [s for s in _split_selectors(prelude) if selector_matches_site(s, used)]
            if alive:
                out.append(",".join(alive) + "{" + tinycss2.serialize(node.content).strip() + "}")
        elif node.type == "at-rule":
            if node.lower_at_keyword in GROUPING and node.content is not None:
                inner = _rules(tinycss2.parse_rule_list(node.content, skip_comments=True, skip_whitespace=True), used)
                if inner:
                    out.append(f"@{node.at_keyword}{tinycss2.serialize(node.prelude).rstrip()}{{{inner}}}")
            else:
                out.append(node.serialize())
    return "".join(out)


def purge(css: str, used: set[str]) -> str:
    """``css`` without the rules that no element of the site can match (comments and source map dropped)."""
    notices = re.findall(r"/\*!.*?\*/", css, re.S)  # licence notices stay
    nodes = tinycss2.parse_stylesheet(css, skip_comments=True, skip_whitespace=True)
    return "".join(notices) + _rules(nodes, used) + "\n"
