"""Start the sandboxed student process and talk to it.

The student's code runs in a separate process under bubblewrap:

* new user, PID, network, IPC, UTS and cgroup namespaces (``--unshare-all``), uid/gid 65534
  inside, no capabilities, ``--die-with-parent``, a new session;
* a filesystem made only of read-only binds of ``/usr``, ``/lib*``, the Python
  installation and the virtual environment (with scikit-learn masked by an empty
  tmpfs), the runner and its wire module, the one submitted notebook (read-only),
  and a size-limited tmpfs as home and working directory; nothing from the course
  repository, the submissions, the hidden tests or the gradebook is visible;
* an empty environment (``--clearenv``) plus a few fixed variables;
* resource limits (``setrlimit`` before ``exec``): address space, CPU seconds, file
  size, open files, core dumps, and processes (a pids cgroup when the grader runs as
  root, ``RLIMIT_NPROC`` otherwise); the trusted side enforces a wall-clock timeout
  on every cell and every call and kills the whole process group when it expires.
"""

from __future__ import annotations

import os
import resource
import select
import shutil
import signal
import subprocess
import sys
import sysconfig
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import wire

RUNNER_DIR = Path(__file__).resolve().parent
_MAX_LINE = 64 << 20


class SandboxUnavailable(RuntimeError):
    """bubblewrap is missing or cannot create namespaces on this machine."""


@dataclass
class Limits:
    """Resource limits of one sandboxed student process."""

    memory_bytes: int = 1 << 30
    cpu_seconds: int = 60
    file_bytes: int = 8 << 20
    scratch_bytes: int = 32 << 20
    open_files: int = 64
    processes: int = 32
    cell_timeout: float = 10.0
    call_timeout: float = 4.0
    setup_timeout: float = 60.0


@dataclass
class Outcome:
    """What one call produced: a value, an exception raised by student code, or a failure of the process."""

    ok: bool
    value: Any = None
    exc: dict | None = None
    failure: str | None = None  # "timeout", "crash", "protocol", "unavailable"
    impl_calls: int = 0


@dataclass
class SetupReport:
    """Per-cell errors and cells skipped because they killed or hung the process."""

    cell_errors: dict[int, dict] = field(default_factory=dict)
    skipped: dict[int, str] = field(default_factory=dict)
    defined: list[str] = field(default_factory=list)
    restarts: int = 0


def _python_paths() -> list[str]:
    """Directories the sandboxed interpreter needs (read-only)."""
    paths = {sys.prefix, sys.base_prefix, sysconfig.get_paths()["stdlib"]}
    exe = Path(sys.executable)
    paths.add(str(exe.parent))
    real = exe.resolve()
    paths.add(str(real.parent.parent))
    out: list[str] = []
    for p in sorted(paths, key=len):
        if any(p == q or p.startswith(q.rstrip("/") + "/") for q in out):
            continue
        out.append(p)
    return out


def _site_packages() -> str:
    return sysconfig.get_paths()["purelib"]


