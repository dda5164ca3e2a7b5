"""Shared pytest configuration.

Hypothesis runs with a fixed, CI-friendly profile: derandomized (the same examples
every run, so a failure is reproducible) and without a deadline (the machine is shared).

The ``browser`` fixture is one headless Debian chromium (Playwright) per test process, shared by every
module that asks for it (tests/book, tests/demo); each test opens its own context and closes it.
"""

import functools
import os
import signal
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

#: The fixtures of the grading runs under faults and at scale (PostgreSQL, the corpus slice and its reference
#: grading), shared by tests/batch, tests/service and tests/service/lti; the parallel run's units and their
#: measured seconds.
pytest_plugins = ["tests.grading_runs", "tests.parallel_units"]
# The sample corpus's generator is imported by its top-level name, as when it runs as a script.
sys.path.insert(0, str(Path(__file__).resolve().parent / "autograder"))

#: Fixtures that build the book, start a browser, a real server or PostgreSQL, or grade through the sandbox: a test
#: that uses one is slow whatever its own marks, so that ``make test-fast`` (``-m "not slow"``) stays fast.
SLOW_FIXTURES = frozenset({"book_build", "browser", "postgres", "corpus", "reference", "course", "graded", "lab", "grader"})


@pytest.hookimpl(tryfirst=True)  # before ``-m`` deselects
def pytest_collection_modifyitems(items) -> None:
    for item in items:
        if SLOW_FIXTURES & set(getattr(item, "fixturenames", ())) and item.get_closest_marker("slow") is None:
            item.add_marker(pytest.mark.slow)


# Python keeps the bytecode of what this run's processes import (pytest's workers, every `autograder` command and server,
# the sandboxes' runners), also when pytest is started directly on a machine that sets PYTHONDONTWRITEBYTECODE=1:
# compiling every import again cost each process ~2 s of CPU (the Makefile unexports it for `make test`).
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False


settings.register_profile(
    "course",
    max_examples=200,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("course")


# --- One chromium per test process -------------------------------------------------------------------------

CHROMIUM = "/usr/bin/chromium"
#: Flags for headless Debian chromium on a machine without network access.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]


class SharedChromium:
    """A headless chromium started on first use and kept for the rest of the process.

    Playwright's sync API allows one running instance per thread, so the shared one is stopped before a test
    module that starts a Playwright of its own (:func:`pytest_runtest_setup`) and started again when a module
    asks for ``browser`` after it.
    """

    def __init__(self) -> None:
        self._playwright = None
        self._browser = None

    @property
    def running(self) -> bool:
        return self._playwright is not None

    def get(self):
        if self._browser is None or not self._browser.is_connected():
            from playwright.sync_api import sync_playwright

            if not Path(CHROMIUM).exists():
                pytest.fail("找不到 /usr/bin/chromium（make setup 会安装 Debian 的 chromium）")
            self.stop()
            self._playwright = sync_playwright().start()
            self._browser = self._playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        return self._browser

    def stop(self) -> None:
        browser, playwright, self._browser, self._playwright = self._browser, self._playwright, None, None
        try:
            if browser is not None and browser.is_connected():
                browser.close()
        finally:
            if playwright is not None:
                playwright.stop()


_chromium = SharedChromium()


@functools.cache
def _starts_own_playwright(path: str) -> bool:
    return Path(path).is_file() and "sync_playwright" in Path(path).read_text(encoding="utf-8")


@pytest.hookimpl(tryfirst=True)  # before the test's fixtures are set up
def pytest_runtest_setup(item) -> None:
    if _chromium.running and _starts_own_playwright(str(item.path)):
        _chromium.stop()


def pytest_unconfigure(config) -> None:
    _chromium.stop()


def pytest_sessionfinish(session) -> None:
    """In the pytest-xdist controller, after every worker: stop the background book build if it still runs (the
    run ended early, e.g. ``-x``); tests/book/conftest.py started it, in a process group of its own."""
    if os.environ.get("PYTEST_XDIST_WORKER") is not None:
        return
    shared = session.config._tmp_path_factory.getbasetemp()
    pid_file = shared / "book-build.pid"
    if (shared / "book-build.json").exists():  # it is done
        return
    try:
        pid = int(pid_file.read_text(encoding="utf-8"))
        os.killpg(pid, signal.SIGTERM)
    except (OSError, ValueError):  # never started, or done
        pass


@pytest.fixture(scope="module")
def browser():
    """The process's headless chromium (:class:`SharedChromium`); contexts a module leaves open are closed after it."""
    shared = _chromium.get()
    yield shared
    if shared.is_connected():
        for context in shared.contexts:
            context.close()
