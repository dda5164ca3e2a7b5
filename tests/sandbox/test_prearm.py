"""``cgroup.prearm``: the no-op write that lets the RCU grace period of the next cgroup move pass early.

It writes this process into the cgroup it is in; written into any other cgroup's ``cgroup.procs`` it would move
the grader there (e.g. into the root cgroup, out of its limits, or into a sandbox's accounting).  A real process
in a real cgroup of its own checks that it stays exactly where it was.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from autograder.sandbox import delegation

if os.geteuid() != 0 or not (delegation.CGROUP_ROOT / ("cgroup.procs" if delegation.is_v2() else "pids/cgroup.procs")).exists():
    pytest.skip("needs root and a cgroup file system (without one the grader moves no process)", allow_module_level=True)

PROBE = """
import json, sys
from pathlib import Path
from autograder.sandbox import cgroup
Path(sys.argv[1]).write_text("0")  # into the test's cgroup, before anything else
before = Path("/proc/self/cgroup").read_text()
found = str(cgroup._own_procs_file())
for _ in range(3):
    cgroup.prearm()
    assert cgroup.wait_armed(10), "the prearm write did not end"
print(json.dumps({"before": before, "after": Path("/proc/self/cgroup").read_text(), "found": found}))
"""


def test_prearm_writes_only_the_graders_own_cgroup_and_moves_nothing():
    base = delegation.CGROUP_ROOT if delegation.is_v2() else delegation.CGROUP_ROOT / "pids"
    own = base / f"autograder-prearm-test-{uuid.uuid4().hex[:8]}"
    own.mkdir()
    try:
        out = subprocess.run([sys.executable, "-c", PROBE, str(own / "cgroup.procs")], capture_output=True, text=True,
                             timeout=60, cwd=Path(__file__).resolve().parents[2])
        assert out.returncode == 0, out.stderr[-2000:]
        seen = json.loads(out.stdout)
        line = next(ln for ln in seen["before"].splitlines()
                    if ln.split(":")[1] == ("" if delegation.is_v2() else "pids") or "pids" in ln.split(":")[1].split(","))
        assert line.endswith(f"/{own.name}"), f"the probe is not in the test's cgroup: {line}"
        assert seen["after"] == seen["before"], "prearm moved the process into another cgroup"
        assert seen["found"] == str(own / "cgroup.procs")
    finally:
        for _ in range(100):  # the probe has exited; its cgroup empties a moment later
            try:
                own.rmdir()
                break
            except OSError:
                import time

                time.sleep(0.02)
