"""The PDF edition of the course: the single-page HTML build printed by Debian's chromium.

``make pdf`` (public) and ``make pdf-instructor`` run ``python -m coursebook.pdf [--instructor]``:

1. ``jupyter-book build . --builder singlehtml`` (notebooks come from the shared execution cache);
2. the page is served on 127.0.0.1 and opened in headless chromium (Playwright) with print media;
   its formulas were typeset at build time (book/_ext/static_math.py), so :data:`PRINT_SCRIPT` at once
   turns the web page into a book:
   cover with the links to the site, the demo and the submission service and the licences, a table of contents,
   quizzes as printed questions with an appendix of answers and per-option explanations, every
   animation as a strip of frames, the address next to every external link;
3. chromium prints it (A4, page numbers, bookmarks from the headings, fonts embedded); a first pass
   finds the page of every chapter (``pdfinfo -dests``) and a second pass prints those page numbers
   in the table of contents.  The first pass is only read for its pages: it prints the same layout with
   nothing drawn (:data:`LAYOUT_ONLY`), a third of the CPU of a drawn pass.

The PDF is written to ``_build/pdf/`` and copied next to the site (``_build/html/course.pdf``, or
``_build/instructor/_build/html/course-instructor.pdf``), where every page's download menu links to it.
"""

from __future__ import annotations

import argparse
import datetime as dt
import functools
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from . import licence
from .deployment import ROOT, SiteSettings, load_settings

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
PUBLIC_PDF = "course.pdf"
INSTRUCTOR_PDF = "course-instructor.pdf"
PRINT_CSS = Path(__file__).resolve().parent / "print.css"
PRINT_SCRIPT = Path(__file__).resolve().parent / "print.js"
TITLE = "评价二分类模型"
#: Width of the printed text column in CSS pixels: A4 (210 mm) less two 16 mm margins, at 96 px per inch.
TEXT_WIDTH_PX = round((210 - 2 * 16) / 25.4 * 96)
#: Height of a printed page's text in CSS pixels: A4 (297 mm) less the 16 mm and 18 mm margins.
TEXT_HEIGHT_PX = round((297 - 16 - 18) / 25.4 * 96)
#: The first pass's stylesheet: nothing is drawn, but ``visibility`` changes no box, so every element is on the
#: page it is on in the final print, and the chapters' named destinations are still written (measured on the
#: public edition: the same pages for all 35 destinations; 2.3 s of CPU instead of 7.3 s).
LAYOUT_ONLY = "body * { visibility: hidden !important; }"


@dataclass(frozen=True)
class Edition:
    """One edition of the book: where its builds go and what its PDF is called."""

    instructor: bool

    @property
    def build_root(self) -> Path:
        """The ``--path-output`` of the jupyter-book builds of this edition."""
        return ROOT / "_build" / "instructor" if self.instructor else ROOT

    @property
    def singlehtml(self) -> Path:
        return self.build_root / "_build" / "singlehtml"

    @property
    def site(self) -> Path:
        return self.build_root / "_build" / "html"

    @property
    def pdf_name(self) -> str:
        return INSTRUCTOR_PDF if self.instructor else PUBLIC_PDF

    @property
    def label(self) -> str:
        return "教师版" if self.instructor else "公开版"


def build_singlehtml(edition: Edition) -> Path:
    """Build the one-page HTML of ``edition`` (warnings are errors) and return its page."""
    env = dict(os.environ)
    env.pop("COURSE_INSTRUCTOR", None)
    if edition.instructor:
        env["COURSE_INSTRUCTOR"] = "1"
    cmd = [str(Path(sys.executable).parent / "jupyter-book"), "build", ".", "--builder", "singlehtml",
           "--warningiserror", "--nitpick", "--keep-going"]
    if edition.instructor:
        cmd += ["--path-output", str(edition.build_root.relative_to(ROOT))]
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, errors="replace")
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout[-6000:] + proc.stderr[-4000:])
        raise SystemExit(f"单页 HTML 构建失败（{edition.label}）")
    return printable_page(edition)


