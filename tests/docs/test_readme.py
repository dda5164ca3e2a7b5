"""The README is a landing page (what the course is, a screenshot, the two commands, links by reader) whose links all
resolve; the guides state facts as they are, without their history.  The README's screenshot is taken here, from the
built book: into ``artifacts/readme/``, with ``GUIDE_SCREENSHOTS=1`` (``make guide-screenshots``) into the file the
README shows."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from .pages import DOCS, REPO

README = REPO / "README.md"
SCREENSHOT = DOCS / "_static" / "readme" / "course.png"
TAKEN = SCREENSHOT if os.environ.get("GUIDE_SCREENSHOTS") == "1" else REPO / "artifacts" / "readme" / SCREENSHOT.name
MAX_LINES = 120
MARKDOWN_LINK = re.compile(r"!?\[[^\]]*\]\((?P<target>[^)\s]+)\)")
#: Words that tell a page's history instead of how things are (a dated diary of measurement passes, issue numbers).
HISTORY = re.compile(r"\bissue \d+|\b(first|second|third|fourth|fifth|sixth) pass\b|\bused to\b|\bthe next morning\b"
                     r"|\bno longer\b|\bwent from\b|\bbefore this change\b|第[一二三四五六]轮|以前的版本", re.I)


def test_the_readme_is_a_landing_page():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= MAX_LINES
    block = re.search(r"```bash\n(.*?)```", text, re.S)[1]
    assert re.search(r"^make serve\s+#", block, re.M) and re.search(r"^make test\s+#", block, re.M)
    for reader in ("Students", "Instructors", "Authors and maintainers"):
        assert f"**{reader}**" in text
    assert SCREENSHOT.relative_to(REPO).as_posix() in text and SCREENSHOT.is_file()


@pytest.mark.parametrize("name", ["README.md", "CONTRIBUTING.md"])
def test_every_link_of_the_top_level_pages_resolves(name):
    for found in MARKDOWN_LINK.finditer((REPO / name).read_text(encoding="utf-8")):
        target = found["target"].split("#")[0]
        if re.match(r"[a-z]+:", target):
            continue
        assert (REPO / target).exists(), f"{name}: {found['target']}"


def test_the_guides_do_not_narrate_history():
    hits = []
    for page in sorted(DOCS.rglob("*.md")):
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), start=1):
            if HISTORY.search(line):
                hits.append(f"{page.relative_to(REPO)}:{number}: {line.strip()[:120]}")
    assert not hits, "\n".join(hits)


def test_the_history_check_finds_a_diary():
    assert HISTORY.search("measured in the fifth pass of issue 26, the next morning")
    assert not HISTORY.search("重新评分期间，正在重评的提交以它原来的结果参与选择")


def test_the_readmes_screenshot(book_html: Path, browser):
    """The book's ROC page at 1280 px, at its first figure: the picture of the course the README shows."""
    import functools
    import http.server
    import threading

    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(book_html))
    handler.log_message = lambda *args: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        context = browser.new_context(viewport={"width": 1280, "height": 760}, locale="zh-CN")
        page = context.new_page()
        page.goto(f"http://127.0.0.1:{server.server_port}/book/binary/roc.html", wait_until="load")
        assert "ROC" in page.inner_text("h1")
        # the first figure, with the text above it: what a page of the course looks like
        page.evaluate("() => { const heading = document.querySelector('article img').closest('section').querySelector('h2, h3');"
                      " window.scrollTo(0, window.scrollY + heading.getBoundingClientRect().top - 70); }")
        page.wait_for_timeout(700)  # the theme's transitions
        TAKEN.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(TAKEN))
        context.close()
    finally:
        server.shutdown()
