"""Start the sandboxed student process and talk to it.

The student's code runs under bubblewrap, in two layers:

* the sandbox: new user, PID, network, IPC, UTS and cgroup namespaces (``--unshare-all``),
  uid/gid 65534 inside, no capabilities, ``--die-with-parent``, a new session; a file system made
  only of read-only binds of ``/usr``, ``/lib*``, the Python installation and the virtual
  environment (scikit-learn masked by a sealed, read-only empty tmpfs) and the runner and its wire
  module, on a read-only root with a read-only ``/dev``; nothing
  from the course repository, the submissions, the hidden tests or the gradebook is visible; a fixed
  minimal environment (``--clearenv`` plus ``--setenv``); resource limits (``setrlimit`` before
  ``exec``: address space, CPU seconds, file size, open files, core dumps) and a cgroup for the
  zygote (:mod:`.delegation`; ``RLIMIT_NPROC`` without a pids cgroup);
* inside it, the runner starts as a zygote that never runs student code and forks the process that
  does, one per run (see ``runner.py``): the grader moves that child into the run's own cgroups
  (pids, CPU, memory, CPU-time accounting) before it receives the notebook; it gets new user, mount,
  IPC, network, UTS and PID namespaces, size-limited fresh tmpfs on /tmp, /dev/shm and
  /home/student, host device nodes and /dev/pts remounted read-only, a hidden /proc, a new session
  keyring, fresh file descriptions, no capabilities, a seccomp filter, and non-dumpable (nothing
  outside may ptrace it or read its memory).

No sandbox process is host root: an unprivileged grader starts bubblewrap as itself; a root grader
joins the cgroups and sets the limits in the sandbox's first process, stages the binds its sandbox
account may not reach (:func:`command.staged`) and becomes that account (:mod:`.account`, default
``nobody``) before ``exec bwrap``.

The trusted side enforces a CPU-time limit (wall clock as a backstop) on every cell and every call and
kills the run when it expires.  The zygote is reused for the next run (assignment 5's 16 runs,
``Session.new_run``) and, as a warm sandbox (:mod:`.warm`), for the next submission of this process,
only after the grader has seen from outside that every process of the previous run is gone and has
resynchronised the pipe with a fresh nonce; garbage on the pipe or any failure destroys the sandbox.
"""

from __future__ import annotations

import dataclasses
import fcntl
import os
import select
import subprocess
import sys
import threading
import time
import uuid
from collections import deque
from pathlib import Path
from typing import Any

from ..model import Limits, Outcome, SetupReport
from .account import sandbox_account
from .cgroup import SandboxCgroups, kill_process, prearm, process_tree
from . import command, delegation, warm
from .command import PAYLOAD_DIR, PAYLOAD_MOUNT, environment, preexec
from .payload import wire


_F_SETPIPE_SZ, _PIPE_SIZE = 1031, 1 << 16
_ZYGOTE_PROCESSES = 6  # pids of a zygote's own cgroup: bubblewrap, its init, the zygote, a child not yet moved


def _cell_error(error: object) -> dict[str, str]:
    """A cell's error as the runner reported it, kept only as bounded text (it comes from the sandbox)."""
    if not isinstance(error, dict):
        return {"type": "?", "tb": ""}
    return {"type": str(error.get("type"))[:100], "tb": str(error.get("tb"))[:4000]}


_cells = threading.local()


def cell_time() -> tuple[float, float]:
    """(wall, CPU) seconds the student cells of every session in this thread took so far, from each cell's start
    to its end as the runner reported them; CPU time from the run's cgroup (wall clock where it is not accounted).

    The difference is time a student's own cells spent waiting (``time.sleep``, blocked reads): part of a
    submission's "sandbox start + cells" that no sandbox can save.  Read before and after grading a submission.
    """
    return getattr(_cells, "wall", 0.0), getattr(_cells, "cpu", 0.0)


class SandboxBroken(RuntimeError):
    """The sandbox started but could not isolate the student's process (e.g. no nested user namespaces).

    Raised instead of grading: a machine that cannot isolate must not turn every submission into 0.
    """


