"""The public course as published: licences on every page and on the PDF, every bundled file credited, the
lecturer's page rendered, and ``autograder export-public`` exporting a course with no answer in it.

* every page's footer states both licences with links to their deeds and to the page 版权与许可 (no
  "all rights reserved" left), and the PDF's cover states them;
* every file the site serves from ``_static/`` is the course's own or credited on the page 版权与许可;
* the page 教学建议 shows the calendar, the workload measured on the solutions and the 周志华 table;
* ``autograder export-public`` writes the site, the PDF, the released notebooks and the public tree, and the scan of
  all of it (HTML, ``.ipynb`` downloads, PDF text, the tree) is clean; a solution planted in a built page, in a
  notebook download or printed into a PDF is found, and a planted page stops the export; the instructor edition
  fails the scan.

The site and PDF are copied under the public build's lock, so that another test that prints the PDF meanwhile
cannot hand this module a half-written file.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from autograder.commands import private_material as pm
from autograder.commands.private_material import Category, squeeze
from autograder.commands.public_scan import scan
from coursebook import licence, teaching
from coursebook.deployment import book_pages, load_settings
from coursebook.pdf import toc_outline, yaml_config

from .conftest import ROOT, build_lock
from .licence_footer import footer_problem

pytestmark = pytest.mark.slow

AUTOGRADER = Path(sys.executable).parent / "autograder"


@pytest.fixture(scope="module")
def published(book_html, tmp_path_factory) -> dict[str, Path]:
    """The public PDF (``make pdf``) and copies of it and of the site, taken under the public build's lock."""
    out = tmp_path_factory.mktemp("published")
    with build_lock(tmp_path_factory, "public"):
        proc = subprocess.run([sys.executable, "-m", "coursebook.pdf"], cwd=ROOT, capture_output=True, text=True,
                              errors="replace", timeout=1800)
        assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
        shutil.copytree(book_html, out / "site")
        shutil.copy2(ROOT / "_build" / "pdf" / "course.pdf", out / "course.pdf")
    return {"site": out / "site", "pdf": out / "course.pdf"}


def _pages(site: Path) -> list[Path]:
    """The book's pages: its HTML files outside ``_static/`` (the theme's templates) and the guides' folder (their own
    build, which the guides' tests check: tests/docs/test_guide_footer.py), except the redirect ``index.html``."""
    return [p for p in book_pages(site) if "_static" not in p.relative_to(site).parts
            and 'http-equiv="Refresh"' not in p.read_text(encoding="utf-8")[:400]]


def _solution_snippet(lines: int = 12) -> str:
    path = pm.REPO / "solutions" / "ps2_roc_auc" / "roc_auc.ipynb"
    body = next(b for c in pm.notebook_cells(path) for b in pm.solution_bodies(c))
    return "\n".join(body.splitlines()[:lines])


def _pdftotext(pdf: Path, *pages: str) -> str:
    return subprocess.run(["pdftotext", "-enc", "UTF-8", *pages, str(pdf), "-"], capture_output=True, text=True, check=True).stdout


# ------------------------------------------------------------------------------------------- licences


def test_every_page_s_footer_states_both_licences_and_links_the_licence_page(book_html):
    pages = _pages(book_html)
    root, parts = toc_outline()
    assert len(pages) == sum(len(part["entries"]) for part in parts) + 3  # and the 404, index and search pages
    site = load_settings().site_url
    problems = {page: footer_problem(page.read_text(encoding="utf-8"), site + page.relative_to(book_html).as_posix(), site)
                for page in pages}
    assert not {page: p for page, p in problems.items() if p}
    assert (book_html / f"{licence.PAGE}.html").is_file()


def test_the_pdf_cover_states_both_licences(published):
    book = yaml_config()
    cover = squeeze(_pdftotext(published["pdf"], "-f", "1", "-l", "1"))
    assert squeeze(licence.notice(book["author"], str(book["copyright"]))) in cover
    whole = squeeze(_pdftotext(published["pdf"]))
    assert "为什么选这两种许可" in whole and "第三方材料" in whole  # the licence page is printed too


def test_every_file_the_site_serves_is_its_own_or_credited(book_html):
    static = book_html / "_static"
    assert licence.uncredited_files(static) == []
    files = [str(p.relative_to(static)) for p in static.rglob("*") if p.is_file()]
    stale = [c.name for c in licence.BUNDLED if c.files and not any(licence.credited(f, [c]) for f in files)]
    assert not stale, f"credited for files the site no longer serves: {stale}"
    page = squeeze(BeautifulSoup((book_html / f"{licence.PAGE}.html").read_text(encoding="utf-8"), "html.parser").get_text())
    for credit in licence.CREDITS:
        assert squeeze(credit.name) in page and squeeze(credit.version()) in page, credit.name


# ---------------------------------------------------------------------------------- the lecturer's page


