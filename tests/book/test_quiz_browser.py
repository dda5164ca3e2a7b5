"""The quizzes in a real browser (Debian's chromium via Playwright), on the static site, with no kernel.

For every page that shows quizzes: no console error, math typeset (at build time) inside the stems, every quiz
answered wrongly and then rightly with the right verdict and that option's own explanation, then switched to
dark mode on the same load (readable colours, a screenshot); at 375 px the quiz fits (a screenshot):
:func:`phone_quiz_problems`, run on the phone load of every page by tests/book/test_navigation_browser.py.
Every quiz of the data (the twelve seed quizzes and those of chapters 2-5) must be
found exactly once in the site.
Screenshots go to artifacts/screenshots/ (git-ignored).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from .mathcheck import MATH_PROBLEMS
from .quizdata import ROOT, load

pytestmark = pytest.mark.slow

SHOTS = ROOT / "artifacts" / "screenshots"
QUIZZES = load()["quizzes"]


def _plain(text: str) -> str:
    """First plain-text run (no math, no markup) of an explanation, to find it on the page."""
    for run in re.split(r"\$[^$]*\$|[*`]", text.replace("\n", "")):
        run = run.strip(" ，。；：、（）")
        if len(run) >= 6:
            return run[:12]
    raise AssertionError(f"no plain text in {text!r}")


def quiz_pages(book_html: Path) -> list[str]:
    return sorted(str(p.relative_to(book_html)) for p in book_html.rglob("*.html")
                  if 'class="quiz"' in p.read_text(encoding="utf-8"))


#: The theme's dark mode as its colour-mode switch sets it on the open page (CSS only: no script of the site
#: reads the mode), and the reader's stored choice that applies it on every later page load.
DARK = ("document.documentElement.dataset.theme = 'dark'; document.documentElement.dataset.mode = 'dark';"
        "localStorage.setItem('mode', 'dark'); localStorage.setItem('theme', 'dark')")
#: Resolves when the colour transitions the switch started (Bootstrap's buttons fade for 0.15 s) have ended:
#: a colour read or audited before then is a mix of the two modes.
_SETTLED = """() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))
  .then(() => Promise.all(document.getAnimations().filter(a => a instanceof CSSTransition)
                                  .map(a => a.finished.catch(() => null))))
  .then(() => true)"""


def switch_to_dark(page) -> None:
    """Switch the open page to dark mode, as the reader's click on the theme's switch does, and wait until its
    colours have settled."""
    page.evaluate(DARK)
    page.evaluate(_SETTLED)


def open_page(browser, url, math=True, **context):
    """``url`` in a new tab of a new browser context (``context``: its options): the context, the tab and the
    list of the tab's problems (:func:`open_tab`)."""
    ctx = browser.new_context(**context)
    page, problems = open_tab(ctx, url, math)
    return ctx, page, problems


def request_failed(r) -> str | None:
    """The problem of a failed request, or ``None`` for the site icon that the browser fetches after a page has
    loaded and drops when the tab goes on to the next page (``net::ERR_ABORTED``; a missing icon is an HTTP 404)."""
    if r.failure == "net::ERR_ABORTED" and r.url.endswith("/_static/favicon.svg"):
        return None
    return f"request failed: {r.url} {r.failure}"


def watch(page) -> list[str]:
    """The list of the problems of the tab ``page`` from now on, kept up to date while it is used: console errors,
    page errors, HTTP errors and failed requests (:func:`request_failed`)."""
    problems: list[str] = []
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("response", lambda r: problems.append(f"HTTP {r.status}: {r.url}") if r.status >= 400 else None)
    page.on("requestfailed", lambda r: (problem := request_failed(r)) and problems.append(problem))
    return problems


def open_tab(ctx, url, math=True):
    """``url`` in a new tab of ``ctx``: the tab and the list of its problems (:func:`watch`; with ``math``, also the
    formulas' problems on load: tests/book/mathcheck.py)."""
    page = ctx.new_page()
    problems = watch(page)
    page.goto(url, wait_until="load")
    if math:  # typeset at build time (book/_ext/static_math.py): nothing left to wait for
        problems += page.evaluate(MATH_PROBLEMS)
    return page, problems


def test_every_quiz_is_in_the_site_once(book_html):
    found: list[int] = []
    for rel in quiz_pages(book_html):
        found += [int(n) for n in re.findall(r'data-quiz="(\d+)"', (book_html / rel).read_text(encoding="utf-8"))]
    assert sorted(found) == sorted(QUIZZES), f"网站中找到第 {sorted(found)} 题，数据中有第 {sorted(QUIZZES)} 题"
    assert set(range(1, 13)) <= set(found), "十二道种子题（pr.md、probability.md 等页含 1-12）缺失"


