"""Formulas, headings, search results and figures fit a phone (375 px) and a desktop (1280 px).

In Debian's chromium, on every page (its formulas typeset at build time, book/_ext/static_math.py; checked by
:func:`layout_problems` on the phone loads of tests/book/test_navigation_browser.py and the 1280 px loads of
tests/book/test_accessibility.py):

* no untypeset formula and no TeX in the article's text, every formula with its MathML and its TeX, and
  no math script (tests/book/mathcheck.py);

* no display formula is clipped: it fits its line, or it scrolls inside its own box (which stays inside
  the article) with scroll shadows at its edges; its equation number never overlaps it;
* no heading is wider than the article (a heading with a formula wraps); no table header wraps after
  every character;
* formulas are typeset at the size of the text (MathJax's em is the text's em, not scaled by a font's x-height);
* at 375 px, figures of several panels and the ROC animations keep a readable width and scroll sideways
  in their box;
* the search page shows formulas in its snippets as text, not TeX, and never widens the page; the
  magnifier of a search box does not cover the typed text;
* at 1280 px there is one search box, and the book's title appears once in the left sidebar;
* the home page tells a phone reader how to find things and links to the demo and the submission
  service (the deployment setting's addresses, book/_ext/publishing.py).
"""

from __future__ import annotations

import re

import pytest

from coursebook.deployment import load_settings

from .mathcheck import MATH_PROBLEMS
from .test_quiz_browser import SHOTS

pytestmark = pytest.mark.slow

SIZES = {"375": {"viewport": {"width": 375, "height": 812}, "is_mobile": True, "has_touch": True},
         "1280": {"viewport": {"width": 1280, "height": 800}}}

#: Everything that does not fit, as strings (empty: the page fits).
MISFITS = """() => {
  const out = [];
  const article = document.querySelector('article.bd-article');
  // the browser skips the sections off screen until the reader scrolls near them (course.css): every
  // section is measured as it will be drawn
  article.querySelectorAll('section').forEach(s => { s.style.contentVisibility = 'visible'; });
  const art = article.getBoundingClientRect();
  const name = el => (el.closest('div.math') && el.closest('div.math').id) || (el.textContent || '').trim().slice(0, 40);
  const scrolls = el => ['auto', 'scroll'].includes(getComputedStyle(el).overflowX);
  for (const m of article.querySelectorAll('mjx-container[display="true"]')) {
    if (!m.closest('div.math') || m.closest('details:not([open])')) continue;
    const box = m.getBoundingClientRect();
    if (box.width === 0) { out.push(`formula ${name(m)} is not rendered`); continue; }
    const math = m.querySelector(':scope > svg');
    const content = math.getBoundingClientRect();
    // A formula is scrolled into view from its left edge: its content starts inside its box.
    if (box.left < art.left - 1 || box.right > art.right + 1) {
      out.push(`formula ${name(m)}: box ${Math.round(box.left)}..${Math.round(box.right)} outside the article`);
    }
    if (m.scrollWidth > m.clientWidth + 1) {
      if (!scrolls(m)) out.push(`formula ${name(m)} is clipped (${m.scrollWidth} px in ${m.clientWidth} px) and does not scroll`);
      else if (!/gradient/.test(getComputedStyle(m).backgroundImage)) out.push(`formula ${name(m)} scrolls without a visible cue`);
    } else if (content.right > box.right + 1 || content.left < box.left - 1) {
      out.push(`formula ${name(m)} drawn outside its box`);
    }
    const eqno = m.closest('div.math').querySelector('.eqno');
    if (eqno) {
      const e = eqno.getBoundingClientRect();
      const overlap = Math.min(e.right, box.right) - Math.max(e.left, box.left);
      const sameLine = Math.min(e.bottom, box.bottom) - Math.max(e.top, box.top) > 0;
      if (sameLine && overlap > 1) out.push(`number of ${name(m)} overlaps the formula by ${Math.round(overlap)} px`);
      if (e.right > art.right + 1) out.push(`number of ${name(m)} is cut off`);
    }
  }
  for (const h of article.querySelectorAll('h1, h2, h3, h4')) {
    const r = h.getBoundingClientRect();
    if (h.scrollWidth > h.clientWidth + 1 || r.right > art.right + 1) {
      out.push(`heading “${h.textContent.trim().slice(0, 30)}” is wider than the article`);
    }
    for (const m of h.querySelectorAll('mjx-container')) {
      if (m.getBoundingClientRect().right > art.right + 1) out.push(`formula in heading “${h.textContent.trim().slice(0, 30)}” is cut off`);
    }
  }
  for (const th of article.querySelectorAll('th')) {
    const text = th.textContent.trim();
    if ([...text].length < 3) continue;
    const range = document.createRange();
    range.selectNodeContents(th);
    const lines = new Set([...range.getClientRects()].map(r => Math.round(r.top))).size;
    if (lines >= [...text].length) out.push(`table header “${text}” wraps after every character`);
  }
  return out;
}"""


