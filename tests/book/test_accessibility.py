"""Every page in Debian's chromium, as a reader sees it: it loads cleanly, its math is typeset, and it is
accessible (an axe-core audit), in light and in dark mode (the theme's stored colour mode,
``localStorage.mode``, set to ``dark``).

Each page is loaded once at 1280 px (in the module's one tab, as a reader follows links): checked for what does not fit
(tests/book/test_phone_layout.py's ``layout_problems``, on the pages of the table of contents), audited in
light mode, then switched to dark mode as the theme's colour-mode switch does (the stored choice that applies
it on load is checked on one page), and last navigated (tests/book/test_navigation_browser.py's
``desktop_problems``, the pages of the table of contents); a failure names its check (``layout:``,
``light:``, ``dark:``, ``navigation:``; a load problem names itself):

* no console error, no failed request and no HTTP error; every formula typeset at build time, with its
  MathML, no TeX in the text and no math script (tests/book/mathcheck.py);
* zero *serious* or *critical* axe violations.  axe-core is the npm package pinned in
  ``tests/a11y/package.json`` (installed by ``make setup``), injected with Playwright's
  ``add_script_tag(path=...)``.  Pages with quizzes are audited with one option of every quiz picked, so
  the verdicts and explanations are audited too (colour contrast included).  Light mode runs every rule;
  dark mode, which changes only colours, runs the colour rules.

The instructor edition is audited on the pages where it differs from the public one (the instructor-only
blocks).  The quizzes are also operated with the keyboard alone: Tab reaches every option, Enter picks
it, and the verdict is announced in a polite live region.  (That no page scrolls sideways at 375 px, WCAG
1.4.10, is checked on every page by tests/book/test_navigation_browser.py's phone sweep.)
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.sync_api import Error as PlaywrightError

from .conftest import ROOT
from .test_navigation_browser import desktop_problems
from .test_phone_layout import SIZES, layout_problems
from .mathcheck import MATH_PROBLEMS
from .test_quiz_browser import SHOTS, open_page, switch_to_dark, watch
from .test_site_browser import PAGES

pytestmark = pytest.mark.slow

AXE = ROOT / "tests" / "a11y" / "node_modules" / "axe-core" / "axe.min.js"
BLOCKING = ("serious", "critical")
#: Dark mode changes colours only: there the audit runs the colour rules (the others ran in light mode).
COLOUR_RULES = ["color-contrast", "link-in-text-block"]


def _require_axe() -> None:
    if not AXE.is_file():
        pytest.fail(f"找不到 {AXE.relative_to(ROOT)}（make setup 会用 npm 安装 tests/a11y/package.json 中的 axe-core）")


def _axe(tab, dark: bool) -> list[str]:
    """Serious and critical axe violations of the open page, after picking an option of each quiz."""
    quizzes = tab.locator(".quiz")
    for i in range(quizzes.count()):
        quizzes.nth(i).locator(".quiz-option").first.click()
    # every box that may scroll is a tab stop (book/_static/a11y.js)
    tab.wait_for_function("document.documentElement.dataset.scrollStops === 'set'")
    # the page as it is drawn: the browser skips the sections off screen until the reader scrolls near
    # them (course.css), and axe cannot tell the colours of a section that was never drawn
    tab.evaluate("document.querySelectorAll('article section').forEach(s => { s.style.contentVisibility = 'visible'; })")
    if not tab.evaluate("typeof window.axe === 'object'"):  # once per load: light and dark audits share it
        tab.add_script_tag(path=str(AXE))
    options = {"resultTypes": ["violations"]}
    if dark:
        options["runOnly"] = {"type": "rule", "values": COLOUR_RULES}
    result = tab.evaluate("options => axe.run(document, options)", options)
    found = []
    for v in result["violations"]:
        if v["impact"] in BLOCKING:
            targets = "; ".join(" ".join(n["target"]) if isinstance(n["target"][0], str) else json.dumps(n["target"])
                                for n in v["nodes"][:5])
            found.append(f"{'dark' if dark else 'light'}: {v['impact']} {v['id']} ({len(v['nodes'])}×): {v['help']} — {targets}")
    return found


@pytest.fixture(scope="module")
def desktop(browser):
    """The tab of the audits at 1280 px, and its list of problems: one tab loads the pages one after the other, as a
    reader follows links (its renderer and HTTP cache stay warm); each audit leaves no stored setting behind
    (:func:`visit`)."""
    ctx = browser.new_context(**SIZES["1280"], color_scheme="light")
    tab = ctx.new_page()
    yield tab, watch(tab)
    ctx.close()


def visit(desktop, url: str, site: Path | None = None) -> list[str]:
    """Everything wrong with the page at ``url``, loaded in the tab ``desktop`` (1280 px): with ``site`` (the built
    site, for a page of the table of contents), first what does not fit, on the page as it loads; in light mode,
    load problems, untypeset math and axe violations; then, switched to dark mode on the same load, problems since
    (e.g. a dark-only asset that fails) and the colour rules; with ``site``, last the desktop navigation."""
    _require_axe()
    tab, problems = desktop
    problems.clear()  # the earlier pages'
    try:
        tab.goto(url, wait_until="load")
        found: list[str] = []
        if site is not None:  # the page as it loads (layout_problems checks the formulas: tests/book/mathcheck.py)
            found += [f"layout: {p}" for p in layout_problems(tab)]
        else:
            found += tab.evaluate(MATH_PROBLEMS)
        tab.evaluate("document.fonts.ready.then(() => true)")  # the formulas' fonts
        for dark in (False, True):
            if dark:
                switch_to_dark(tab)
            theme = tab.evaluate("document.documentElement.dataset.theme")
            if theme != ("dark" if dark else "light"):
                found.append(f"colour mode {theme!r} instead of {'dark' if dark else 'light'}")
            found += _axe(tab, dark)
        if site is not None:  # after the audits, which see the page as loaded (not the sidebar half faded back in)
            found += [f"navigation: {p}" for p in desktop_problems(tab, site)]
        return found + problems
    finally:
        try:  # the dark mode stored by the switch: the next page loads in light mode, as in a new browser context
            tab.evaluate("localStorage.clear(); sessionStorage.clear()")
        except PlaywrightError:  # the tab crashed: its failure is reported; a stored dark mode fails the next page
            pass


def test_a_stored_dark_choice_applies_when_a_page_loads(browser, site_url):
    """The theme's script (the same on every page) applies the reader's stored choice on load: the audits
    above switch the open page instead of loading every page twice."""
    ctx, tab, problems = open_page(browser, f"{site_url}/book/binary/roc.html", color_scheme="light")
    try:
        assert tab.evaluate("document.documentElement.dataset.theme") == "light"
        tab.evaluate("localStorage.setItem('mode', 'dark'); localStorage.setItem('theme', 'dark')")
        tab.goto(f"{site_url}/book/calibration/ece.html", wait_until="load")
        assert tab.evaluate("document.documentElement.dataset.theme") == "dark"
        # leaving roc.html cancels the requests it still had open (its lazily loaded animation frames): not a fault
        assert not [p for p in problems if "net::ERR_ABORTED" not in p], problems
    finally:
        ctx.close()


@pytest.mark.parametrize("page", [*PAGES, "search.html", "genindex.html"])  # genindex: the glossary by English name
def test_page_loads_fits_navigates_and_passes_axe_in_both_modes(desktop, book_html, site_url, page):
    assert (book_html / page).is_file(), f"{page} was not built"
    report = visit(desktop, f"{site_url}/{page}", book_html if page in PAGES else None)
    assert not report, f"{page}:\n" + "\n".join(report)


def _instructor_pages(site: Path) -> list[str]:
    return sorted(str(p.relative_to(site)) for p in site.rglob("*.html")
                  if 'class="instructor-only' in p.read_text(encoding="utf-8"))


def test_instructor_only_pages_have_no_serious_accessibility_violation(desktop, instructor_html):
    import functools
    import http.server
    import threading

    from .conftest import _QuietHandler

    pages = _instructor_pages(instructor_html)
    assert pages, "the instructor edition shows no instructor-only block"
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                             functools.partial(_QuietHandler, directory=str(instructor_html)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        report = [f"{page}: {v}" for page in pages for v in visit(desktop, f"http://127.0.0.1:{server.server_port}/{page}")]
        assert not report, "\n".join(report)
    finally:
        server.shutdown()
        server.server_close()


def test_quizzes_work_with_the_keyboard_and_announce_the_verdict(browser, site_url):
    ctx, tab, problems = open_page(browser, f"{site_url}/book/binary/pr.html", viewport={"width": 1280, "height": 900})
    try:
        quiz = tab.locator(".quiz").first
        options = quiz.locator(".quiz-option")
        status = quiz.locator("[role=status], [aria-live]").first
        assert status.get_attribute("aria-live") in ("polite", "assertive")
        for i in range(options.count()):
            name = options.nth(i).evaluate("b => b.textContent.trim()")
            assert name, f"option {i} has no accessible name"
        # Tab reaches every option; Enter and Space pick the focused one
        def tab_to(i: int) -> None:
            target = options.nth(i).get_attribute("data-option")
            for _ in range(12):
                if tab.evaluate("document.activeElement.classList.contains('quiz-option') && "
                                "document.activeElement.dataset.option") == target:
                    return
                tab.keyboard.press("Tab")
            raise AssertionError(f"Tab never reached option {target}")

        correct = [i for i in range(options.count()) if options.nth(i).get_attribute("data-correct") == "true"][0]
        wrong = 0 if correct else 1
        options.first.focus()
        tab_to(wrong)
        tab.keyboard.press("Enter")
        tab.wait_for_function("s => s.textContent.includes('回答错误')", arg=status.element_handle())
        options.first.focus()
        tab_to(correct)
        tab.keyboard.press("Space")
        tab.wait_for_function("s => s.textContent.includes('回答正确')", arg=status.element_handle())
        assert options.nth(correct).get_attribute("aria-pressed") == "true"
        SHOTS.mkdir(parents=True, exist_ok=True)
        quiz.screenshot(path=str(SHOTS / "quiz-keyboard.png"))
        assert not problems, problems
    finally:
        ctx.close()
