"""An offline link check of a built site: every relative ``href``/``src`` resolves to a file, every ``#anchor`` to an
element of the page it names.

Addresses with a scheme are another site's and are not followed, except those under ``site_url`` (the site's own
published address: the book links to the guides that way), which are checked as relative to the root.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

#: Attributes that point at another resource, by tag.
LINKING = {"a": ("href",), "link": ("href",), "script": ("src",), "img": ("src",), "iframe": ("src",),
           "source": ("src",), "area": ("href",)}


@dataclass(frozen=True)
class Broken:
    page: str
    link: str
    reason: str

    def __str__(self) -> str:
        return f"{self.page}: {self.link} ({self.reason})"


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.links: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        for name in ("id", "name") if tag == "a" else ("id",):
            if values.get(name):
                self.ids.add(values[name])
        for attr in LINKING.get(tag, ()):
            if values.get(attr) is not None:
                self.links.append(values[attr])


@functools.lru_cache(maxsize=None)
def _parse(path: Path) -> _Links:
    parser = _Links()
    parser.feed(path.read_text(encoding="utf-8", errors="replace"))
    return parser


def check_site(root: Path, site_url: str = "", allowed_missing: frozenset[str] = frozenset()) -> list[Broken]:
    """Every broken link of the HTML pages under ``root``; ``allowed_missing``: files (relative to the root) that
    another build target makes (they may be absent)."""
    root = root.resolve()
    broken: list[Broken] = []
    for page in sorted(root.rglob("*.html")):
        rel_page = page.relative_to(root).as_posix()
        if "_static" in page.relative_to(root).parts:  # the themes' template fragments, not pages
            continue
        for link in _parse(page).links:
            reason = _check(root, page, link, site_url, allowed_missing)
            if reason:
                broken.append(Broken(rel_page, link, reason))
    return broken


def _check(root: Path, page: Path, link: str, site_url: str, allowed_missing: frozenset[str]) -> str | None:
    link = link.strip()
    if site_url and link.startswith(site_url):
        base, link = root, link[len(site_url):]
    else:
        parts = urlsplit(link)
        if parts.scheme or link.startswith("//"):
            return None
        base = page.parent
    parts = urlsplit(link)
    path, fragment = unquote(parts.path), unquote(parts.fragment)
    if not path:
        target = page
    else:
        target = (root / path.lstrip("/")) if path.startswith("/") else (base / path)
        if path.endswith("/") or target.is_dir():
            target = target / "index.html"
    target = Path(os.path.normpath(target))
    try:
        relative = target.relative_to(root).as_posix()
    except ValueError:
        return "outside the site"
    if not target.exists():
        return None if relative in allowed_missing else "no such file"
    if fragment and target.suffix == ".html" and fragment not in _parse(target).ids:
        return f"no element with id {fragment!r}"
    return None

