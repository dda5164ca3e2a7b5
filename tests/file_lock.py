"""An exclusive lock on a file, shared by the pytest-xdist workers of one run (and by any other process)."""

from __future__ import annotations

import contextlib
import fcntl
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """Hold ``flock(LOCK_EX)`` on ``path`` (created if missing) for the ``with`` block; waits while another holds it."""
    with open(path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
