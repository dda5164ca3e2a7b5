"""More submissions in flight than job slots: a waiting run leaves its core to others, limits stay the same.

A :class:`LocalPool` with ``extra`` worker processes admits a job beyond its slots only while its own
processes leave CPU unused (:mod:`autograder.batch.admission`).  These tests grade real notebooks in real
sandboxes through the pool, the way ``autograder grade`` does, with one job slot so that every admission
beyond it is visible.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from autograder.batch import admission, pools
from autograder.batch.jobs import Job
from autograder.check import get_assignment
from autograder.model import Limits
from autograder.sandbox.cgroup import SandboxCgroups

pytestmark = pytest.mark.slow  # real sandboxes, real worker processes
REPO = Path(__file__).resolve().parents[2]
ASSIGNMENT = "ps2_roc_auc"

if SandboxCgroups(processes=8, cpus=1, memory_bytes=1 << 30).cpu_seconds() is None:
    pytest.skip("needs root and cgroup CPU accounting (the grader then falls back to wall-clock limits)",
                allow_module_level=True)


def _job(student: str, extra: str = "", *, in_answer: bool = False, limits: Limits | None = None) -> Job:
    """A job of the instructor solution of ASSIGNMENT, with ``extra`` code appended as a cell (or at the top of
    the answer cell)."""
    a = get_assignment(ASSIGNMENT)
    source = (REPO / "solutions" / ASSIGNMENT / f"{a.notebook}.ipynb").read_bytes()
    nb = json.loads(source)
    if in_answer:
        answer = next(c for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("solution"))
        answer["source"] = extra + "\n" + "".join(answer["source"])
    elif extra:
        nb["cells"].append({"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": extra})
    return Job(student, ASSIGNMENT, f"fp-{student}", a.notebook, json.dumps(nb).encode(), source, True,
               limits or Limits())


def _first_holds_the_slot(pool: pools.LocalPool, jobs: list[Job]):
    """``jobs`` as the pool's source: the rest only once the first one holds the slot (has passed the gate).

    Otherwise which job takes the slot is a race between worker processes (the second worker may reach the
    gate first on a loaded machine), and a test's "admitted beyond the slot" would name the wrong job."""
    yield jobs[0]
    deadline = time.monotonic() + 120.0
    while pool.gate is not None and pool.gate.running.value < 1 and time.monotonic() < deadline:
        time.sleep(0.01)
    yield from jobs[1:]


def _pool_run(conn, workers: int, extra: int, jobs: list[Job]) -> None:
    """In a spawned process: grade ``jobs`` through a LocalPool and send (student, payload, error, seconds)."""
    pool = pools.LocalPool(workers, lambda msg: None, extra=extra)
    t0 = time.monotonic()
    conn.send([(job.student, payload, error, time.monotonic() - t0)
               for job, payload, error in pool.run(_first_holds_the_slot(pool, jobs))])
    conn.close()


def _grade(jobs: list[Job], *, extra: int, workers: int = 1) -> list[tuple[str, dict, float]]:
    """(student, payload, seconds from the start) of each job, in the order the results arrived.

    The pool runs in a spawned process of its own, as in ``autograder grade``: the gate counts the CPU demand
    of the pool's process tree, and a pytest worker's tree also holds what other modules' fixtures left
    running (a browser, servers' threads), which under load made the gate refuse every extra job here."""
    ctx = multiprocessing.get_context("spawn")
    receiver, sender = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_pool_run, args=(sender, workers, extra, jobs))
    proc.start()
    sender.close()
    try:
        got = receiver.recv()  # EOFError if the pool's process died without an answer
    finally:
        proc.join(30)
    out = []
    for student, payload, error, seconds in got:
        assert error is None, (student, error)
        out.append((student, payload, seconds))
    return out


def _full(payload: dict) -> bool:
    r = payload["result"]
    return r["score"] == r["max_score"] and not r["cell_errors"]


# the pool of the gate test: a process that starts one spinning child, prints its PID and waits for stdin to close
HOLDER = ("import subprocess, sys\n"
          "spinner = subprocess.Popen([sys.executable, '-c', 'while True:\\n    pass\\n'])\n"
          "print(spinner.pid, flush=True)\nsys.stdin.read()\nspinner.kill()\nspinner.wait()\n")