def bwrap_available() -> str | None:
    """Return None if bubblewrap works here, else a reason (Chinese)."""
    exe = shutil.which("bwrap")
    if exe is None:
        return "未找到 bwrap（Debian/Ubuntu：apt-get install bubblewrap）"
    try:
        r = subprocess.run([exe, "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/", "true"],
                           capture_output=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap 无法运行：{exc}"
    if r.returncode != 0:
        return "bwrap 无法创建命名空间：" + r.stderr.decode(errors="replace").strip()[:300]
    return None


def bwrap_command(notebook: Path | None, limits: Limits) -> list[str]:
    """The bubblewrap command line that runs the runner on ``notebook``."""
    cmd = ["bwrap", "--unshare-all", "--die-with-parent", "--new-session",
           "--uid", "65534", "--gid", "65534", "--hostname", "sandbox", "--cap-drop", "ALL",
           # The scratch file systems come first: a later bind of the Python installation or the
           # virtual environment may lie below /tmp (a checkout in /tmp), and must not be hidden.
           "--proc", "/proc", "--dev", "/dev",
           "--size", str(limits.scratch_bytes), "--tmpfs", "/tmp",
           "--size", str(limits.scratch_bytes), "--tmpfs", "/home/student"]
    for d in ("/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin"):
        if os.path.islink(d):
            cmd += ["--symlink", os.readlink(d), d]
        elif os.path.isdir(d):
            cmd += ["--ro-bind", d, d]
    for p in _python_paths():
        cmd += ["--ro-bind", p, p]
    sklearn = os.path.join(_site_packages(), "sklearn")
    if os.path.isdir(sklearn):
        cmd += ["--tmpfs", sklearn]  # metric functions of scikit-learn are not available to answers
    cmd += ["--ro-bind", str(RUNNER_DIR / "runner.py"), "/opt/autograder/runner.py",
            "--ro-bind", str(RUNNER_DIR / "wire.py"), "/opt/autograder/wire.py"]
    if notebook is not None:
        cmd += ["--ro-bind", str(notebook), f"/home/student/{notebook.name}"]
    cmd += ["--chdir", "/home/student", "--clearenv"]
    return cmd


def _env() -> dict[str, str]:
    return {"PATH": "/usr/bin:/bin", "HOME": "/home/student", "LANG": "C.UTF-8", "PYTHONHASHSEED": "0",
            "PYTHONDONTWRITEBYTECODE": "1", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
            "MKL_NUM_THREADS": "1", "MPLBACKEND": "Agg"}


class _PidsCgroup:
    """A pids cgroup (v2 or v1) capping the number of processes, when the grader may create one."""

    def __init__(self, limit: int) -> None:
        self.path: Path | None = None
        if os.geteuid() != 0:
            return
        for base in (Path("/sys/fs/cgroup/pids"), Path("/sys/fs/cgroup")):
            if (base / "cgroup.procs").exists() and ((base / "pids.max").exists() or base.name == "pids"
                                                     or "pids" in _read(base / "cgroup.subtree_control")):
                try:
                    path = base / f"autograder-{uuid.uuid4().hex[:12]}"
                    path.mkdir()
                    (path / "pids.max").write_text(str(limit))
                    self.path = path
                    return
                except OSError:
                    continue

    def procs_file(self) -> str | None:
        return str(self.path / "cgroup.procs") if self.path else None

    def remove(self) -> None:
        if self.path:
            for _ in range(50):
                try:
                    self.path.rmdir()
                    return
                except OSError:
                    time.sleep(0.05)


def _read(p: Path) -> str:
    try:
        return p.read_text()
    except OSError:
        return ""


def _preexec(limits: Limits, procs_file: str | None):
    def apply() -> None:
        if procs_file:
            with open(procs_file, "w") as fh:
                fh.write("0")
        mem = limits.memory_bytes
        resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
        resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds + 1))
        resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_bytes, limits.file_bytes))
        resource.setrlimit(resource.RLIMIT_NOFILE, (limits.open_files, limits.open_files))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if not procs_file and os.geteuid() != 0:
            n = len([p for p in os.listdir("/proc") if p.isdigit()])
            resource.setrlimit(resource.RLIMIT_NPROC, (n + limits.processes, n + limits.processes))

    return apply


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
    impl_handler : callable or None
        ``handler(fn_name, args, kwargs) -> dict`` answering ``impl_call`` messages
        (assignment 5); runs in the trusted process.
    """

    MAX_RESTARTS = 12

    def __init__(self, cells: list[tuple[int, str]], notebook: Path | None, *, sandbox: bool = True,
                 limits: Limits | None = None) -> None:
        self.cells = cells
        self.notebook = notebook
        self.sandbox = sandbox
        self.limits = limits or Limits()
        self.report = SetupReport()
        self.proc: subprocess.Popen | None = None
        self._buf = b""
        self._next_id = 0
        self._cgroup: _PidsCgroup | None = None
        self.wall_seconds = 0.0
        self._started = False

    # -- process management -------------------------------------------------------------------
    def _spawn(self) -> None:
        runner = ["/opt/autograder/runner.py"] if self.sandbox else [str(RUNNER_DIR / "runner.py")]
        python = [sys.executable, "-I"]
        self._cgroup = _PidsCgroup(self.limits.processes) if self.sandbox else None
        procs = self._cgroup.procs_file() if self._cgroup else None
        if self.sandbox:
            cmd = bwrap_command(self.notebook, self.limits) + python + runner
            cwd = None
        else:
            cmd = python + runner
            cwd = str(self.notebook.parent) if self.notebook else None
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     env=_env(), cwd=cwd, start_new_session=True, preexec_fn=_preexec(self.limits, procs),
                                     close_fds=True)
        self._buf = b""

    def kill(self) -> None:
        if self.proc is None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            self.proc.kill()
        except ProcessLookupError:
            pass
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                stream.close()
            except OSError:
                pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        if self._cgroup:
            if self._cgroup.path:
                try:
                    (self._cgroup.path / "cgroup.kill").write_text("1")
                except OSError:
                    pass
            self._cgroup.remove()
            self._cgroup = None
        self.proc = None

    close = kill

    def _send(self, msg: dict) -> bool:
        assert self.proc is not None and self.proc.stdin is not None
        try:
            self.proc.stdin.write(wire.dumps(msg))
            self.proc.stdin.flush()
            return True
        except (BrokenPipeError, OSError):
            return False

    def _recv(self, deadline: float) -> dict | str:
        """Next message, or "timeout" / "crash" / "protocol"."""
        assert self.proc is not None and self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                return "timeout"
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                return "timeout"
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                return "crash"
            self._buf += chunk
            if len(self._buf) > _MAX_LINE:
                return "protocol"
        line, _, self._buf = self._buf.partition(b"\n")
        try:
            return wire.loads(line)
        except wire.WireError:
            return "protocol"

    def _start(self) -> bool:
        """(Re)start the process and run the cells, skipping cells that killed or hung it before."""
        t0 = time.monotonic()
        try:
            while self.report.restarts <= self.MAX_RESTARTS:
                self._spawn()
                cells = [{"index": i, "source": s} for i, s in self.cells if i not in self.report.skipped]
                ok = self._send({"op": "setup", "cells": cells, "cell_timeout": self.limits.cell_timeout})
                deadline = time.monotonic() + self.limits.setup_timeout
                current: int | None = None
                while ok:
                    cell_deadline = min(deadline, time.monotonic() + self.limits.cell_timeout + 2.0)
                    msg = self._recv(cell_deadline if current is not None else deadline)
                    if isinstance(msg, str):
                        ok = False
                        break
                    op = msg.get("op")
                    if op == "cell_start":
                        current = msg.get("index")
                    elif op == "cell_done":
                        if msg.get("error"):
                            self.report.cell_errors[msg.get("index")] = msg["error"]
                        current = None
                    elif op == "ready":
                        defined = msg.get("defined")
                        self.report.defined = [str(d) for d in defined][:500] if isinstance(defined, list) else []
                        return True
                    else:
                        ok = False
                        break
                why = msg if isinstance(msg, str) else "crash"
                self.kill()
                self.report.restarts += 1
                if current is None or current in self.report.skipped:
                    self.report.skipped[-1] = why  # the process itself could not start
                    return False
                self.report.skipped[current] = "超时" if why == "timeout" else "进程退出或被杀死"
            return False
        finally:
            self.wall_seconds += time.monotonic() - t0

    def ensure_started(self) -> bool:
        if self.proc is not None and self.proc.poll() is None:
            return True
        if self.proc is not None:
            self.kill()
        if self._started:
            self.report.restarts += 1
        self._started = True
        if self.report.restarts > self.MAX_RESTARTS or -1 in self.report.skipped:
            return False
        return self._start()

    # -- calls ---------------------------------------------------------------------------------
    def call(self, fn: str, args: list[Any], kwargs: dict[str, Any] | None = None, *, op: str = "call",
             impl_handler=None, timeout: float | None = None) -> Outcome:
        """Call ``fn(*args, **kwargs)`` in the sandbox (or run a student test with ``op="run_test"``)."""
        if not self.ensure_started():
            return Outcome(False, failure="unavailable")
        t0 = time.monotonic()
        try:
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
            deadline = time.monotonic() + (timeout or self.limits.call_timeout)
            impl_calls = 0
            while True:
                reply = self._recv(deadline)
                if isinstance(reply, str):
                    self.kill()
                    return Outcome(False, failure=reply, impl_calls=impl_calls)
                if reply.get("op") == "impl_call" and impl_handler is not None and impl_calls < 10_000:
                    impl_calls += 1
                    answer = impl_handler(reply)
                    answer.update({"op": "impl_result", "id": cid})
                    if not self._send(answer):
                        self.kill()
                        return Outcome(False, failure="crash", impl_calls=impl_calls)
                    continue
                if reply.get("op") != "result" or reply.get("id") != cid:
                    self.kill()
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
        finally:
            self.wall_seconds += time.monotonic() - t0
