"""Kill/resume: SIGKILL the grader at several points; rerunning finishes with identical grades, exactly once."""

from __future__ import annotations

import csv
import subprocess

import pytest

from ..grading_runs import (FEW, assert_no_scratch_left, assert_same, copy_students, grade_cmd, kill, restricted, run, scratch_dir, snapshot,
                            wait_busy, wait_committed)

pytestmark = pytest.mark.slow  # the corpus slice and its reference grading: once per run (tests/grading_runs.py)


def test_sigkill_and_resume(corpus, reference, backend, tmp_path):
    total = len(reference["ledger"])
    scratch = scratch_dir(tmp_path)
    cmd = grade_cmd(corpus, backend.out, *backend.args(), "--scratch", str(scratch))
    seen = 0
    for k in (3, 12):  # kill early, then kill the rerun half way
        # the killed runs on one worker: what a kill throws away (the jobs in flight) is then a few submissions, not
        # most of the slice; the last run below grades the rest on all cores
        proc = subprocess.Popen(cmd + ["--jobs", "1"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        n = wait_committed(backend.url, k, proc)
        wait_busy(scratch, 1)  # a worker inside a job
        kill(proc)
        assert seen <= n < total, "the run should have been killed half way"
        seen = n
    proc = run(cmd)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert f"共 {total} 份提交，需要评分" in proc.stderr
    regraded = int(proc.stderr.split("需要评分 ")[1].split(" 份")[0])
    assert 0 < regraded <= total - seen, "committed submissions must be skipped, the rest regraded"
    assert_same(snapshot(backend.url), reference)
    assert_no_scratch_left(scratch)  # the rerun removed what the killed runs left
    # derived files are complete too
    assert len(list((backend.out / "results").glob("*/*.json"))) == total
    rows = list(csv.DictReader((backend.out / "grades.csv").open(encoding="utf-8")))
    scores = {(r["student_id"], r["assignment"]): float(r["score"]) for r in rows}
    assert {k: v[1] for k, v in reference["ledger"].items()} == {k: scores[k] for k in reference["ledger"]}
    # a second rerun has nothing to do
    again = run(cmd + ["--jobs", "1"])
    assert again.returncode == 0 and "需要评分 0 份" in again.stderr
    assert_same(snapshot(backend.url), reference)


def test_regrade_one_slice(corpus, reference, tmp_path):
    corpus = copy_students(corpus, tmp_path / "few", FEW)  # both assignments, a right and a wrong answer: no run is interrupted
    reference = restricted(reference, FEW)
    out = tmp_path / "out"
    url = f"sqlite:///{out / 'gradebook.db'}"
    first = run(grade_cmd(corpus, out, "--assignment", "ps2_roc_auc"))
    assert first.returncode == 0, first.stderr[-3000:]
    only_ps2 = snapshot(url)
    assert {a for _, a in only_ps2["ledger"]} == {"ps2_roc_auc"}
    rest = run(grade_cmd(corpus, out))
    assert rest.returncode == 0 and f"需要评分 {len(reference['ledger']) - len(only_ps2['ledger'])} 份" in rest.stderr
    student = "wrong_strict_threshold_0"
    again = run(grade_cmd(corpus, out, "--force", "--student", student, "--assignment", "ps1_threshold_metrics"))
    assert again.returncode == 0 and "共 1 份提交，需要评分 1 份" in again.stderr
    assert f"{student}/ps1_threshold_metrics" in again.stderr
    assert_same(snapshot(url), reference)
