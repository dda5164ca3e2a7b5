"""The instructor edition (``make book-instructor``): the same book plus the solutions of 综合练习 5-7.

The build is the session fixture ``instructor_html`` (tests/book/conftest.py), which reuses the
execution cache of the public build.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.slow


def test_instructor_build_shows_the_solutions(book_html, instructor_html):
    teacher = (instructor_html / "book" / "binary" / "answers.html").read_text(encoding="utf-8")
    public = (book_html / "book" / "binary" / "answers.html").read_text(encoding="utf-8")
    for label in ("sol-binary-5", "sol-binary-6", "sol-binary-7"):
        assert label in teacher, f"the instructor edition lacks {label}"
        assert label not in public, f"the public edition leaks {label}"
