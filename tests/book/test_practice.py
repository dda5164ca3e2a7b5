"""Practice with feedback in every section of chapters 2-5, for a reader studying alone (issue 41).

Each section page ends with its own practice: a section ``## 本节练习`` with one or more exercises, each
followed by a worked answer the reader opens after trying (a public ``{dropdown}``, never instructor-only),
whose numbers come from a hidden code cell of the page that computes and asserts them; then the section's
quizzes (their keys are recomputed in test_quiz_keys.py).  A program printed in an answer is the code that
ran: it appears verbatim in one of the page's code cells.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BOOK = ROOT / "book"
#: every page of chapters 2-5 that teaches something (the two overview pages only announce their chapter)
PRACTICE_PAGES = [
    "ap_auc/ap", "ap_auc/auc", "ap_auc/dprime", "ap_auc/det", "ap_auc/cost_curves", "ap_auc/program",
    "calibration/definition", "calibration/ece", "calibration/beyond_mean", "calibration/recalibration",
    "methodology/index", "methodology/resampling", "methodology/estimates", "methodology/intervals",
    "methodology/tests", "methodology/bias_variance", "methodology/multiclass", "methodology/multiclass_depth",
    "methodology/regression", "case_study/index",
]
OVERVIEW_PAGES = {"ap_auc/index", "calibration/index"}
_CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(.*?)^```$", re.S | re.M)
_EXERCISE = re.compile(r"^```\{exercise\}[^\n]*\n:label: ([\w-]+)\n(.*?)^```$", re.S | re.M)
_DROPDOWN = re.compile(r"^(:{3,})\{dropdown\} 参考解答\n(.*?)^\1$", re.S | re.M)
_STATIC_PYTHON = re.compile(r"^[ \t]*```python\n(.*?)^[ \t]*```$", re.S | re.M)


def _text(page: str) -> str:
    return (BOOK / f"{page}.md").read_text(encoding="utf-8")


def _practice(page: str) -> str:
    """The page's ``## 本节练习`` section, up to the next heading of the same level."""
    text = _text(page)
    match = re.search(r"^\(([a-z0-9-]+-practice)\)=\n## 本节练习\n(.*?)(?=^\([a-z0-9-]+\)=\n## |\Z)", text, re.S | re.M)
    assert match, f"{page}.md 没有带标签的“本节练习”一节"
    return match.group(2)


def _chapters_pages() -> set[str]:
    toc = (ROOT / "_toc.yml").read_text(encoding="utf-8")
    return set(re.findall(r"file: book/((?:ap_auc|calibration|methodology|case_study)/\w+)", toc))


def test_every_page_of_chapters_2_to_5_is_listed():
    assert _chapters_pages() == set(PRACTICE_PAGES) | OVERVIEW_PAGES


@pytest.mark.parametrize("page", PRACTICE_PAGES)
def test_each_exercise_has_a_public_worked_answer(page):
    section = _practice(page)
    exercises = list(_EXERCISE.finditer(section))
    assert exercises, f"{page}：本节练习里没有题目"
    # an answer follows each exercise, before the next one
    bounds = [m.start() for m in exercises] + [len(section)]
    for m, end in zip(exercises, bounds[1:]):
        answers = list(_DROPDOWN.finditer(section, m.end(), end))
        assert len(answers) == 1, f"{page}：{m.group(1)} 后面应恰好有一个“参考解答”折叠块"
        assert len(answers[0].group(2).strip()) > 80, f"{page}：{m.group(1)} 的参考解答太短"
    assert "instructor-only" not in section, f"{page}：本节练习的解答必须公开"


@pytest.mark.parametrize("page", PRACTICE_PAGES)
def test_the_numbers_of_each_answer_are_computed_and_checked(page):
    """Each exercise is followed by a hidden code cell that computes its answer and asserts it."""
    section = _practice(page)
    exercises = list(_EXERCISE.finditer(section))
    bounds = [m.start() for m in exercises] + [len(section)]
    for m, end in zip(exercises, bounds[1:]):
        cells = [c for c in _CELL.finditer(section, m.end(), end)]
        worked = [c.group(1) for c in cells if f"# worked answer of {m.group(1)}" in c.group(1)]
        assert len(worked) == 1, f"{page}：{m.group(1)} 应有一个计算解答的代码单元（# worked answer of {m.group(1)}）"
        assert ":tags: [remove-cell]" in worked[0] and "assert" in worked[0], f"{page}：{m.group(1)} 的解答代码要隐藏并带断言"


@pytest.mark.parametrize("page", PRACTICE_PAGES)
def test_a_program_printed_in_an_answer_is_the_code_that_ran(page):
    text = _text(page)
    code = "\n".join(c.group(1) for c in _CELL.finditer(text))
    for answer in _DROPDOWN.finditer(text):
        for block in _STATIC_PYTHON.finditer(answer.group(2)):
            lines = [line for line in block.group(1).splitlines() if line.strip()]
            indent = min(len(line) - len(line.lstrip()) for line in lines)
            snippet = "\n".join(line[indent:] for line in lines)
            assert snippet in code, f"{page}：参考解答里的程序与页面实际运行的代码不一致"


@pytest.mark.parametrize("page", PRACTICE_PAGES)
def test_the_section_has_its_own_quizzes(page):
    groups = [(int(a), int(b)) for a, b in re.findall(r"```\{quiz-group\} (\d+)-(\d+)", _text(page))]
    assert [g for g in groups if g[0] >= 25], f"{page}：缺少本节的即时练习"


def test_labels_of_the_new_exercises_do_not_take_the_chapter_exercises_prefixes():
    """The chapter-end exercises (ex-apauc-1 ...) keep their numbering; a section's exercises use a label of their own."""
    labels = [m.group(1) for p in PRACTICE_PAGES for m in _EXERCISE.finditer(_practice(p))]
    assert len(labels) == len(set(labels)) >= len(PRACTICE_PAGES)
    assert not [lab for lab in labels if re.fullmatch(r"ex-(apauc|cal|meth|cs|binary)-\d+", lab)]
