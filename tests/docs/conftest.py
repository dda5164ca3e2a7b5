"""The guides built once per test run (as ``make guide`` builds them), for the tests of tests/docs/."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from .pages import build_guide


@dataclass(frozen=True)
class GuideBuild:
    returncode: int
    log: str
    html: Path


@pytest.fixture(scope="session")
def guide_build(tmp_path_factory) -> GuideBuild:
    root = tmp_path_factory.mktemp("guide")
    proc = build_guide(root / "html", root / "doctrees")
    return GuideBuild(proc.returncode, proc.stdout + proc.stderr, root / "html")


@pytest.fixture(scope="session")
def guide_html(guide_build: GuideBuild) -> Path:
    """The built guides; fails the test when the build failed (warnings are errors)."""
    assert guide_build.returncode == 0, "the guides' build failed:\n" + guide_build.log[-6000:]
    return guide_build.html


# The book's public build (the link check reads the whole site): the fixtures of tests/book, built once per run.
from tests.book.conftest import book_build, book_html  # noqa: E402,F401
