"""An LMS download of flat, renamed notebooks (nbgrader ``zip_collect`` style names), graded like the folder
layout; junk and unsafe entries are not extracted, and are reported with the exit status 3."""

from __future__ import annotations

import csv
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ASSIGNMENT = "ps1_threshold_metrics"
NOTEBOOK = "threshold_metrics.ipynb"

pytestmark = pytest.mark.slow


def test_lms_zip_is_collected_and_graded(tmp_path):
    archive = tmp_path / "downloads.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        # LMS names: <student>_<file> and <student>_attempt_<date>_<file>; plus junk that must be reported.
        zf.write(ROOT / "solutions" / ASSIGNMENT / NOTEBOOK, f"s001_{NOTEBOOK}")
        zf.write(ROOT / "exercises" / ASSIGNMENT / NOTEBOOK, f"s002_attempt_2026-05-01T10-00-00_{NOTEBOOK}")
        zf.writestr("../escape.ipynb", "{}")
        zf.writestr("readme.txt", "not a notebook")
    out = tmp_path / "out"
    run = subprocess.run(
        [sys.executable, "-m", "autograder.cli", "grade", str(archive), "--out", str(out),
         "--assignment", ASSIGNMENT, "--quiet"],
        capture_output=True, text=True, timeout=600, cwd=ROOT,
    )
    assert run.returncode == 3, run.stderr[-3000:]
    with open(out / "grades.csv", newline="", encoding="utf-8") as fh:
        rows = {(r["student_id"], r["assignment"]): r for r in csv.DictReader(fh)}
    assert float(rows["s001", ASSIGNMENT]["score"]) == float(rows["s001", ASSIGNMENT]["max_score"]) > 0
    assert float(rows["s002", ASSIGNMENT]["score"]) == 0.0
    assert rows["s002", ASSIGNMENT]["submitted_at"] == "2026-05-01 10:00:00"
    assert (out / "feedback" / "s001" / ASSIGNMENT).is_dir()
    assert (out / "feedback" / "s002" / ASSIGNMENT).is_dir()
    assert not (tmp_path / "escape.ipynb").exists()
    assert "'downloads.zip:../escape.ipynb'：不安全的路径" in run.stderr
    assert "'downloads.zip:readme.txt'：无法从文件名识别学生" in run.stderr
