"""The protocol pipe between the grader and a sandbox's runner: one JSON line per message, read with bounds.

Nothing that comes out of the sandbox is trusted: :meth:`Channel.recv` splits what arrives into lines looking only at
the new bytes, refuses a line longer than the wire format allows (``"protocol"``) before it is decoded, and checks the
wall-clock deadline and the CPU-time limit before every message, also while messages keep arriving (a flood of lines
must not keep the grader busy past them).
"""

from __future__ import annotations

import fcntl
import os
import select
import subprocess
import time
from collections import deque
from typing import Callable

from .payload import wire

_F_SETPIPE_SZ, PIPE_SIZE = 1031, 1 << 16
CpuClock = Callable[[], "float | None"]  # CPU seconds used so far by what the deadline is for (None: not accounted)


class Channel:
    """The runner's stdin (messages and raw bytes to it) and stdout (lines from it) of ``proc``."""

    def __init__(self, proc: subprocess.Popen) -> None:
        self.proc = proc
        self.forget()

    def forget(self) -> None:
        """Drop what was read but not handed out (a half line must not be joined to another reader's lines)."""
        self._lines: deque[bytes] = deque()  # complete lines not yet handed out
        self._partial = bytearray()  # the start of the next line

    def send(self, msg: dict) -> bool:
        """One message; False when the runner's end is gone."""
        return self.write(wire.dumps(msg))

    def write(self, data: bytes) -> bool:
        """Raw bytes (the notebook after a run's line); False when the runner's end is gone."""
        try:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()
            return True
        except (BrokenPipeError, OSError, AttributeError, ValueError):
            return False

    def restore_pipe_size(self) -> bool:
        """Set both pipes' buffer size back (it belongs to the pipe, and a run may have changed it)."""
        try:
            for stream in (self.proc.stdin, self.proc.stdout):
                fcntl.fcntl(stream.fileno(), _F_SETPIPE_SZ, PIPE_SIZE)
        except (OSError, ValueError):
            return False
        return True

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

    def recv(self, deadline: float, cpu_limit: float | None = None, cpu: CpuClock = lambda: None) -> dict | str:
        """The next message, or ``"timeout"`` (``deadline`` on the monotonic clock, or ``cpu()`` reached
        ``cpu_limit``), ``"crash"`` (the pipe ended) or ``"protocol"`` (a line too long or not a message)."""
        clock = time.monotonic
        if self.proc.stdout is None or self.proc.stdout.closed:
            return "crash"
        if clock() >= deadline:
            return "timeout"
        if cpu_limit is not None and (used := cpu()) is not None and used >= cpu_limit:
            return "timeout"
        fd = self.proc.stdout.fileno()
        while not self._lines:
            left = deadline - clock()
            if left <= 0:
                return "timeout"
            ready, _, _ = select.select([fd], [], [], left if cpu_limit is None else min(left, 0.05))
            if not ready:
                used = cpu() if cpu_limit is not None else None
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
        try:
            return wire.loads(self._lines.popleft())
        except wire.WireError:
            return "protocol"
