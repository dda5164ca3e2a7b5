"""What students see in each grade cell (case list, points) is what the grader's specs score."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from autograder.check.specs import all_assignments, listing_line, render_cell_listing

REPO = Path(__file__).resolve().parents[2]
ASSIGNMENTS = all_assignments()


def _grade_cells(path: Path) -> dict[str, dict]:
    nb = json.loads(path.read_text(encoding="utf-8"))
    return {c["metadata"]["nbgrader"]["grade_id"]: c for c in nb["cells"]
            if c.get("metadata", {}).get("nbgrader", {}).get("grade")}


@pytest.mark.parametrize("folder", ["solutions", "exercises"])
@pytest.mark.parametrize("name", sorted(ASSIGNMENTS))
def test_grade_cells_list_exactly_the_scored_cases(folder, name):
    a = ASSIGNMENTS[name]
    cells = _grade_cells(REPO / folder / name / f"{a.notebook}.ipynb")
    spec = a.cells()
    assert sorted(cells) == sorted(spec)
    for gid, cell in cells.items():
        assert cell["metadata"]["nbgrader"]["points"] == sum(c.points for c in spec[gid]), gid
        source = "".join(cell["source"])
        if "hidden" in gid:
            assert render_cell_listing(a, gid) in source, gid
        for case in spec[gid]:
            assert listing_line(a, case) in source, (gid, case.id)
    assert sum(c["metadata"]["nbgrader"]["points"] for c in cells.values()) == a.max_score()


@pytest.mark.parametrize("name", sorted(ASSIGNMENTS))
def test_the_points_table_of_the_introduction_is_the_specs(name):
    """The table a student reads first (total, hidden points, one row per grade cell) adds up as the grader scores."""
    a = ASSIGNMENTS[name]
    nb = json.loads((REPO / "solutions" / name / f"{a.notebook}.ipynb").read_text(encoding="utf-8"))
    intro = "".join(nb["cells"][0]["source"])
    hidden = sum(c.points for c in a.cases if not c.cell.endswith("_visible"))
    assert f"**分值**（共 {a.max_score()} 分，其中隐藏测试 {hidden} 分）" in intro
    rows = re.findall(r"^\| `(\w+)` \| (可见|隐藏)测试 \| (\d+) \|$", intro, flags=re.M)
    assert [(gid, int(points)) for gid, _, points in rows] == [(gid, sum(c.points for c in cases)) for gid, cases in a.cells().items()]


def test_basic_cases_are_marked_in_the_listing_of_their_cell():
    """A student can tell the basic cases (the validation rule's) apart: each is marked in its grade cell's list."""
    a = ASSIGNMENTS["ps1_threshold_metrics"]
    seed4 = next(c for c in a.cases if c.id == "random.seed4")
    assert "（2 分，基本用例）" in render_cell_listing(a, seed4.cell)
    assert "random.seed1（2 分）：" in render_cell_listing(a, seed4.cell)
