"""Start the sandboxed student process and talk to it.

The student's code runs under bubblewrap, in two layers:

* the sandbox: new user, PID, network, IPC, UTS and cgroup namespaces (``--unshare-all``),
  uid/gid 65534 inside, no capabilities, ``--die-with-parent``, a new session; a file system made
  only of read-only binds of ``/usr``, ``/lib*``, the Python installation and the virtual
  environment (scikit-learn masked by a sealed, read-only empty tmpfs), the runner and its wire
  module and the one submitted notebook, on a read-only root with a read-only ``/dev``; nothing
  from the course repository, the submissions, the hidden tests or the gradebook is visible; a fixed
  minimal environment (``--clearenv`` plus ``--setenv``); resource limits (``setrlimit`` before
  ``exec``: address space, CPU seconds, file size, open files, core dumps) and a pids cgroup when
  the grader runs as root (``RLIMIT_NPROC`` otherwise);
* inside it, the runner starts as a zygote that never runs student code and forks the process that
  does (see ``runner.py``): new user, mount, IPC, network, UTS and PID namespaces, size-limited
  fresh tmpfs on /tmp, /dev/shm and /home/student, host device nodes and /dev/pts remounted
  read-only (the sandbox's uid maps to host uid 0, so a writable bind of /dev/null would let
  student code chmod the host's file), a hidden /proc, a new session keyring, fresh file
  descriptions, no capabilities and a seccomp filter.

The trusted side enforces a wall-clock timeout on every cell and every call and kills the whole
sandbox when it expires.  Assignment 5 reuses one sandbox for its 16 runs (``Session.new_run``):
the zygote is reused only after the grader has seen from outside that every process of the previous
run is gone and has resynchronised the pipe with a fresh nonce; any failure kills the sandbox.
"""

from __future__ import annotations

import dataclasses
import fcntl
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
_F_SETPIPE_SZ, _PIPE_SIZE = 1031, 1 << 16


class SandboxUnavailable(RuntimeError):
    """bubblewrap is missing or cannot create namespaces on this machine."""


class SandboxBroken(RuntimeError):
    """The sandbox started but could not isolate the student's process (e.g. no nested user namespaces).

    Raised instead of grading: a machine that cannot isolate must not turn every submission into 0.
    """


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
    submission_timeout: float = 180.0  # wall clock for the whole submission (all restarts, all cases)


@dataclass
class Outcome:
    """What one call produced: a value, an exception raised by student code, or a failure of the process."""

    ok: bool
    value: Any = None
    exc: dict | None = None
    failure: str | None = None  # "timeout", "crash", "protocol", "unavailable", "deadline"
    impl_calls: int = 0


@dataclass
class SetupReport:
    """Per-cell errors and cells skipped because they killed or hung the process."""

    cell_errors: dict[int, dict] = field(default_factory=dict)
    skipped: dict[int, str] = field(default_factory=dict)
    defined: list[str] = field(default_factory=list)
    restarts: int = 0
    out_of_time: bool = False  # the submission's deadline passed: the remaining cases did not run


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
    """Return None if the sandbox works here, else a reason (Chinese).

    Checks bubblewrap itself, then runs a real sandboxed call (zygote, isolated child, seccomp), so
    that a machine where e.g. nested user namespaces are forbidden is refused before grading starts.
    """
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
    session = Session([(0, "def _sandbox_selftest():\n    return 42\n")], None, sandbox=True)
    try:
        out = session.call("_sandbox_selftest", [])
    except SandboxBroken as exc:
        return f"沙箱无法隔离学生进程（{exc}）；内核需允许在沙箱中再建用户命名空间与挂载命名空间"
    finally:
        session.close()
    if not out.ok or out.value != 42:
        return f"沙箱自检失败（{out.failure or out.exc}）"
    return None


