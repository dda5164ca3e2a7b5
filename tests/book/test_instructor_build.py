"""The instructor edition (``make book-instructor``): the same book plus the solutions of 综合练习 5-7.

It reuses the execution cache of the public build, so it runs after it (the ``book_html`` fixture).
"""

from __future__ import annotations

import os
import subprocess

import pytest

from .conftest import JUPYTER_BOOK, ROOT

pytestmark = pytest.mark.slow


def test_instructor_build_shows_the_solutions(book_html, tmp_path):
    env = dict(os.environ, COURSE_INSTRUCTOR="1")
    proc = subprocess.run(
        [str(JUPYTER_BOOK), "build", ".", "--path-output", str(tmp_path), "--warningiserror", "--nitpick", "--keep-going"],
        cwd=ROOT, env=env, capture_output=True, text=True, errors="replace", timeout=1800,
    )
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    teacher = (tmp_path / "_build" / "html" / "book" / "binary" / "answers.html").read_text(encoding="utf-8")
    public = (book_html / "book" / "binary" / "answers.html").read_text(encoding="utf-8")
    for label in ("sol-binary-5", "sol-binary-6", "sol-binary-7"):
        assert label in teacher, f"the instructor edition lacks {label}"
        assert label not in public, f"the public edition leaks {label}"
