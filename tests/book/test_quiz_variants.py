"""「再来一题」 in the built book (book/_ext/quiz_variants.py, _static/quiz_variants.js) and in Debian's chromium.

* every question template is shown exactly once: right under the quiz it varies, or on the page of the section it
  practises; its box carries the variants the templates make (regenerated here: the same), and every mistake's
  link resolves to a section of the site;
* in the browser at 375 and 1280 px: 「再来一题」 shows the next variant; a wrong option names its mistake and
  links its section, the right one says so; a typed number is graded as ``autograder.quiz.grade`` grades it (the
  key, a mistake's number, an unknown number), text that is not a number is refused with a message, and the
  script reads numbers by the same rule as ``parse_number``; the box fits a phone, works with the keyboard,
  announces the verdict, and has no serious axe violation after an answer, in light and dark mode.
Screenshots go to artifacts/screenshots/variants-*.png (git-ignored).
"""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from autograder.quiz import TEMPLATES, Answer, AnswerError, grade, make_variant, parse_number, variant_seed

from .conftest import ROOT
from .test_accessibility import _axe, _require_axe
from .test_quiz_browser import SHOTS, open_page, switch_to_dark

pytestmark = pytest.mark.slow

_spec = importlib.util.spec_from_file_location("course_quiz_variants_ext", ROOT / "book" / "_ext" / "quiz_variants.py")
ext = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ext)

BOX = re.compile(r'<div [^>]*class="quiz-variants"[^>]*data-template="([a-z0-9-]+)"')
JSON = re.compile(r'<script type="application/json" class="variants-data">(.*?)</script>', re.S)
CHOICE_PAGE, CHOICE = "book/binary/pr.html", "auc-pairs"          # under quiz 5
NUMERIC_PAGE, NUMERIC = "book/calibration/ece.html", "ece-samples"  # placed by the page
SIZES = {"375": {"width": 375, "height": 812}, "1280": {"width": 1280, "height": 900}}


def _boxes(book_html: Path) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for page in sorted(book_html.rglob("*.html")):
        for tid in BOX.findall(page.read_text(encoding="utf-8")):
            found.setdefault(tid, []).append(str(page.relative_to(book_html)))
    return found


def _box_html(html: str, tid: str) -> str:
    start = html.index(f'id="variants-{tid}"')
    return html[start:html.index("</script>", start)]


def test_every_template_is_shown_once_where_it_belongs(book_html):
    found = _boxes(book_html)
    assert set(found) == {t.id for t in TEMPLATES}
    for t in TEMPLATES:
        assert len(found[t.id]) == 1, (t.id, found[t.id])
        page = found[t.id][0]
        html = (book_html / page).read_text(encoding="utf-8")
        if t.quiz is None:
            assert page == f"book/{t.page}.html", t.id
        else:  # right under its quiz: no other quiz between them
            between = html[html.index(f'id="quiz-{t.quiz}"'):html.index(f'id="variants-{t.id}"')]
            assert 'class="quiz"' not in between, t.id


def test_each_box_carries_the_templates_variants_and_resolved_links(book_html):
    found = _boxes(book_html)
    for t in TEMPLATES:
        page = book_html / found[t.id][0]
        box = _box_html(page.read_text(encoding="utf-8"), t.id)
        data = json.loads(JSON.search(box + "</script>").group(1))
        assert data == json.loads(json.dumps(ext.page_data(t, ext.book_variants(t)), ensure_ascii=False))
        assert len(data["variants"]) == ext.COUNT
        links = dict(re.findall(r'<span class="variants-link" data-mistake="([^"]+)"><a class="[^"]*" href="([^"]+)"', box))
        assert set(data["mistakes"]) | {ext.SECTION} <= set(links), t.id
        for key, href in links.items():
            parts = urlsplit(href)
            target = (page.parent / parts.path).resolve() if parts.path else page
            assert target.is_file() and f'id="{parts.fragment}"' in target.read_text(encoding="utf-8"), (t.id, key, href)


def _variant(tid: str, index: int):
    return make_variant(tid, variant_seed(ext.BOOK_COURSE, ext.BOOK_READER, tid, index))


def _shows(box, tid: str, index: int) -> None:
    v = _variant(tid, index)
    # text_content: a section the browser has not drawn yet (content-visibility, course.css) has no inner text
    assert box.locator(".variants-count").text_content() == f"第 {index + 1} 题（共 {ext.COUNT} 题）"
    assert box.locator(".variants-stem p").all_text_contents() == list(v.stem)


def _feedback(box) -> str:
    return box.locator(".variants-feedback").text_content()