def bwrap_command(notebook: Path | None, limits: Limits) -> list[str]:
    """The bubblewrap command line that runs the runner on ``notebook``.

    /dev is read-only (the zygote's children share it; each gets its own /dev/shm).
    """
    cmd = ["bwrap", "--unshare-all", "--die-with-parent", "--new-session",
           "--uid", "65534", "--gid", "65534", "--hostname", "sandbox", "--cap-drop", "ALL",
           # The scratch file systems come first: a later bind of the Python installation or the
           # virtual environment may lie below /tmp (a checkout in /tmp), and must not be hidden.
           "--proc", "/proc", "--dev", "/dev", "--remount-ro", "/dev",
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
        # metric functions of scikit-learn are not available to answers: an empty, sealed mask
        cmd += ["--size", "4096", "--perms", "0555", "--tmpfs", sklearn, "--remount-ro", sklearn]
    cmd += ["--ro-bind", str(RUNNER_DIR / "runner.py"), "/opt/autograder/runner.py",
            "--ro-bind", str(RUNNER_DIR / "wire.py"), "/opt/autograder/wire.py"]
    if notebook is not None:
        cmd += ["--ro-bind", str(notebook), f"/home/student/{notebook.name}"]
    # bubblewrap's own root (/, /opt, /home and the mount points it made) is a tmpfs without a size
    # limit, shared by every run of the zygote: read-only.  (No --disable-userns: the zygote needs a
    # user namespace per child; the child's seccomp filter forbids any further one.)
    cmd += ["--remount-ro", "/"]
    cmd += ["--chdir", "/home/student", "--clearenv"]
    for key, value in _env().items():  # --clearenv keeps only what is set again here
        cmd += ["--setenv", key, value]
    return cmd


def _env() -> dict[str, str]:
    return {"PATH": "/usr/bin:/bin", "HOME": "/home/student", "LANG": "C.UTF-8", "PYTHONHASHSEED": "0",
            "PYTHONDONTWRITEBYTECODE": "1", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
            "MKL_NUM_THREADS": "1", "MPLBACKEND": "Agg"}


_SWEPT: set[Path] = set()
STALE_CGROUP_SECONDS = 3600.0


def _sweep_stale_cgroups(base: Path) -> None:
    """Once per process: remove our empty pids cgroups older than an hour (left by a grader killed with -9).

    A cgroup that still has a process cannot be removed (EBUSY); a fresh one belongs to a running
    grader and is left alone.
    """
    if base in _SWEPT:
        return
    _SWEPT.add(base)
    now = time.time()
    for old in base.glob("autograder-*"):
        try:
            if now - old.stat().st_mtime > STALE_CGROUP_SECONDS:
                old.rmdir()
        except OSError:
            pass


class _PidsCgroup:
    """A pids cgroup (v2 or v1) capping the number of processes, when the grader may create one."""

    def __init__(self, limit: int) -> None:
        self.path: Path | None = None
        if os.geteuid() != 0:
            return
        for base in (Path("/sys/fs/cgroup/pids"), Path("/sys/fs/cgroup")):
            if (base / "cgroup.procs").exists() and ((base / "pids.max").exists() or base.name == "pids"
                                                     or "pids" in _read(base / "cgroup.subtree_control")):
                _sweep_stale_cgroups(base)
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
                    time.sleep(0.002 if _ < 25 else 0.05)


def _read(p: Path) -> str:
    try:
        return p.read_text()
    except OSError:
        return ""


def _tree(pid: int) -> set[tuple[int, str]]:
    """(pid, start time) of every descendant of ``pid``, seen from the grader (host /proc)."""
    out: set[tuple[int, str]] = set()
    todo = [pid]
    while todo:
        p = todo.pop()
        try:
            tids = os.listdir(f"/proc/{p}/task")
        except OSError:
            continue
        for tid in tids:
            try:
                kids = Path(f"/proc/{p}/task/{tid}/children").read_text().split()
            except OSError:
                continue
            for k in kids:
                try:
                    start = Path(f"/proc/{k}/stat").read_text().rpartition(")")[2].split()[19]
                except (OSError, IndexError):
                    start = "?"
                if (int(k), start) not in out:
                    out.add((int(k), start))
                    todo.append(int(k))
    return out


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
                 limits: Limits | None = None, deadline: float | None = None) -> None:
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
        # with the sandbox, the runner is a zygote that runs no student code; the student's process is
        # its forked, isolated child, and new_run() replaces that child for the next run (assignment 5).
        self.fork = sandbox
        # time.monotonic() after which nothing more runs for this submission (Limits.submission_timeout)
        self.deadline = float("inf") if deadline is None else deadline
        self._child = False  # fork mode: a child is running
        self._idle = False  # fork mode: the zygote is alive and waits for "fork"
        self._baseline: set[tuple[int, str]] = set()
        self.zygotes_started = 0  # fork mode: more than one means a run ended its sandbox

    # -- process management -------------------------------------------------------------------
    def _spawn(self) -> None:
        if self.fork:
            self._fork_child()
            return
        # --no-sandbox (debugging only): a plain process in the notebook's directory
        cmd = [sys.executable, "-I", str(RUNNER_DIR / "runner.py")]
        cwd = str(self.notebook.parent) if self.notebook else None
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     env=_env(), cwd=cwd, start_new_session=True, preexec_fn=_preexec(self.limits, None),
                                     close_fds=True)
        self._buf = b""

    def _fork_child(self) -> None:
        """Fork mode: (re)start the zygote sandbox if needed, then ask it for a fresh child."""
        self._child = False
        if not (self._idle and self.proc is not None and self.proc.poll() is None):
            self.kill()
            self.zygotes_started += 1
            # the zygote, the forking child and the run's init are 3 processes the student does not own
            limits = dataclasses.replace(self.limits, processes=self.limits.processes + 3)
            self._cgroup = _PidsCgroup(limits.processes)
            procs = self._cgroup.procs_file()
            cmd = bwrap_command(self.notebook, limits) + [sys.executable, "-I", "/opt/autograder/runner.py"]
            self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                         env=_env(), start_new_session=True, preexec_fn=_preexec(limits, procs),
                                         close_fds=True)
            self._buf = b""
            hello = {"op": "zygote", "notebook": self.notebook.name if self.notebook else None,
                     "scratch_bytes": self.limits.scratch_bytes, "keep": self._kept_paths()}
            if not self._send(hello):
                return
            msg = self._recv(min(time.monotonic() + self.limits.setup_timeout, self.deadline))
            if not isinstance(msg, dict) or msg.get("op") != "zygote_ready":
                self.kill()
                return
            self._baseline = _tree(self.proc.pid)  # no student code has run yet: init + zygote
        self._idle = False
        self._child = self._send({"op": "fork"})

    def _kept_paths(self) -> list[str]:
        """Read-only binds each child must keep visible (those below /tmp are bound again)."""
        return _python_paths()

    def new_run(self) -> None:
        """Fork mode: end the current child (if any) so that the next call runs in a fresh one.

        Nothing the sandbox writes is trusted, so the zygote is reused only when (1) seen from
        outside, the sandbox's processes are again exactly those present before any student code
        ran (the child and all it started are gone), and (2) the zygote echoes a fresh random
        nonce; every line before the echo (e.g. messages forged by the dead child) is dropped.
        """
        if self._child and self.proc is not None and self.proc.poll() is None:
            ok = self._send({"op": "end"})
            deadline = time.monotonic() + 5.0
            while ok and _tree(self.proc.pid) != self._baseline:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    ok = False
                time.sleep(0.001)
            nonce = uuid.uuid4().hex
            ok = ok and self._send({"op": "sync", "nonce": nonce})
            while ok:
                msg = self._recv(deadline)
                if isinstance(msg, str):
                    ok = False
                elif msg.get("op") == "synced" and msg.get("nonce") == nonce:
                    break
            if ok:  # the buffer size belongs to the pipe, not to the child's descriptors: set it back
                for stream in (self.proc.stdin, self.proc.stdout):
                    try:
                        fcntl.fcntl(stream.fileno(), _F_SETPIPE_SZ, _PIPE_SIZE)
                    except OSError:
                        ok = False
            if ok:
                self._idle = True
            else:
                self.kill()
        self._child = False
        self._started = False
        self.report = SetupReport()

    def _alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None and (self._child or not self.fork)

    def kill(self) -> None:
        self._child = self._idle = False
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
        if self.proc is None or self.proc.stdin is None:
            return False
        try:
            self.proc.stdin.write(wire.dumps(msg))
            self.proc.stdin.flush()
            return True
        except (BrokenPipeError, OSError):
            return False

    def _recv(self, deadline: float) -> dict | str:
        """Next message, or "timeout" / "crash" / "protocol"."""
        if self.proc is None or self.proc.stdout is None:
            return "crash"
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
                if time.monotonic() >= self.deadline:
                    self.report.out_of_time = True
                    return False
                self._spawn()
                cells = [{"index": i, "source": s} for i, s in self.cells if i not in self.report.skipped]
                ok = self._send({"op": "setup", "cells": cells, "cell_timeout": self.limits.cell_timeout})
                deadline = min(time.monotonic() + self.limits.setup_timeout, self.deadline)
                current: int | None = None
                msg: dict | str = "crash"
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
                    elif op == "isolate_error":
                        self.kill()
                        raise SandboxBroken(str(msg.get("why"))[:300])
                    elif op == "ready":
                        defined = msg.get("defined")
                        self.report.defined = [str(d) for d in defined][:500] if isinstance(defined, list) else []
                        return True
                    else:
                        ok = False
                        break
                why = msg if isinstance(msg, str) else "crash"
                self.kill()
                if time.monotonic() >= self.deadline:
                    self.report.out_of_time = True
                    return False
                self.report.restarts += 1
                if current is None or current in self.report.skipped:
                    self.report.skipped[-1] = why  # the process itself could not start
                    return False
                self.report.skipped[current] = "超时" if why == "timeout" else "进程退出或被杀死"
            return False
        finally:
            self.wall_seconds += time.monotonic() - t0

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
            deadline = min(time.monotonic() + (timeout or self.limits.call_timeout), self.deadline)
            impl_calls = 0
            while True:
                reply = self._recv(deadline)
                if isinstance(reply, str):
                    self.kill()
                    if reply == "timeout" and time.monotonic() >= self.deadline:
                        self.report.out_of_time = True
                        reply = "deadline"
                    return Outcome(False, failure=reply, impl_calls=impl_calls)
                if reply.get("op") == "child_exit":  # fork mode: the child died during the call
                    self.kill()
                    return Outcome(False, failure="crash", impl_calls=impl_calls)
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
