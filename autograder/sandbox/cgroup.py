"""Process accounting of a sandbox seen from the host: the pids cgroup and the process tree."""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path

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


class PidsCgroup:
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
