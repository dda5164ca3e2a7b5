"""Every page of the guides states the course's licences as the book's pages do (the guides are published with the
book, in its folder ``guide/``): both licences linked to their deeds, and the book's page 版权与许可 linked from
where the page is served."""

from __future__ import annotations

from pathlib import Path

import pytest

from coursebook.deployment import GUIDE_FOLDER, load_settings
from tests.book.licence_footer import footer_problem

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("guide")]


def test_every_guide_page_s_footer_states_both_licences_and_links_the_book_s_licence_page(guide_html: Path):
    site = load_settings().site_url
    pages = sorted(p for p in guide_html.rglob("*.html") if "_static" not in p.relative_to(guide_html).parts)
    assert len(pages) >= 20 and guide_html / "maintainers" / "add-misconception.html" in pages
    problems = {str(page.relative_to(guide_html)): footer_problem(
        page.read_text(encoding="utf-8"), f"{site}{GUIDE_FOLDER}/{page.relative_to(guide_html).as_posix()}", site)
        for page in pages}
    assert not {page: p for page, p in problems.items() if p}
