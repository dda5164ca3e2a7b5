"""Red-team findings against the grading engine, attacked from the student's side (notes: docs of the review).

Every test here states what a fixed engine must do.  Each failed on the engine the review attacked; the fixed
ones now pass.  (The covert channel through '--feedback cases' is closed for this notebook by the validation gate;
the general limitation -- a correct function could still encode bits in which cases it fails -- is in the README.)
The attack notebooks are built by ``redteam_attacks.py``; they run through the real ``autograder grade``
command (sandbox on) or, for the resource attacks, through the real :class:`Session` and ``prepare``.
"""

from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import nbformat
import pytest

import make_corpus as mc
import redteam_attacks as ra

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]
AUTOGRADER = REPO / ".venv" / "bin" / "autograder"


def _write(entries: dict, dest: Path) -> None:
    for sid, (name, nb) in entries.items():
        d = dest / sid / name
        d.mkdir(parents=True, exist_ok=True)
        path = d / f"{mc.A[name].notebook}.ipynb"
        if isinstance(nb, (bytes, str)):
            path.write_bytes(nb if isinstance(nb, bytes) else nb.encode())
        else:
            nbformat.write(nb, path)


def _grade(entries: dict, root: Path, *extra: str) -> dict:
    _write(entries, root / "subs")
    out = root / "out"
    proc = subprocess.run([str(AUTOGRADER), "grade", str(root / "subs"), "--out", str(out), *extra],
                          capture_output=True, text=True, timeout=1200)
    results = {}
    for f in (out / "results").glob("*/*.json"):
        data = json.loads(f.read_text(encoding="utf-8"))
        results[data["student"]] = data
    return {"proc": proc, "out": out, "results": results}


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    """One batch, feedback policy ``cases``: the point-gaining attacks, the covert channel and honest habits."""
    entries = {**ra.ATTACKS["gate_lookup"](), **ra.ATTACKS["ps5_name_oracle"](), **ra.ATTACKS["feedback_leak"](),
               **ra.ATTACKS["honest"](), **ra.ATTACKS["isolate_error"](), **ra.ATTACKS["metric_share"]()}
    return _grade(entries, tmp_path_factory.mktemp("redteam"), "--feedback", "cases")


def _cell_score(result: dict, cell: str) -> float:
    return result["cells"][cell]["score"]


# -- getting points without a correct implementation ----------------------------------------------------------
@pytest.mark.parametrize("name", [mc.A1, mc.A2, mc.A3, mc.A4])
def test_visible_lookup_table_earns_no_validation_points(batch, name):
    result = batch["results"][f"redteam_gate_lookup_{name}"]
    validation = next(c for c in result["cells"] if c.endswith("_hidden_validation"))
    assert _cell_score(result, validation) == 0, result["score"]


@pytest.mark.parametrize("sid", sorted(ra.METRIC_SHARE))
def test_scoring_by_metric_pays_nothing_for_a_dict_a_constant_record_or_an_exception(batch, sid):
    """binary_metrics answering with a dict of the one metric it computes, a record of constants (that agrees with
    the reference on some fields of some hidden cases) or an exception: no share of any case, no validation point;
    what is left is confusion_counts, the solution's own."""
    result = batch["results"][sid]
    bm = [c for c in result["cases"] if c["function"] == "binary_metrics"]
    assert all(c["earned"] == 0 for c in bm), [(c["id"], c["earned"]) for c in bm if c["earned"]]
    assert result["score"] == sum(c.points for c in mc.A[mc.A1].cases if c.function == "confusion_counts")


def test_ps5_tests_cannot_read_the_implementation_name(batch):
    result = batch["results"]["redteam_ps5_name_oracle"]
    # at most what tests that accept everything get (the two 'correct' cases)
    assert result["score"] <= sum(c.points for c in mc.A[mc.A5].cases if c.variant == "correct"), result["score"]


