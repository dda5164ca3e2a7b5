"""An offline link check of the whole site: the book (``make book``) with the guides in its folder ``guide/`` (as
``make guide`` puts them there).  Every relative link and anchor resolves, the book links to the guides and the
guides back to the book."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from coursebook.deployment import GUIDE_FOLDER, load_settings

from .linkcheck import check_site

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("guide")]

#: Made by other targets than the book's build (``make pdf``): linked from every page, absent from a build without it.
OTHER_TARGETS = frozenset({"course.pdf"})


def test_every_link_of_the_site_and_the_guides_resolves(book_html: Path, guide_html: Path):
    guide = book_html / GUIDE_FOLDER
    shutil.rmtree(guide, ignore_errors=True)
    shutil.copytree(guide_html, guide)
    broken = check_site(book_html, load_settings().site_url, OTHER_TARGETS)
    assert not broken, f"{len(broken)} broken links:\n" + "\n".join(map(str, broken[:60]))
    intro = (book_html / "book" / "intro.html").read_text(encoding="utf-8")
    assert f'{GUIDE_FOLDER}/"' in intro, "the book's first page links to the guides"
    assert 'href="../index.html"' in (guide / "index.html").read_text(encoding="utf-8"), "the guides link to the book"


def test_the_check_finds_a_broken_link_and_a_missing_anchor(tmp_path: Path):
    (tmp_path / "a.html").write_text('<a href="b.html#here">b</a><a href="c.html">c</a><a href="#top">top</a>'
                                     '<a href="https://example.org/x">x</a>', encoding="utf-8")
    (tmp_path / "b.html").write_text('<h1 id="there">b</h1>', encoding="utf-8")
    found = {(b.link, b.reason) for b in check_site(tmp_path)}
    assert found == {("b.html#here", "no element with id 'here'"), ("c.html", "no such file"),
                     ("#top", "no element with id 'top'")}
