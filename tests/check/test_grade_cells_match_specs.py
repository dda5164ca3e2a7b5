"""What students see in each grade cell (case list, points) is what the grader's specs score."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autograder.check.specs import all_assignments, render_cell_listing

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
            assert f"#   {case.id}（{case.points} 分）：{case.description}" in source, (gid, case.id)
    assert sum(c["metadata"]["nbgrader"]["points"] for c in cells.values()) == a.max_score()
