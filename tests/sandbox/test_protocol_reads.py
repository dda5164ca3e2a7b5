"""A run reads the grader's messages buffered (``payload/runner.py``): the zygote reads its lines a byte at a time
(nothing past a line may reach its next child), but a run's child is the pipe's only reader until it exits, and a
call's arguments read a byte per system call cost ~0.6 ms of the run's CPU for two 20-item arrays (most of what a
call cost).  Counted from the host: the read system calls of the run's processes (``/proc/PID/io``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from autograder.sandbox import Session

CELLS = [(0, "def size(x):\n    return int(len(x))\n")]


def _reads(session: Session) -> int:
    """Read system calls made so far by the processes of the session's current run (host view)."""
    procs = Path(session._run_cgroup.procs_files()[0]).read_text().split()
    total = 0
    for pid in procs:
        for line in Path(f"/proc/{pid}/io").read_text().splitlines():
            if line.startswith("syscr:"):
                total += int(line.split()[1])
    return total


def test_a_run_reads_a_large_call_in_a_few_system_calls():
    big = np.linspace(0.0, 1.0, 5000)  # a line of ~100 kB
    session = Session(CELLS, None, sandbox=True)
    try:
        assert session.ensure_started()
        assert session.call("size", [big[:3]]).value == 3  # the run is past its set-up
        before = _reads(session)
        out = session.call("size", [big])
        after = _reads(session)
        assert out.failure is None and out.exc is None and out.value == 5000
        # byte by byte this was ~100,000 reads; buffered, a 64 KiB buffer's worth at a time
        assert after - before < 50, after - before
        # and the run still answers the next call and the grader's end exactly
        assert session.call("size", [[1, 2]]).value == 2
    finally:
        session.close()
