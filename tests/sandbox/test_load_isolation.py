"""One student's load never changes another's grade: per-sandbox CPU and memory bounds (cgroups), and
cell/call limits in CPU time of the sandbox's whole process tree with a wall-clock backstop."""

from __future__ import annotations

import json
import multiprocessing
import time
from pathlib import Path

import pytest

from autograder.check import get_assignment, grade_notebook
from autograder.model import Limits
from autograder.sandbox import Session
from autograder.sandbox.cgroup import SandboxCgroups, process_tree

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]

if SandboxCgroups(processes=8, cpus=1, memory_bytes=1 << 30).cpu_seconds() is None:
    pytest.skip("needs root and cgroup CPU accounting (the grader then falls back to wall-clock limits)",
                allow_module_level=True)


def _notebook(tmp_path: Path, name: str, assignment: str, extra: str, *, in_answer: bool = False) -> tuple[Path, Path]:
    a = get_assignment(assignment)
    source = REPO / "solutions" / assignment / f"{a.notebook}.ipynb"
    nb = json.loads(source.read_text(encoding="utf-8"))
    if in_answer:  # the extra code runs at the top of the answer cell, before the definitions
        answer = next(c for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("solution"))
        answer["source"] = extra + "\n" + "".join(answer["source"])
    else:
        nb["cells"].append({"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": extra})
    path = tmp_path / name / f"{a.notebook}.ipynb"
    path.parent.mkdir()
    path.write_text(json.dumps(nb, ensure_ascii=False), encoding="utf-8")
    return source, path


# an honest answer cell that first computes for 1.5 s of CPU time (a slow but legitimate experiment): 60 % of its cell's
# limit below, as 3 s of 5 s were before; the hogs spin as long as the honest grading beside them lasts (half as long)
HONEST = "import time\nt0 = time.process_time()\nn = 0\nwhile time.process_time() - t0 < 1.5:\n    n += 1\n"
# a hog: every call forks 25 spinning processes in sessions of their own, then waits
HOG = ("import os, time\n\n\ndef binary_metrics(*args, **kwargs):\n    for _ in range(25):\n        if os.fork() == 0:\n"
       "            os.setsid()\n            while True:\n                pass\n    while True:\n        time.sleep(1)\n")


def _grade_hog(src: str, hog: str, student: str) -> None:
    """In a spawned process: grade the hog until its 180-s deadline, or until SIGTERM (its sandboxes then end as in any
    grading that stops: the session's cleanup removes their processes and cgroups)."""
    import signal
    import sys

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    grade_notebook(get_assignment("ps1_threshold_metrics"), Path(src), Path(hog), student)


def test_an_honest_notebook_gets_the_same_grade_next_to_a_hog(tmp_path):
    limits = Limits(cell_timeout=2.5)
    src, honest = _notebook(tmp_path, "honest", "ps2_roc_auc", HONEST, in_answer=True)
    a = get_assignment("ps2_roc_auc")
    alone = grade_notebook(a, src, honest, "honest", limits=limits)
    assert alone.score == alone.max_score and not alone.notes and not alone.cell_errors, alone.notes

    hsrc, hog = _notebook(tmp_path, "hog", "ps1_threshold_metrics", HOG)
    # each hog keeps one CPU busy (its cgroup's share) until it is stopped: in processes of their own, stopped as soon
    # as the honest grading is done (graded on to their deadline, they would spin for up to 80 CPU seconds)
    ctx = multiprocessing.get_context("spawn")
    hogs = [ctx.Process(target=_grade_hog, args=(str(hsrc), str(hog), f"hog{i}")) for i in range(2)]
    for p in hogs:
        p.start()
    try:
        deadline = time.monotonic() + 120
        while not all(len(process_tree(p.pid)) >= 25 for p in hogs):  # each hog's 25 spinners run (after its import)
            assert time.monotonic() < deadline and all(p.is_alive() for p in hogs), "the hogs never spun"
            time.sleep(0.1)
        t0 = time.monotonic()
        beside = grade_notebook(a, src, honest, "honest", limits=limits)
        wall = time.monotonic() - t0
        assert all(p.is_alive() for p in hogs), f"the hogs ended before the honest grading did ({wall:.1f} s)"
    finally:
        for p in hogs:
            p.terminate()
        for p in hogs:
            p.join(30)
    assert (beside.score, beside.notes, beside.cell_errors) == (alone.score, alone.notes, alone.cell_errors), (beside.notes, wall)
    assert [p.exitcode for p in hogs] == [0, 0]  # stopped by SIGTERM, through the sessions' cleanup


def test_a_sandbox_uses_at_most_its_cpus():
    """20 spinning processes get one CPU between them: the sandbox's CPU time grows at about wall-clock speed."""
    s = Session([(0, "import os, time\ndef spin():\n    for _ in range(20):\n        if os.fork() == 0:\n"
                     "            while True:\n                pass\n    time.sleep(2.0)\n    return 1\n")], None, sandbox=True)
    try:
        s.ensure_started()
        before, t0 = s._cpu(), time.monotonic()
        out = s.call("spin", [], timeout=8.0)
        used, wall = s._cpu() - before, time.monotonic() - t0
        assert out.ok, out
        assert used < 1.0 * wall + 0.5, (used, wall)  # one CPU at most (two would be ~2x wall)
    finally:
        s.close()


def test_memory_is_bounded_for_the_whole_sandbox():
    """Eight forked processes of 600 MiB each: the sandbox's memory (1.5 GiB) stops them, not the machine's.

    The kernel's OOM killer may kill an older child after it reported, so the bound is on the children alive
    at the end, each of which has touched its 600 MiB: at most two fit in 1.5 GiB (there is no swap).
    """
    code = ("import os\ndef hold():\n    kids = []\n    for _ in range(8):\n        r, w = os.pipe()\n"
            "        pid = os.fork()\n        if pid == 0:\n            os.close(r)\n            block = bytearray(600 << 20)\n"
            "            for i in range(0, len(block), 4096):\n                block[i] = 1\n            os.write(w, b'1')\n"
            "            import time\n            time.sleep(30)\n            os._exit(0)\n        os.close(w)\n"
            "        kids.append((pid, r))\n    reported = sum(len(os.read(r, 1)) for _, r in kids)\n"
            "    alive = sum(os.waitpid(pid, os.WNOHANG)[0] == 0 for pid, _ in kids)\n"
            "    return [reported, alive]\n")
    s = Session([(0, code)], None, sandbox=True, limits=Limits(call_timeout=30.0))
    try:
        out = s.call("hold", [])
        assert (not out.ok) or out.value[1] <= 2, out  # [children that reported, children alive holding 600 MiB]
    finally:
        s.close()


def test_a_sleeping_cell_is_stopped_by_the_wall_clock_backstop():
    limits = Limits(cell_timeout=0.5, wall_factor=2.0)
    s = Session([(0, "import time\ntime.sleep(60)\n"), (1, "def f():\n    return 7\n")], None, sandbox=True, limits=limits)
    try:
        t0 = time.monotonic()
        out = s.call("f", [])
        assert out.ok and out.value == 7
        assert time.monotonic() - t0 < 10
        assert s.report.cell_errors[0]["type"] == "_CellTimeout"
    finally:
        s.close()
