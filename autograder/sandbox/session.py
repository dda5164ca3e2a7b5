"""A session: one submission's cells run in the sandbox, then calls of its functions, restarted as needed.

The student's code runs under bubblewrap, in two layers:

* the sandbox: new user, PID, network, IPC, UTS and cgroup namespaces (``--unshare-all``),
  uid/gid 65534 inside, no capabilities, ``--die-with-parent``, a new session; a file system made
  only of read-only binds of ``/usr``, ``/lib*``, the Python installation and the virtual
  environment (every package folder but the environment's own, and the environment's scikit-learn
  and SciPy, masked by sealed, read-only empty tmpfs) and the runner and its wire module, on a
  read-only root with a read-only ``/dev``; nothing from the course repository, the submissions, the
  hidden tests or the gradebook is visible; a fixed minimal environment (``--clearenv`` plus
  ``--setenv``); resource limits (``setrlimit`` before ``exec``: address space, CPU seconds, file
  size, open files, core dumps) and a cgroup for the zygote (:mod:`.delegation`; ``RLIMIT_NPROC``
  without a pids cgroup);
* inside it, the runner starts as a zygote that never runs student code and forks the process that
  does, one per run (:mod:`.zygote`, ``payload/zygote.py``): the grader moves that child into the
  run's own cgroups (pids, CPU, memory, CPU-time accounting) before it receives the notebook; it gets
  new user, mount, IPC, network, UTS and PID namespaces, size-limited fresh tmpfs on /tmp, /dev/shm and
  /home/student, host device nodes and /dev/pts remounted read-only, a hidden /proc, a new session
  keyring, fresh file descriptions, no capabilities, a seccomp filter, and non-dumpable (nothing
  outside may ptrace it or read its memory).

No sandbox process is host root: an unprivileged grader starts bubblewrap as itself; a root grader
joins the cgroups and sets the limits in the sandbox's first process, stages the binds its sandbox
account may not reach (:func:`command.staged`) and becomes that account (:mod:`.account`, default
``nobody``) before ``exec bwrap``.

The trusted side enforces a CPU-time limit (wall clock as a backstop) on every cell and every call and
ends the run when it expires (:mod:`.runs`: the zygote serves the next run; :mod:`.channel`: every message
read with bounds).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from ..model import Limits, Outcome, SandboxSettings, SetupReport
from . import command
from .payload import wire
from .runs import runs_for

# why a cell is skipped in the next runs, by how the run it was running in failed (else: the process ended)
SKIP_REASONS = {"timeout": "超时", "protocol": "向评分程序发出了不合规定的消息"}


def _cell_error(error: object) -> dict[str, str]:
    """A cell's error as the runner reported it, kept only as bounded text (it comes from the sandbox)."""
    if not isinstance(error, dict):
        return {"type": "?", "tb": ""}
    return {"type": str(error.get("type"))[:100], "tb": str(error.get("tb"))[:4000]}


class SandboxBroken(RuntimeError):
    """The sandbox started but could not isolate the student's process (e.g. no nested user namespaces).

    Raised instead of grading: a machine that cannot isolate must not turn every submission into 0.
    """


