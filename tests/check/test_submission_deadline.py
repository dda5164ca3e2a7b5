"""A submission that keeps timing out is stopped by its overall deadline, with the reason in the feedback."""

from __future__ import annotations

import time
from pathlib import Path

import nbformat

from autograder.check import grade_notebook
from autograder.model import Limits
from autograder.check.specs import get_assignment

REPO = Path(__file__).resolve().parents[2]


def _hostile(tmp_path: Path, name: str, cells: list[str]) -> tuple[Path, Path]:
    a = get_assignment(name)
    source = REPO / "solutions" / name / f"{a.notebook}.ipynb"
    nb = nbformat.read(source, as_version=4)
    for text in cells:
        nb.cells.append(nbformat.v4.new_code_cell(text))
    path = tmp_path / f"{a.notebook}.ipynb"
    nbformat.write(nb, path)
    return source, path


def test_every_call_hangs(tmp_path):
    # the answers are redefined to loop forever: each case would cost a call timeout and a restart
    loops = "\n".join(f"def {fn}(*args, **kwargs):\n    while True:\n        pass\n"
                      for fn in get_assignment("ps1_threshold_metrics").functions)
    source, path = _hostile(tmp_path, "ps1_threshold_metrics", [loops])
    limits = Limits(call_timeout=0.5, submission_timeout=2.0)  # 50 calls of 0.5 s each would take 25 s
    t0 = time.monotonic()
    result = grade_notebook(get_assignment("ps1_threshold_metrics"), source, path, "s", limits=limits)
    assert time.monotonic() - t0 < 2.0 + 3.0
    assert result.score == 0
    assert any("评分总时间超过上限（2 秒" in n for n in result.run_notes)
    assert any("评分总时间已用完" in c.result.reason for c in result.cases)


def test_many_endless_cells_in_assignment_5(tmp_path):
    # 13 endless cells: each costs a cell timeout and a restart, in the shared sandbox and then for each run
    source, path = _hostile(tmp_path, "ps5_testing", ["while True:\n    pass\n"] * 13)
    limits = Limits(cell_timeout=0.5, submission_timeout=2.5)  # 13 cells of 0.5 s each, and a restart after each
    t0 = time.monotonic()
    result = grade_notebook(get_assignment("ps5_testing"), source, path, "s", limits=limits)
    assert time.monotonic() - t0 < 2.5 + 4.0
    assert any("评分总时间超过上限" in n for n in result.run_notes)