def test_the_gate_admits_beyond_its_slots_only_while_the_pool_leaves_cpu_unused():
    # the pool is a process of its own (not this pytest worker, whose tree holds other fixtures' processes)
    holder = subprocess.Popen([sys.executable, "-c", HOLDER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        spinner = int(holder.stdout.readline())
        gate = admission.CpuGate(1, root=holder.pid)
        assert gate.enter() is False  # the slot: at once
        admitted: list[bool] = []
        t = threading.Thread(target=lambda: admitted.append(gate.enter()), daemon=True)
        time.sleep(0.3)
        t.start()
        t.join(1.5)
        # a child computing (or waiting for a CPU) is one core of demand: nothing beyond the slot
        assert not admitted and t.is_alive()
        os.kill(spinner, signal.SIGKILL)  # a zombie until the holder reaps it: no CPU, not runnable
        t.join(5.0)
        assert admitted == [True] and gate.running.value == 2 and gate.admitted_extra.value == 1
        gate.leave()
        gate.leave()
        assert gate.running.value == 0 and gate.enter() is False  # a free slot again: no measurement
    finally:
        holder.stdin.close()
        holder.wait(10)


def test_a_job_waiting_at_the_gate_takes_a_freed_slot_without_waiting_for_the_next_measurement(monkeypatch):
    """After a refusal the waiting workers measure again only after ``PAUSE``; a job that leaves wakes them, so the
    slot it frees is taken at once (here PAUSE is a minute: without the wake-up the waiter would sit out all of it)."""
    monkeypatch.setattr(admission, "PAUSE", 60.0)
    gate = admission.CpuGate(1)
    assert gate.enter() is False
    spinner = subprocess.Popen([sys.executable, "-c", "while True:\n    pass\n"])
    try:
        admitted: list[bool] = []
        t = threading.Thread(target=lambda: admitted.append(gate.enter()), daemon=True)
        time.sleep(0.3)
        t.start()
        for _ in range(200):  # until the waiter was refused once (it then waits for PAUSE or a wake-up)
            if gate._refused.value:
                break
            time.sleep(0.05)
        assert gate._refused.value and not admitted
        gate.leave()  # the slot's job ends; the spinner still computes, so no measurement would admit anyone
        t.join(20.0)
        assert admitted == [False] and gate.admitted_extra.value == 0 and gate.running.value == 1
    finally:
        spinner.kill()
        spinner.wait()
    gate.leave()


def test_a_hung_run_holds_no_slot_and_is_stopped_at_its_own_limit():
    """One slot, two extra workers: a notebook that hangs (sleeps) is graded beside two ordinary ones,
    which both finish before it; it ends at its wall-clock backstop, as it would alone."""
    limits = Limits(cell_timeout=2.0)  # backstop 5 x 2 + 2 = 12 s of wall clock for the sleeping cell
    hang = _job("hang", "import time\ntime.sleep(10 ** 6)", limits=limits)
    others = [_job(f"ok{i}") for i in range(2)]
    got = _grade([hang] + others, extra=2)
    order = [s for s, _, _ in got]
    assert order[-1] == "hang", got  # without extra workers the two would wait behind it (one slot)
    by = {s: (p, t) for s, p, t in got}
    assert all(_full(by[f"ok{i}"][0]) for i in range(2))
    assert sum(by[f"ok{i}"][0]["timing"]["admitted_extra"] for i in range(2)) >= 1
    hung = by["hang"][0]["result"]
    assert [e["type"] for e in hung["cell_errors"]] == ["_CellTimeout"], hung["cell_errors"]
    assert hung["score"] == hung["max_score"]  # the definitions came before the hung cell
    assert by["hang"][0]["timing"]["grade"] >= limits.wall_backstop(limits.cell_timeout) - 1.0


# an honest answer cell that first waits 2 s, then computes for 1 s of its own CPU time
WAIT_THEN_COMPUTE = ("import time\ntime.sleep(2.0)\nt0 = time.process_time()\nn = 0\n"
                     "while time.process_time() - t0 < 1.0:\n    n += 1\n")


def test_limits_are_unchanged_when_more_runs_than_slots_compute_at_once():
    """Three notebooks wait (so the gate admits them all on one slot) and then compute 1 s of CPU time at
    the same moment, on a 2-core machine: each needs 1 s of its 2 s CPU limit and gets full marks, as alone;
    a fourth that computes without end is stopped by the same CPU limit.  (A limit of 2 s of wall clock would
    stop them all during their 2-s wait.  Was 2 s of 4 s: the spinner and the three computed twice as long.)"""
    limits = Limits(cell_timeout=2.0)
    honest = [_job(f"honest{i}", WAIT_THEN_COMPUTE, in_answer=True, limits=limits) for i in range(3)]
    spin = _job("spin", "import time\ntime.sleep(2.0)\nwhile True:\n    pass", limits=limits)
    got = {s: p for s, p, _ in _grade(honest + [spin], extra=2)}
    for i in range(3):
        r = got[f"honest{i}"]
        assert _full(r), r["result"]["cell_errors"]
        assert r["timing"]["student_cells_cpu"] >= 1.0  # the computation really ran, in CPU time of its own run
    assert sum(got[f"honest{i}"]["timing"]["admitted_extra"] for i in range(3)) + got["spin"]["timing"]["admitted_extra"] >= 2
    stopped = got["spin"]["result"]
    assert [e["type"] for e in stopped["cell_errors"]] == ["_CellTimeout"]
    # stopped at its 2 s of CPU time (measured by the grader from the moment it read the cell's start, which
    # a busy machine delays), not by wall clock: 2 s of wall clock would have stopped it in its sleep
    assert 1.5 <= got["spin"]["timing"]["student_cells_cpu"] < 5.0


KILLER = ("import os, signal\nhit = 0\nfor pid in range(1, 1 << 15):\n    if pid != os.getpid():\n        try:\n"
          "            os.kill(pid, signal.SIGKILL)\n            hit += 1\n        except OSError:\n            pass\n"
          "assert hit <= 1, hit\n")  # its own namespace's init at most


def test_a_run_admitted_beside_a_waiting_one_cannot_signal_it():
    """The waiting run's worker lets the pool admit another job; that run's kills reach nothing outside its own
    PID namespace, and the waiting run finishes with full marks."""
    victim = _job("victim", "import time\ntime.sleep(6.0)")
    killer = _job("killer", KILLER)
    got = {s: (p, t) for s, p, t in _grade([victim, killer], extra=1)}
    timing = {s: (p["timing"], t) for s, (p, t) in got.items()}
    assert got["killer"][0]["timing"]["admitted_extra"] == 1, timing  # it ran while the victim waited
    assert got["killer"][1] < got["victim"][1]
    assert _full(got["victim"][0]), got["victim"][0]["result"]
    assert _full(got["killer"][0]), got["killer"][0]["result"]  # its loop ran, and hit nothing but its own init
