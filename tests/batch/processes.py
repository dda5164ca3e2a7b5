"""Waiting for processes that must end by themselves (a grader's workers after the grader is gone)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path


def ended(pid: int) -> bool:
    """The process is gone or a zombie (dead, waiting to be reaped)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] in ("Z", "X")
    except OSError:
        return True


def outlived(pids: list[int], timeout: float = 30.0) -> list[int]:
    """Wait up to ``timeout`` seconds (a backstop, not a speed check) for every process of ``pids`` to end; the ones
    still running are killed (SIGKILL, so that a failing test leaves nothing behind) and returned."""
    deadline = time.monotonic() + timeout
    while not all(ended(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    alive = [p for p in pids if not ended(p)]
    for p in alive:
        os.kill(p, signal.SIGKILL)
    return alive