def layout_problems(tab) -> list[str]:
    """What does not fit on the open page: untypeset math (:data:`MATH_PROBLEMS`), :data:`MISFITS`, a page wider
    than the screen.  Run on every page at both :data:`SIZES`, on the load that also checks the page's navigation:
    at 375 px by tests/book/test_navigation_browser.py, at 1280 px by tests/book/test_accessibility.py (one load
    per page and size for all of them)."""
    found = tab.evaluate(MATH_PROBLEMS) + tab.evaluate(MISFITS)
    overflow = tab.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    if overflow > 1:
        found.append(f"the page is {overflow} px wider than the screen")
    return found


def test_wide_formulas_scroll_with_a_cue_on_a_phone(browser, site_url):
    """The formulas that were cut off (eq. 13 of roc.html, 15 of auc.html, 18 of pr.html) are whole:
    they fit, or scroll to their end inside their box; screenshots in artifacts/screenshots/."""
    ctx = browser.new_context(**SIZES["375"])
    tab = ctx.new_page()
    SHOTS.mkdir(parents=True, exist_ok=True)
    try:
        for page, label in (("book/binary/roc.html", "equation-eq-roc-point"), ("book/binary/auc.html", "equation-eq-auc-trapezoid"),
                            ("book/binary/pr.html", "equation-eq-pr-point")):
            tab.goto(f"{site_url}/{page}", wait_until="load")
            formula = tab.locator(f"#{label} > mjx-container")
            formula.scroll_into_view_if_needed()
            tab.locator(f"#{label}").screenshot(path=str(SHOTS / f"formula-375-{label}.png"))
            end = tab.evaluate("""m => { m.scrollLeft = m.scrollWidth;
                const last = m.querySelector(':scope > svg').getBoundingClientRect();
                return [last.right, m.getBoundingClientRect().right]; }""", formula.element_handle())
            assert end[0] <= end[1] + 1, f"{page}: the end of {label} cannot be scrolled into view"
            # MathJax's em is 1000 units of the SVG's viewBox: drawn at the text's size, not scaled by its ex
            size = tab.evaluate("""m => { const svg = m.querySelector(':scope > svg');
                const em = svg.getBoundingClientRect().width * 1000 / svg.viewBox.baseVal.width;
                return em / parseFloat(getComputedStyle(m.parentElement).fontSize); }""", formula.element_handle())
            assert 0.95 < size < 1.05, f"{page}: formulas are typeset {size:.0%} of the text size"
    finally:
        ctx.close()


def test_search_snippets_show_text_not_tex(browser, site_url):
    for size in SIZES:
        ctx = browser.new_context(**SIZES[size])
        tab = ctx.new_page()
        try:
            tab.goto(f"{site_url}/search.html?q=召回率", wait_until="load")
            tab.wait_for_function("document.querySelector('#search-results') && "
                                  "/搜索完成/.test(document.querySelector('#search-results').textContent)", timeout=60_000)
            tab.wait_for_function("[...document.querySelectorAll('#search-results li')]"  # every page's snippet fetched
                                  ".every(li => li.querySelector(':scope > span, p.context'))", timeout=60_000)
            snippets = tab.locator("#search-results p.context").all_inner_texts()
            assert len(snippets) >= 5
            tex = [s for s in snippets if re.search(r"\\[A-Za-z]+|\\\[|\\\(", s)]
            assert not tex, f"raw TeX in search snippets: {tex[:2]}"
            assert any("Recall=TP/(TP+FN)" in s.replace(" ", "") for s in snippets), snippets[:6]
            overflow = tab.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
            assert overflow <= 1, f"the search page is {overflow} px wider than {size} px"
            tab.screenshot(path=str(SHOTS / f"search-{size}.png"))
        finally:
            ctx.close()


def _icon_clear_of_text(tab, form) -> None:
    icon = form.locator(".fa-magnifying-glass").bounding_box()
    field = form.locator("input").evaluate("i => { const r = i.getBoundingClientRect(); const s = getComputedStyle(i);"
                                           " return r.left + parseFloat(s.paddingLeft) + parseFloat(s.borderLeftWidth); }")
    assert icon["x"] + icon["width"] <= field + 1, f"the magnifier ends at {icon['x'] + icon['width']:.0f} px, the text starts at {field:.0f} px"


