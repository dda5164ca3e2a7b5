"""The text a reader sees on every built page, public and instructor edition, holds no leaked markup.

The checks are those of :mod:`tests.book.pagetext` (raw Markdown tables, unresolved roles, ``式 式``,
wrong or unpaired quotes, ``1 %``, unconverted math, missing images, dead relative links).  The list
of problems of each edition is written to ``artifacts/rendered-text-<edition>.txt``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import ROOT
from .pagetext import page_problems, site_pages

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("edition", ["public", "instructor"])
def test_no_leaked_markup_on_any_page(request, book_html, edition):
    # book_html in the signature: the scheduler (tests/parallel_units.py) sees that this module needs the book and
    # holds it back until the public build is done, instead of letting it wait for the build on a worker
    site: Path = book_html if edition == "public" else request.getfixturevalue("instructor_html")
    pages = site_pages(site)
    assert len(pages) >= 25, f"{edition}: only {len(pages)} pages built"
    report = []
    for page in pages:
        report += [f"{page.relative_to(site)}: {p}" for p in page_problems(page, site)]
    artifacts = ROOT / "artifacts"
    artifacts.mkdir(exist_ok=True)
    (artifacts / f"rendered-text-{edition}.txt").write_text("\n".join(report) + "\n", encoding="utf-8")
    assert not report, f"{len(report)} problems on the {edition} pages:\n" + "\n".join(report)
