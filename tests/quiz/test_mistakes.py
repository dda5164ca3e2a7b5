"""The named mistakes: one place for each (the grader's catalogue or the quiz's list, never both), every one used,
and every section they and the templates link to exists with the heading they give."""

from __future__ import annotations

from pathlib import Path

import pytest

from autograder.check.misconceptions import CATALOGUE
from autograder.quiz import QUIZ_MISTAKES, TEMPLATES, make_variant, variant_seed
from autograder.quiz.mistakes import ALL_MISTAKES

ROOT = Path(__file__).resolve().parents[2]


def _heading(page: str, label: str) -> str:
    lines = (ROOT / f"{page}.md").read_text(encoding="utf-8").splitlines()
    at = lines.index(f"({label})=")
    return next(line for line in lines[at + 1:] if line.startswith("#")).lstrip("#").strip()


def test_no_mistake_is_defined_twice():
    ids = [m.id for m in QUIZ_MISTAKES]
    assert len(ids) == len(set(ids))
    assert not set(ids) & {m.id for m in CATALOGUE}
    titles = [m.title for m in ALL_MISTAKES.values()]
    assert len(titles) == len(set(titles))


@pytest.mark.parametrize("mistake", QUIZ_MISTAKES, ids=lambda m: m.id)
def test_a_quiz_mistake_links_an_existing_section_with_its_heading(mistake):
    assert _heading(mistake.page, mistake.label) == mistake.section
    assert mistake.url() == f"{mistake.page}.html#{mistake.label}"


@pytest.mark.parametrize("template", TEMPLATES, ids=lambda t: t.id)
def test_a_template_practises_an_existing_section(template):
    assert _heading(f"book/{template.page}", template.label)


def test_every_quiz_mistake_is_named_by_some_variant():
    named = {m.id for t in TEMPLATES for i in range(40)
             for m in make_variant(t, variant_seed("c", f"s{i}", t.id, 0)).mistakes}
    assert {m.id for m in QUIZ_MISTAKES} <= named
