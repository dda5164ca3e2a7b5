"""exercises/ must equal what nbgrader generate_assignment makes from solutions/ today."""

from pathlib import Path

import pytest

from autograder.commands.exercises import stale_exercises
from autograder.check.specs import all_assignments

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow  # nbgrader generate_assignment for every assignment


def test_exercises_are_fresh():
    stale = stale_exercises(REPO / "solutions", REPO / "exercises", sorted(all_assignments()))
    assert not stale, f"exercises/ 已过期，请运行 autograder generate：{stale}"
