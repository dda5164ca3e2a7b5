"""The grading engine's layers and their dependency direction, checked on every import statement.

    sandbox  <-  check  <-  batch  <-  commands  ->  store
                  |            ^           |            ^
              reference        +--  service  ---------+   model (everyone may use model)

* ``autograder/sandbox/payload/`` runs INSIDE the sandbox: standard library, NumPy and its own modules only;
* ``autograder/sandbox/`` (the trusted client) knows nothing of assignments, grades or gradebooks;
* ``autograder/check/`` grades one notebook; ``autograder/batch/`` schedules many; only ``autograder/store/``
  writes the gradebook and the output folder, and it knows results, not how they are produced;
* ``autograder/service/`` (the online grading service) queues submissions and grades them with the batch
  layer's jobs and pools, writing through the store; it never reaches into the sandbox.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "autograder"
PAYLOAD = PACKAGE / "sandbox" / "payload"

ALLOWED = {  # layer -> layers (of autograder) it may import
    "model": set(),
    "reference": {"reference"},
    "sandbox": {"sandbox", "model"},
    "check": {"check", "sandbox", "reference", "model"},
    "batch": {"batch", "check", "sandbox", "model"},
    "store": {"store", "model"},
    "service": {"service", "batch", "check", "store", "model"},
    "commands": {"commands", "batch", "check", "sandbox", "store", "service", "model"},
    "cli": {"commands"},
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path) -> list[str]:
    """Absolute names of every module imported anywhere in the file (also inside functions)."""
    module = _module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    return _imported_modules(path.read_text(encoding="utf-8"), package)


def _imported_modules(text: str, package: str) -> list[str]:
    out = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
                out += [target] if node.module else [f"{target}.{a.name}" for a in node.names]
            else:
                out.append(node.module)
    return out


def _layer(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "autograder" or len(parts) == 1:
        return None
    return parts[1]


ENGINE_FILES = [p for p in sorted(PACKAGE.rglob("*.py")) if PAYLOAD not in p.parents and _layer(_module_name(p)) in ALLOWED]


@pytest.mark.parametrize("path", ENGINE_FILES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_dependency_direction(path):
    layer = _layer(_module_name(path))
    wrong = sorted({m for m in _imports(path) if _layer(m) is not None and _layer(m) not in ALLOWED[layer]})
    assert not wrong, f"{layer} must not import {wrong}"


def test_every_engine_module_belongs_to_a_layer():
    strays = [str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py")
              if _layer(_module_name(p)) not in ALLOWED and p != PACKAGE / "__init__.py"]
    assert not strays


PAYLOAD_MODULES = {p.stem for p in PAYLOAD.glob("*.py")}


@pytest.mark.parametrize("path", sorted(PAYLOAD.glob("*.py")), ids=lambda p: p.name)
def test_payload_imports_only_the_standard_library_numpy_and_itself(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [a.name.split(".")[0] for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, "payload modules import each other by their top-level names (the folder is on sys.path)"
            names.append(node.module.split(".")[0])
    foreign = sorted(set(names) - set(sys.stdlib_module_names) - {"numpy"} - PAYLOAD_MODULES)
    assert not foreign, f"{path.name} imports {foreign} inside the sandbox"


def test_the_checker_sees_relative_absolute_and_local_imports():
    """The rules above would catch a violation (the checker is not vacuous)."""
    text = "from ..check import grade\nimport autograder.store.ledger\ndef f():\n    from .. import batch\n"
    assert sorted(_layer(m) for m in _imported_modules(text, "autograder.sandbox")) == ["batch", "check", "store"]


LTI = PACKAGE / "service" / "lti"
WEB_MODULES = {"autograder.service.app", "autograder.service.pages", "autograder.service.student_pages",
               "autograder.service.instructor_pages", "autograder.service.lti.web"}
HTTP_SERVER = {"starlette", "uvicorn", "jinja2"}


@pytest.mark.parametrize("path", sorted(p for p in LTI.glob("*.py") if p.name != "web.py"), ids=lambda p: p.name)
def test_lti_core_is_http_free(path):
    """``autograder/service/lti/`` is the HTTP-free LTI core (it calls platforms with httpx, but serves nothing):
    no web framework and none of the service's web modules; only ``lti/web.py`` is the thin Starlette layer."""
    names = _imports(path)
    framework = sorted({m for m in names if m.split(".")[0] in HTTP_SERVER})
    web = sorted({m for m in names if m in WEB_MODULES or any(m.startswith(w + ".") for w in WEB_MODULES)})
    assert not framework and not web, f"{path.name} imports {framework + web}"


def test_only_the_lti_web_module_is_imported_by_the_web_layer():
    """The service's web layer reaches LTI through ``lti/web.py`` only (the core's hooks are in counting and serve)."""
    for name in ("app.py", "pages.py", "student_pages.py", "instructor_pages.py"):
        lti = {m for m in _imports(PACKAGE / "service" / name) if m.startswith("autograder.service.lti")}
        assert lti <= {"autograder.service.lti.web"}, f"{name} imports {sorted(lti)}"
