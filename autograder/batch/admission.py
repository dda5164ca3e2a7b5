"""CPU-bound admission: more grading jobs in flight than cores, while they leave CPU unused.

A submission's run often waits: a student's cell sleeps, or reads from a pipe, and uses no CPU.  A pool
of exactly one worker per core then leaves a core idle for as long as that run waits.  A
:class:`LocalPool <autograder.batch.pools.LocalPool>` with ``extra`` worker processes shares one
:class:`CpuGate` among all its workers: a worker starts its job at once while fewer than ``slots`` jobs
run (``slots`` = the pool's cores), and beyond that only after the pool's own processes (the command, its
workers and their sandboxes, seen from the host's ``/proc``) were measured to use or wait for at most
``slots - FREE_CORE`` cores over :data:`INTERVAL` seconds (:func:`cpu_demand`; time waiting for a CPU
counts, so other programs' load does not make the pool look idle).  One worker measures at a time, so each
extra job is admitted on a measurement that already counts the one admitted before it.

Limits do not change: every cell and call is judged by the CPU time of its own run (the run's cgroup),
with the wall-clock backstop of :meth:`Limits.wall_backstop <autograder.model.Limits.wall_backstop>`
(5 x the CPU limit + 2 s); at most ``slots + extra`` runs share the machine's cores, so a run that
computes gets at least ``slots / (slots + extra)`` of a core from this pool: :data:`MAX_FACTOR` keeps
that well inside the backstop.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.context
import os
import threading
import time

INTERVAL = 0.1  # seconds of measurement before an extra job is admitted
PAUSE = 0.2  # seconds after a refusal before any worker of the pool measures again
FREE_CORE = 0.75  # cores the pool must leave unused over INTERVAL to admit one more job
MAX_FACTOR = 3  # slots + extra <= MAX_FACTOR x slots


def _read(path: str) -> str:
    fd = os.open(path, os.O_RDONLY)
    try:
        return os.read(fd, 4096).decode("ascii", "replace")
    finally:
        os.close(fd)


def _threads(root: int) -> dict[tuple[int, str], tuple[int, bool]]:
    """Every thread of ``root``'s process tree but the calling one, keyed by (thread id, its process's start
    time): the nanoseconds it has spent on a CPU or waiting in a run queue for one
    (``/proc/PID/task/TID/schedstat``) and whether it is runnable now (state R)."""
    out: dict[tuple[int, str], tuple[int, bool]] = {}
    me = threading.get_native_id()
    todo, seen = [root], set()
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.add(pid)
        try:
            start = _read(f"/proc/{pid}/stat").rpartition(")")[2].split()[19]
            tids = os.listdir(f"/proc/{pid}/task")
        except (OSError, IndexError):
            continue
        for tid in tids:
            base = f"/proc/{pid}/task/{tid}/"
            try:
                todo += [int(k) for k in _read(base + "children").split()]
                if int(tid) == me:
                    continue
                run, wait = _read(base + "schedstat").split()[:2]
                state = _read(base + "stat").rpartition(")")[2].split()[0]
            except (OSError, ValueError, IndexError):
                continue
            out[(int(tid), start)] = (int(run) + int(wait), state == "R")
    return out


def cpu_demand(root: int, interval: float = INTERVAL, samples: int = 4) -> float:
    """Cores the process tree of ``root`` used or waited for over the next ``interval`` seconds.

    The larger of two estimates: the time its threads spent on a CPU or in a run queue (schedstat; a thread
    that waits the whole interval for a CPU shows that wait only once it runs), and the mean number of its
    threads runnable at ``samples`` moments.  Time waiting for a CPU counts, so a pool starved by other
    programs on the machine does not look idle.  The calling thread is not counted."""
    seen = [_threads(root)]
    t0 = time.monotonic()
    for _ in range(samples):
        time.sleep(interval / samples)
        seen.append(_threads(root))
    wall = time.monotonic() - t0
    first, last = seen[0], seen[-1]
    used = sum(max(0, t - first[k][0]) for k, (t, _) in last.items() if k in first) / 1e9 / wall
    runnable = sum(sum(r for _, r in sample.values()) for sample in seen[1:]) / samples
    return max(used, runnable)


class CpuGate:
    """Shared by the worker processes of one pool (made in the pool's process, passed to each worker).

    Parameters
    ----------
    slots : int
        Jobs that start without measuring (the pool's cores).
    root : int
        The process whose tree is the pool (the grading command or the service).
    """

    def __init__(self, slots: int, root: int | None = None, ctx: multiprocessing.context.BaseContext | None = None) -> None:
        ctx = ctx or multiprocessing.get_context("spawn")  # the pool's own context (its workers share these)
        self.slots = max(1, slots)
        self.root = os.getpid() if root is None else root
        self.running = ctx.Value("i", 0)  # jobs between enter() and leave()
        self.admitted_extra = ctx.Value("i", 0)  # jobs admitted beyond slots, in all (for run.json and tests)
        self._measure = ctx.Lock()  # one measurement at a time
        self._refused = ctx.Value("d", 0.0)  # time.monotonic() of the last refusal (shared: one clock per machine)
        self._freed = ctx.Condition(ctx.Lock())  # notified when a job leaves: a waiting worker takes its slot at once

    def enter(self) -> bool:
        """Wait until this worker may start a job; True if it was admitted beyond ``slots``."""
        while True:
            with self.running.get_lock():
                if self.running.value < self.slots:
                    self.running.value += 1
                    return False
            with self._measure:
                with self.running.get_lock():  # a job may have ended while this worker waited for the lock
                    if self.running.value < self.slots:
                        self.running.value += 1
                        return False
                # measuring costs ~10 ms of CPU for a pool of 40 processes: after a refusal nobody measures
                # for PAUSE seconds (the workers waiting at the gate take turns)
                pause = self._refused.value + PAUSE - time.monotonic()
                if pause <= 0:
                    if cpu_demand(self.root) <= self.slots - FREE_CORE:
                        with self.running.get_lock():
                            self.running.value += 1
                        with self.admitted_extra.get_lock():
                            self.admitted_extra.value += 1
                        return True
                    self._refused.value = time.monotonic()
            # until the next measurement may run, or a job leaves (its slot is then taken without measuring)
            with self._freed:
                with self.running.get_lock():
                    free = self.running.value < self.slots
                if not free:
                    self._freed.wait(min(max(pause, 0.02), PAUSE))

    def leave(self) -> None:
        with self.running.get_lock():
            self.running.value -= 1
        with self._freed:
            self._freed.notify_all()


_gate: CpuGate | None = None


def install(gate: CpuGate | None) -> None:
    """In a worker process: use ``gate`` for every job of this process (None: no admission)."""
    global _gate
    _gate = gate


def admitted(work, data: dict) -> dict:
    """Run ``work(data)`` once this process's gate admits it (at once without a gate).

    The seconds waited for admission and whether the job was admitted beyond the slots are added to the
    result's ``timing`` (when it has one)."""
    gate = _gate
    if gate is None:
        return work(data)
    t0 = time.monotonic()
    extra = gate.enter()
    waited = time.monotonic() - t0
    try:
        payload = work(data)
    finally:
        gate.leave()
    if isinstance(payload, dict) and isinstance(payload.get("timing"), dict):
        payload["timing"].update({"admission_wait": round(waited, 4), "admitted_extra": int(extra)})
    return payload
