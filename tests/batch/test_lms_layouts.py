"""The real ``autograder grade`` once per input mode: a zip download (named as Canvas names it) and a folder with
odd names, links and ids next to a zip; and two runs on one output folder. Every LMS layout (Canvas, Moodle,
Blackboard, flat ``zip_collect`` names) is tested through ``collect()`` in test_collect.py."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from .lms_downloads import (A1, A2, NB1, solution, symlink, untouched, write_file, write_zip)

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]
AUTOGRADER = str(REPO / ".venv" / "bin" / "autograder")
FULL = 56.0


def grade(subs: Path, out: Path, *extra: str, also: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    """``autograder grade`` of assignment 1 and the assignments ``also`` (each selected one is generated into the
    gradebook: nbgrader's generate_assignment, about a second of CPU each)."""
    only = [arg for a in (A1, *also) for arg in ("--assignment", a)]
    cmd = [AUTOGRADER, "grade", str(subs), "--out", str(out), *only, *extra]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=900)


def rows(out: Path) -> dict[str, dict]:
    with open(out / "grades.csv", newline="", encoding="utf-8") as fh:
        got = list(csv.DictReader(fh))
    assert len({(r["student_id"], r["assignment"]) for r in got}) == len(got)
    return {r["student_id"]: r for r in got}


def feedback(out: Path, student: str) -> str:
    return (out / "feedback" / student / A1 / NB1.replace(".ipynb", ".html")).read_text(encoding="utf-8")


def test_canvas_download(tmp_path):
    z = write_zip(tmp_path / "submissions.zip", {
        f"smithjohn_101_5001_{NB1}": untouched(),                               # first submission
        f"smithjohn_late_101_5002_{NB1[:-6]}-1.ipynb": solution(),              # late re-submission, renamed by Canvas
        f"张三_102_5003_{NB1[:-6]} (1).ipynb": solution(),                        # a browser's second download
        "wangwu_103_5004_answers.pdf": b"%PDF-1.4",
    })
    run = grade(z, tmp_path / "out")
    assert run.returncode == 3, run.stderr[-3000:]
    got = rows(tmp_path / "out")
    assert set(got) == {"101", "102"}
    assert float(got["101"]["score"]) == FULL and got["101"]["late"] == "yes" and got["101"]["student_name"] == "smithjohn"
    assert got["101"]["submitted_at"] == "2026-05-01 12:00:00" and got["101"]["time_source"] == "zip_entry"
    assert float(got["102"]["score"]) == FULL and got["102"]["late"] == "no" and got["102"]["student_name"] == "张三"
    assert "threshold_metrics (1).ipynb" in feedback(tmp_path / "out", "102")
    assert "'submissions.zip:wangwu_103_5004_answers.pdf'：不是 .ipynb 笔记本" in run.stderr
    assert "'submissions.zip:smithjohn_101_5001_threshold_metrics.ipynb'：较早的提交" in run.stderr
    assert "autograder: 未评分：1 个文件没有评分" in run.stderr.splitlines()[-1]
    summary = (tmp_path / "out" / "summary.html").read_text(encoding="utf-8")
    assert "未评分的文件（2 个，其中 1 个需要处理）" in summary and "wangwu_103_5004_answers.pdf" in summary
    assert json.loads((tmp_path / "out" / "run.json").read_text(encoding="utf-8"))["not_graded"][0]["problem"] is True
    with open(tmp_path / "out" / "gradebook-export.csv", encoding="utf-8") as fh:
        assert {"student_id", "assignment", "score"} <= set(next(csv.reader(fh)))


def test_folder_with_odd_names_links_and_ids_next_to_a_zip(tmp_path):
    subs = tmp_path / "subs"
    write_file(subs / "s001" / A1 / f"{NB1[:-6]} (1).ipynb", solution())            # browser-renamed
    symlink(subs / "s002", subs / "s001")                                            # a classmate's folder
    symlink(subs / "s003" / A1, REPO / "solutions" / A1)                             # the solutions
    write_file(subs / "s004\n" / A1 / NB1, solution())                               # id with a newline
    write_file(subs / "s005" / A1 / NB1, untouched())
    write_file(subs / "s005" / A1 / "\x1b[2J\x1b[31mx.ipynb", solution())            # escape sequences
    write_zip(subs / "lms.zip", {f"s006_attempt_2026-05-02T10-00-00_{NB1}": solution(),
                                 f"s006_{NB1}": untouched()})                         # plain first upload sorts last
    run = grade(subs, tmp_path / "out", also=(A2,))  # A2 selected too, and submitted by nobody
    assert run.returncode == 3, run.stderr[-3000:]
    got = rows(tmp_path / "out")
    assert set(got) == {"s001", "s005", "s006"}  # one row per graded submission: no rows for A2, which nobody submitted
    assert {r["assignment"] for r in got.values()} == {A1}
    assert float(got["s001"]["score"]) == FULL and float(got["s006"]["score"]) == FULL
    assert float(got["s005"]["score"]) < FULL
    fb = feedback(tmp_path / "out", "s001")
    assert "threshold_metrics (1).ipynb" in fb and "没有找到提交的笔记本" not in fb
    assert "\x1b" not in run.stderr and "\\x1b[2J\\x1b[31mx.ipynb" in run.stderr
    for link in ("'s002'：符号链接", "'s003/ps1_threshold_metrics'：符号链接", "既不是合法的学号"):
        assert link in run.stderr
    assert "'s004\\n/ps1_threshold_metrics/threshold_metrics.ipynb'" in run.stderr


def test_two_runs_on_one_output_folder_and_a_kill_during_generate(tmp_path):
    subs = tmp_path / "subs"
    write_file(subs / "s001" / A1 / NB1, solution())
    out = tmp_path / "out"
    cmd = [AUTOGRADER, "grade", str(subs), "--out", str(out), "--assignment", A1]
    procs = [subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    results = sorted((p.wait(timeout=600), p.stderr.read()) for p in procs)
    assert [code for code, _ in results] == [0, 2], results
    assert "正在使用输出目录" in results[1][1] and "Traceback" not in results[1][1]
    again = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0 and "需要评分 0 份" in again.stderr, again.stderr[-3000:]

    out2 = tmp_path / "out2"
    cmd2 = [AUTOGRADER, "grade", str(subs), "--out", str(out2), "--assignment", A1]
    proc = subprocess.Popen(cmd2, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while not (out2 / ".nbgrader-course" / "source" / A1).exists():  # nbgrader generate_assignment has begun
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.01)
    time.sleep(0.5)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    rerun = subprocess.run(cmd2, capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert float(rows(out2)["s001"]["score"]) == FULL
    stamps = out2 / ".nbgrader-course" / "generated.json"
    stamps.write_text(stamps.read_text(encoding="utf-8")[:10], encoding="utf-8")  # a write cut short
    last = subprocess.run(cmd2 + ["--force"], capture_output=True, text=True, timeout=600)
    assert last.returncode == 0, last.stderr[-3000:]