def test_search_boxes_on_phone_and_desktop(browser, site_url):
    for size in SIZES:
        ctx = browser.new_context(**SIZES[size])
        tab = ctx.new_page()
        try:
            tab.goto(f"{site_url}/search.html?q=AUC", wait_until="load")
            _icon_clear_of_text(tab, tab.locator("form.bd-search").filter(visible=True).first)
            tab.goto(f"{site_url}/book/binary/roc.html", wait_until="load")
            visible = tab.locator("button.search-button__button, button.search-button").filter(visible=True)
            if size == "1280":
                assert tab.locator("button.search-button-field").filter(visible=True).count() == 1, "one search box at 1280 px"
            visible.first.click()
            dialog_form = tab.locator("#pst-search-dialog form.bd-search")
            dialog_form.wait_for(state="visible")
            tab.keyboard.type("召回率")
            _icon_clear_of_text(tab, dialog_form)
        finally:
            ctx.close()


def test_book_title_once_in_the_sidebar(browser, site_url):
    ctx = browser.new_context(**SIZES["1280"])
    tab = ctx.new_page()
    try:
        tab.goto(f"{site_url}/book/binary/roc.html", wait_until="load")
        sidebar = tab.locator("#pst-primary-sidebar").inner_text()
        assert sidebar.count("评价二分类模型") == 1, sidebar[:300]
        tab.locator("#pst-primary-sidebar .navbar-brand").click()
        tab.wait_for_url("**/book/intro.html")
    finally:
        ctx.close()


def test_wide_figures_keep_a_readable_width_on_a_phone(browser, site_url):
    ctx = browser.new_context(**SIZES["375"])
    tab = ctx.new_page()
    try:
        for page, least in (("book/binary/pr.html", 1), ("book/case_study/index.html", 2)):
            tab.goto(f"{site_url}/{page}", wait_until="load")
            wide = tab.locator("article img[data-wide='true']")
            assert wide.count() >= least, f"{page}: {wide.count()} multi-panel figures marked"
            for i in range(wide.count()):
                img = wide.nth(i)
                img.scroll_into_view_if_needed()
                img.evaluate("i => i.decode ? i.decode() : null")
                width = img.evaluate("i => i.getBoundingClientRect().width")
                box = img.evaluate("i => [i.parentElement.clientWidth, getComputedStyle(i.parentElement).overflowX]")
                assert width >= 600, f"{page}: a multi-panel figure is only {width:.0f} px wide on a phone"
                assert box[1] in ("auto", "scroll") and box[0] <= 375, f"{page}: the figure's box does not scroll: {box}"
            overflow = tab.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
            assert overflow <= 1
    finally:
        ctx.close()


#: Of the animation's frame on screen: its width, its box's width and scroll width, its natural size.
FRAME_FIT = """img => { const box = img.closest('div.animation'); const r = img.getBoundingClientRect();
  return {shown: r.width, box: box.clientWidth, scroll: box.scrollWidth, natural: [img.naturalWidth, img.naturalHeight]}; }"""


@pytest.mark.parametrize("size", ["375", "1280"])
def test_roc_animations_show_the_whole_figure(browser, site_url, size):
    """On a phone the ROC animations show frames with their panels in one column, the whole frame in its box
    (the title and the ROC curve in view, nothing to scroll); on a computer the frames with the panels side by side."""
    ctx = browser.new_context(**SIZES[size])
    tab = ctx.new_page()
    try:
        tab.goto(f"{site_url}/book/binary/roc.html", wait_until="load")
        tab.evaluate("document.documentElement.classList.add('course-all-sections')")
        animations = tab.locator("article div.animation")
        assert animations.count() >= 2
        for i in range(animations.count()):
            anim = animations.nth(i)
            frame = anim.locator("img.anim-frame")
            anim.scroll_into_view_if_needed()
            for step in ("first", "last"):
                anim.locator(f"button[data-action='{step}']").click()
                tab.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=frame.element_handle(), timeout=30_000)
                fit = frame.evaluate(FRAME_FIT)
                assert fit["shown"] <= fit["box"] + 0.5 and fit["scroll"] <= fit["box"] + 1, f"animation {i} ({step}): {fit}"
                width, height = fit["natural"]
                if size == "375":
                    assert height > width, f"animation {i} ({step}): a phone gets the one-column frames, not {width}x{height}"
                    assert fit["shown"] >= 300, f"animation {i} is only {fit['shown']:.0f} px wide on a phone"
                else:
                    assert width > height, f"animation {i} ({step}): a computer gets the side-by-side frames, not {width}x{height}"
            anim.screenshot(path=str(SHOTS / f"roc-animation-{i}-{size}.png"))
        assert tab.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth") <= 1
    finally:
        ctx.close()


