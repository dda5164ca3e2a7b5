"""Small engine guarantees: the fingerprint covers only grade-deciding code; importing the store changes no
environment; the spec table is what it says."""

from __future__ import annotations

import os
import subprocess
import sys

from autograder.check import specs
from autograder.batch.version import PACKAGE, grade_deciding_files


def test_fingerprint_covers_what_decides_a_grade_and_nothing_else():
    files = {f.relative_to(PACKAGE).as_posix() for f in grade_deciding_files()}
    for must in ("reference/ranking.py", "check/compare.py", "check/specs/a2_roc.py", "check/mutants.py",
                 "sandbox/payload/runner.py", "sandbox/session.py"):
        assert must in files
    for never in ("check/render.py", "store/report.py", "store/ledger.py", "batch/pools.py", "cli.py", "commands/grade.py"):
        assert never not in files
    assert not any(f.startswith(("store/", "batch/", "commands/")) for f in files)


def test_importing_the_gradebook_module_leaves_path_alone():
    code = ("import os; before = os.environ.get('PATH'); import autograder.store.ledger; "
            "print(before == os.environ.get('PATH'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ, "PATH": "/usr/bin:/bin"})
    assert out.stdout.strip() == "True", out.stderr[-2000:]


def test_specs_exports_work():
    """What ``specs`` exports is what the grading uses: the registry, the case builders, the cell listing."""
    a = specs.get_assignment("ps1_threshold_metrics")
    assert specs.all_assignments()["ps1_threshold_metrics"] is a and isinstance(a, specs.Assignment)
    assert a.cases and all(isinstance(c, specs.Case) for c in a.cases)
    c = specs.ref("x1", "cell_x", 2, "f", "说明", [1, 0], k=3)
    assert (c.kind, c.args, c.kwargs, c.points) == ("ref", ([1, 0],), {"k": 3}, 2)
    assert specs.prop("x2", "cell_x", 1, "f", "说明", [(([1],), {})], lambda values: None).kind == "property"
    cell, cases = next(iter(a.cells().items()))
    listing = specs.render_cell_listing(a, cell)
    assert f"共 {sum(c.points for c in cases)} 分" in listing and all(specs.listing_line(a, c) in listing for c in cases)
    assert specs.listing_line(a, cases[0]).startswith(f"#   {cases[0].id}（{cases[0].points} 分")


def test_every_accepted_notebook_fits_the_sandbox():
    """An honest 8.8 MiB notebook (solution plus figures) hit the 8 MiB file-size limit while the sandbox copied it."""
    from autograder.model import MAX_NOTEBOOK_BYTES, Limits

    limits = Limits()
    assert limits.file_bytes > MAX_NOTEBOOK_BYTES and limits.scratch_bytes > MAX_NOTEBOOK_BYTES