def printable_page(edition: Edition) -> Path:
    """The single page, copied to the output root (its links are relative to the root)."""
    page = edition.singlehtml / "book" / "intro.html"
    if not page.is_file():
        raise SystemExit(f"找不到单页 HTML：{page}（先运行 make pdf）")
    target = edition.singlehtml / "print.html"
    shutil.copy2(page, target)
    return target


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def serve(directory: Path) -> Iterator[str]:
    """Serve ``directory`` on 127.0.0.1 (a free port) while the block runs; yield the base URL."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(directory)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()


def toc_outline(toc_file: Path = ROOT / "_toc.yml") -> tuple[str, list[dict]]:
    """The root document and the parts of ``_toc.yml``: ``[{caption, entries: [{doc, level}]}]``.

    Chapters have level 0, their sections level 1 (the order is the book's order).
    """
    import yaml

    toc = yaml.safe_load(toc_file.read_text(encoding="utf-8"))
    parts = [{"caption": "", "entries": [{"doc": toc["root"], "level": 0}]}]
    for part in toc.get("parts", []):
        entries = []
        for chapter in part.get("chapters", []):
            entries.append({"doc": chapter["file"], "level": 0})
            entries += [{"doc": s["file"], "level": 1} for s in chapter.get("sections", [])]
        parts.append({"caption": part.get("caption", ""), "entries": entries})
    return toc["root"], parts


def yaml_config(config_file: Path = ROOT / "_config.yml") -> dict:
    """The book's ``_config.yml`` (its author and copyright year go on the cover with the licences)."""
    import yaml

    return yaml.safe_load(config_file.read_text(encoding="utf-8"))


def chapter_pages(pdf: Path) -> dict[str, int]:
    """Page number of every named destination ``toc-*`` in ``pdf`` (from ``pdfinfo -dests``)."""
    out = subprocess.run(["pdfinfo", "-dests", str(pdf)], capture_output=True, text=True, check=True).stdout
    pages: dict[str, int] = {}
    for line in out.splitlines():
        match = re.match(r"\s*(\d+)\s+\[.*?\]\s+\"?(toc-[\w-]+)\"?", line)
        if match:
            pages[match.group(2)] = int(match.group(1))
    return pages


def _footer(edition: Edition) -> str:
    return ('<div style="width:100%;font-size:8pt;color:#555;padding:0 14mm;display:flex;'
            'justify-content:space-between;font-family:\'Noto Sans CJK SC\',sans-serif">'
            f'<span>{TITLE}（{edition.label}）</span>'
            '<span><span class="pageNumber"></span> / <span class="totalPages"></span></span></div>')


def print_pdf(page_url: str, out: Path, edition: Edition, settings: SiteSettings) -> dict:
    """Open the single page, turn it into a book (:data:`PRINT_SCRIPT`) and print it to ``out``.

    Returns the statistics that the print script reports (numbers of quizzes, animations, ...).
    """
    from playwright.sync_api import sync_playwright

    root, parts = toc_outline()
    book = yaml_config()
    options = {
        "rootDoc": root,
        "toc": parts,
        "title": TITLE,
        "edition": edition.label,
        "date": dt.date.today().isoformat(),
        "siteUrl": settings.site_url,
        "demoUrl": settings.demo_url,
        "submitUrl": settings.submit_url,
        "pdfUrl": settings.site_url + edition.pdf_name,
        "licence": licence.notice(book["author"], str(book["copyright"])),
    }
    pdf_kwargs = dict(format="A4", print_background=True, outline=True, tagged=True, display_header_footer=True,
                      header_template="<span></span>", footer_template=_footer(edition),
                      margin={"top": "16mm", "bottom": "18mm", "left": "16mm", "right": "16mm"})
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            tab = browser.new_page(viewport={"width": 900, "height": 1200})
            problems: list[str] = []
            tab.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
            tab.on("requestfailed", lambda req: None if req.url.endswith("/searchindex.js")  # no search in print
                   else problems.append(f"request failed: {req.url}"))
            tab.goto(page_url, wait_until="load", timeout=120_000)
            tab.emulate_media(media="print")
            tab.add_style_tag(content=PRINT_CSS.read_text(encoding="utf-8"))
            tab.add_script_tag(content=PRINT_SCRIPT.read_text(encoding="utf-8"))
            stats = tab.evaluate("async (o) => await window.coursePrint(o)", options)
            tab.wait_for_load_state("networkidle")
            tab.evaluate("() => document.fonts.ready.then(() => true)")
            tab.set_viewport_size({"width": TEXT_WIDTH_PX, "height": 1200})  # the printed text column
            stats["overflow"] = tab.evaluate("() => window.coursePrintOverflow()")
            # a code cell (or table, figure) kept whole must fit a page; a longer one may break
            stats["tallBlocks"] = tab.evaluate("(h) => window.coursePrintTallBlocks(h)", TEXT_HEIGHT_PX)
            # pass 1: where does each chapter start?  pass 2: print those pages in the table of contents
            with tempfile.TemporaryDirectory() as tmp:
                first = Path(tmp) / "pass1.pdf"
                hidden = tab.add_style_tag(content=LAYOUT_ONLY)
                # same pages: the margins hold the footer, and tags, bookmarks and backgrounds move no box
                tab.pdf(path=str(first), **{**pdf_kwargs, "tagged": False, "outline": False, "print_background": False,
                                            "display_header_footer": False})
                hidden.evaluate("style => style.remove()")
                pages = chapter_pages(first)
            tab.evaluate("(pages) => window.coursePrintPageNumbers(pages)", pages)
            out.parent.mkdir(parents=True, exist_ok=True)
            tab.pdf(path=str(out), **pdf_kwargs)
            if problems:
                raise SystemExit("打印页面时出错：\n" + "\n".join(problems[:20]))
        finally:
            browser.close()
    stats["toc_pages"] = pages
    return stats


def make_pdf(instructor: bool = False, *, build: bool = True) -> Path:
    """Build one edition's PDF; return its path under ``_build/pdf/``."""
    edition = Edition(instructor)
    settings = load_settings()
    page = build_singlehtml(edition) if build else printable_page(edition)
    out = ROOT / "_build" / "pdf" / edition.pdf_name
    with serve(edition.singlehtml) as base:
        stats = print_pdf(f"{base}/{page.name}", out, edition, settings)
    (out.with_suffix(".json")).write_text(json.dumps(stats, ensure_ascii=False, indent=1), encoding="utf-8")
    if edition.site.is_dir():
        shutil.copy2(out, edition.site / edition.pdf_name)
    return out


def main(argv: list[str] | None = None) -> None:
    """``python -m coursebook.pdf [--instructor] [--no-build]``."""
    parser = argparse.ArgumentParser(prog="python -m coursebook.pdf", description="打印课程的 PDF 版")
    parser.add_argument("--instructor", action="store_true", help="教师版（含综合练习 5-7 的解答）")
    parser.add_argument("--no-build", action="store_true", help="不重新构建单页 HTML，直接打印")
    args = parser.parse_args(argv)
    out = make_pdf(args.instructor, build=not args.no_build)
    print(f"PDF：{out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
