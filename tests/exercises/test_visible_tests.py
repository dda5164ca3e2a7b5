"""The visible tests tell the common confusions apart: every known mistake of the catalogue (precision vs recall,
ties in AUC, weighting in ECE and AP ...) fails a visible case of the grader and an assertion of the notebook's
visible test cell, so a student sees it before submitting; and the visible inputs are none of the hidden ones."""

from __future__ import annotations

import nbformat
import pytest

from autograder.check.diagnose import prediction
from autograder.check.misconceptions import CATALOGUE
from autograder.check.specs import all_assignments

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ASSIGNMENTS = all_assignments()
VARIANTS = [(m, fn, v) for m in CATALOGUE for fn, variants in m.impls.items() for v in variants]


def _visible(name: str):
    return [c for c in ASSIGNMENTS[name].cases if c.cell.endswith("_visible")]


@pytest.mark.parametrize("entry,function,variant", VARIANTS, ids=[f"{m.id}-{fn}-{v}" for m, fn, v in VARIANTS])
def test_every_known_mistake_fails_a_visible_case_of_the_grader(entry, function, variant):
    caught = [c.id for c in _visible(entry.assignment) if c.function == function
              and prediction(entry, function, variant, c).first_difference is not None]
    assert caught, f"{entry.id} ({function}, {variant}) passes every visible case"


def _notebook_parts(name: str) -> tuple[list[str], str]:
    """The solution's code cells (set-up and answer) and the source of its visible test cell."""
    a = ASSIGNMENTS[name]
    nb = nbformat.read(REPO / "solutions" / name / f"{a.notebook}.ipynb", as_version=4)
    code = [c.source for c in nb.cells if c.cell_type == "code" and not c.metadata.get("nbgrader", {}).get("grade")]
    visible = next(c.source for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id", "").endswith("_visible"))
    return code, visible


def _run_visible(name: str, replace: dict | None = None) -> None:
    code, visible = _notebook_parts(name)
    ns: dict = {}
    for source in code:
        exec(source, ns)  # noqa: S102 - the course's own notebook
    ns.update(replace or {})
    exec(visible, ns)  # noqa: S102


@pytest.mark.parametrize("name", [n for n in ASSIGNMENTS if any(c.kind == "ref" for c in ASSIGNMENTS[n].cases)])
def test_the_solution_passes_its_visible_test_cell(name):
    _run_visible(name)


@pytest.mark.parametrize("entry,function,variant", VARIANTS, ids=[f"{m.id}-{fn}-{v}" for m, fn, v in VARIANTS])
def test_every_known_mistake_fails_the_visible_test_cell_of_the_notebook(entry, function, variant):
    with pytest.raises(AssertionError):
        _run_visible(entry.assignment, {function: entry.impls[function][variant]})


def test_the_one_token_recall_slip_fails_the_visible_test_cell():
    """The slip that passed the old visible test (FP = FN there, so precision = recall) is now named by it."""
    code, visible = _notebook_parts("ps1_threshold_metrics")
    slipped = [s.replace('recall=_divide(tp, tp + fn, policy, "recall")', 'recall=_divide(tp, tp + fp, policy, "recall")')
               for s in code]
    assert slipped != code
    ns: dict = {}
    for source in slipped:
        exec(source, ns)  # noqa: S102
    with pytest.raises(AssertionError, match="recall 应为 0.6"):
        exec(visible, ns)  # noqa: S102


@pytest.mark.parametrize("name", sorted(ASSIGNMENTS))
def test_no_visible_input_is_a_hidden_one(name):
    """The visible cases reveal no hidden case: no hidden case of the same function has the same inputs."""
    hidden = {(c.function, repr(c.args), repr(c.kwargs)) for c in ASSIGNMENTS[name].cases
              if not c.cell.endswith("_visible") and c.kind == "ref"}
    for c in _visible(name):
        assert (c.function, repr(c.args), repr(c.kwargs)) not in hidden, c.id
