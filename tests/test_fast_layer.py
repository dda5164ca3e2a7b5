"""``make test-fast`` (``pytest -m "not slow"``) runs no test that builds the book, starts a browser, a real server or
PostgreSQL, or grades through the sandbox: a test using such a fixture is slow even when its module forgot the mark."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import SLOW_FIXTURES

ROOT = Path(__file__).resolve().parents[1]
PLUGIN = """
def pytest_collection_finish(session):
    for item in session.items:
        print("FIXTURES", item.nodeid, " ".join(sorted(getattr(item, "fixturenames", ()))))
"""


#: A fast test every whole-suite collection has.
FAST_TEST = "tests/book/test_chapter_case_study.py::test_seed_numbers"


def _collected_in_a_pytest_of_its_own(tmp_path: Path) -> dict[str, tuple[set[str], bool]]:
    """Every test of the suite with its fixtures, as ``pytest -m "not slow"`` selects them (about 15 s of CPU)."""
    (tmp_path / "show_fixtures.py").write_text(PLUGIN, encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "-p", "show_fixtures",
                           "-m", "not slow"], cwd=ROOT, capture_output=True, text=True, timeout=600,
                          env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stdout[-3000:]
    return {line.split()[1]: (set(line.split()[2:]), False) for line in proc.stdout.splitlines() if line.startswith("FIXTURES ")}


@pytest.mark.slow
def test_no_fast_test_uses_a_slow_fixture(request, tmp_path):
    """Every test whose fixtures include a slow one carries the ``slow`` mark, so that ``-m "not slow"`` leaves it out.

    In a run of the whole suite (``make test``) this run's own collection is read: the marks are those every hook
    of the conftest has added, before pytest's ``-m`` would deselect (that the mark is added early enough for ``-m``
    is checked by the next test, on a suite of its own).  A run of fewer tests collects the whole suite with
    ``-m "not slow"`` in a pytest of its own and reads what is left.
    """
    items = {item.nodeid: (set(getattr(item, "fixturenames", ())), item.get_closest_marker("slow") is not None)
             for item in request.session.items}
    if FAST_TEST not in items or len(items) < 1000:  # not the whole suite
        items = _collected_in_a_pytest_of_its_own(tmp_path)
    assert len(items) > 1000  # the whole suite (or its fast layer) was collected
    assert items[FAST_TEST][1] is False  # a fast test stays fast
    assert not [n for n, (fixtures, slow) in items.items() if fixtures & SLOW_FIXTURES and not slow]


@pytest.mark.slow  # a pytest of its own (about 20 s)
def test_a_test_using_a_slow_fixture_is_slow_without_its_mark(tmp_path):
    (tmp_path / "conftest.py").write_text("import pytest\nfrom tests.conftest import pytest_collection_modifyitems  # noqa: F401\n\n"
                                          "@pytest.fixture\ndef browser():\n    return 'chromium'\n", encoding="utf-8")
    (tmp_path / "test_page.py").write_text("def test_in_the_browser(browser):\n    pass\n\ndef test_plain():\n    pass\n", encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "-m", "not slow",
                           "--rootdir", str(tmp_path), str(tmp_path)], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert [line for line in proc.stdout.splitlines() if "::" in line] == ["test_page.py::test_plain"]
