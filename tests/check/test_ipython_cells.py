"""Notebook syntax is IPython's, not Python's: cells are transformed by IPython's own transformer and
``display()``/``get_ipython()`` exist, so an honest cell keeps every definition (runs without the sandbox)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autograder.check import get_assignment, grade_notebook
from autograder.check.prepare import to_python

REPO = Path(__file__).resolve().parents[2]
SOURCE = REPO / "solutions" / "ps1_threshold_metrics" / "threshold_metrics.ipynb"

HABITS = {
    "display_call": "display('开始')\n",
    "line_magics": "%matplotlib inline\n%load_ext autoreload\n%autoreload 2\n",
    "shell": "!echo 你好\nfiles = !ls\n",
    "continuation_line_starting_with_percent": "WIDTH = (10\n% 3)\nHEIGHT = 10 \\\n%3\n",
    "percent_line_in_a_string": 'NOTE = """\n%这一行是字符串里的文字\n"""\n',
    "help_query": "len?\n",
    "cell_magic_on_top": "%%time\nTOTAL = sum(range(10))\n",
}


@pytest.mark.parametrize("habit", sorted(HABITS))
def test_answer_cell_with_notebook_habits_keeps_full_marks(tmp_path, habit):
    nb = json.loads(SOURCE.read_text(encoding="utf-8"))
    cell = next(c for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id") == "a1_solution")
    tail = "" if habit == "cell_magic_on_top" else "\n" + HABITS[habit]  # a cell magic must open the cell
    cell["source"] = HABITS[habit] + "".join(cell["source"]) + tail
    path = tmp_path / "threshold_metrics.ipynb"
    path.write_text(json.dumps(nb, ensure_ascii=False), encoding="utf-8")
    a = get_assignment("ps1_threshold_metrics")
    result = grade_notebook(a, SOURCE, path, "s", sandbox=False)
    assert result.score == result.max_score, [c.result.reason for c in result.failed_cases()][:3]
    assert result.cell_errors == []


def test_valid_python_is_left_as_it_is():
    for text in (HABITS["continuation_line_starting_with_percent"], HABITS["percent_line_in_a_string"], "x = 5 % 3\n"):
        assert to_python(text) == text


def test_magics_become_calls_of_get_ipython():
    assert to_python("%matplotlib inline\n") == "get_ipython().run_line_magic('matplotlib', 'inline')\n"
    assert "get_ipython().system" in to_python("!pip install numpy\n")
