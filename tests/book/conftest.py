"""Fixtures of the book tests: one full build of the book per test run.

The build is the Makefile's (``jupyter-book build . --warningiserror --nitpick --keep-going``) into
``_build/html`` with the shared execution cache, so after a first build a rerun takes well under a minute.

Under pytest-xdist (``make test``) the workers share the builds.  Each build runs once per test run, by the
first process that needs it; the others wait for it and read its result (:func:`once`).  The public build
starts in the background as soon as the tests are collected (:func:`pytest_collection_finish`), so that the
workers run the tests that need no book meanwhile.  Two builds that share a folder hold that folder's lock
(:func:`build_lock`): the public site and the public PDF's single page share ``_build/.doctrees`` and
``_build/jupyter_execute``, the instructor site and PDF those under ``_build/instructor``.  Every other build
starts after the public one (its fixtures ask for ``book_html``), when the execution cache holds every
notebook, which they only read: the editions' builds run side by side.
"""

from __future__ import annotations

import contextlib
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

from tests.file_lock import file_lock
from tests.parallel_units import BUILD_CACHE_KEY

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


#: The build folders that two builds of a run share: the public edition's and the instructor edition's.
EDITIONS = ("public", "instructor")


@contextlib.contextmanager
def _lock(shared: Path | None, edition: str) -> Iterator[None]:
    if edition not in EDITIONS:
        raise ValueError(f"unknown edition {edition!r}: one of {EDITIONS}")
    if shared is None:
        yield
        return
    with file_lock(shared / f"jupyter-book-{edition}.lock"):
        yield


def build_lock(tmp_path_factory, edition: str = "public"):
    """Hold the lock of ``edition``'s build folders for this test run (no-op without xdist)."""
    return _lock(_shared_dir(tmp_path_factory), edition)


def _once_in(shared: Path | None, name: str, make: Callable[[], dict], edition: str) -> dict:
    with _lock(shared, edition):
        done = shared / f"{name}.json" if shared else None
        if done is not None and done.is_file():
            return json.loads(done.read_text(encoding="utf-8"))
        result = make()
        if done is not None:
            done.write_text(json.dumps(result), encoding="utf-8")
        return result


def once(tmp_path_factory, name: str, make: Callable[[], dict], edition: str = "public") -> dict:
    """``make()`` (a build) run once per test run under ``edition``'s :func:`build_lock`; later callers get its JSON result."""
    return _once_in(_shared_dir(tmp_path_factory), name, make, edition)


def _jupyter_book(*args: str, env: dict | None = None) -> tuple[int, str, float]:
    start = time.perf_counter()
    proc = subprocess.run([str(JUPYTER_BOOK), "build", ".", *args, "--warningiserror", "--nitpick", "--keep-going"],
                          cwd=ROOT, env=env, capture_output=True, text=True, errors="replace", timeout=1800)
    return proc.returncode, proc.stdout + proc.stderr, time.perf_counter() - start


def build_public() -> dict:
    """The public build (``make book``); its log goes to ``artifacts/book-build.log``."""
    code, log, seconds = _jupyter_book()
    artifacts = ROOT / "artifacts"
    artifacts.mkdir(exist_ok=True)
    (artifacts / "book-build.log").write_text(log, encoding="utf-8")
    return {"returncode": code, "log": log, "seconds": seconds}


#: In the run's shared folder: the process id of the public build started in the background.
BACKGROUND = "book-build.pid"


def pytest_collection_finish(session) -> None:
    """In a pytest-xdist worker whose tests include one that needs the book: start the public build in the
    background (once per run), while the workers run the tests that need no book."""
    shared = _shared_dir(session.config._tmp_path_factory)
    if shared is None or not any("book_build" in getattr(item, "fixturenames", ()) for item in session.items):
        return
    try:
        fd = os.open(shared / BACKGROUND, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:  # another worker started it
        return
    with os.fdopen(fd, "w") as pid:
        proc = subprocess.Popen([sys.executable, "-m", "tests.book.conftest", str(shared)], cwd=ROOT,
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True)
        pid.write(str(proc.pid))


@pytest.fixture(scope="session")
def book_build(tmp_path_factory, request) -> BookBuild:
    """Build the whole book once (warnings are errors) and return its result."""
    result = once(tmp_path_factory, "book-build", build_public)
    if result["returncode"] == 0 and getattr(request.config, "cache", None) is not None:
        request.config.cache.set(BUILD_CACHE_KEY, round(result["seconds"]))  # the next run's order of the units
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

    result = once(tmp_path_factory, "instructor-build", build, "instructor")
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


if __name__ == "__main__":  # the background build of pytest_collection_finish: python -m tests.book.conftest SHARED
    _once_in(Path(sys.argv[1]), "book-build", build_public, "public")
