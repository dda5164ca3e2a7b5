"""The PDF editions (``make pdf``, ``make pdf-instructor``), checked with poppler-utils as a reader would.

* the file opens (``pdfinfo``): A4, tagged, a title, bookmarks (``pdftohtml -xml`` outline);
* every font is embedded (``pdffonts``), Chinese included;
* its text (``pdftotext``) has every chapter title in ``_toc.yml`` order, a sample of the seeds' numbers,
  every quiz stem (the twelve seed quizzes and those of chapters 2-5) and an appendix with every quiz's answer and per-option explanations, the
  links to the site, the demo and the submission service, and frame strips instead of animations;
* the table of contents carries the page where each chapter starts (the final print's named destinations);
* nothing printed is wider than the text column (measured in the browser before printing), and no page
  is blank (a code cell taller than a page breaks across pages);
* the instructor edition has the solutions of 综合练习 5-7, the public one does not.
Pages are rendered to PNG with ``pdftoppm`` into ``artifacts/pdf/`` for a look.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from coursebook.deployment import load_settings
from coursebook.pdf import chapter_pages

from .conftest import ROOT, build_lock
from .quizdata import load as load_quizzes
from .test_site_browser import PAGES

pytestmark = pytest.mark.slow

ARTIFACTS = ROOT / "artifacts" / "pdf"
#: Numbers of the seed documents that the book recomputes (例3.1, 例3.2's Brier score, .632 bootstrap, 5×2 CV, ...).
SEED_NUMBERS = ["TP=50", "0.1875", "3/4", ".632", "5×2", "√2", "Fawcett"]


def _make(instructor: bool, tmp_path_factory) -> tuple[Path, dict]:
    cmd = [sys.executable, "-m", "coursebook.pdf"] + (["--instructor"] if instructor else [])
    with build_lock(tmp_path_factory, "instructor" if instructor else "public"):  # its singlehtml build shares the edition's doctrees
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, errors="replace", timeout=1800)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    name = "course-instructor.pdf" if instructor else "course.pdf"
    pdf = ROOT / "_build" / "pdf" / name
    return pdf, json.loads(pdf.with_suffix(".json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def pdfs(book_html, tmp_path_factory) -> dict[str, tuple[Path, dict]]:
    """``make pdf`` and ``make pdf-instructor`` side by side, after the site is built (so each PDF is also
    copied into its site); each holds its own edition's build lock."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        made = {edition: pool.submit(_make, edition == "instructor", tmp_path_factory) for edition in ("public", "instructor")}
        return {edition: future.result() for edition, future in made.items()}


@pytest.fixture(scope="module")
def public_pdf(pdfs) -> tuple[Path, dict]:
    return pdfs["public"]


@pytest.fixture(scope="module")
def texts(pdfs) -> dict[str, str]:
    """Each edition's text (``pdftotext``, pages ended by form feeds), extracted once for every check that reads it."""
    return {edition: subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
            for edition, (pdf, _) in pdfs.items()}


@pytest.fixture(scope="module")
def public_text(texts) -> str:
    return texts["public"]


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


def test_pdf_opens_as_a_tagged_a4_book(public_pdf, book_html):
    pdf, _ = public_pdf
    info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True, check=True).stdout
    fields = dict(line.split(":", 1) for line in info.splitlines() if ":" in line)
    assert "评价二分类模型" in fields["Title"] and "公开版" in fields["Title"]
    assert int(fields["Pages"]) >= 100
    assert "A4" in fields["Page size"] and fields["Tagged"].strip() == "yes"
    assert (book_html / "course.pdf").read_bytes() == pdf.read_bytes(), "the site offers the PDF that make pdf wrote"


def test_every_font_is_embedded(public_pdf):
    out = subprocess.run(["pdffonts", str(public_pdf[0])], capture_output=True, text=True, check=True).stdout
    rows = [line for line in out.splitlines()[2:] if line.strip()]
    assert len(rows) >= 5
    not_embedded = [r for r in rows if r.split()[-5] != "yes"]
    assert not not_embedded, "\n".join(not_embedded[:10])