def test_the_teaching_page_shows_the_calendar_the_workload_and_the_zhou_table(book_html):
    soup = BeautifulSoup((book_html / "book" / "teaching.html").read_text(encoding="utf-8"), "html.parser")
    tables = soup.select("article table")
    assert len(tables) == 3
    calendar, workload, zhou = ([[td.get_text(" ", strip=True) for td in tr.find_all("td")] for tr in t.select("tbody tr")]
                                for t in tables)
    assert [row[0] for row in calendar] == [str(w.number) for w in teaching.CALENDAR]
    assert all(tables[0].select("tbody tr")[i].find_all("a") for i in range(len(teaching.CALENDAR) - 1))  # pages linked
    loads = teaching.workload()
    assert [re.search(r"解答代码 (\d+) 行", row[1]).group(1) for row in workload] == [str(w.solution_lines) for w in loads]
    assert [row[2] for row in workload] == [f"{w.hours_fast:g}–{w.hours_slow:g}" for w in loads]
    assert [row[0] for row in zhou] == [f"{e.zhou}（{e.section}）" for e in teaching.ZHOU_CH2]
    assert len(tables[2].select("tbody a.reference.internal")) == len(teaching.ZHOU_CH2)


# ------------------------------------------------------------------------------------------ the export


def test_export_public_writes_a_course_whose_every_artefact_passes_the_scan(published, tmp_path):
    out = tmp_path / "public"
    proc = subprocess.run([str(AUTOGRADER), "export-public", str(out), "--site", str(published["site"]),
                           "--pdf", str(published["pdf"])], cwd=ROOT, capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "没有发现私有材料" in proc.stdout and f"已导出公开版：{out}" in proc.stdout
    assert sorted(p.name for p in out.iterdir()) == ["course.pdf", "notebooks", "repository", "site"]
    assert (out / "site" / "book" / "teaching.html").is_file() and (out / "site" / "_sources" / "book" / "binary" / "roc.ipynb").is_file()
    assert sorted(p.relative_to(out / "notebooks") for p in (out / "notebooks").rglob("*.ipynb")) == \
        sorted(p.relative_to(ROOT / "exercises") for p in (ROOT / "exercises").rglob("*.ipynb"))
    assert not [p for p in out.rglob("*") if p.name in ("solutions", "autograder", "specs", "misconceptions.py")]
    report = scan([out])
    assert report.clean, [x.describe() for x in report.leaks + report.unscanned][:20]
    site_notebooks = len(list((out / "site").rglob("*.ipynb")))
    assert report.kinds["pdf"] == 2  # the PDF and its copy in the site
    assert report.kinds["html"] >= len(_pages(published["site"]))
    assert report.kinds["ipynb"] == site_notebooks + 2 * len(list((ROOT / "exercises").rglob("*.ipynb")))
    assert site_notebooks >= 30  # every page's download


def _plant_in_page(site: Path) -> Path:
    page = site / "book" / "binary" / "roc.html"
    code = "".join(f'<span class="n">{html.escape(line)}</span>\n' for line in _solution_snippet().splitlines())
    text = page.read_text(encoding="utf-8")
    page.write_text(text.replace("</article>", f'<div class="highlight"><pre>{code}</pre></div></article>', 1), encoding="utf-8")
    return page


def test_a_solution_planted_in_a_built_page_fails_the_scan_and_stops_the_export(published, tmp_path):
    site = tmp_path / "site"
    shutil.copytree(published["site"], site)
    _plant_in_page(site)
    proc = subprocess.run([str(AUTOGRADER), "scan-public", str(site)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 1
    assert "site/book/binary/roc.html：作业解答（来自 solutions/ps2_roc_auc/roc_auc.ipynb#" in proc.stdout
    out = tmp_path / "public"
    proc = subprocess.run([str(AUTOGRADER), "export-public", str(out), "--site", str(site), "--pdf", str(published["pdf"])],
                          cwd=ROOT, capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 1 and "没有导出任何内容" in proc.stderr
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["site"]  # no staging folder left


def test_a_solution_in_a_notebook_download_is_found(published, tmp_path):
    notebook = json.loads((published["site"] / "_sources" / "book" / "binary" / "roc.ipynb").read_text(encoding="utf-8"))
    notebook["cells"].append({"cell_type": "markdown", "metadata": {}, "source": "```python\n" + _solution_snippet() + "\n```"})
    (tmp_path / "roc.ipynb").write_text(json.dumps(notebook, ensure_ascii=False), encoding="utf-8")
    assert {leak.category for leak in scan([tmp_path / "roc.ipynb"]).leaks} == {Category.SOLUTION}


def test_a_solution_printed_into_a_pdf_is_found(browser, tmp_path):
    """Chromium prints the code as the book's PDF prints a listing (wrapped at the page's width); pdftotext reads it."""
    context = browser.new_context()
    try:
        page = context.new_page()
        page.set_content(f"<pre style='white-space: pre-wrap; font-size: 16pt'>{html.escape(_solution_snippet(30))}</pre>")
        page.pdf(path=str(tmp_path / "printed.pdf"), format="A6")
    finally:
        context.close()
    longest = squeeze(max(_solution_snippet(30).splitlines(), key=len))
    printed = [squeeze(line) for line in _pdftotext(tmp_path / "printed.pdf").splitlines()]
    assert len(longest) > 40 and longest not in printed  # the longest code line was wrapped onto the next
    assert Category.SOLUTION in {leak.category for leak in scan([tmp_path / "printed.pdf"]).leaks}


def test_the_instructor_edition_fails_the_scan(instructor_html):
    leaks = scan([instructor_html]).leaks
    assert any(leak.category is Category.INSTRUCTOR_ONLY and leak.artefact.endswith("book/binary/answers.html") for leak in leaks)
