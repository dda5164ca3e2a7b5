"""The assignment notebooks run in Jupyter as they are (nbval, ``--nbval-lax``): every instructor notebook in
``solutions/`` runs clean and passes its own visible tests; every released notebook in ``exercises/`` runs up
to its answer cells (the set-up a student gets works)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


def _nbval(folder: str, *extra: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "nbval", "--nbval-lax", "-p", "no:cacheprovider", *extra,
                           "--rootdir", str(cwd), str(REPO / folder)], cwd=cwd, capture_output=True, text=True, timeout=600)


def test_instructor_notebooks_run_clean_and_pass_their_visible_tests(tmp_path):
    run = _nbval("solutions", cwd=tmp_path)
    assert run.returncode == 0, run.stdout[-3000:]
    assert " passed" in run.stdout and "failed" not in run.stdout


def test_released_notebooks_run_up_to_their_answer_cells(tmp_path):
    run = _nbval("exercises", "-p", "nbval_until_answer", cwd=Path(__file__).parent)
    assert run.returncode == 0, run.stdout[-3000:]
    assert " deselected" in run.stdout  # the answer cells and what follows them were not run
