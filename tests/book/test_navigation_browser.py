"""Navigation as a reader uses it, on every page, on a phone (375 px, touch) and a desktop (1280 px).

On a phone each page is loaded once; that load is first checked for what does not fit (formulas, headings,
tables, the page's width: tests/book/test_phone_layout.py's ``layout_problems``), then navigated.  A page with
quizzes also gets tests/book/test_quiz_browser.py's phone check of its first quiz on that load.  At 1280 px the
same two checks (:func:`desktop_problems`) run on the load of each page that tests/book/test_accessibility.py
audits, before its audits.

On a phone the ☰ button ("全书目录") and the page-contents button ("本页目录") each open their sidebar as a
modal dialog, by touch and by keyboard; it closes with its "关闭" button, with Escape and by a tap on a
page-contents link, and focus goes back to the button.  The links of both sidebars lead to built pages
(one is followed on each page).  On a desktop ☰ collapses and restores the left sidebar, and the page
contents stand beside the article.  Every interface string of the theme (names, tooltips, placeholder,
footer) is Chinese.  (The themes' own handlers did nothing on a phone while the page had a second,
hidden ☰ from pydata-sphinx-theme's top bar: book/_ext/course_site.py.)
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from .test_phone_layout import SIZES, layout_problems
from .test_quiz_browser import SHOTS, phone_quiz_problems, quiz_pages, request_failed
from .test_site_browser import PAGES

pytestmark = pytest.mark.slow

PHONE = {"viewport": {"width": 375, "height": 812}, "is_mobile": True, "has_touch": True}
DESKTOP = {"viewport": {"width": 1280, "height": 800}}
#: English interface strings of Sphinx and the two themes that a Chinese page must not show.
ENGLISH = ("Toggle primary sidebar", "Toggle secondary sidebar", "Search this book", "Hide Search Matches",
           "Site navigation", "On this page", "Copyright", "Contents", "Search", "Skip to main content",
           "Back to top", "previous", "next", "Download", "Fullscreen", "Light", "Dark", "System")
#: Interface strings with a Latin word that are names, not English text (file types, keys).
LATIN_OK = re.compile(r"^(\.ipynb|\.md|\.pdf|Ctrl|K|PDF|全书 PDF)$")

CHROME_STRINGS = """() => {
  const out = [];
  const inArticle = el => el.closest('article.bd-article, nav.bd-docs-nav ul, nav.page-toc ul, #jb-print-toc ul, '
                                     + '#jb-print-docs-body h1, .prev-next-area, script, style, title, link, meta');
  document.querySelectorAll('[title], [aria-label], [placeholder], [data-bs-original-title]').forEach(el => {
    if (inArticle(el)) return;
    for (const a of ['title', 'aria-label', 'placeholder', 'data-bs-original-title']) {
      const v = el.getAttribute(a);
      if (v) out.push(v.trim());
    }
  });
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  let n;
  while ((n = walk.nextNode())) {
    const t = n.textContent.trim();
    if (t && n.parentElement && !inArticle(n.parentElement)) out.push(t);
  }
  return out;
}"""


def _english(strings: list[str]) -> list[str]:
    bad = []
    for s in strings:
        if any(re.search(rf"\b{re.escape(word)}\b", s) for word in ENGLISH):
            bad.append(s)
        elif re.search(r"[A-Za-z]{3,}", s) and not re.search(r"[\u4e00-\u9fff]", s) and not LATIN_OK.match(s):
            bad.append(s)
    return bad


def _is_open(tab, kind: str) -> bool:
    return tab.evaluate(f"document.getElementById('pst-{kind}-sidebar-modal').open")


def _focused(tab, expect: str | None = None) -> str:
    """Class of the focused element; with ``expect``, after waiting (up to 5 s) for focus to get there."""
    if expect is not None:
        try:
            tab.wait_for_function("cls => document.activeElement && document.activeElement.classList.contains(cls)",
                                  arg=expect, timeout=5000)
        except PlaywrightTimeout:
            pass
    return tab.evaluate("(document.activeElement && document.activeElement.className) || ''")


def _links_resolve(tab, book_html: Path, selector: str) -> list[str]:
    """Hrefs under ``selector`` that do not lead to a built page or an anchor of the open page."""
    broken = []
    here = tab.url
    ids = None  # the open page's element ids, asked for once
    for href in tab.eval_on_selector_all(selector, "els => els.map(a => a.getAttribute('href'))"):
        if not href or href.startswith(("http://", "https://", "mailto:")):
            continue
        target = urlsplit(urljoin(here, href))
        path = unquote(target.path).lstrip("/") or "index.html"
        if not (book_html / path).is_file():
            broken.append(href)
        elif target.fragment and path == unquote(urlsplit(here).path).lstrip("/"):
            if ids is None:
                ids = set(tab.evaluate("[...document.querySelectorAll('[id]')].map(e => e.id)"))
            if unquote(target.fragment) not in ids:
                broken.append(href)
    return broken


def _phone(tab, book_html: Path, page: str) -> list[str]:
    found: list[str] = []
    primary = tab.locator(".primary-toggle")
    if primary.count() != 1 or not primary.is_visible():
        return [f"{primary.count()} ☰ buttons, visible: {primary.count() == 1 and primary.is_visible()}"]
    # touch: open, check focus and links, close with the close button
    primary.tap()
    tab.wait_for_function("document.getElementById('pst-primary-sidebar-modal').open", timeout=5000)
    dialog = tab.locator("#pst-primary-sidebar-modal")
    if not dialog.locator("nav.bd-docs-nav a.reference").first.is_visible():
        found.append("☰ opened a dialog without the book's table of contents")
    if not tab.evaluate("document.getElementById('pst-primary-sidebar-modal').contains(document.activeElement)"):
        found.append(f"focus is not in the open sidebar but on {_focused(tab)!r}")
    found += [f"broken link in the sidebar: {h}" for h in _links_resolve(tab, book_html, "#pst-primary-sidebar-modal nav.bd-docs-nav a")]
    if page == PAGES[0]:
        SHOTS.mkdir(parents=True, exist_ok=True)
        tab.screenshot(path=str(SHOTS / "navigation-375-primary.png"))
    dialog.locator(".course-sidebar-close").tap()
    tab.wait_for_function("!document.getElementById('pst-primary-sidebar-modal').open", timeout=5000)
    if "primary-toggle" not in _focused(tab, "primary-toggle"):
        found.append(f"after 关闭 focus is on {_focused(tab)!r}, not on ☰")
    if primary.get_attribute("aria-expanded") != "false":
        found.append("☰ says aria-expanded=true while its sidebar is closed")
    # keyboard: Enter opens, Escape closes, focus back on the button
    primary.focus()
    tab.keyboard.press("Enter")
    tab.wait_for_function("document.getElementById('pst-primary-sidebar-modal').open", timeout=5000)
    if primary.get_attribute("aria-expanded") != "true":
        found.append("☰ says aria-expanded=false while its sidebar is open")
    tab.keyboard.press("Escape")
    tab.wait_for_function("!document.getElementById('pst-primary-sidebar-modal').open", timeout=5000)
    if "primary-toggle" not in _focused(tab, "primary-toggle"):
        found.append(f"after Escape focus is on {_focused(tab)!r}, not on ☰")
    # page contents: open by touch, a tap on an entry closes it and goes to that section
    secondary = tab.locator(".secondary-toggle")
    has_toc = tab.locator("#pst-secondary-sidebar nav.page-toc a").count() > 0
    if has_toc != (secondary.count() == 1 and secondary.is_visible()):
        found.append(f"page contents: {tab.locator('#pst-secondary-sidebar nav.page-toc a').count()} entries "
                     f"but {secondary.count()} visible buttons")
    elif has_toc:
        secondary.tap()
        tab.wait_for_function("document.getElementById('pst-secondary-sidebar-modal').open", timeout=5000)
        links = tab.locator("#pst-secondary-sidebar-modal nav.page-toc a").filter(visible=True)
        found += [f"broken page-contents link: {h}" for h in _links_resolve(tab, book_html, "#pst-secondary-sidebar-modal nav.page-toc a")]
        last = links.nth(links.count() - 1)
        href = last.get_attribute("href")
        last.tap()
        tab.wait_for_function("!document.getElementById('pst-secondary-sidebar-modal').open", timeout=5000)
        if not tab.url.endswith(href):
            found.append(f"tapping {href} in the page contents led to {tab.url}")
        else:
            top = tab.evaluate("id => document.getElementById(id).getBoundingClientRect().top", unquote(href[1:]))
            if not 0 <= top < 812:
                found.append(f"section {href} is not on screen after tapping it (top {top:.0f} px)")
        secondary.focus()
        tab.keyboard.press("Enter")
        tab.wait_for_function("document.getElementById('pst-secondary-sidebar-modal').open", timeout=5000)
        tab.keyboard.press("Escape")
        tab.wait_for_function("!document.getElementById('pst-secondary-sidebar-modal').open", timeout=5000)
        if "secondary-toggle" not in _focused(tab, "secondary-toggle"):
            found.append(f"after Escape focus is on {_focused(tab)!r}, not on 本页目录")
    found += [f"English interface string at 375 px: {s!r}" for s in _english(tab.evaluate(CHROME_STRINGS))]
    return found


def desktop_problems(tab, book_html: Path) -> list[str]:
    """On a page open at 1280 px: ☰ collapses and restores the left sidebar, the table of contents and the page
    contents are shown with links to built pages, one search box, no English interface string.  Run on the load of
    every page of the table of contents by tests/book/test_accessibility.py."""
    found: list[str] = []
    sidebar = tab.locator("#pst-primary-sidebar")
    primary = tab.locator(".primary-toggle")
    if primary.count() != 1:
        return [f"{primary.count()} ☰ buttons"]
    if tab.locator("input.search-button__input, button.search-button-field").filter(visible=True).count() > 1:
        found.append("more than one search box")
    if not sidebar.locator("nav.bd-docs-nav a").first.is_visible():
        found.append("the table of contents is not shown at 1280 px")
    found += [f"broken link in the sidebar: {h}" for h in _links_resolve(tab, book_html, "#pst-primary-sidebar nav.bd-docs-nav a")]
    primary.click()
    first_link = sidebar.locator("nav.bd-docs-nav a").first
    first_link.wait_for(state="hidden", timeout=5000)
    if _is_open(tab, "primary"):
        found.append("☰ opened a dialog at 1280 px instead of collapsing the sidebar")
    if primary.get_attribute("aria-expanded") != "false":
        found.append("☰ says aria-expanded=true after collapsing the sidebar")
    primary.click()
    first_link.wait_for(state="visible", timeout=5000)
    if primary.get_attribute("aria-expanded") != "true":
        found.append("☰ says aria-expanded=false after restoring the sidebar")
    if tab.locator("#pst-secondary-sidebar nav.page-toc a").count():
        if not tab.locator("#pst-secondary-sidebar nav.page-toc a").first.is_visible():
            found.append("the page contents are not shown beside the article")
        found += [f"broken page-contents link: {h}" for h in _links_resolve(tab, book_html, "#pst-secondary-sidebar nav.page-toc a")]
    found += [f"English interface string at 1280 px: {s!r}" for s in _english(tab.evaluate(CHROME_STRINGS))]
    return found


def test_every_page_fits_and_both_sidebars_open_and_close_on_a_phone(browser, book_html, site_url):
    ctx = browser.new_context(**SIZES["375"])
    tab = ctx.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda e: errors.append(f"page error: {e}"))
    # as tests/book/test_quiz_browser.py's open_page: console errors, failed requests and HTTP errors of each load
    tab.on("console", lambda m: errors.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    tab.on("response", lambda r: errors.append(f"HTTP {r.status}: {r.url}") if r.status >= 400 else None)
    tab.on("requestfailed", lambda r: (problem := request_failed(r)) and errors.append(problem))
    with_quizzes = []
    try:
        report = {}
        for page in PAGES:
            tab.goto(f"{site_url}/{page}", wait_until="load")
            found = layout_problems(tab)  # before any click: the page as it loads (tests/book/test_phone_layout.py)
            if tab.locator(".quiz").count():
                with_quizzes.append(page)
                found += phone_quiz_problems(tab, page)
            found += _phone(tab, book_html, page)
            if found or errors:
                report[page] = found + errors
                errors.clear()
        assert not report, "\n".join(f"{page}: {p}" for page, ps in report.items() for p in ps)
        assert sorted(with_quizzes) == quiz_pages(book_html), "a page with quizzes is not in the table of contents"
    finally:
        ctx.close()


def test_a_sidebar_link_opens_its_page_on_a_phone(browser, site_url):
    ctx = browser.new_context(**PHONE)
    tab = ctx.new_page()
    try:
        tab.goto(f"{site_url}/book/binary/roc.html", wait_until="load")
        tab.locator(".primary-toggle").tap()
        tab.locator("#pst-primary-sidebar-modal nav.bd-docs-nav a", has_text="ROC-AUC").first.tap()
        tab.wait_for_url("**/book/binary/auc.html")
        assert "AUC" in tab.locator("article h1").first.inner_text()
        assert not tab.evaluate("document.getElementById('pst-primary-sidebar-modal').open")
    finally:
        ctx.close()


def test_search_highlight_link_is_chinese(browser, site_url):
    """Sphinx's "Hide Search Matches" link (shown after following a search result) is translated."""
    ctx = browser.new_context(**DESKTOP)
    tab = ctx.new_page()
    try:
        tab.goto(f"{site_url}/book/binary/roc.html?highlight=ROC", wait_until="load")
        link = tab.locator("#searchbox .highlight-link a")
        link.wait_for(timeout=5000)
        assert link.inner_text().strip() == "隐藏搜索结果"
        assert tab.locator("input.search-button__input, input[name='q']").first.get_attribute("placeholder") == "搜索本书……"
    finally:
        ctx.close()