def test_quizzes_work_in_the_browser(browser, book_html, site_url):
    SHOTS.mkdir(parents=True, exist_ok=True)
    pages = quiz_pages(book_html)
    assert pages, "没有任何页面包含即时练习"
    # one tab loads the pages one after the other, as a reader follows links (its renderer and HTTP cache warm)
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    page = ctx.new_page()
    problems = watch(page)
    try:
        for rel in pages:
            problems.clear()  # the earlier pages'
            page.goto(f"{site_url}/{rel}", wait_until="load")
            problems += page.evaluate(MATH_PROBLEMS)
            # the dark mode the previous page stored was cleared: this one loads in light mode, as in a new context
            assert page.evaluate("document.documentElement.dataset.theme") == "light", rel
            quizzes = page.locator(".quiz")
            assert quizzes.count() >= 1
            for qi in range(quizzes.count()):
                quiz = quizzes.nth(qi)
                number = int(quiz.get_attribute("data-quiz"))
                entry = QUIZZES[number]
                stem = quiz.locator(".quiz-stem")
                if "$" in entry["stem"]:
                    assert stem.locator("mjx-container").count() >= 1, f"第 {number} 题的题干公式没有排版"
                assert stem.locator("text=/\\\\\\(|\\$/").count() == 0
                options = quiz.locator(".quiz-option")
                assert options.count() == len(entry["options"])
                # options appear in data order (never shuffled)
                assert [options.nth(i).get_attribute("data-option") for i in range(options.count())] == \
                    [chr(65 + i) for i in range(options.count())]
                order = sorted(range(len(entry["options"])), key=lambda i: entry["options"][i]["correct"])  # wrong first
                for i in order:
                    option = entry["options"][i]
                    options.nth(i).click()
                    feedback = quiz.locator(".quiz-explanation.is-shown")
                    expect(feedback).to_have_count(1, timeout=10_000)  # retried: a loaded machine may paint late
                    text = feedback.inner_text()
                    verdict = "回答正确" if option["correct"] else "回答错误"
                    assert verdict in text, f"第 {number} 题选项 {i}：{text!r}"
                    assert _plain(option["explanation"]) in text.replace("\n", ""), f"第 {number} 题选项 {i} 的解释不对：{text!r}"
                    assert options.nth(i).get_attribute("aria-pressed") == "true"
                    assert quiz.get_attribute("data-answered") == ("right" if option["correct"] else "wrong")
                # "show all explanations" and back: every option's own explanation, then only the picked one
                reveal = quiz.locator(".quiz-reveal")
                reveal.click()
                assert reveal.get_attribute("aria-expanded") == "true"
                assert quiz.locator(".quiz-explanation:visible").count() == len(entry["options"])
                shown_all = quiz.locator(".quiz-feedback").inner_text().replace("\n", "")
                assert all(_plain(o["explanation"]) in shown_all for o in entry["options"]), f"第 {number} 题"
                assert shown_all.count("（你选择了") == 1  # only the picked option says so
                reveal.click()
                assert quiz.locator(".quiz-explanation:visible").count() == 1
            name = rel.replace("/", "_").removesuffix(".html")
            page.locator(".quiz-group").first.screenshot(path=str(SHOTS / f"{name}-light.png"))
            # dark mode (the theme's switch: CSS only), on the same load: the quiz text stays readable, light on dark
            switch_to_dark(page)
            assert page.evaluate("document.documentElement.dataset.theme") == "dark"
            color = page.evaluate("getComputedStyle(document.querySelector('.quiz-stem')).color")
            rgb = [int(v) for v in re.findall(r"\d+", color)[:3]]
            assert sum(rgb) / 3 > 150, f"{rel}: quiz text {color} in dark mode"
            page.locator(".quiz-group").first.screenshot(path=str(SHOTS / f"{name}-dark.png"))
            assert not problems, problems
            page.evaluate("localStorage.clear(); sessionStorage.clear()")  # the dark mode stored by the switch
    finally:
        ctx.close()


def phone_quiz_problems(tab, rel: str) -> list[str]:
    """On a page with quizzes open at 375 px: picking the first quiz's first option shows one explanation, the quiz
    fits the screen and the page does not scroll sideways (a screenshot of the quiz group).  Run on the phone load
    of every page by tests/book/test_navigation_browser.py (which also reports the page's errors)."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    found = []
    quiz = tab.locator(".quiz").first
    quiz.locator(".quiz-option").first.click()
    try:
        expect(quiz.locator(".quiz-explanation.is-shown")).to_have_count(1, timeout=10_000)
    except AssertionError:
        found.append(f"{quiz.locator('.quiz-explanation.is-shown').count()} explanations shown after a pick at 375 px")
    width = tab.evaluate("document.querySelector('.quiz').getBoundingClientRect().width")
    if width > 375:
        found.append(f"the quiz is {width:.0f} px wide at 375 px")
    overflow = tab.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    if overflow > 1:
        found.append(f"页面在 375px 下横向溢出 {overflow}px（选了一个选项之后）")
    name = rel.replace("/", "_").removesuffix(".html")
    tab.locator(".quiz-group").first.screenshot(path=str(SHOTS / f"{name}-phone.png"))
    return found


def test_chinese_search_in_the_browser(browser, site_url):
    """Sphinx's search page with jieba-segmented Chinese words finds the page that explains each word
    (the index itself is checked in test_search.py)."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    page = ctx.new_page()  # one tab searches one word after the other, as a reader does
    problems = watch(page)
    try:
        for word, page_name in (("召回率", "fixed_threshold"), ("混淆矩阵", "confusion"), ("假发现率", "fixed_threshold"),
                                ("误判代价", "thresholds_costs")):
            problems.clear()
            page.goto(f"{site_url}/search.html?q={word}", wait_until="load")
            page.wait_for_selector("#search-results ul.search li", timeout=20000)
            links = page.locator("#search-results ul.search li a").evaluate_all("els => els.map(e => e.href)")
            assert any(page_name in href for href in links), (word, links)
            page.screenshot(path=str(SHOTS / f"search-{word}.png"))
            # every result's snippet fetched: the next search does not cut this one's requests short
            page.wait_for_function("[...document.querySelectorAll('#search-results li')]"
                                   ".every(li => li.querySelector(':scope > span, p.context'))", timeout=60_000)
            assert not problems, problems
    finally:
        ctx.close()
