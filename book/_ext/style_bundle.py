"""The render-blocking stylesheets of a page merged into one file of the site (used by ``page_speed.py``).

A page of the course linked fourteen stylesheets in its head (the theme's ``theme.css``, which
``@import``-s Sphinx's ``basic.css``, Bootstrap and pydata-sphinx-theme, sphinx-book-theme, pygments,
the extensions' small files, the course's own, the icons, the formulas').  The browser must fetch all of
them, one of them only after another, before it paints anything; on a phone's slow connection each is a
round trip (Lighthouse's Largest Contentful Paint).  :func:`merge` writes their rules, in the pages' order,
as one stylesheet: ``@import`` replaced by the imported file's rules, every relative ``url()`` rebased to
the merged file's folder, one ``@charset``.  The cascade is the same: the rules keep their order, and
rules of different files that the browser read as separate sheets are read as one sheet in the same order.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable
from pathlib import Path

#: A ``<link>`` tag (its attributes are read by :func:`stylesheet_href`).
LINK = re.compile(r"<link\b[^>]*>")
_ATTR = re.compile(r'([a-zA-Z-]+)="([^"]*)"')
IMPORT = re.compile(r'@import\s+(?:url\(\s*)?(["\']?)(?P<url>[^"\')\s;]+)\1\s*\)?\s*;')
URL = re.compile(r'url\(\s*(["\']?)(?P<url>[^"\')]+)\1\s*\)')
CHARSET = re.compile(r'@charset\s+"[^"]*"\s*;')


class BundleError(ValueError):
    """The stylesheets of the pages cannot be merged as they are (a missing file, an order that differs)."""


def stylesheet_href(tag: str) -> str | None:
    """The ``href`` of a ``<link>`` tag that loads a stylesheet for every medium, else None."""
    attrs = dict((k.lower(), v) for k, v in _ATTR.findall(tag))
    if attrs.get("rel", "").lower() != "stylesheet" or attrs.get("media", "all") not in ("all", ""):
        return None
    return attrs.get("href")


def static_path(href: str) -> str | None:
    """``href``'s path under the site's ``_static/`` folder (``styles/theme.css``), without its query; None
    if it is not a file of ``_static/``."""
    if "_static/" not in href or "://" in href:
        return None
    return href.split("?", 1)[0].split("#", 1)[0].split("_static/", 1)[1]


def page_stylesheets(head: str) -> list[tuple[re.Match[str], str]]:
    """The tags of ``head`` that load a stylesheet of ``_static/``, with that stylesheet's path there."""
    found = []
    for match in LINK.finditer(head):
        href = stylesheet_href(match.group(0))
        path = static_path(href) if href else None
        if path is not None:
            found.append((match, path))
    return found


def merge_order(sequences: Iterable[list[str]]) -> list[str]:
    """One order of all stylesheets that keeps the order of each page's list (each a subsequence of it).

    Raises
    ------
    BundleError
        If two pages link the same stylesheets in a different order (no single merged file can keep both).

    Examples
    --------
    >>> merge_order([["a.css", "b.css", "d.css"], ["b.css", "c.css", "d.css"], ["a.css", "d.css"]])
    ['a.css', 'b.css', 'c.css', 'd.css']
    """
    order: list[str] = []
    for sequence in sequences:
        position = 0
        for name in sequence:
            if name in order:
                found = order.index(name)
                if found < position:
                    raise BundleError(f"stylesheets linked in different orders by two pages: {name} ({sequence})")
                position = found + 1
            else:
                order.insert(position, name)
                position += 1
    return order


def _rebase(css: str, source: str, target_dir: str) -> str:
    """``css`` (of ``source``, a path under ``_static/``) with its relative ``url()``-s pointing from
    ``target_dir`` instead."""

    def one(match: re.Match[str]) -> str:
        url = match.group("url").strip()
        if re.match(r"^(?:[a-z][a-z0-9+.-]*:|/|#)", url, re.I):  # data:, http:, absolute, fragment
            return match.group(0)
        resolved = posixpath.normpath(posixpath.join(posixpath.dirname(source), url))
        return f'url("{posixpath.relpath(resolved, target_dir or ".")}")'

    return URL.sub(one, css)


def stylesheet_text(static: Path, name: str, target_dir: str = "", _seen: tuple[str, ...] = ()) -> str:
    """The rules of ``static/name`` with its ``@import``-s inlined and its ``url()``-s rebased to
    ``target_dir`` (a folder under ``static``); without ``@charset``.

    Raises
    ------
    BundleError
        If the file or a file it imports is missing, or imports itself.
    """
    path = static / name
    if not path.is_file():
        raise BundleError(f"stylesheet {name} linked by a page is not in {static}")
    if name in _seen:
        raise BundleError(f"stylesheet {name} imports itself ({' -> '.join(_seen)})")
    css = CHARSET.sub("", path.read_text(encoding="utf-8"))

    imported: list[str] = []

    def inline(match: re.Match[str]) -> str:
        other = posixpath.normpath(posixpath.join(posixpath.dirname(name), match.group("url")))
        imported.append(stylesheet_text(static, other, target_dir, (*_seen, name)))
        return f"\0{len(imported) - 1}\0"

    # the imports out first (their url()s are rebased from their own folder), then this file's url()s
    css = _rebase(IMPORT.sub(inline, css), name, target_dir)
    return re.sub(r"\0(\d+)\0", lambda m: imported[int(m.group(1))], css)


def merge(static: Path, names: list[str], target: str) -> str:
    """The stylesheets ``names`` (paths under ``static``) as the text of one stylesheet ``static/target``
    (without ``@charset``: see :func:`with_charset`)."""
    target_dir = posixpath.dirname(target)
    return "".join(f"/* {name} */\n{stylesheet_text(static, name, target_dir).strip()}\n" for name in names)


def with_charset(css: str) -> str:
    """``css`` starting with ``@charset "UTF-8";`` (the only place where it counts) and no other."""
    return '@charset "UTF-8";\n' + CHARSET.sub("", css).lstrip()
