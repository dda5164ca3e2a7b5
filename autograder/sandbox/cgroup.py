"""Process accounting of a sandbox seen from the host: its cgroups (pids, CPU, memory) and its process tree."""

from __future__ import annotations

import os
import signal
import time
import uuid
from pathlib import Path

from . import delegation

_SWEPT: set[Path] = set()
STALE_CGROUP_SECONDS = 3600.0


def _sweep_stale_cgroups(base: Path) -> None:
    """Once per process and hierarchy: remove our empty cgroups older than an hour (left by a grader killed with -9).

    A cgroup that still has a process cannot be removed (EBUSY); a fresh one belongs to a running
    grader and is left alone.
    """
    if base in _SWEPT:
        return
    _SWEPT.add(base)
    now = time.time()
    for old in base.glob("autograder-*"):  # never a delegated parent (autograder@USER)
        try:
            if now - old.stat().st_mtime > STALE_CGROUP_SECONDS:
                old.rmdir()
        except OSError:
            pass


CGROUP_ROOT = delegation.CGROUP_ROOT
BASES_TTL = 10.0  # seconds a process reuses where its sandboxes' cgroups go (:func:`_bases`)
_BASES: dict = {"key": None, "at": 0.0, "value": {}}


def _bases(explicit: str | None) -> dict[str, tuple[Path, Path]]:
    """Controller -> (parent, its resolved path) of :func:`delegation.parents` of ``explicit``, looked up again for
    another parent or after :data:`BASES_TTL` seconds (a run makes cgroups for every run of the student's code:
    looking the parents up each time cost ~0.5 ms of CPU, half of what making the cgroups costs)."""
    key = (explicit, os.geteuid(), str(delegation.CGROUP_ROOT))
    now = time.monotonic()
    cached = _BASES
    if cached["key"] != key or now - cached["at"] > BASES_TTL:
        try:
            found = delegation.parents(explicit)
        except delegation.DelegationError:
            found = {}
        cached = {"key": key, "at": now, "value": {c: (p, p.resolve()) for c, p in found.items()}}
        _BASES.update(cached)
    return cached["value"]


