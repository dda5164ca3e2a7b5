"""The parallel run's units (tests/parallel_units.py) hold: under ``--dist loadscope`` every test module runs
whole on one worker, modules marked with one ``xdist_group`` run on the same worker, the units start longest
first by their measured seconds, and every run measures them again.

Run on a small project of its own (three modules, one group) with the installed pytest and pytest-xdist: a guard
against a silent change of either (with pytest 9, xdist 3.8's ``--dist loadgroup`` ignored ``xdist_group`` marks
without a word, and a module fixture ran on every worker).  Those runs load no plugin but xdist and the units'
hooks (``PYTEST_DISABLE_PLUGIN_AUTOLOAD``): the environment's other plugins took 4 s of CPU per run to import.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from .parallel_units import CACHE_KEY, module_group, unit_of

ROOT = Path(__file__).resolve().parents[1]

CONFTEST = """
from pathlib import Path
import tests.parallel_units as units
units.DURATIONS_FILE = Path(__file__).with_name("durations.json")
from tests.parallel_units import *  # noqa: F401,F403 (the hooks)
"""
MODULES = {
    "test_short.py": "def test_a():\n    pass\n\ndef test_b():\n    pass\n",
    "test_long.py": "import time\n\ndef test_c():\n    time.sleep(0.3)\n",
    "test_shared_one.py": "import pytest\n\npytestmark = pytest.mark.xdist_group('g')\n\ndef test_d():\n    pass\n",
    "test_shared_two.py": "import pytest\n\npytestmark = pytest.mark.xdist_group('g')\n\ndef test_e():\n    pass\n",
}


def project(tmp_path: Path, durations: dict[str, float]) -> Path:
    for name, text in {"conftest.py": CONFTEST, **MODULES}.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    (tmp_path / "durations.json").write_text(json.dumps(durations), encoding="utf-8")
    return tmp_path


def pytest_in(where: Path, *args: str, worker: str | None = None) -> subprocess.CompletedProcess:
    """pytest on the project ``where`` with pytest-xdist as its only plugin (and the hooks its conftest imports)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    env.pop("PYTEST_XDIST_WORKER", None)
    if worker:
        env["PYTEST_XDIST_WORKER"] = worker
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "xdist.plugin", "--rootdir", str(where), *args],
                          cwd=where, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc


def test_unit_of_is_the_declared_group_or_the_module():
    assert unit_of("tests/batch/test_faults.py::test_worker_crash[sqlite]") == "tests/batch/test_faults.py"
    assert unit_of("tests/service/test_api.py::test_a") == unit_of("tests/service/test_attacks.py::test_b") == "service-course"
    assert unit_of("tests/book/test_pdf.py::test_every_font_is_embedded") == "tests/book/test_pdf.py"
    assert unit_of("tests/test_layers.py::test_x[a@b]") == "tests/test_layers.py"


def _marks_in_source(path: Path) -> list[ast.Call]:
    """Every ``xdist_group(...)`` call written anywhere in a module."""
    return [node for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "xdist_group"]


def test_every_declared_group_is_one_the_scheduler_reads():
    """A module that writes an ``xdist_group`` mark anywhere (a decorator, a computed name, ...) declares it where
    :func:`module_group` reads it: as a constant in its ``pytestmark``; the test project below shows that pytest
    sees that mark too."""
    declared = {}
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        if path.name == "test_parallel_units.py" or not _marks_in_source(path):
            continue
        module = str(path.relative_to(ROOT))
        declared[module] = module_group(module)
    assert declared == {"tests/service/test_api.py": "service-course", "tests/service/test_attacks.py": "service-course",
                        "tests/service/hub/test_hub_api.py": "jupyterhub", "tests/service/hub/test_hub_lab.py": "jupyterhub",
                        "tests/docs/test_links.py": "guide", "tests/docs/test_reference.py": "guide",
                        "tests/docs/test_guide_footer.py": "guide"}


@pytest.mark.slow  # a pytest of its own (about 1 s)
def test_pytest_sees_the_group_the_scheduler_reads(tmp_path):
    where = project(tmp_path, {})
    proc = pytest_in(where, "--collect-only", "-q", "-p", "no:cacheprovider", "-m", "xdist_group")
    modules = {line.split("::")[0] for line in proc.stdout.splitlines() if "::" in line}
    assert modules == {"test_shared_one.py", "test_shared_two.py"}, proc.stdout


@pytest.mark.slow  # a pytest of its own (about 1 s; 2 s with two workers)
def test_units_start_longest_first_by_the_committed_seconds(tmp_path):
    where = project(tmp_path, {"test_short.py": 30.0, "test_long.py": 1.0, "test_shared_one.py": 10.0, "test_shared_two.py": 25.0})
    ids = [line for line in pytest_in(where, "--collect-only", "-q", "-p", "no:cacheprovider", worker="gw0").stdout.splitlines()
           if "::" in line]
    order = [i.split("::")[0] for i in ids]  # the group g (10 + 25 s) before test_short.py (30 s) before test_long.py (1 s)
    assert order == ["test_shared_one.py", "test_shared_two.py", "test_short.py", "test_short.py", "test_long.py"], ids


@pytest.mark.slow  # a pytest of its own (about 1 s; 2 s with two workers)
def test_each_module_runs_on_one_worker_and_a_group_together(tmp_path):
    where = project(tmp_path, {})
    proc = pytest_in(where, "-n", "2", "--dist", "loadscope", "-v", "-p", "no:cacheprovider")
    workers = defaultdict(set)
    for worker, nodeid in re.findall(r"^\[(gw\d+)\] \[\s*\d+%\] PASSED (\S+)", proc.stdout, re.M):
        module = nodeid.split("::")[0]
        workers["g" if module.startswith("test_shared_") else module].add(worker)
    assert set(workers) == {"test_short.py", "test_long.py", "g"}, proc.stdout[-3000:]
    assert all(len(w) == 1 for w in workers.values()), dict(workers)
    assert len(set().union(*workers.values())) == 2, "both workers got work"


@pytest.mark.slow  # a pytest of its own (about 1 s; 2 s with two workers)
def test_a_run_measures_its_tests_and_make_test_durations_writes_them_per_module(tmp_path):
    where = project(tmp_path, {"test_gone.py": 7.0, "test_short.py": 9.0})
    pytest_in(where, "-n", "2", "--dist", "loadscope")
    cache = json.loads((where / ".pytest_cache" / "v" / CACHE_KEY).read_text(encoding="utf-8"))
    assert set(cache) == {"test_short.py::test_a", "test_short.py::test_b", "test_long.py::test_c",
                          "test_shared_one.py::test_d", "test_shared_two.py::test_e"}
    assert cache["test_long.py::test_c"] >= 0.3 > cache["test_short.py::test_a"]
    assert json.loads((where / "durations.json").read_text(encoding="utf-8")) == {"test_gone.py": 7.0, "test_short.py": 9.0}
    pytest_in(where, "--store-durations", "test_long.py")
    written = json.loads((where / "durations.json").read_text(encoding="utf-8"))
    assert set(written) == {"test_short.py", "test_long.py", "test_shared_one.py", "test_shared_two.py"}  # no module gone
    assert written["test_long.py"] >= 0.3 and written["test_short.py"] < 1  # measured, not the 9 s it said before
