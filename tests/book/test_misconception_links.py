"""Every book section the misconception catalogue links to exists in the built site, and the assignments page
lists the catalogue (generated from it, with working links)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from autograder.check.misconceptions import CATALOGUE

pytestmark = pytest.mark.slow  # the book build


def test_every_catalogue_link_resolves_in_the_built_site(book_html: Path):
    for m in CATALOGUE:
        page = book_html / f"{m.page}.html"
        assert page.exists(), m.url()
        assert f'id="{m.label}"' in page.read_text(encoding="utf-8"), m.url()


def test_assignments_page_lists_every_misconception_with_its_section(book_html: Path):
    html = (book_html / "book" / "assignments" / "index.html").read_text(encoding="utf-8")
    section = html[html.index('id="assignments-misconceptions"'):]
    text = re.sub(r"<[^>]+>", "", section)
    for m in CATALOGUE:
        assert m.title in text and m.hint[:15] in text, m.id
        assert re.search(rf'href="[^"]*{re.escape(Path(m.page).name)}\.html#{re.escape(m.label)}"', section), m.id