class SandboxCgroups:
    """The cgroups of one sandbox: its processes together may use at most ``processes`` pids, ``cpus``
    CPUs (CFS bandwidth) and ``memory_bytes`` of memory, and their CPU time is accounted for.

    Works on cgroup v1 (one hierarchy per controller: pids, cpu, cpuacct, memory) and v2 (one unified
    hierarchy), below the parent :func:`delegation.parents` finds: the hierarchy's root when the grader
    runs as root, else a subtree delegated to the grader's user.  Whatever is missing falls back:
    ``RLIMIT_NPROC`` for processes (see :func:`command.preexec`), per-process limits for memory and
    wall-clock time for the time limits (:meth:`cpu_seconds` returns None).

    ``parent``: the cgroup path of ``--cgroup-parent`` (:class:`autograder.model.SandboxSettings`; None: the
    machine's default).  ``own_cpu_hierarchy=False`` (a warm sandbox's run): on v1, when the cpu controller has a
    hierarchy of its own, no cgroup is made there; the run keeps the CPU bandwidth limit of its zygote's sandbox,
    which only ever runs one run at a time.
    """

    def __init__(self, *, processes: int, cpus: float, memory_bytes: int, own_cpu_hierarchy: bool = True,
                 parent: str | None = None) -> None:
        self.paths: dict[str, Path] = {}  # controller ("pids", "cpu", "cpuacct", "memory" or "unified") -> cgroup
        self._usage: str | None = None  # the file cpu_seconds() reads, once known
        resolved = _bases(parent)
        bases = {c: p for c, (p, _) in resolved.items()}
        name = f"autograder-{uuid.uuid4().hex[:12]}"
        period = 100_000
        if "unified" in bases:  # v2
            base = bases["unified"]
            enabled = _read(base / "cgroup.subtree_control").split()
            settings = {"pids": [("pids.max", str(processes))],
                        "cpu": [("cpu.max", f"{int(cpus * period)} {period}")],
                        "memory": [("memory.max", str(memory_bytes)), ("memory.swap.max", "0")]}
            path = self._make(base, name, [kv for ctrl, kvs in settings.items() if ctrl in enabled for kv in kvs])
            if path is not None:
                self.paths["unified"] = path
            return
        settings_v1 = {"pids": [("pids.max", str(processes))],
                       "cpu": [("cpu.cfs_period_us", str(period)), ("cpu.cfs_quota_us", str(int(cpus * period)))],
                       "cpuacct": [],
                       "memory": [("memory.limit_in_bytes", str(memory_bytes))]}
        made: dict[Path, Path] = {}  # resolved parent -> cgroup made there (cpu and cpuacct may share a hierarchy)
        for controller, kvs in settings_v1.items():
            base = bases.get(controller)
            if base is None:
                continue
            real = resolved[controller][1]
            if controller == "cpu" and not own_cpu_hierarchy and "cpuacct" in bases and resolved["cpuacct"][1] != real:
                continue  # the process stays in the cpu cgroup it was born in (moving it there costs ~10 ms)
            if real in made:
                self.paths[controller] = made[real]
                continue
            path = self._make(base, name, kvs)
            if path is not None:
                self.paths[controller] = made[real] = path

    @staticmethod
    def _make(base: Path, name: str, settings: list[tuple[str, str]]) -> Path | None:
        _sweep_stale_cgroups(base)
        path = base / name
        try:
            path.mkdir()
        except OSError:
            return None
        try:
            for key, value in settings:
                _write(f"{path}/{key}", value)
        except OSError:
            _remove(path)
            return None
        return path

    def _controller(self, name: str) -> Path | None:
        return self.paths.get("unified") if "unified" in self.paths else self.paths.get(name)

    def limits_processes(self) -> bool:
        path = self._controller("pids")
        return path is not None and (path / "pids.max").exists()

    def procs_files(self) -> list[str]:
        """The ``cgroup.procs`` files the sandbox's first process writes itself into (before exec)."""
        return [str(p / "cgroup.procs") for p in sorted(set(self.paths.values()))]

    def adopt(self, pid: int) -> bool:
        """Move process ``pid`` (and so everything it starts later) into these cgroups; False if a move failed.

        Used for a warm sandbox's run: the zygote's fresh child is moved here before any student code runs,
        so the run's processes, CPU time and memory are limited and accounted apart from the zygote's.
        """
        try:
            for procs_file in self.procs_files():
                _write(procs_file, str(pid))
        except OSError:
            return False
        return True

    def cpu_seconds(self) -> float | None:
        """CPU time (user + system) used so far by every process of the sandbox, or None if not accounted."""
        if self._usage is None:  # read for every message of a run: the path is made once
            if "unified" in self.paths:
                self._usage = f"{self.paths['unified']}/cpu.stat"
            elif "cpuacct" in self.paths:
                self._usage = f"{self.paths['cpuacct']}/cpuacct.usage"
            else:
                return None
        text = _read_fast(self._usage)
        if "unified" in self.paths:
            for line in text.splitlines():
                key, _, value = line.partition(" ")
                if key == "usage_usec" and value.strip().isdigit():
                    return int(value) / 1e6
            return None
        text = text.strip()
        return int(text) / 1e9 if text.isdigit() else None

    def kill(self) -> None:
        """Kill every process of the sandbox, also those that left its process group and session."""
        if "unified" in self.paths:
            try:
                (self.paths["unified"] / "cgroup.kill").write_text("1")
                return
            except OSError:
                pass
        for _ in range(20):  # v1 (or no cgroup.kill): signal what the group holds until it holds nothing
            pids = {int(p) for path in set(self.paths.values()) for p in _read(path / "cgroup.procs").split() if p.isdigit()}
            if not pids:
                return
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            time.sleep(0.005)

    def remove(self) -> None:
        for path in set(self.paths.values()):
            _remove(path)
        self.paths = {}
        self._usage = None


def kill_process(proc) -> None:
    """Kill a sandbox's first process (a ``subprocess.Popen``) and its process group, close its pipes, reap it."""
    import subprocess

    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.kill()
    except ProcessLookupError:
        pass
    for stream in (proc.stdin, proc.stdout):
        try:
            stream.close()
        except (OSError, AttributeError):
            pass
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass


def _remove(path: Path) -> None:
    for attempt in range(50):
        try:
            path.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.002 if attempt < 25 else 0.05)


def _read(p: Path) -> str:
    try:
        return p.read_text()
    except OSError:
        return ""


def _read_fast(path: str) -> str:
    """The text of a small kernel file (``/proc``, cgroup files) without Python's file objects; "" if unreadable."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return ""
    try:
        chunks = []
        while True:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks).decode("ascii", "replace")
    except OSError:
        return ""
    finally:
        os.close(fd)


def _write(path: str, value: str) -> None:
    """Write ``value`` to a cgroup file in one write (raises OSError like ``open``/``write``)."""
    fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    try:
        os.write(fd, value.encode())
    finally:
        os.close(fd)


def process_tree(pid: int) -> set[tuple[int, str]]:
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
            for k in _read_fast(f"/proc/{p}/task/{tid}/children").split():
                try:
                    start = _read_fast(f"/proc/{int(k)}/stat").rpartition(")")[2].split()[19]
                except IndexError:
                    start = "?"
                if (int(k), start) not in out:
                    out.add((int(k), start))
                    todo.append(int(k))
    return out
