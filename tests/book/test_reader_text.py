"""What a reader reads in the site's interface, in Debian's chromium at 375 and 1280 px (issue 40):

* search (item 11): 召回率 finds the section that defines recall first; no result's title shows TeX; no two pages
  have the same title in the results;
* quizzes (item 12): 「显示全部选项的解析」 heads every explanation with its option; on a phone the verdict of a
  tapped option is on screen right after the tap;
* the interface's words (item 13): no English tooltip or name (the permalinks, the colour-mode switch, the
  animation buttons), mainland wording beside 「全书 PDF」, exercise titles with full-width parentheses, and the
  home page says what the download is.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from coursebook.deployment import book_pages

from .test_quiz_browser import SHOTS
from .test_search import load_index

pytestmark = pytest.mark.slow

SIZES = {"375": {"viewport": {"width": 375, "height": 812}, "is_mobile": True, "has_touch": True},
         "1280": {"viewport": {"width": 1280, "height": 800}}}
RESULTS = "#search-results ul.search li"


@contextmanager
def _tab(browser, size: str, page: str | None = None) -> Iterator:
    """A tab at ``size`` (``page`` opened, with every section drawn); its context closed at the end."""
    ctx = browser.new_context(**SIZES[size])
    try:
        tab = ctx.new_page()
        if page is not None:
            tab.goto(page, wait_until="load")
            tab.evaluate("document.documentElement.classList.add('course-all-sections')")
        yield tab
    finally:
        ctx.close()


def _results(tab, site_url: str, query: str) -> list[tuple[str, str]]:
    tab.goto(f"{site_url}/search.html?q={query}", wait_until="load")
    tab.wait_for_selector(RESULTS, timeout=60_000)
    tab.wait_for_function("() => !document.querySelector('#search-progress')?.textContent.includes('搜索中')", timeout=60_000)
    links = tab.locator(f"{RESULTS} > a")
    return [(links.nth(k).inner_text().strip(), links.nth(k).get_attribute("href")) for k in range(links.count())]


@pytest.mark.parametrize("size", SIZES)
def test_search_ranks_the_definition_first_and_shows_readable_titles(browser, site_url, size):
    with _tab(browser, size) as tab:
        results = _results(tab, site_url, "召回率")
        assert results[0][1].endswith("fixed_threshold.html#binary-recall"), f"first of {results[:4]}"
        tab.screenshot(path=str(SHOTS / f"search-recall-{size}.png"))
        titles = [title for title, _ in _results(tab, site_url, "校准")]
        assert any("m(S)" in t for t in titles), titles
        assert not [t for t in titles if re.search(r"\\[(A-Za-z]|\$", t)], f"TeX in result titles: {titles}"
        pages = [title for title, href in _results(tab, site_url, "评价") if "#" not in href]
        assert len(pages) == len(set(pages)), f"two results with one title: {pages}"


def test_the_search_index_titles_are_text_and_distinct(book_html):
    index = load_index(book_html)
    assert len(set(index["titles"])) == len(index["titles"]), "two pages with one title in the results"
    bad = [t for t in list(index["titles"]) + list(index["alltitles"]) if "\\" in t or 'class="math' in t]
    assert not bad, f"titles with TeX: {bad[:5]}"
    assert index["titles"][index["docnames"].index("book/binary/index")] == "基础指标与曲线"


def _first_quiz_with_four_options(tab):
    quizzes = tab.locator(".quiz[data-kind='single']")
    for k in range(quizzes.count()):
        if quizzes.nth(k).locator(".quiz-option").count() >= 4:
            return quizzes.nth(k)
    raise AssertionError("no single-choice quiz with four options")


@pytest.mark.parametrize("size", SIZES)
def test_quiz_explanations_name_their_option_and_the_verdict_is_in_view(browser, site_url, size):
    with _tab(browser, size, f"{site_url}/book/binary/pr.html") as tab:
        quiz = _first_quiz_with_four_options(tab)
        last = quiz.locator(".quiz-option").last
        last.scroll_into_view_if_needed()
        tab.evaluate("(el) => window.scrollBy(0, el.getBoundingClientRect().bottom - window.innerHeight + 4)",
                     last.element_handle())  # the option at the screen's bottom edge, as a thumb reaches it
        last.click()
        verdict = quiz.locator(".quiz-explanation.is-shown .quiz-verdict")
        box = verdict.bounding_box()
        height = tab.viewport_size["height"]
        assert box and 0 <= box["y"] and box["y"] + box["height"] <= height * 0.85, \
            f"the verdict is at {box} in a {height} px high screen"
        tab.screenshot(path=str(SHOTS / f"quiz-verdict-{size}.png"))
        quiz.locator(".quiz-reveal").click()
        heads = quiz.locator(".quiz-explanation .quiz-verdict").all_inner_texts()
        letters = [re.match(r"\s*选项 ([A-H])", h) for h in heads]
        picked = quiz.locator(".quiz-explanation.is-shown").get_attribute("data-option")
        for head, match, explanation in zip(heads, letters, quiz.locator(".quiz-explanation").all()):
            option = explanation.get_attribute("data-option")
            if option == picked:
                assert f"你选择了选项 {option}" in head, head
            else:
                assert match and match.group(1) == option, f"explanation of option {option} is headed {head!r}"
        quiz.screenshot(path=str(SHOTS / f"quiz-all-explanations-{size}.png"))


#: Every title, name and placeholder of a page, the article's included (the permalinks' titles are in it).
INTERFACE_WORDS = """() => [...document.querySelectorAll('[title], [aria-label], [placeholder]')]
  .filter(e => !e.closest('.bibtex-citation, .footnote, cite, a.reference.external, .cell_output pre'))
  .flatMap(e => ['title', 'aria-label', 'placeholder'].map(a => e.getAttribute(a)).filter(Boolean))"""
ENGLISH = re.compile(r"\b(Link to this|System Settings|Color mode|First frame|Last frame|Play|Pause|Previous frame|"
                     r"Next frame|Toggle|Print to PDF)\b")


@pytest.mark.parametrize("size", SIZES)
def test_the_interface_speaks_mainland_chinese(browser, site_url, size):
    with _tab(browser, size, f"{site_url}/book/binary/roc.html") as tab:
        words = tab.evaluate(INTERFACE_WORDS)
        english = sorted({w for w in words if ENGLISH.search(w)})
        assert not english, f"English in the interface: {english}"
        assert {"链接到本标题", "第一帧", "播放", "暂停"} <= set(words), sorted(set(words))[:40]
        menu = tab.locator(".dropdown-download-buttons")
        menu.locator("button").first.click()
        items = [t.strip() for t in menu.locator(".dropdown-menu a, .dropdown-menu button").all_inner_texts()]
        assert "全书 PDF" in " ".join(items) and "打印本页" in " ".join(items) and "列印" not in " ".join(items), items
        tab.screenshot(path=str(SHOTS / f"download-menu-{size}.png"))
        # the colour switch's third mode (a tooltip in the page's HTML; a11y.js names the button as a whole)
        assert re.search(r'data-mode="auto"\s+title="跟随系统"', tab.request.get(tab.url).text())
        tab.goto(f"{site_url}/book/binary/exercises.html", wait_until="load")
        titles = tab.locator(".exercise .admonition-title").all_inner_texts()
        assert titles and all("(" not in t and ")" not in t for t in titles), titles
        assert re.fullmatch(r"练习 1\s*（混淆矩阵指标计算）", titles[0].strip()), titles[0]
        tab.screenshot(path=str(SHOTS / f"exercises-{size}.png"))
        tab.goto(f"{site_url}/book/intro.html", wait_until="load")
        text = tab.locator("article").inner_text()
        assert "MyST Markdown 笔记本" not in text and "Jupyter 笔记本（.ipynb" in text


def test_no_page_has_english_permalink_titles(book_html):
    for page in book_pages(book_html):
        if "_static" in page.parts:
            continue
        text = page.read_text(encoding="utf-8")
        assert 'title="Link to this' not in text and 'title="System Settings"' not in text, page.relative_to(book_html)
        assert "列印成 PDF" not in text, page.relative_to(book_html)
