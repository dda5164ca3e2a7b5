"""The parallel run's units (tests/conftest.py) hold: under ``--dist loadscope`` every test module runs
whole on one worker, and modules of one shared group run on the same worker.

A guard against a silent change of pytest or pytest-xdist: with pytest 9, xdist 3.8's ``--dist
loadgroup`` ignored ``xdist_group`` marks without a word, and a module fixture ran on every worker.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

from .conftest import unit_of

ROOT = Path(__file__).resolve().parents[1]
MODULES = ["tests/test_layers.py", "tests/deploy/test_local_ports.py", "tests/sandbox/test_wire.py"]


def test_unit_of_groups_shared_fixtures_and_keeps_modules_whole():
    assert unit_of("tests/batch/test_faults.py::test_worker_crash[sqlite]") == "scale"
    assert unit_of("tests/service/test_scale.py::test_x") == "scale"
    assert unit_of("tests/service/test_api.py::test_a") == unit_of("tests/service/test_attacks.py::test_b")
    assert unit_of("tests/book/test_pdf.py::test_every_font_is_embedded") == "tests/book/test_pdf.py"


def test_each_module_runs_on_one_worker():
    proc = subprocess.run([sys.executable, "-m", "pytest", "-n", "2", "--dist", "loadscope", "-v", "-p", "no:cacheprovider",
                           *MODULES], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:]
    workers = defaultdict(set)
    for worker, nodeid in re.findall(r"^\[(gw\d+)\] \[\s*\d+%\] PASSED (\S+)", proc.stdout, re.M):
        workers[unit_of(nodeid)].add(worker)
    assert set(workers) == set(MODULES), proc.stdout[-3000:]
    assert all(len(w) == 1 for w in workers.values()), dict(workers)
    assert len(set().union(*workers.values())) == 2, "both workers got work"