def test_bookmarks_follow_the_chapters(public_pdf):
    xml = subprocess.run(["pdftohtml", "-xml", "-i", "-q", "-stdout", "-f", "1", "-l", "1", str(public_pdf[0])],
                         capture_output=True, text=True, check=True).stdout
    outline = re.search(r"<outline>.*</outline>", xml, re.S)
    assert outline, "the PDF has no bookmarks"
    items = re.findall(r"<item[^>]*>([^<]+)</item>", outline.group(0))
    for title in ("ROC 曲线", "概率校准", "附录　即时练习答案与解析"):
        assert any(title in item for item in items), f"no bookmark {title}"


def _page_titles(book_html: Path) -> list[str]:
    titles = []
    for page in PAGES:
        h1 = BeautifulSoup((book_html / page).read_text(encoding="utf-8"), "html.parser").find("h1")
        for link in h1.find_all("a", class_="headerlink"):
            link.decompose()
        titles.append(h1.get_text().strip())
    return titles


def test_chapter_titles_in_order(public_text, book_html):
    text = _squash(public_text)
    body = text[text.find("附录即时练习答案与解析", text.find("目录")) + 10:]  # after the table of contents
    position = 0
    for title in _page_titles(book_html):
        key = _squash(re.sub(r"[′']", "", title))[:14]
        assert key in _squash(re.sub(r"[′']", "", body)), f"chapter {title!r} is missing"
        found = _squash(re.sub(r"[′']", "", body)).find(key, position)
        assert found >= 0, f"chapter {title!r} is out of _toc.yml order"
        position = found


def test_table_of_contents_has_page_numbers(public_pdf):
    stats = public_pdf[1]
    pages = stats["toc_pages"]
    assert stats["tocEntries"] == len(PAGES) + 1 == len(pages), pages
    # the numbers found by the first pass (laid out, not drawn) are where the chapters start in the printed book
    assert chapter_pages(public_pdf[0]) == pages
    numbers = [pages[f"toc-{i}"] for i in range(len(PAGES))] + [pages["toc-answers"]]
    assert numbers == sorted(numbers) and numbers[0] >= 3, numbers
    toc_text = subprocess.run(["pdftotext", "-f", "2", "-l", "3", str(public_pdf[0]), "-"], capture_output=True, text=True,
                              check=True).stdout
    assert "目录" in toc_text and str(numbers[-1]) in toc_text.split()


def test_seed_numbers_are_printed(public_text):
    text = _squash(public_text)
    missing = [n for n in SEED_NUMBERS if n not in text]
    assert not missing, missing


def _stem_key(stem: str) -> str:
    """The longest stretch of plain text of a quiz stem (math, markup and spaces removed), at most 16 characters."""
    parts = re.split(r"\$[^$]*\$|[`*\[\]()（）]", stem)
    return max((_squash(p) for p in parts), key=len)[:16]


def test_quiz_stems_and_answer_appendix(public_pdf, public_text):
    quizzes = load_quizzes()["quizzes"]
    text = _squash(public_text)
    appendix = text.rfind("附录即时练习答案与解析")
    assert appendix > 0 and public_pdf[1]["quizzes"] == len(quizzes) and set(range(1, 13)) <= set(quizzes)
    for number, quiz in sorted(quizzes.items()):
        key = _stem_key(quiz["stem"])
        # pdftotext may interleave a wrapped line with the formulas MathJax drew next to it: a 6-character
        # stretch of the stem's longest plain text must be there
        assert len(key) >= 6 and any(key[i:i + 6] in text[:appendix] for i in range(len(key) - 5)), \
            f"quiz {number}: stem {key!r} not printed"
    answers = text[appendix:]
    letters = "ABCDEFGH"
    for number, quiz in sorted(quizzes.items()):
        correct = next(i for i, o in enumerate(quiz["options"]) if o["correct"])
        expected = letters[correct] if quiz["kind"] == "single" else quiz["options"][correct]["text"]
        kind = {"single": "单项选择题", "truefalse": "判断题"}[quiz["kind"]]
        assert f"{kind}{number}正确答案：{expected}" in answers, f"quiz {number}: answer {expected} missing"
    assert answers.count("（正确）") == len(quizzes)
    assert answers.count("（错误）") == sum(len(q["options"]) - 1 for q in quizzes.values())