def test_home_page_guides_a_phone_reader(browser, site_url, book_html):
    settings = load_settings()  # the deployment setting of this build (COURSE_SITE_CONFIG or deploy/local.yml)
    ctx = browser.new_context(**SIZES["375"])
    tab = ctx.new_page()
    try:
        tab.goto(f"{site_url}/book/intro.html", wait_until="load")
        text = tab.locator("article").inner_text()
        assert "在手机上怎样找内容" in text and "☰" in text and "本页目录" in text
        assert "左侧搜索框" not in text
        hrefs = tab.eval_on_selector_all("article a.reference.external", "els => els.map(a => a.href)")
        assert settings.demo_url in hrefs, f"no link to the demo {settings.demo_url}: {hrefs}"
        assert settings.submit_url in hrefs, f"no link to the submission service {settings.submit_url}: {hrefs}"
        tab.screenshot(path=str(SHOTS / "intro-375.png"), full_page=True)
    finally:
        ctx.close()


def test_copying_text_with_formulas_gives_their_tex(browser, site_url):
    """The formulas are CSS glyphs (typeset at build time); copying a paragraph or a display formula puts
    their TeX on the clipboard (book/_static/copy_tex.js)."""
    ctx = browser.new_context()
    tab = ctx.new_page()
    try:
        tab.goto(f"{site_url}/book/binary/roc.html", wait_until="load")
        copied = tab.evaluate("""() => {
          const paragraph = [...document.querySelectorAll('article p')].find(p => p.querySelector('span.math'));
          return [paragraph, document.querySelector('#equation-eq-roc-point')].map(el => {
            const range = document.createRange();
            range.selectNodeContents(el);
            getSelection().removeAllRanges();
            getSelection().addRange(range);
            const event = new ClipboardEvent('copy', {clipboardData: new DataTransfer(), bubbles: true, cancelable: true});
            document.dispatchEvent(event);
            return event.clipboardData.getData('text/plain');
          });
        }""")
        assert "连续得分 $s_i$，阈值 $\\tau$ 一变" in copied[0]
        assert copied[1].startswith("$$\\operatorname{ROC}(\\tau)=") and copied[1].endswith("$$")
    finally:
        ctx.close()


#: Each inline formula directly followed by full-width punctuation whose first mark begins a line (its box
#: is below the formula's line): "name: text" of each.
PUNCTUATION_STARTS_LINE = """() => {
  const out = [];
  const article = document.querySelector('article.bd-article');
  article.querySelectorAll('section').forEach(s => { s.style.contentVisibility = 'visible'; });
  for (const math of article.querySelectorAll('span.math mjx-container:not([display="true"])')) {
    const span = math.closest('span.math');
    const next = span.nextSibling;  // inside its cjk-nobreak span or not
    if (!next || next.nodeType !== Node.TEXT_NODE || !/^[，。、；：！？）]/.test(next.data)) continue;
    const range = document.createRange();
    range.setStart(next, 0);
    range.setEnd(next, 1);
    const mark = range.getBoundingClientRect();
    const box = math.getBoundingClientRect();
    if (box.height === 0) continue;  // not shown (a closed answer of a quiz)
    if (mark.top >= box.bottom - 1) out.push(`${span.dataset.tex}${next.data.slice(0, 6)}`);
  }
  return out;
}"""


def test_no_line_starts_with_the_punctuation_after_a_formula(browser, site_url):
    """Full-width punctuation after an inline formula stays on the formula's line (book/_ext/cjk_breaks.py),
    on the pages with the most inline formulas, at three phone widths (each page loaded once and laid out again
    at each width)."""
    ctx = browser.new_context(viewport={"width": 320, "height": 800})
    tab = ctx.new_page()
    report = []
    try:
        for page in ("binary/probability", "binary/roc", "ap_auc/ap", "calibration/ece", "methodology/intervals",
                     "methodology/regression", "notation"):
            tab.set_viewport_size({"width": 320, "height": 800})
            tab.goto(f"{site_url}/book/{page}.html", wait_until="load")
            if tab.locator("span.cjk-nobreak").count() == 0:
                report.append(f"{page}: no formula kept with its punctuation")
            for width in (320, 375, 414):
                tab.set_viewport_size({"width": width, "height": 800})
                starts = tab.evaluate(PUNCTUATION_STARTS_LINE)
                if starts:
                    report.append(f"{page} at {width} px: a line starts with the punctuation after {starts[:3]}")
        assert not report, "\n".join(report)
    finally:
        ctx.close()