@pytest.mark.parametrize("size", SIZES)
def test_choice_variants_in_the_browser(browser, site_url, size):
    SHOTS.mkdir(parents=True, exist_ok=True)
    ctx, tab, problems = open_page(browser, f"{site_url}/{CHOICE_PAGE}", viewport=SIZES[size])
    try:
        box = tab.locator(f"#variants-{CHOICE}")
        box.scroll_into_view_if_needed()
        _shows(box, CHOICE, 0)
        assert not box.locator(".variants-static").is_visible()
        box.locator(".variants-next").click()
        _shows(box, CHOICE, 1)
        assert tab.evaluate("document.activeElement.classList.contains('variants-count')")
        v = _variant(CHOICE, 1)
        wrong = next(o for o in v.options if not o.correct)
        box.locator(f".variants-option[data-option='{wrong.letter}']").click()
        text = _feedback(box)
        assert "回答错误" in text and wrong.mistake.title in text and wrong.explanation in text
        link = box.locator(".variants-mistake a")
        assert link.text_content() == wrong.mistake.section
        assert link.get_attribute("href").endswith(f"#{wrong.mistake.label}")
        assert grade(v, Answer(choice=wrong.letter)).mistake == wrong.mistake
        assert "常见错误" in box.locator(".variants-status").text_content()
        box.screenshot(path=str(SHOTS / f"variants-choice-wrong-{size}.png"))
        right = next(o for o in v.options if o.correct)
        box.locator(f".variants-option[data-option='{right.letter}']").click()
        assert "回答正确" in _feedback(box) and v.solution in _feedback(box)
        assert box.locator(f".variants-option[data-option='{right.letter}']").get_attribute("aria-pressed") == "true"
        box.locator(".variants-solution").click()
        assert f"正确答案：{v.answer_text}" in box.locator(".variants-solution-text").text_content()
        box.screenshot(path=str(SHOTS / f"variants-choice-right-{size}.png"))
        # all the way round: after the last variant comes the first again
        for _ in range(ext.COUNT - 1):
            box.locator(".variants-next").click()
        _shows(box, CHOICE, 0)
        assert box.evaluate("b => b.scrollWidth <= b.clientWidth + 1")
        assert tab.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
        assert not problems, problems
    finally:
        ctx.close()


@pytest.mark.parametrize("size", SIZES)
def test_numeric_variants_in_the_browser_grade_as_the_python_templates_do(browser, site_url, size):
    ctx, tab, problems = open_page(browser, f"{site_url}/{NUMERIC_PAGE}", viewport=SIZES[size])
    try:
        box = tab.locator(f"#variants-{NUMERIC}")
        box.scroll_into_view_if_needed()
        box.locator(".variants-next").click()
        box.locator(".variants-next").click()
        _shows(box, NUMERIC, 2)
        v = _variant(NUMERIC, 2)
        assert box.locator(".variants-instruction").text_content() == v.key.instruction()
        field = box.locator(".variants-input")
        assert box.locator("label.variants-label").get_attribute("for") == field.get_attribute("id")

        def typed(text: str) -> str:
            field.fill(text)
            field.press("Enter")
            return _feedback(box)

        d = v.diagnoses[0]
        text = typed(d.text)
        assert "回答错误" in text and d.mistake.title in text and d.explanation in text
        assert grade(v, Answer(number=float(d.text))).mistake == d.mistake
        box.screenshot(path=str(SHOTS / f"variants-numeric-wrong-{size}.png"))
        for attempt in ("abc", ""):
            text = typed(attempt)
            with pytest.raises(AnswerError) as refused:
                parse_number(attempt)
            assert text == str(refused.value)  # the words of the Python rule
            assert field.get_attribute("aria-invalid") == "true"
        unknown = v.key.value + 0.5
        text = typed(str(unknown))
        assert "常见错误清单" in text and grade(v, Answer(number=unknown)).mistake is None
        text = typed(v.key.text)
        assert "回答正确" in text and v.solution in text and field.get_attribute("aria-invalid") is None
        assert grade(v, Answer(number=float(v.key.text))).correct
        box.screenshot(path=str(SHOTS / f"variants-numeric-right-{size}.png"))
        assert box.evaluate("b => b.scrollWidth <= b.clientWidth + 1")
        assert tab.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
        assert not problems, problems
    finally:
        ctx.close()


NUMBER_TEXTS = ["0.875", " 0.875 ", "-0.1", ".5", "7/8", "３/４", "０．２５", "+2", "1 / 4", "12.", "", "abc", "0.8.7", "1/0",
                "1e3", "0,875", "--1", "1/2/3", "½", "inf", "nan", "0x10", "1_000"]


def test_the_script_reads_numbers_by_the_python_rule(browser, site_url):
    ctx, tab, problems = open_page(browser, f"{site_url}/{NUMERIC_PAGE}", viewport=SIZES["1280"])
    try:
        for text in NUMBER_TEXTS:
            got = tab.evaluate("t => window.courseVariants.parseNumber(t)", text)
            try:
                expected = parse_number(text)
            except AnswerError:
                expected = None
            assert (got is None) == (expected is None), text
            assert expected is None or abs(got - expected) < 1e-12, text
        assert not problems, problems
    finally:
        ctx.close()


def test_variants_work_with_the_keyboard_and_pass_axe_after_an_answer(browser, site_url):
    _require_axe()
    ctx, tab, problems = open_page(browser, f"{site_url}/{CHOICE_PAGE}", viewport=SIZES["1280"])
    try:
        box = tab.locator(f"#variants-{CHOICE}")
        status = box.locator(".variants-status")
        assert status.get_attribute("role") == "status" and status.get_attribute("aria-live") == "polite"
        box.locator(".variants-next").focus()
        tab.keyboard.press("Enter")
        _shows(box, CHOICE, 1)
        for _ in range(8):  # from the counter, Tab reaches the first option
            tab.keyboard.press("Tab")
            if tab.evaluate("document.activeElement.classList.contains('variants-option')"):
                break
        tab.keyboard.press("Enter")
        tab.wait_for_function("s => s.textContent.startsWith('回答')", arg=status.element_handle())
        found = _axe(tab, dark=False)
        switch_to_dark(tab)
        found += _axe(tab, dark=True)
        box.screenshot(path=str(SHOTS / "variants-choice-dark.png"))
        assert not found, "\n".join(found)
        assert not problems, problems
    finally:
        ctx.close()