def test_links_and_animation_strips(public_pdf, public_text):
    settings = load_settings()
    for url in (settings.site_url, settings.demo_url, settings.submit_url):
        assert url in public_text, f"the cover lacks {url}"
    stats = public_pdf[1]
    assert stats["animations"] == 2 and stats["stripFrames"] == 8
    assert len(re.findall(r"第\d+/\d+帧", _squash(public_text))) == 8


def test_nothing_is_wider_than_the_page(public_pdf):
    assert public_pdf[1]["overflow"] == []


def _blank_pages(pdf: Path, text: str) -> list[int]:
    """Pages with no text but the footer and no image (``text``: the PDF's ``pdftotext``)."""
    info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True, check=True).stdout
    count = int(re.search(r"Pages:\s+(\d+)", info).group(1))
    pages = text.split("\f")[:count]  # pdftotext ends each page with a form feed
    assert len(pages) == count, f"pdftotext gave {len(pages)} pages of {count}"
    footer = re.compile(r"评价二分类模型（[^）]*）\s*\d+\s*/\s*\d+")
    blank = []
    for number in (i + 1 for i, page in enumerate(pages) if not footer.sub("", page).strip()):
        # only a page without text is asked for its images (listing every page's images took as long as the text)
        listing = subprocess.run(["pdfimages", "-list", "-f", str(number), "-l", str(number), str(pdf)],
                                 capture_output=True, text=True, check=True).stdout
        if not [line for line in listing.splitlines()[2:] if line.strip()]:
            blank.append(number)
    return blank


def test_no_page_is_blank(pdfs, texts):
    """A code cell taller than a page breaks across pages (print.js, coursePrintTallBlocks); kept whole, it left
    the page before it half empty and printed a page with only its empty frame (the regression chapter)."""
    for edition, (pdf, stats) in pdfs.items():
        assert stats["tallBlocks"] >= 1, f"{edition}: no block taller than a page (the regression chapter has one)"
        blank = _blank_pages(pdf, texts[edition])
        assert blank == [], f"{edition}: blank pages {blank}"


def test_pages_rendered_for_a_look(public_pdf):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for old in ARTIFACTS.glob("public-*.png"):
        old.unlink()
    pages = public_pdf[1]["toc_pages"]
    sample = sorted({1, 2, pages["toc-1"], pages["toc-5"], pages["toc-5"] + 6, pages["toc-answers"]})
    for page in sample:
        subprocess.run(["pdftoppm", "-r", "60", "-png", "-f", str(page), "-l", str(page), str(public_pdf[0]),
                        str(ARTIFACTS / "public")], check=True)
    assert len(list(ARTIFACTS.glob("public-*.png"))) == len(sample)


def test_instructor_edition_has_the_solutions(pdfs, texts, public_text):
    pdf, stats = pdfs["instructor"]
    text = texts["instructor"]
    info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True, check=True).stdout
    assert "教师版" in info and stats["quizzes"] == len(load_quizzes()["quizzes"])
    marker = "以下解答只出现在教师版中"
    assert marker in _squash(text) and marker not in _squash(public_text)


def test_each_variant_box_prints_a_question_and_its_answer_in_the_appendix(public_pdf, public_text):
    """「再来一题」 (book/_ext/quiz_variants.py): the first variant of every template is printed where its box is, and
    the appendix gives its answer, its solution and every wrong answer's mistake (print.js, printVariants)."""
    from autograder.quiz import TEMPLATES, make_variant, variant_seed

    text = _squash(public_text)
    start = text.rfind("再来一题：印刷题的答案")
    assert start > text.rfind("附录即时练习答案与解析") > 0 and public_pdf[1]["variants"] == len(TEMPLATES)
    answers = text[start:]
    for t in TEMPLATES:
        v = make_variant(t, variant_seed("book", "reader", t.id, 0))
        assert _squash(v.stem[-1])[:16] in text[:start], f"{t.id}: printed question missing"
        assert _squash(f"再来一题：{t.title}答案：{v.answer_text}") in answers, f"{t.id}: answer missing"
        for m in v.mistakes:
            assert _squash(f"常见错误“{m.title}”（见小节 {m.section}）") in answers, f"{t.id}: {m.id} missing"
