"""The grader's plain-JSON notebook reader agrees with nbformat; locked cells are compared with the source."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest

from autograder.check.prepare import prepare, read_cells

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((REPO / "solutions").rglob("*.ipynb")) + sorted((REPO / "exercises").rglob("*.ipynb")) + sorted(
    (REPO / "tests" / "autograder" / "corpus").rglob("*.ipynb"))
NOTEBOOKS = [p for p in NOTEBOOKS if "attack_not_json_notebook" not in str(p)]  # refused: see the last test
SOURCE = REPO / "solutions" / "ps1_threshold_metrics" / "threshold_metrics.ipynb"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: str(p.relative_to(REPO)))
def test_cells_match_nbformat(path):
    text = path.read_text(encoding="utf-8")
    ours = read_cells(text)
    theirs = nbformat.reads(text, as_version=4).cells
    assert [(c["cell_type"], c["source"]) for c in ours] == [(c.cell_type, c.source) for c in theirs]


def _edited(tmp_path, change) -> list[str]:
    nb = json.loads(SOURCE.read_text(encoding="utf-8"))
    locked = [c for c in nb["cells"] if c["cell_type"] == "code" and c["metadata"].get("nbgrader", {}).get("locked")
              and not c["metadata"]["nbgrader"].get("solution")]
    change(locked[0], locked[-1])
    path = tmp_path / "threshold_metrics.ipynb"
    path.write_text(json.dumps(nb), encoding="utf-8")
    return prepare(SOURCE, path).notes


def test_unchanged_locked_cells_get_no_note(tmp_path):
    assert _edited(tmp_path, lambda first, last: None) == []


def test_points_written_as_float_are_the_same_points(tmp_path):
    def change(first, last):
        for cell in (first, last):
            meta = cell["metadata"]["nbgrader"]
            if meta.get("grade"):
                meta["points"] = float(meta["points"])
    assert _edited(tmp_path, change) == []


@pytest.mark.parametrize("what", ["text", "grade_id", "points", "locked"])
def test_edited_locked_cells_are_noted(tmp_path, what):
    def change(first, last):
        cell = last if what == "points" else first
        meta = cell["metadata"]["nbgrader"]
        if what == "text":
            cell["source"] = "# 改过\n" + "".join(cell["source"])
        elif what == "points":
            meta["points"] = 99
        elif what == "locked":
            meta["locked"] = False
        else:
            meta["grade_id"] = meta["grade_id"] + "_x"
    notes = _edited(tmp_path, change)
    assert len(notes) >= 1 and all("单元" in n for n in notes), notes


@pytest.mark.parametrize("text", ["{ 不是 JSON", "[]", json.dumps({"nbformat": 3, "worksheets": []}),
                                  json.dumps({"nbformat": 4, "cells": "x"})])
def test_not_a_notebook_is_refused(text):
    with pytest.raises(ValueError):
        read_cells(text)


@pytest.mark.parametrize("odd", [["a"], {"a": 1}, 7])
def test_a_grade_id_that_is_not_a_string_is_no_cells_and_grading_goes_on(tmp_path, odd):
    """A cell before the answer cells whose nbgrader ``grade_id`` is a list (unhashable) made the preparation
    raise TypeError: the whole notebook was graded 0 ("评分程序无法处理") although its answers were right."""
    nb = json.loads(SOURCE.read_text(encoding="utf-8"))
    nb["cells"].insert(0, {"cell_type": "code", "execution_count": None, "outputs": [], "source": "x = 1",
                           "metadata": {"nbgrader": {"grade_id": odd}}})
    path = tmp_path / "threshold_metrics.ipynb"
    path.write_text(json.dumps(nb), encoding="utf-8")
    prepared = prepare(SOURCE, path)
    assert prepared.error is None and prepared.notes == []
    assert (0, "x = 1") in prepared.cells and len(prepared.cells) > 1