# -- hidden inputs through the 'cases' feedback ---------------------------------------------------------------
def test_cases_feedback_carries_no_hidden_input(batch):
    html = (batch["out"] / "feedback" / "redteam_feedback_leak" / mc.A1 / "threshold_metrics.html").read_text(encoding="utf-8")
    assert "参考实现的结果" not in html and "binary_metrics(" not in html  # the policy itself holds
    passed = set(re.findall(r'<li class="pass">[^<]*<small><code>([\w.]+)</code>', html))
    assert passed, "the cases page lists the passed cases"
    bits = ra.decode_leak(passed)
    truth = ra.leak_truth()
    read = [b for i, b in bits if i < len(truth)]
    assert read != [truth[i] for i, _ in bits if i < len(truth)], "the cases page spells out the hidden input"


# -- honest habits -------------------------------------------------------------------------------------------
def test_matplotlib_in_the_answer_cell_keeps_full_marks(batch):  # held: passes today
    assert batch["results"]["redteam_honest_matplotlib"]["score"] == mc.A[mc.A2].max_score()


def test_time_line_magic_runs_its_statement(batch):
    assert batch["results"]["redteam_honest_time_magic"]["score"] == mc.A[mc.A2].max_score()


# -- messages the trusted side believes --------------------------------------------------------------------------
def test_forged_isolate_error_is_graded_not_blamed_on_the_machine(batch):
    assert "redteam_forged_isolate_error" in batch["results"], batch["proc"].stderr[-2000:]
    assert batch["proc"].returncode == 0


def test_forged_cell_index_does_not_abort_the_batch(tmp_path):
    run = _grade(ra.ATTACKS["float_cell_index"](), tmp_path, "--jobs", "2")
    assert run["proc"].returncode == 0, run["proc"].stderr[-2000:]
    rows = list(csv.DictReader((run["out"] / "grades.csv").open(encoding="utf-8")))
    assert {r["student_id"] for r in rows} >= {f"honest_after_float_index_{i}" for i in range(3)}


# -- the trusted side's memory ------------------------------------------------------------------------------
def test_forged_cell_done_flood_is_not_kept(tmp_path):
    from autograder.model import Limits
    from autograder.sandbox import Session

    nb = tmp_path / "nb.ipynb"
    nb.write_text("{}")
    code = ra.cell_done_flood(seconds=30, items=1)  # tiny errors: the count is what matters here
    session = Session([(0, code)], nb, limits=Limits(setup_timeout=4.0), deadline=time.monotonic() + 8.0)
    try:
        session.ensure_started()
        kept = len(session.report.cell_errors)
    finally:
        session.close()
    assert kept <= 1, f"{kept} forged cell errors kept for a notebook of one cell"


PREPARE_PEAK = textwrap.dedent("""
    import resource, sys
    from pathlib import Path
    from autograder.check.prepare import prepare
    src = Path(sys.argv[1])
    prepare(src, src)
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    prepare(src, Path(sys.argv[2]))
    print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) >> 10)
""")


@pytest.mark.parametrize("kind", ["code", "cells"])
def test_prepare_memory_is_bounded(tmp_path, kind):
    nb = tmp_path / "nb.ipynb"
    if kind == "cells":
        nb.write_text(ra.many_empty_cells(2 * ra.MiB))
    else:
        nbformat.write(ra.huge_code_cell(1 * ra.MiB)["redteam_huge_code_cell"][1], nb)
    src = REPO / "solutions" / mc.A1 / "threshold_metrics.ipynb"
    proc = subprocess.run([sys.executable, "-c", PREPARE_PEAK, str(src), str(nb)], capture_output=True, text=True,
                          cwd=REPO, timeout=300)
    extra_mib = int(proc.stdout.strip().splitlines()[-1])
    assert extra_mib < 64, f"{extra_mib} MiB for a notebook of {nb.stat().st_size / (1 << 20):.1f} MiB"


def test_attack_notebooks_are_valid_notebooks():
    """Sanity: the attacks that are notebooks open with nbformat (what a student's JupyterLab would save)."""
    t0 = time.monotonic()
    for key in ("gate_lookup", "ps5_name_oracle", "feedback_leak", "honest", "isolate_error", "float_cell_index", "metric_share"):
        for _sid, (_name, nb) in ra.ATTACKS[key]().items():
            nbformat.validate(nb)
    assert time.monotonic() - t0 < 60
