"""Fixtures of the book tests: one full build of the book per test session.

The build is the Makefile's (``jupyter-book build . --warningiserror --nitpick --keep-going``) into
``_build/html`` with the shared execution cache, so after a first build a rerun takes well under a minute.
"""

from __future__ import annotations

import functools
import http.server
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
JUPYTER_BOOK = Path(sys.executable).parent / "jupyter-book"


@dataclass(frozen=True)
class BookBuild:
    returncode: int
    log: str
    seconds: float
    html: Path


@pytest.fixture(scope="session")
def book_build() -> BookBuild:
    """Build the whole book once (warnings are errors) and return its result."""
    start = time.perf_counter()
    proc = subprocess.run(
        [str(JUPYTER_BOOK), "build", ".", "--warningiserror", "--nitpick", "--keep-going"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        errors="replace",
        timeout=1800,
    )
    log = proc.stdout + proc.stderr
    artifacts = ROOT / "artifacts"
    artifacts.mkdir(exist_ok=True)
    (artifacts / "book-build.log").write_text(log, encoding="utf-8")
    return BookBuild(proc.returncode, log, time.perf_counter() - start, ROOT / "_build" / "html")


@pytest.fixture(scope="session")
def book_html(book_build: BookBuild) -> Path:
    """The built site (``_build/html``); fails the test when the build failed."""
    assert book_build.returncode == 0, "构建失败，日志见 artifacts/book-build.log:\n" + book_build.log[-4000:]
    return book_build.html


@pytest.fixture(scope="session")
def instructor_html(book_html: Path) -> Path:
    """The instructor edition (``make book-instructor``) built once into ``_build/instructor``.

    It runs after the public build (``book_html``) and reuses its execution cache.
    """
    out = ROOT / "_build" / "instructor"
    proc = subprocess.run(
        [str(JUPYTER_BOOK), "build", ".", "--path-output", str(out), "--warningiserror", "--nitpick", "--keep-going"],
        cwd=ROOT, env=dict(os.environ, COURSE_INSTRUCTOR="1"), capture_output=True, text=True, errors="replace",
        timeout=1800,
    )
    log = proc.stdout + proc.stderr
    (ROOT / "artifacts").mkdir(exist_ok=True)
    (ROOT / "artifacts" / "book-build-instructor.log").write_text(log, encoding="utf-8")
    assert proc.returncode == 0, "教师版构建失败，日志见 artifacts/book-build-instructor.log:\n" + log[-4000:]
    return out / "_build" / "html"


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:  # keep pytest output clean
        pass


@pytest.fixture(scope="session")
def site_url(book_html: Path):
    """Serve the built site on 127.0.0.1 (a free port) for the browser tests."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(book_html)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()


CHROMIUM = "/usr/bin/chromium"
#: Flags for headless Debian chromium on a machine without network access.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]


@pytest.fixture(scope="module")
def browser():
    """A headless Debian chromium (Playwright) per test module.

    Module scope, not session: a Playwright sync session left open would block the other
    browser tests of the suite (tests/demo) from starting their own.
    """
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        pytest.fail("找不到 /usr/bin/chromium（make setup 会安装 Debian 的 chromium）")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield b
        b.close()
