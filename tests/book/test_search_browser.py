"""The search page paints before its index arrives, and still finds pages, in both editions.

In Debian's chromium.  The index (``searchindex.js``, the page's largest file) used to be a script tag in the
head of search.html: nothing was drawn before it had arrived.  Now ``_static/search_index.js`` loads it
(book/_ext/page_speed.py): after the page's load event when there is no query, at once when there is one.
Each test holds the index back (a route that does not answer until the test lets it) and checks what the
reader sees meanwhile and after.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from coursebook.pdf import serve

from .test_quiz_browser import SHOTS

pytestmark = pytest.mark.slow

PHONE = {"viewport": {"width": 375, "height": 812}, "is_mobile": True, "has_touch": True}


class HeldIndex:
    """Requests for ``searchindex.js`` wait until :meth:`release`; they are counted as they come."""

    def __init__(self, tab) -> None:
        self.routes: list = []
        self.released = False
        tab.route("**/searchindex.js*", self._hold)

    def _hold(self, route) -> None:
        if self.released:
            route.continue_()
        else:
            self.routes.append(route)

    def release(self) -> None:
        self.released = True
        for route in self.routes:
            route.continue_()


def _problems(tab) -> list[str]:
    problems: list[str] = []
    tab.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    tab.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    return problems


@contextmanager
def _phone(browser) -> Iterator[tuple]:
    """A tab at 375 px whose requests for the index are held (:class:`HeldIndex`); its page errors at the end."""
    ctx = browser.new_context(**PHONE)
    tab = ctx.new_page()
    problems = _problems(tab)
    try:
        yield tab, HeldIndex(tab)
        assert not problems, problems
    finally:
        ctx.close()


def test_search_page_paints_and_loads_before_its_index(browser, site_url):
    with _phone(browser) as (tab, held):
        tab.goto(f"{site_url}/search.html", wait_until="load")  # the load event does not wait for the index
        assert tab.locator(".bd-search-container h1").inner_text().strip().startswith("搜索")
        painted = tab.evaluate("performance.getEntriesByName('first-contentful-paint').length")
        assert painted == 1, "the search page was not painted while its index was held back"
        tab.wait_for_timeout(300)
        assert len(held.routes) == 1, f"{len(held.routes)} requests for the index after the page's load event (want 1)"
        assert tab.evaluate("Search.hasIndex()") is False
        held.release()
        tab.wait_for_function("Search.hasIndex()", timeout=20_000)


def test_search_with_a_query_waits_for_the_index_then_finds_the_pages(browser, site_url):
    with _phone(browser) as (tab, held):
        # the index, asked for at once, is part of the page's load: the reader sees the page and waits for results
        tab.goto(f"{site_url}/search.html?q=召回率", wait_until="domcontentloaded")
        tab.wait_for_function("performance.getEntriesByName('first-contentful-paint').length === 1", timeout=20_000)
        tab.wait_for_timeout(300)
        assert len(held.routes) == 1, "a page with a query asks for the index at once"
        assert tab.locator(".bd-search-container h1").is_visible()
        assert tab.locator("#search-results ul.search li").count() == 0
        held.release()
        tab.wait_for_function("/搜索完成/.test(document.querySelector('#search-results').textContent)", timeout=30_000)
        links = tab.locator("#search-results ul.search li a").evaluate_all("els => els.map(e => e.href)")
        assert any("binary/fixed_threshold.html" in href for href in links), links
        tab.screenshot(path=str(SHOTS / "search-held-index-375.png"))


def _results(browser, url: str) -> list[str]:
    ctx = browser.new_context(viewport={"width": 1280, "height": 800})
    tab = ctx.new_page()
    problems = _problems(tab)
    try:
        tab.goto(url, wait_until="load")
        tab.wait_for_function("/搜索完成/.test((document.querySelector('#search-results') || {}).textContent || '')",
                              timeout=30_000)
        assert not problems, problems
        return tab.locator("#search-results ul.search li a").evaluate_all("els => els.map(e => e.href)")
    finally:
        ctx.close()


def test_instructor_search_finds_the_solutions_and_the_public_one_does_not(browser, site_url, instructor_html):
    """A word of an instructor-only solution (the calibration exercises' answers on the recalibration page: 低估) is found
    in the instructor edition only; a word of the book is found in both."""
    with serve(instructor_html) as teacher:
        found = _results(browser, f"{teacher}/search.html?q=低估")
        assert any("calibration/recalibration.html" in href for href in found), found
        assert any("binary/fixed_threshold.html" in href for href in _results(browser, f"{teacher}/search.html?q=召回率"))
    public = _results(browser, f"{site_url}/search.html?q=低估")
    assert not any("calibration/recalibration.html" in href for href in public), public
