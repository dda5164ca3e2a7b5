"""Time grading one submission with autograder vs plain ``nbgrader autograde`` of the same notebook.

Usage: ``.venv/bin/python bench/bench_grading.py [ASSIGNMENT ...]`` (default: ps1_threshold_metrics ps2_roc_auc).
For each assignment the instructor solution is graded (a) by :func:`grade_notebook` in the
bubblewrap sandbox, all hidden cases, and (b) by ``nbgrader autograde`` (kernel execution of
the notebook, no sandbox, only the visible asserts are real tests).  Prints seconds and the ratio.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from autograder.store import gradebook as nbgrader_glue  # noqa: E402
from autograder.check import grade_notebook  # noqa: E402
from autograder.check.specs import all_assignments  # noqa: E402

REPEATS = 3


def ours(name: str) -> float:
    a = all_assignments()[name]
    src = REPO / "solutions" / name / f"{a.notebook}.ipynb"
    times = []
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        r = grade_notebook(a, src, src, "bench")
        times.append(time.perf_counter() - t0)
        assert r.score == r.max_score
    return statistics.median(times)


def plain_nbgrader(name: str) -> float:
    a = all_assignments()[name]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        db = f"sqlite:///{root / 'gradebook.db'}"
        nbgrader_glue.generate(REPO / "solutions", [name], root, db)
        (root / "nbgrader_config.py").write_text(f"c = get_config()\nc.CourseDirectory.root = {str(root)!r}\n"
                                                 f"c.CourseDirectory.db_url = {db!r}\n")
        times = []
        for i in range(REPEATS):
            sub = root / "submitted" / f"s{i}" / name
            sub.mkdir(parents=True)
            shutil.copy(REPO / "solutions" / name / f"{a.notebook}.ipynb", sub)
            t0 = time.perf_counter()
            subprocess.run([str(Path(sys.executable).parent / "nbgrader"), "autograde", name, "--student", f"s{i}",
                            "--create", "--force"], cwd=root, check=True, capture_output=True,
                           env={**os.environ, "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ["PATH"]})
            times.append(time.perf_counter() - t0)
        return statistics.median(times)


def main() -> None:
    names = sys.argv[1:] or ["ps1_threshold_metrics", "ps2_roc_auc"]
    print(f"{'assignment':24s} {'cases':>5s} {'autograder s':>13s} {'nbgrader autograde s':>21s} {'ratio':>6s}")
    for name in names:
        t_ours = ours(name)
        t_nb = plain_nbgrader(name)
        print(f"{name:24s} {len(all_assignments()[name].cases):5d} {t_ours:13.2f} {t_nb:21.2f} {t_ours / t_nb:6.2f}")


if __name__ == "__main__":
    main()