class Session:
    """One sandboxed student process, restarted as needed, serving calls.

    Parameters
    ----------
    cells : list of (index, source)
        The code cells to execute, in order.
    notebook : Path or None
        The submitted notebook, bound read-only into the working directory.
    sandbox : bool
        False only when the instructor passed ``--no-sandbox``.
    limits : Limits
        Resource and time limits.
    deadline : float or None
        ``time.monotonic()`` after which nothing more runs for this submission.
    """

    MAX_RESTARTS = 12

    def __init__(self, cells: list[tuple[int, str]], notebook: Path | None, *, sandbox: bool = True,
                 limits: Limits | None = None, deadline: float | None = None) -> None:
        self.cells = cells
        self.notebook = notebook
        self.sandbox = sandbox
        self.limits = limits or Limits()
        self.report = SetupReport()
        self.proc: subprocess.Popen | None = None  # with the sandbox: the zygote's bubblewrap process
        self._reset_buffer()
        self._next_id = 0
        self._started = False
        # with the sandbox, the runner is a zygote that runs no student code; the student's process is
        # its forked, isolated child, and new_run() replaces that child for the next run (assignment 5).
        self.fork = sandbox
        # time.monotonic() after which nothing more runs for this submission (Limits.submission_timeout)
        self.deadline = float("inf") if deadline is None else deadline
        self._zygote: warm.Zygote | None = None  # fork mode: the sandbox (perhaps warm, from an earlier session)
        self._run_cgroup: SandboxCgroups | None = None  # fork mode: the cgroups of the current run
        self._child = False  # fork mode: a child is running
        self._idle = False  # fork mode: the zygote is alive and waits for "fork"
        self._notebook_bytes: bytes | None = None
        self.zygotes_started = 0  # fork mode: sandboxes used; more than one means a run ended its sandbox
        self.start_seconds = 0.0  # time spent starting the sandbox and running cells, all runs included
        if self.fork:
            prearm()  # the first run's move into its cgroups follows in ~15 ms (cgroup.prearm)

    # -- process management -------------------------------------------------------------------
    def _spawn(self) -> None:
        if self.fork:
            self._fork_child()
            return
        # --no-sandbox (debugging only): a plain process in the notebook's directory
        cmd = [sys.executable, "-I", str(PAYLOAD_DIR / "runner.py")]
        cwd = str(self.notebook.parent) if self.notebook else None
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     env=environment(), cwd=cwd, start_new_session=True, preexec_fn=preexec(self.limits, [], False),
                                     close_fds=True)
        self._reset_buffer()

    def _zygote_key(self) -> tuple:
        """What a zygote is started with (a warm one is taken only if it was started exactly so)."""
        lim = self.limits
        return (tuple(command.bwrap_command(lim)), str(sandbox_account()), os.environ.get(delegation.ENV_PARENT, ""),
                lim.memory_bytes, lim.cpu_seconds, lim.file_bytes, lim.open_files, lim.processes, lim.cpus,
                lim.sandbox_memory_bytes)

    def _start_zygote(self, key: tuple) -> warm.Zygote | None:
        """Start a sandbox whose runner becomes the zygote; None if it did not say ``zygote_ready`` in time."""
        prearm()  # its first process moves itself into the sandbox's cgroups (cgroup.prearm)
        # bubblewrap, its init and the zygote, plus a fresh child until the grader moves it into its run's cgroups
        cg = SandboxCgroups(processes=_ZYGOTE_PROCESSES, cpus=self.limits.cpus, memory_bytes=self.limits.sandbox_memory_bytes)
        # the zygote, the forking child and the run's init are 3 processes the student does not own (RLIMIT_NPROC)
        limits = dataclasses.replace(self.limits, processes=self.limits.processes + 3)
        user = sandbox_account()  # the grader is root: the sandbox starts as this unprivileged account
        cmd = command.bwrap_command(self.limits) + [sys.executable, "-I", f"{PAYLOAD_MOUNT}/runner.py"]
        cmd, stage = command.staged(cmd) if user is not None else (cmd, [])
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                env=environment(), start_new_session=True, cwd="/",
                                preexec_fn=preexec(limits, cg.procs_files(), cg.limits_processes(), user, stage),
                                close_fds=True)
        z = warm.Zygote(proc, cg, key)
        self.proc = proc
        self._reset_buffer()
        msg = self._recv(min(time.monotonic() + self.limits.setup_timeout, self.deadline)) \
            if self._send({"op": "zygote"}) else "crash"
        if not isinstance(msg, dict) or msg.get("op") != "zygote_ready":
            z.destroy()
            self.proc = None
            return None
        z.baseline = process_tree(proc.pid)  # no student code has run yet: init + zygote
        z.rss0 = z.rss()
        return z

    def _fork_child(self) -> None:
        """Fork mode: take a warm zygote or start one if needed, then have it fork a fresh child for this run.

        The child answers ``forked`` before it does anything else; the grader moves it (seen from the host:
        the one new process below the sandbox) into the run's own cgroups and only then sends it the run's
        line and the notebook.  Nothing of the student has run yet, so both answers can be trusted.
        """
        self._child = False
        taken = False
        if not (self._idle and self._zygote is not None and self._zygote.alive()):
            self._discard()
            self._zygote = warm.take(self._zygote_key())
            taken = self._zygote is not None
            if taken:
                self._reset_buffer()  # a line half read from another zygote must not be joined to its lines
            else:
                self._zygote = self._start_zygote(self._zygote_key())
            if self._zygote is None:
                return
            self.zygotes_started += 1
        if not self._forked(self._zygote):
            self._discard()
            if not taken:
                return
            # no student code ran: a warm zygote that could not fork (e.g. it died meanwhile) is replaced
            self._zygote = self._start_zygote(self._zygote_key())
            if self._zygote is None or not self._forked(self._zygote):
                self._discard()
                return
        z = self._zygote
        z.runs += 1
        if self._notebook_bytes is None:
            self._notebook_bytes = self.notebook.read_bytes() if self.notebook is not None else b""
        data = self._notebook_bytes
        run = {"op": "run", "notebook": self.notebook.name if self.notebook is not None else "", "size": len(data),
               "scratch_bytes": self.limits.scratch_bytes, "keep": self._kept_paths()}
        self._child = self._send(run) and self._write(data)

    def _forked(self, z: warm.Zygote) -> bool:
        """Ask ``z`` for a child and move it into a new cgroup of this run; False if that failed."""
        prearm()  # the move below then needs no RCU grace period of its own (cgroup.prearm)
        self.proc = z.proc
        self._idle = False
        self._run_cgroup = SandboxCgroups(processes=self.limits.processes + 2, cpus=self.limits.cpus,
                                          memory_bytes=self.limits.sandbox_memory_bytes, own_cpu_hierarchy=False)
        msg = self._recv(min(time.monotonic() + self.limits.setup_timeout, self.deadline)) \
            if self._send({"op": "fork"}) else "crash"
        new = process_tree(z.proc.pid) - z.baseline if isinstance(msg, dict) and msg.get("op") == "forked" else set()
        return len(new) == 1 and self._run_cgroup.adopt(next(iter(new))[0])

    def _kept_paths(self) -> list[str]:
        """Read-only binds each child must keep visible (those below /tmp are bound again)."""
        return command.python_paths()

    def new_run(self) -> None:
        """Fork mode: end the current child (if any) so that the next call runs in a fresh one."""
        prearm()  # the next run's move into its cgroups follows shortly (cgroup.prearm)
        if self._run_cgroup is not None or self._child:
            self._end_run(force=False)
        self._child = False
        self._started = False
        self.report = SetupReport()

    def _end_run(self, *, force: bool) -> bool:
        """End the current run and make the zygote wait for the next one; True if it does, else it is destroyed.

        Nothing the sandbox writes is trusted, so the zygote is kept only when (1) seen from outside,
        the sandbox's processes are again exactly those present before any student code ran (``end`` asks
        the child to exit, which ends its PID namespace; the run's cgroups are killed when it does not within
        0.5 s or when the end is forced; without cgroups a forced end destroys the sandbox), and (2) the
        zygote echoes a fresh random nonce; every line before the echo (e.g. messages forged by the dead
        child) is dropped, and half a line left on the pipe makes the echo unreadable, which destroys the
        sandbox.
        """
        z, run = self._zygote, self._run_cgroup
        self._child = self._idle = False
        self._run_cgroup = None
        ok = z is not None and z.alive()
        cgroups = run is not None and bool(run.paths)
        asked = ok and not force and self._send({"op": "end"})  # the child exits; its PID namespace ends with it
        if ok and not asked and cgroups:
            run.kill()
        ok = ok and (asked or cgroups)
        deadline, kill_at = time.monotonic() + 5.0, time.monotonic() + 0.5
        while ok and process_tree(z.proc.pid) != z.baseline:
            if cgroups and asked and time.monotonic() > kill_at:  # it did not end when asked: kill the run
                run.kill()
                asked = False
            if time.monotonic() > deadline or not z.alive():
                ok = False
            time.sleep(0.001)
        if run is not None:
            run.remove()
        nonce = uuid.uuid4().hex
        ok = ok and self._send({"op": "sync", "nonce": nonce})
        while ok:
            msg = self._recv(deadline)
            if isinstance(msg, str):
                ok = False
            elif msg.get("op") == "synced" and msg.get("nonce") == nonce:
                break
        if ok:  # the buffer size belongs to the pipe, not to the child's descriptors: set it back
            for stream in (z.proc.stdin, z.proc.stdout):
                try:
                    fcntl.fcntl(stream.fileno(), _F_SETPIPE_SZ, _PIPE_SIZE)
                except OSError:
                    ok = False
        if ok:
            self._idle = True
        else:
            self._discard()
        return ok

    def _alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None and (self._child or not self.fork)

    def _discard(self) -> None:
        """Fork mode: destroy the sandbox (the zygote and every process of it) and the run's cgroups."""
        self._child = self._idle = False
        if self._run_cgroup is not None:
            self._run_cgroup.kill()
            self._run_cgroup.remove()
            self._run_cgroup = None
        if self._zygote is not None:
            self._zygote.destroy()
            self._zygote = None
        self.proc = None

    def kill(self, why: str = "crash") -> None:
        """Stop the student's process.

        With the sandbox only the current run ends (its child and all it started); the zygote waits for
        the next run, unless the run left the protocol pipe unusable (``why == "protocol"``: it wrote
        garbage on it) or the zygote cannot be brought back, which destroys the sandbox.
        """
        if not self.fork:
            self._kill_plain()
        elif why == "protocol":
            self._discard()
        elif self._run_cgroup is not None or self._child:
            self._end_run(force=True)
        elif not self._idle:
            self._discard()

    def close(self) -> None:
        """End this session; a healthy zygote goes back to :mod:`.warm` for the next session of this process."""
        if not self.fork:
            self._kill_plain()
            return
        if self._run_cgroup is not None or self._child:
            self._end_run(force=False)
        z, idle = self._zygote, self._idle
        self._zygote, self.proc, self._idle = None, None, False
        if z is not None:
            warm.give(z) if idle else z.destroy()

    def _kill_plain(self) -> None:
        """--no-sandbox: kill the plain process and its process group."""
        if self.proc is not None:
            kill_process(self.proc)
            self.proc = None

    def _write(self, data: bytes) -> bool:
        """Raw bytes after a line (the notebook of a run)."""
        if self.proc is None or self.proc.stdin is None:
            return False
        try:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()
            return True
        except (BrokenPipeError, OSError):
            return False

    def _send(self, msg: dict) -> bool:
        if self.proc is None or self.proc.stdin is None:
            return False
        try:
            self.proc.stdin.write(wire.dumps(msg))
            self.proc.stdin.flush()
            return True
        except (BrokenPipeError, OSError):
            return False

    def _cpu(self) -> float | None:
        """CPU seconds used so far by the sandbox's whole process tree (None: not accounted here)."""
        return self._run_cgroup.cpu_seconds() if self._run_cgroup is not None else None

    def _limits_for(self, cpu_seconds: float) -> tuple[float, float | None]:
        """(wall-clock deadline, CPU-time limit) of a cell or call allowed ``cpu_seconds`` of CPU time.

        With CPU accounting, the limit is CPU time of every process of the sandbox (so a busy machine does
        not change a grade) and the wall clock is only a generous backstop; without it, wall clock."""
        now = time.monotonic()
        used = self._cpu()
        if used is None:
            return now + cpu_seconds, None
        return now + self.limits.wall_backstop(cpu_seconds), used + cpu_seconds

    def _reset_buffer(self) -> None:
        self._lines: deque[bytes] = deque()  # complete lines not yet handed out
        self._partial = bytearray()  # the start of the next line

    def _take(self, chunk: bytes) -> bool:
        """Split a chunk read from the pipe into lines, looking only at the new bytes (linear in what arrives);
        False when the current line grows past the wire format's limit."""
        parts = chunk.split(b"\n")
        if len(parts) > 1:
            self._partial += parts[0]
            self._lines.append(bytes(self._partial))
            self._lines.extend(parts[1:-1])
            self._partial = bytearray(parts[-1])
        else:
            self._partial += chunk
        return len(self._partial) <= wire.MAX_LINE and all(len(line) <= wire.MAX_LINE for line in parts[1:-1])

    def _recv(self, deadline: float, cpu_limit: float | None = None) -> dict | str:
        """Next message, or "timeout" (wall ``deadline`` or CPU time ``cpu_limit`` reached) / "crash" / "protocol".

        The limits are checked before every message, also when messages keep arriving (a flood of lines
        must not keep the grader busy past them)."""
        if self.proc is None or self.proc.stdout is None:
            return "crash"
        if time.monotonic() >= deadline:
            return "timeout"
        if cpu_limit is not None:
            used = self._cpu()
            if used is not None and used >= cpu_limit:
                return "timeout"
        fd = self.proc.stdout.fileno()
        while not self._lines:
            left = deadline - time.monotonic()
            if left <= 0:
                return "timeout"
            ready, _, _ = select.select([fd], [], [], left if cpu_limit is None else min(left, 0.05))
            if not ready:
                used = self._cpu() if cpu_limit is not None else None
                if used is None and cpu_limit is None:
                    return "timeout"
                if used is not None and used >= cpu_limit:
                    return "timeout"
                continue
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                return "crash"
            if not self._take(chunk):
                return "protocol"
        line = self._lines.popleft()
        try:
            return wire.loads(line)
        except wire.WireError:
            return "protocol"

    def _start(self) -> bool:
        """(Re)start the process and run the cells, skipping cells that killed or hung it before."""
        t0 = time.monotonic()
        try:
            while self.report.restarts <= self.MAX_RESTARTS:
                if time.monotonic() >= self.deadline:
                    self.report.out_of_time = True
                    return False
                self._spawn()
                cells = [{"index": i, "source": s} for i, s in self.cells if i not in self.report.skipped]
                # the runner stops a cell itself after cell_timeout of its own CPU time (or cell_wall of wall
                # clock); this side stops the whole sandbox a little later, counting all of its processes
                cell_wall, cpu_limit = self._limits_for(self.limits.cell_timeout)
                ok = self._send({"op": "setup", "cells": cells, "cell_timeout": self.limits.cell_timeout,
                                 "cell_wall": cell_wall - time.monotonic()})
                deadline = min(time.monotonic() + self.limits.setup_timeout, self.deadline)
                current: int | None = None
                cell_began: tuple[float, float | None] = (0.0, None)
                cell_deadline, cell_cpu = deadline, None
                # what the runner may say, in this order only: cell_start/cell_done for each cell sent, then ready;
                # isolate_error only as the very first answer (before any student code ran).  Student code runs
                # inside a cell and can write to the pipe, so anything else ends the sandbox as a protocol error.
                order = [c["index"] for c in cells]
                position = 0
                first = True
                msg: dict | str = "crash"
                while ok:
                    if current is None:
                        msg = self._recv(deadline)
                    else:
                        msg = self._recv(min(deadline, cell_deadline + 2.0), None if cell_cpu is None else cell_cpu + 1.0)
                    if isinstance(msg, str):
                        ok = False
                        break
                    op, index = msg.get("op"), msg.get("index")
                    if first and op == "isolate_error" and self.fork:
                        self._discard()
                        raise SandboxBroken(str(msg.get("why"))[:300])
                    first = False
                    expected = order[position] if position < len(order) else None
                    if op == "cell_start" and current is None and type(index) is int and index == expected:
                        current = index
                        cell_deadline, cell_cpu = self._limits_for(self.limits.cell_timeout)
                        cell_began = (time.monotonic(), self._cpu())
                    elif op == "cell_done" and current is not None and type(index) is int and index == current:
                        error = msg.get("error")
                        if error:
                            self.report.cell_errors[current] = _cell_error(error)
                        current = None
                        position += 1
                        self._cell_ended(cell_began)
                    elif op == "ready" and current is None and position == len(order):
                        return True
                    else:
                        msg = "protocol"
                        ok = False
                        break
                why = msg if isinstance(msg, str) else "crash"
                if current is not None:  # the cell that hung or crashed the run: its time was the student's
                    self._cell_ended(cell_began)
                self.kill(why)
                if time.monotonic() >= self.deadline:
                    self.report.out_of_time = True
                    return False
                self.report.restarts += 1
                if current is None or current in self.report.skipped:
                    self.report.skipped[-1] = why  # the process itself could not start
                    return False
                self.report.skipped[current] = {"timeout": "超时", "protocol": "向评分程序发出了不合规定的消息"}.get(why, "进程退出或被杀死")
            return False
        finally:
            self.start_seconds += time.monotonic() - t0

    def _cell_ended(self, began: tuple[float, float | None]) -> None:
        """Add a student cell's wall and CPU time (run's cgroup; wall clock without one) to :func:`cell_time`."""
        wall = time.monotonic() - began[0]
        cpu = self._cpu()
        _cells.wall = getattr(_cells, "wall", 0.0) + wall
        _cells.cpu = getattr(_cells, "cpu", 0.0) + (wall if cpu is None or began[1] is None else max(0.0, cpu - began[1]))

    def ensure_started(self) -> bool:
        if self._alive():
            return True
        if self.proc is not None and not self.fork:
            self.kill()
        if self._started:
            self.report.restarts += 1
        self._started = True
        if self.report.restarts > self.MAX_RESTARTS or -1 in self.report.skipped or self.report.out_of_time:
            return False
        return self._start()

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
            if reply.get("op") == "child_exit":  # fork mode: the child died during the call
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
