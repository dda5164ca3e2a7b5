"""One list of what student code cannot import: the packages the sandbox masks (``sandbox.command.MASKED_PACKAGES``)
are the modules whose top-level imports the grader skips, and no other module of the engine names them."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from autograder.check.prepare import skip_unavailable_imports
from autograder.sandbox.command import MASKED_PACKAGES, UNAVAILABLE_MODULES

PACKAGE = Path(__file__).resolve().parents[2] / "autograder"
THE_LIST = PACKAGE / "sandbox" / "command.py"


@pytest.mark.parametrize("name", UNAVAILABLE_MODULES)
def test_every_unavailable_module_is_skipped_however_it_is_imported(name):
    code = f"import numpy as np\nimport {name}\nfrom {name}.sub import thing\nimport {name}.sub as alias\nx = 1\n"
    new, skipped = skip_unavailable_imports(code)
    assert [line for line, _ in skipped] == [2, 3, 4]
    assert new.split("\n")[0] == "import numpy as np" and new.split("\n")[4] == "x = 1"
    assert skip_unavailable_imports(f"import {name}x\n")[1] == []  # a name that merely starts like it is not


def _named(path: Path, names: set[str]) -> list[str]:
    """Where the source at ``path`` writes one of ``names`` as a string."""
    return [f"{path.relative_to(PACKAGE)}:{node.lineno} {node.value!r}"
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names]


def test_the_masked_packages_are_named_in_one_module():
    """A second list (in the grader's preparation, the feedback, the sandbox's masks) would name them again."""
    masked = set(MASKED_PACKAGES)
    assert masked <= set(UNAVAILABLE_MODULES)
    assert len(_named(THE_LIST, masked)) == len(masked)  # the scan sees the one list
    assert [hit for path in sorted(PACKAGE.rglob("*.py")) if path != THE_LIST for hit in _named(path, masked)] == []
