"""The guides build with warnings as errors, and their reference is the program's: every command's ``--help``
as the program prints it, every ``course.yml`` key the parser accepts."""

from __future__ import annotations

import html
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "docs" / "_ext"))

from guide_reference import COLUMNS, command_id, commands  # noqa: E402

from autograder.service.policy import KEYS  # noqa: E402

from .pages import REPO  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("guide")]
AUTOGRADER = REPO / ".venv" / "bin" / "autograder"
COMMANDS = [path for path, _, _ in commands()]


def test_the_guides_build_without_a_warning(guide_build):
    assert guide_build.returncode == 0, guide_build.log[-6000:]
    assert "WARNING" not in guide_build.log and "ERROR" not in guide_build.log, guide_build.log[-6000:]


def section_text(page: str, anchor: str) -> str:
    """The text of the ``--help`` block in the section ``anchor`` of a built page."""
    found = re.search(rf'<section id="{re.escape(anchor)}">.*?<pre>(.*?)</pre>', page, re.S)
    assert found, f"no section {anchor} with a literal block"
    return html.unescape(re.sub(r"<[^>]+>", "", found[1]))


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: " ".join(p) or "autograder")
def test_the_reference_is_what_help_prints(guide_html, path):
    page = (guide_html / "instructors" / "reference" / "commands.html").read_text(encoding="utf-8")
    env = {**os.environ, "COLUMNS": str(COLUMNS)}
    printed = subprocess.run([str(AUTOGRADER), *path, "--help"], capture_output=True, text=True, env=env, timeout=120)
    assert printed.returncode == 0, printed.stderr
    assert section_text(page, command_id(path)) == printed.stdout


def test_every_course_yml_key_is_in_the_reference(guide_html):
    page = html.unescape((guide_html / "instructors" / "reference" / "course-yml.html").read_text(encoding="utf-8"))
    for key in KEYS:
        assert f">{key.path}<" in page, key.path


def test_the_guides_are_searchable_in_chinese(guide_html):
    """Sphinx's Chinese search (jieba, the book's word list) indexes the guides' words, Chinese and English."""
    import json

    text = (guide_html / "searchindex.js").read_text(encoding="utf-8")
    index = json.loads(text[text.index("(") + 1:text.rindex(")")])
    for word in ("访问码", "迟交", "沙箱", "回传", "sandbox"):
        assert word in index["terms"], word
