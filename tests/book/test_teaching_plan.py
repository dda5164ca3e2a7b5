"""The lecturer's plan (the page 教学建议, ``coursebook.teaching``): the calendar covers the book, the assignments
follow the lectures they need, the 周志华 table points at real sections, the workload is measured on the solutions.

Checked on the sources, before any build; the rendered page is checked in tests/book/test_public_course.py.
"""

from __future__ import annotations

import dataclasses
import re

import pytest
import yaml

from autograder.check.specs import all_assignments
from coursebook import teaching as plan

from .prose import ROOT


def _labels() -> set[str]:
    return {m for p in (ROOT / "book").rglob("*.md") for m in re.findall(r"^\(([\w-]+)\)=\s*$", p.read_text(encoding="utf-8"), re.M)}


def test_the_plan_is_sound():
    assert plan.plan_problems(assignment_names=sorted(all_assignments())) == []
    assert len(plan.CALENDAR) == 16 and plan.CALENDAR[-1].exam


def test_the_plan_check_finds_each_kind_of_mistake():
    """Not vacuous: a page twice, a page missing, an assignment too early or due after the lectures, the exam moved."""
    weeks = list(plan.CALENDAR)
    twice = tuple(dataclasses.replace(w, pages=w.pages + ("book/binary/roc",)) if w.number == 2 else w for w in weeks)
    assert any("book/binary/roc 安排了 2 次" in p for p in plan.plan_problems(twice))
    missing = tuple(dataclasses.replace(w, pages=()) if w.number == 4 else w for w in weeks)
    assert any("book/binary/roc 安排了 0 次" in p for p in plan.plan_problems(missing))
    early = (dataclasses.replace(plan.ASSIGNMENTS[1], release=3),) + plan.ASSIGNMENTS[2:]
    assert any("早于它需要的" in p for p in plan.plan_problems(assignments=early))
    late = (dataclasses.replace(plan.ASSIGNMENTS[0], due=16),)
    assert any("截止周" in p for p in plan.plan_problems(assignments=late))
    no_exam = tuple(dataclasses.replace(w, exam=False) for w in weeks)
    assert any("考试" in p for p in plan.plan_problems(no_exam))
    assert any("不一致" in p for p in plan.plan_problems(assignment_names=["ps1_threshold_metrics"]))


def test_every_quiz_group_of_the_book_is_in_the_calendar():
    groups = plan.quiz_groups(plan.lectured_pages())
    planned = [g for w in plan.CALENDAR for p in w.pages for g in groups[p]]
    assert sorted(planned) == sorted(g for gs in groups.values() for g in gs)
    numbers = sorted(q["number"] for q in yaml.safe_load((plan.ROOT / "book" / "quizzes" / "quizzes.yml").read_text(encoding="utf-8"))
                     ["quizzes"])
    assert sorted(n for a, b in planned for n in range(a, b + 1)) == numbers  # every quiz of the data, once


def test_the_calendar_table_has_a_row_per_week_and_names_every_assignment_twice():
    table = plan.calendar_markdown()
    assert table.count("\n| ") == len(plan.CALENDAR)  # a row per week (the header opens the table, the separator is "|---")
    for slot in plan.ASSIGNMENTS:
        n = int(slot.name[2])
        assert f"发布作业 {n}" in table and f"作业 {n} 截止" in table


def test_the_zhou_table_points_at_sections_of_the_book_and_words_of_the_glossary():
    labels, terms = _labels(), plan.glossary_terms()
    for entry in plan.ZHOU_CH2:
        assert entry.label in labels, entry
        plan.course_words(entry, terms)  # an unknown glossary id raises
    zhou = " ".join(e.zhou for e in plan.ZHOU_CH2)
    for word in ("查准率", "查全率", "真正例率", "假正例率", "代价曲线", "精度", "McNemar", "自助法"):
        assert word in zhou
    with pytest.raises(KeyError):
        plan.course_words(plan.ZhouTerm("x", "2.1", "glossary:no-such-term", "binary-accuracy"), terms)


def test_the_workload_is_measured_on_the_solutions():
    loads = {w.name: w for w in plan.workload()}
    assert sorted(loads) == sorted(all_assignments())
    for w in loads.values():
        assert w.solution_lines >= 20 and w.instruction_chars >= 500
        assert 0 < w.hours_fast <= w.hours_slow and (w.hours_slow * 2).is_integer()
        coding = w.solution_lines / plan.LINES_PER_HOUR[1]
        assert w.hours_slow >= coding + plan.OVERHEAD_HOURS  # the slow estimate includes all of the slow coding
