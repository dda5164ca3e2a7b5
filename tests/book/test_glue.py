"""Every glued value a page shows is glued by that page's own code, so the text cannot drift from it.

A source-level check over every page of the book, run before any build: each ``{glue:text}``,
``{glue:md}`` and ``{glue:figure}`` name is defined on the same page by ``glue("name", ...)`` or by a
page helper (``show("name", ...)``, ``gl("name", ...)``); names made with an f-string (``glue(f"ap_{k}", ...)``) match any word in
place of each ``{...}``.  (The build itself would also stop on a missing name; this says which page and
which name in a second.)
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

BOOK = Path(__file__).resolve().parents[2] / "book"
PAGES = sorted(BOOK.rglob("*.md"))
USE = re.compile(r"\{glue:(?:text|md|figure)\}`([\w]+)(?::[^`]*)?`|```\{glue:(?:figure|md|text)\}\s+([\w]+)")
DEFINE = re.compile(r"""\b(?:show|glue|gl)\(\s*f?["']([\w{}.\[\]'"]+?)["']\s*,""")


def _patterns(text: str) -> list[re.Pattern[str]]:
    names = DEFINE.findall(text)
    return [re.compile("^" + re.sub(r"\\\{[^}]*\\\}", r"\\w+", re.escape(n)) + "$") for n in names]


def test_the_book_glues_values() -> None:
    assert sum(bool(USE.search(p.read_text(encoding="utf-8"))) for p in PAGES) >= 10


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(BOOK)))
def test_every_glued_name_is_defined_on_its_page(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    used = {a or b for a, b in USE.findall(text)}
    patterns = _patterns(text)
    missing = sorted(n for n in used if not any(p.match(n) for p in patterns))
    assert not missing, f"{page.relative_to(BOOK)} 使用了本页代码没有 glue 的名称：{missing}"
