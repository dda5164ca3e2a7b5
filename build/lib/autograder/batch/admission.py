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

A job admitted beyond the slots that leaves frees the core it computed on (a job computes at its end: the
grader's checks): for :data:`HANDOFF_WINDOW` seconds after a measurement admitted a job, a waiting worker
takes such a job's place at once instead of measuring again (the pool's demand stays what was measured:
one job replaces another).  After the window the next admission beyond the slots is measured again, so
runs that stopped waiting (a sleep that ended) are seen within it.

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
HANDOFF_WINDOW = 0.5  # seconds after an admitting measurement during which a leaving extra job's place is handed on
HANDOFF_FRESH = 0.15  # seconds a handed-on place waits for a worker to take it (then it lapses)


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
        self._admitted_at = ctx.Value("d", float("-inf"), lock=False)  # last admitting measurement (under running's lock)
        self._handed = ctx.Value("i", 0, lock=False)  # places of extra jobs that left, for waiting workers (same lock)
        self._handed_at = ctx.Value("d", 0.0, lock=False)  # when the last of them was handed on (same lock)
        self.handed_on = ctx.Value("i", 0)  # jobs admitted on a handed-on place, in all (tests)
        self.last = ""  # how this process's last job was admitted: "slot", "measured" or "handed" (run.json)

    def _take(self) -> bool | None:
        """Under ``running``'s lock: a free slot (False), a handed-on place (True) or nothing (None)."""
        if self.running.value < self.slots:
            self.running.value += 1
            self.last = "slot"
            return False
        if self._handed.value > 0:
            if time.monotonic() - self._handed_at.value <= HANDOFF_FRESH:
                self._handed.value -= 1
                self.running.value += 1
                with self.admitted_extra.get_lock():
                    self.admitted_extra.value += 1
                with self.handed_on.get_lock():
                    self.handed_on.value += 1
                self.last = "handed"
                return True
            self._handed.value = 0  # nobody took it in time: the core it stood for may be in use again
        return None

    def enter(self) -> bool:
        """Wait until this worker may start a job; True if it was admitted beyond ``slots``."""
        while True:
            with self.running.get_lock():
                took = self._take()
            if took is not None:
                return took
            # one worker measures at a time; the others wait for a job to leave meanwhile (not for the lock:
            # a slot or place freed during a measurement is taken at once)
            pause = INTERVAL
            if self._measure.acquire(False):
                try:
                    with self.running.get_lock():  # a job may have ended since the look above
                        took = self._take()
                    if took is not None:
                        return took
                    # measuring costs ~10 ms of CPU for a pool of 40 processes: after a refusal nobody measures
                    # for PAUSE seconds (the workers waiting at the gate take turns)
                    pause = self._refused.value + PAUSE - time.monotonic()
                    if pause <= 0:
                        if cpu_demand(self.root) <= self.slots - FREE_CORE:
                            with self.running.get_lock():
                                self.running.value += 1
                                self._admitted_at.value = time.monotonic()
                            with self.admitted_extra.get_lock():
                                self.admitted_extra.value += 1
                            self.last = "measured"
                            return True
                        self._refused.value = time.monotonic()
                        pause = PAUSE
                finally:
                    self._measure.release()
            # until the next measurement may run, or a job leaves (its slot or place is then taken without measuring)
            with self._freed:
                with self.running.get_lock():
                    free = self.running.value < self.slots or self._handed.value > 0
                if not free:
                    self._freed.wait(min(max(pause, 0.02), PAUSE))

    def leave(self, extra: bool = False) -> None:
        """A job ends; ``extra``: it was admitted beyond the slots (:meth:`enter` returned True), so its place
        goes to a waiting worker without a measurement while the last admitting one is recent (module docstring)."""
        with self.running.get_lock():
            self.running.value -= 1
            now = time.monotonic()
            if extra and self.running.value >= self.slots and now - self._admitted_at.value <= HANDOFF_WINDOW:
                if now - self._handed_at.value > HANDOFF_FRESH:
                    self._handed.value = 0
                self._handed.value += 1
                self._handed_at.value = now
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
        gate.leave(extra)
    if isinstance(payload, dict) and isinstance(payload.get("timing"), dict):
        payload["timing"].update({"admission_wait": round(waited, 4), "admitted_extra": int(extra),
                                  "admitted_handed_on": int(gate.last == "handed")})
    return payload
