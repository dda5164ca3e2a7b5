"""The question bank an instructor browses (``autograder quiz-bank``): every template, its sample variants with
their keys, and every mistake with the templates that name it and the section that explains it."""

from __future__ import annotations

import html
import re

import pytest

from autograder.cli import main
from autograder.quiz import QUIZ_MISTAKES, TEMPLATES
from autograder.quiz.bank import bank_entries, bank_html


@pytest.fixture(scope="module")
def page() -> str:
    return bank_html(bank_entries(samples=2, statistics=40), book_url="https://example.org/course/", statistics=40)


def test_every_template_is_in_the_bank_with_its_samples_and_keys(page):
    for t in TEMPLATES:
        assert f"id='t-{t.id}'" in page
        section = page[page.index(f"id='t-{t.id}'"):]
        section = section[:section.index("</section>")]
        assert section.count("class='variant'") == 2 * len(t.forms)
        assert ("正确答案" in section) and section.count("✘") >= 2 * 2 * len(t.forms)


def test_every_mistake_is_mapped_to_its_section_and_templates(page):
    table = page[page.index("常见错误与模板"):page.index("<section")]
    for m in QUIZ_MISTAKES:
        assert html.escape(m.title) in table, m.id
        assert f'href="https://example.org/course/{m.page}.html#{m.label}"' in table, m.id
    rows = re.findall(r"<tr><td>.*?</tr>", table)
    assert all("#t-" in row for row in rows)


def test_the_command_writes_the_bank(tmp_path, capsys):
    assert main(["quiz-bank", "--out", str(tmp_path / "bank"), "--samples", "1", "--statistics", "5",
                 "--book-url", "https://x.org/c"]) == 0
    written = (tmp_path / "bank" / "index.html").read_text(encoding="utf-8")
    assert written.startswith("<!DOCTYPE html>") and 'lang="zh-CN"' in written and "<script" not in written
    assert 'href="https://x.org/c/book/' in written
    assert "题库" in capsys.readouterr().out
