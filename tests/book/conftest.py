"""Fixtures of the book tests: one full build of the book per test run.

The build is the Makefile's (``jupyter-book build . --warningiserror --nitpick --keep-going``) into
``_build/html`` with the shared execution cache, so after a first build a rerun takes well under a minute.

Under pytest-xdist (``make test``) the workers share the builds: every ``jupyter-book`` run of the tests
holds one lock (:func:`build_lock`; the builds share the execution cache and, per edition, the doctrees),
and the public and instructor builds run once per test run, by the first worker that needs them; the
others read its result (:func:`once`).
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import http.server
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
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


def _shared_dir(tmp_path_factory) -> Path | None:
    """The folder that all pytest-xdist workers of this run share; ``None`` without xdist."""
    if os.environ.get("PYTEST_XDIST_WORKER") is None:
        return None
    return tmp_path_factory.getbasetemp().parent


@contextlib.contextmanager
def build_lock(tmp_path_factory) -> Iterator[None]:
    """Hold the lock of the test run's jupyter-book builds (no-op without xdist)."""
    shared = _shared_dir(tmp_path_factory)
    if shared is None:
        yield
        return
    with open(shared / "jupyter-book.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def once(tmp_path_factory, name: str, make: Callable[[], dict]) -> dict:
    """``make()`` (a build) run once per test run under :func:`build_lock`; later callers get its JSON result."""
    with build_lock(tmp_path_factory):
        shared = _shared_dir(tmp_path_factory)
        done = shared / f"{name}.json" if shared else None
        if done is not None and done.is_file():
            return json.loads(done.read_text(encoding="utf-8"))
        result = make()
        if done is not None:
            done.write_text(json.dumps(result), encoding="utf-8")
        return result


def _jupyter_book(*args: str, env: dict | None = None) -> tuple[int, str, float]:
    start = time.perf_counter()
    proc = subprocess.run([str(JUPYTER_BOOK), "build", ".", *args, "--warningiserror", "--nitpick", "--keep-going"],
                          cwd=ROOT, env=env, capture_output=True, text=True, errors="replace", timeout=1800)
    return proc.returncode, proc.stdout + proc.stderr, time.perf_counter() - start


@pytest.fixture(scope="session")
def book_build(tmp_path_factory) -> BookBuild:
    """Build the whole book once (warnings are errors) and return its result."""
    def build() -> dict:
        code, log, seconds = _jupyter_book()
        artifacts = ROOT / "artifacts"
        artifacts.mkdir(exist_ok=True)
        (artifacts / "book-build.log").write_text(log, encoding="utf-8")
        return {"returncode": code, "log": log, "seconds": seconds}

    result = once(tmp_path_factory, "book-build", build)
    return BookBuild(result["returncode"], result["log"], result["seconds"], ROOT / "_build" / "html")


@pytest.fixture(scope="session")
def book_html(book_build: BookBuild) -> Path:
    """The built site (``_build/html``); fails the test when the build failed."""
    assert book_build.returncode == 0, "构建失败，日志见 artifacts/book-build.log:\n" + book_build.log[-4000:]
    return book_build.html


@pytest.fixture(scope="session")
def instructor_html(book_html: Path, tmp_path_factory) -> Path:
    """The instructor edition (``make book-instructor``) built once into ``_build/instructor``.

    It runs after the public build (``book_html``) and reuses its execution cache.
    """
    out = ROOT / "_build" / "instructor"

    def build() -> dict:
        code, log, _ = _jupyter_book("--path-output", str(out), env=dict(os.environ, COURSE_INSTRUCTOR="1"))
        (ROOT / "artifacts").mkdir(exist_ok=True)
        (ROOT / "artifacts" / "book-build-instructor.log").write_text(log, encoding="utf-8")
        return {"returncode": code, "log": log}

    result = once(tmp_path_factory, "instructor-build", build)
    assert result["returncode"] == 0, "教师版构建失败，日志见 artifacts/book-build-instructor.log:\n" + result["log"][-4000:]
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
