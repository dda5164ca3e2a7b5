"""The virtual environment is requirements.txt as it stands (``make setup`` installs it with ``--no-deps``).

Two packages that an optional extra asks for stay out on purpose (the Makefile says why): with them,
``import nbformat`` - in every nbgrader command, grading process, service process and book build - spent
0.8 of its 0.94 s of CPU compiling the grammars of rfc3987-syntax.
"""

from __future__ import annotations

import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: Left out of requirements.txt on purpose; pip check names them as the extra's missing requirement.
LEFT_OUT = {"rfc3987-syntax", "lark"}


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _pinned() -> dict[str, str]:
    pins = {}
    for line in (REPO / "requirements.txt").read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, version = line.partition("==")
            assert version, f"requirements.txt: {line!r} is not pinned with =="
            pins[_canonical(name)] = version
    return pins


def test_every_installed_package_is_pinned_at_its_version_and_nothing_else_is_installed():
    pins = _pinned()
    assert not LEFT_OUT & pins.keys(), f"requirements.txt pins {sorted(LEFT_OUT & pins.keys())} again (see the Makefile)"
    installed = {_canonical(d.metadata["Name"]): d.version for d in metadata.distributions()}
    ours = {"autograder", "autograder-lab", "pip", "setuptools", "wheel"}  # this repository's two and the installer
    assert {n: v for n, v in installed.items() if n not in ours and pins.get(n) != v} == {}
    assert sorted(pins.keys() - installed.keys()) == []


def test_pip_check_misses_only_what_is_left_out_on_purpose():
    out = subprocess.run([sys.executable, "-m", "pip", "check"], capture_output=True, text=True).stdout
    missing = {_canonical(m) for m in re.findall(r"requires ([A-Za-z0-9_.-]+), which is not installed", out)}
    problems = [line for line in out.splitlines() if line.strip() and "which is not installed" not in line
                and line.strip() != "No broken requirements found."]
    assert problems == [] and missing <= LEFT_OUT, out


def test_importing_nbformat_compiles_no_grammar():
    code = "import sys, nbformat, jsonschema; print('rfc3987_syntax' in sys.modules, 'lark' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "False"]


def test_no_two_packages_install_the_same_file():
    """``make setup`` installs the two halves of requirements.txt with two pips side by side: safe only while no
    two packages write the same file (one would overwrite the other's, in whichever order the pips got there)."""
    owners: dict[str, list[str]] = {}
    pins, pinned = _pinned(), {}
    for dist in metadata.distributions():  # each package of requirements.txt once (not this repository's own)
        if _canonical(dist.metadata["Name"]) in pins:
            pinned.setdefault(_canonical(dist.metadata["Name"]), dist)
    for dist in pinned.values():
        for file in dist.files or ():
            path = str(file)
            if ".dist-info/" not in path and "__pycache__" not in path and not path.startswith(".."):
                owners.setdefault(path, []).append(dist.metadata["Name"])
    assert {p: names for p, names in owners.items() if len(names) > 1} == {}