class Session:
    """One submission's code in the sandbox: its cells run once per run, then calls are served; a run that crashed
    or timed out is replaced by a fresh one (the cell that caused it skipped), at most :attr:`MAX_RESTARTS` times.

    Parameters
    ----------
    cells : list of (index, source)
        The code cells to execute, in order.
    notebook : Path or None
        The submitted notebook, copied into each run's working directory.
    sandbox : SandboxSettings or bool
        Whether and where to isolate (a bool: this machine's defaults; False only with ``--no-sandbox``).
    limits : Limits
        Resource and time limits.
    deadline : float or None
        ``time.monotonic()`` after which nothing more runs for this submission.
    """

    MAX_RESTARTS = 12

    def __init__(self, cells: list[tuple[int, str]], notebook: Path | None, *, sandbox: SandboxSettings | bool = True,
                 limits: Limits | None = None, deadline: float | None = None) -> None:
        self.cells = cells
        self.notebook = notebook
        self.limits = limits or Limits()
        self.report = SetupReport()
        self.deadline = float("inf") if deadline is None else deadline
        self.start_seconds = 0.0  # time spent starting runs and running cells, all runs included
        self._runs = runs_for(self.limits, SandboxSettings.of(sandbox))
        self._next_id = 0
        self._started = False

    # what the isolation tests look at: the sandbox's first process, its zygote, the current run's cgroups
    @property
    def proc(self):
        return self._runs.proc

    @property
    def _zygote(self):
        return self._runs.zygote

    @property
    def _run_cgroup(self):
        return self._runs.run_cgroup

    @property
    def zygotes_started(self) -> int:
        return self._runs.zygotes_started

    def _cpu(self) -> float | None:
        """CPU seconds used so far by the current run's whole process tree (None: not accounted here)."""
        return self._runs.cpu()

    def _kept_paths(self) -> list[str]:
        """Read-only binds each run must keep visible (those below /tmp are bound again in the run)."""
        return command.python_paths()

    # -- runs -------------------------------------------------------------------------------------
    def new_run(self) -> None:
        """End the current run (if any) so that the next call runs in a fresh one, with a fresh report."""
        self._runs.end(force=False)
        self._started = False
        self.report = SetupReport()

    def kill(self, why: str = "crash") -> None:
        """Stop the current run; ``why == "protocol"`` (it wrote garbage on the pipe) gives up the sandbox too."""
        if why == "protocol":
            self._runs.discard()
        else:
            self._runs.end(force=True)

    def close(self) -> None:
        """End this session (a healthy zygote is kept for the next session of this process)."""
        self._runs.close()

    def _send(self, msg: dict) -> bool:
        channel = self._runs.channel
        return channel is not None and channel.send(msg)

    def _recv(self, deadline: float, cpu_limit: float | None = None) -> dict | str:
        channel = self._runs.channel
        return "crash" if channel is None else channel.recv(deadline, cpu_limit, self._cpu)

    def _limits_for(self, cpu_seconds: float) -> tuple[float, float | None]:
        """(wall-clock deadline, CPU-time limit) of a cell or call allowed ``cpu_seconds`` of CPU time.

        With CPU accounting, the limit is CPU time of every process of the run (so a busy machine does not change
        a grade) and the wall clock is only a generous backstop; without it, wall clock."""
        now = time.monotonic()
        used = self._cpu()
        if used is None:
            return now + cpu_seconds, None
        return now + self.limits.wall_backstop(cpu_seconds), used + cpu_seconds

    def ensure_started(self) -> bool:
        """A run with every cell run is there (started now if needed); False when none can be any more."""
        if self._runs.running():
            return True
        if self._started:
            self.report.restarts += 1
        self._started = True
        if self.report.restarts > self.MAX_RESTARTS or -1 in self.report.skipped or self.report.out_of_time:
            return False
        t0 = time.monotonic()
        try:
            return self._start()
        finally:
            self.start_seconds += time.monotonic() - t0

    def _start(self) -> bool:
        """Start a run and run the cells, again after a run crashed or hung, skipping the cell that caused it."""
        while self.report.restarts <= self.MAX_RESTARTS:
            if time.monotonic() >= self.deadline:
                self.report.out_of_time = True
                return False
            why, cell = self._run_cells() if self._runs.start(self.notebook, self._kept_paths(), self.deadline) \
                else ("crash", None)
            if why is None:
                return True
            self.kill(why)
            if time.monotonic() >= self.deadline:
                self.report.out_of_time = True
                return False
            self.report.restarts += 1
            if cell is None or cell in self.report.skipped:
                self.report.skipped[-1] = why  # the process itself could not start
                return False
            self.report.skipped[cell] = SKIP_REASONS.get(why, "进程退出或被杀死")
        return False

    def _run_cells(self) -> tuple[str | None, int | None]:
        """Run the cells in the fresh run: (None, None) when all ran, else why the run failed and in which cell.

        The runner stops a cell itself after ``cell_timeout`` of its own CPU time (or its wall-clock backstop); this
        side stops the whole run a little later, counting all of its processes.  What the runner may say, in this
        order only: ``cell_start``/``cell_done`` for each cell sent, then ``ready``; ``isolate_error`` only as the
        very first answer (before any student code ran).  Student code runs inside a cell and can write to the
        pipe, so anything else ends the run as a protocol error.
        """
        cells = [{"index": i, "source": s} for i, s in self.cells if i not in self.report.skipped]
        cell_wall, _ = self._limits_for(self.limits.cell_timeout)
        if not self._send({"op": "setup", "cells": cells, "cell_timeout": self.limits.cell_timeout,
                           "cell_wall": cell_wall - time.monotonic()}):
            return "crash", None
        deadline = min(time.monotonic() + self.limits.setup_timeout, self.deadline)
        order = [c["index"] for c in cells]
        position, current, first = 0, None, True
        cell_deadline, cell_cpu = deadline, None
        while True:
            if current is None:
                msg = self._recv(deadline)
            else:
                msg = self._recv(min(deadline, cell_deadline + 2.0), None if cell_cpu is None else cell_cpu + 1.0)
            if isinstance(msg, str):
                return msg, current
            op, index = msg.get("op"), msg.get("index")
            if first and op == "isolate_error":
                self._runs.discard()
                raise SandboxBroken(str(msg.get("why"))[:300])
            first = False
            expected = order[position] if position < len(order) else None
            if op == "cell_start" and current is None and type(index) is int and index == expected:
                current = index
                cell_deadline, cell_cpu = self._limits_for(self.limits.cell_timeout)
            elif op == "cell_done" and current is not None and type(index) is int and index == current:
                if msg.get("error"):
                    self.report.cell_errors[current] = _cell_error(msg.get("error"))
                current, position = None, position + 1
            elif op == "ready" and current is None and position == len(order):
                return None, None
            else:
                return "protocol", current

    # -- calls ---------------------------------------------------------------------------------
    def call(self, fn: str, args: list[Any], kwargs: dict[str, Any] | None = None, *, op: str = "call",
             impl_handler=None, timeout: float | None = None) -> Outcome:
        """Call ``fn(*args, **kwargs)`` in the sandbox (or run a student test with ``op="run_test"``)."""
        if time.monotonic() >= self.deadline:
            self.report.out_of_time = True
            return Outcome(False, failure="deadline")
        if not self.ensure_started():
            return Outcome(False, failure="deadline" if self.report.out_of_time else "unavailable")
        self._next_id += 1
        cid = self._next_id
        if op == "call":
            msg = {"op": "call", "id": cid, "fn": fn, "args": [wire.encode(a) for a in args],
                   "kwargs": {k: wire.encode(v) for k, v in (kwargs or {}).items()}}
        else:
            msg = {"op": "run_test", "id": cid, "fn": fn, "impls": list(args)}
        if not self._send(msg):
            self.kill()
            return Outcome(False, failure="crash")
        wall, cpu_limit = self._limits_for(timeout or self.limits.call_timeout)
        deadline = min(wall, self.deadline)
        impl_calls = 0
        while True:
            reply = self._recv(deadline, cpu_limit)
            if isinstance(reply, str):
                self.kill(reply)
                if reply == "timeout" and time.monotonic() >= self.deadline:
                    self.report.out_of_time = True
                    reply = "deadline"
                return Outcome(False, failure=reply, impl_calls=impl_calls)
            if reply.get("op") == "child_exit":  # the run's child died during the call
                self.kill()
                return Outcome(False, failure="crash", impl_calls=impl_calls)
            if reply.get("op") == "impl_call" and impl_handler is not None and impl_calls < 10_000:
                if time.monotonic() >= deadline:  # answering calls counts towards the call's time
                    self.kill()
                    late = time.monotonic() >= self.deadline
                    self.report.out_of_time = self.report.out_of_time or late
                    return Outcome(False, failure="deadline" if late else "timeout", impl_calls=impl_calls)
                impl_calls += 1
                answer = impl_handler(reply)
                answer.update({"op": "impl_result", "id": cid})
                if not self._send(answer):
                    self.kill()
                    return Outcome(False, failure="crash", impl_calls=impl_calls)
                continue
            if reply.get("op") != "result" or reply.get("id") != cid:
                self.kill("protocol")
                return Outcome(False, failure="protocol", impl_calls=impl_calls)
            if reply.get("ok"):
                try:
                    return Outcome(True, value=wire.decode(reply.get("value")), impl_calls=impl_calls)
                except (wire.WireError, KeyError, TypeError, ValueError, OverflowError):
                    return Outcome(False, failure="protocol", impl_calls=impl_calls)
            exc = reply.get("exc")
            if not isinstance(exc, dict):
                return Outcome(False, failure="protocol", impl_calls=impl_calls)
            clean = {"type": str(exc.get("type"))[:100], "mro": [str(m)[:100] for m in exc.get("mro", [])][:20]
                     if isinstance(exc.get("mro"), list) else [], "msg": str(exc.get("msg"))[:1000],
                     "tb": str(exc.get("tb"))[:4000]}
            return Outcome(False, exc=clean, impl_calls=impl_calls)
