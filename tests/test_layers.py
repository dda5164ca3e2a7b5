"""The grading engine's layers and their dependency direction, checked on every import statement.

This docstring, :data:`ALLOWED` and :data:`SERVICE_LAYERS` are the one statement of the rule (CONTRIBUTING and the
maintainers' guide point here).

    sandbox  <-  check  <-  batch  <-  commands  ->  store
                  |            ^           |            ^
              reference        +--  service  ---------+   model (everyone may use model)
                  ^
                quiz  (question templates: the reference and the grader's catalogue of mistakes; used by
                       the service and the commands)

* ``autograder/sandbox/payload/`` runs INSIDE the sandbox: standard library, NumPy and its own modules only;
* ``autograder/sandbox/`` (the trusted client) knows nothing of assignments, grades or gradebooks;
* ``autograder/check/`` grades one notebook; ``autograder/batch/`` schedules many; only ``autograder/store/``
  writes the gradebook and the output folder, and it knows results, not how they are produced;
* ``autograder/service/`` (the online grading service) queues submissions and grades them with the batch
  layer's jobs and pools, writing through the store; it never reaches into the sandbox.  Inside it, three layers
  point one way, core <- ``service/lti/`` <- ``service/web/``: the core (everything else) owns the tables and the
  grade outbox, the LTI layer speaks the protocol to the platforms, and only the web layer imports the web
  frameworks (HTTP and templates); the LTI modules that call platforms may use httpx as a client.

No module of ``autograder/`` takes part in an import cycle, counting imports inside functions too (such an
import only hides a cycle until someone moves it to the top).
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "autograder"
PAYLOAD = PACKAGE / "sandbox" / "payload"

ALLOWED = {  # layer -> layers (of autograder) it may import
    "model": set(),
    "reference": {"reference"},
    "sandbox": {"sandbox", "model"},
    "check": {"check", "sandbox", "reference", "model"},
    "quiz": {"quiz", "reference", "check"},
    "batch": {"batch", "check", "sandbox", "model"},
    "store": {"store", "model"},
    "service": {"service", "batch", "check", "store", "quiz", "model"},
    "commands": {"commands", "batch", "check", "sandbox", "store", "service", "quiz", "model"},
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


# ---- the service: an HTTP-free core and a web layer

SERVICE = PACKAGE / "service"
WEB = SERVICE / "web"
WEB_FRAMEWORKS = {"starlette", "jinja2", "markupsafe", "python_multipart", "multipart", "uvicorn", "httpx"}
CORE_FILES = [p for p in sorted(SERVICE.rglob("*.py")) if WEB not in p.parents]
# The one exception: the LTI core calls the platforms (key sets, tokens, line items, scores, rosters) as an
# outbound HTTP client.  httpx there serves nothing; the server frameworks stay forbidden everywhere in the core.
OUTBOUND_HTTP = {SERVICE / "lti" / name for name in ("ags.py", "launch.py", "nrps.py", "passback.py", "registry.py")}


def _forbidden(path):
    return WEB_FRAMEWORKS - {"httpx"} if path in OUTBOUND_HTTP else WEB_FRAMEWORKS


@pytest.mark.parametrize("path", CORE_FILES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_the_service_core_knows_no_http_and_no_templates(path):
    used = {m.split(".")[0] for m in _imports(path)}
    assert not used & _forbidden(path), f"{path.name} imports {sorted(used & _forbidden(path))}: that belongs in service/web/"
    web = sorted(m for m in _imports(path) if m == "autograder.service.web" or m.startswith("autograder.service.web."))
    assert not web, f"the core must not import the web layer: {web}"


def test_the_outbound_http_exception_is_narrow():
    """Only the LTI modules that call platforms may use httpx, and each of them does (no stale entry)."""
    assert OUTBOUND_HTTP <= set(CORE_FILES)
    assert all("httpx" in {m.split(".")[0] for m in _imports(p)} for p in OUTBOUND_HTTP)
    assert all({"starlette", "jinja2", "uvicorn"} <= _forbidden(p) for p in OUTBOUND_HTTP)


LTI = SERVICE / "lti"
#: Inside the service, the layers point one way: core <- lti <- web (the core owns every table and the grade outbox;
#: the LTI layer speaks the protocol to the platforms; the web layer serves HTTP).
SERVICE_LAYERS = {"core": {"core"}, "lti": {"core", "lti"}, "web": {"core", "lti", "web"}}


def _service_layer(module: str) -> str | None:
    if not (module == "autograder.service" or module.startswith("autograder.service.")):
        return None
    for name, folder in (("web", WEB), ("lti", LTI)):
        prefix = _module_name(folder / "__init__.py")
        if module == prefix or module.startswith(prefix + "."):
            return name
    return "core"


@pytest.mark.parametrize("path", sorted(SERVICE.rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_the_service_layers_point_one_way(path):
    layer = _service_layer(_module_name(path))
    wrong = sorted(m for m in _imports(path) if (other := _service_layer(m)) is not None and other not in SERVICE_LAYERS[layer])
    assert not wrong, f"{path.relative_to(PACKAGE)} ({layer}) imports {wrong}: allowed {sorted(SERVICE_LAYERS[layer])}"


def test_the_service_layer_rule_sees_a_wrong_import():
    assert _service_layer("autograder.service.counting") == "core"
    assert _service_layer("autograder.service.lti.passback") == "lti"
    assert _service_layer("autograder.service.web.app") == "web"
    assert "lti" not in SERVICE_LAYERS["core"] and "web" not in SERVICE_LAYERS["lti"]


def test_the_web_layer_exists_where_the_rule_above_expects_it():
    """The core rule is not vacuous: the web modules are where it looks, and they do use the frameworks."""
    assert (WEB / "app.py").is_file() and len(CORE_FILES) > 10
    assert "starlette" in {m.split(".")[0] for m in _imports(WEB / "app.py")}


# ---- no import cycles


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}  # the payload too: other modules name it


def _edges(module: str, text: str, is_package: bool, modules: Iterable[str]) -> set[str]:
    """The modules of ``modules`` that importing ``module`` (source ``text``) imports, inside functions too.

    ``from P import x`` imports ``P.x`` when that is a module, else ``P`` itself; it runs ``P``'s ``__init__``
    first unless ``P`` is a package containing ``module`` (already being imported).
    """
    known = set(modules)
    package = module if is_package else module.rpartition(".")[0]
    ancestors = {".".join(module.split(".")[:i]) for i in range(1, module.count(".") + 1)}
    out: set[str] = set()

    def add(target: str) -> None:
        while target and target not in known:  # a name inside a module: the module
            target = target.rpartition(".")[0]
        parts = target.split(".")
        for i in range(1, len(parts) + 1):  # importing a.b.c runs a and a.b first
            name = ".".join(parts[:i])
            if name in known and name != module and (name not in ancestors or i == len(parts)):
                out.add(name)

    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            for a in node.names:
                add(a.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module
            for a in node.names:
                if f"{source}.{a.name}" in known:
                    add(f"{source}.{a.name}")
                    if source not in ancestors and source != module:
                        add(source)
                else:
                    add(source)
    return out


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            v, children = work[-1]
            for w in children:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    component = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        component.append(w)
                        if w == v:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def _graph(sources: dict[str, tuple[str, bool]]) -> dict[str, set[str]]:
    return {m: _edges(m, text, is_package, sources) for m, (text, is_package) in sources.items()}


def test_no_import_cycles_in_autograder():
    sources = {m: (p.read_text(encoding="utf-8"), p.name == "__init__.py") for m, p in MODULES.items()}
    assert not _cycles(_graph(sources))


def test_the_cycle_check_sees_cycles_through_function_level_imports_and_packages():
    """The check is not vacuous: a cycle hidden in a function, and one through a package's ``__init__``, are found;
    importing a sibling submodule through the package is not a cycle."""
    hidden = {"autograder.x.app": ("from . import pages\n", False),
              "autograder.x.pages": ("def routes():\n    from .app import ApiError\n", False),
              "autograder.x": ("", True)}
    assert _cycles(_graph(hidden)) == [["autograder.x.app", "autograder.x.pages"]]
    through_init = {"autograder.y": ("def load():\n    from . import a\n", True),
                    "autograder.y.a": ("from . import Thing\n", False)}
    assert _cycles(_graph(through_init)) == [["autograder.y", "autograder.y.a"]]
    siblings = {"autograder.z": ("from .b import f\n", True), "autograder.z.a": ("from . import b\n", False),
                "autograder.z.b": ("def f(): pass\n", False)}
    assert _cycles(_graph(siblings)) == []


# ---- the product, the benchmarks and the tests apart

REPO = PACKAGE.parent
BENCH = REPO / "bench"
TESTS = REPO / "tests"


def _top_level_imports(path: Path) -> set[str]:
    """The first part of every module name ``path`` imports (relative imports stay inside its own folder)."""
    return {m.split(".")[0] for m in _imported_modules(path.read_text(encoding="utf-8"), "") if m}


@pytest.mark.parametrize("path", sorted(BENCH.glob("*.py")), ids=lambda p: p.name)
def test_the_benchmarks_import_nothing_of_the_tests(path):
    """A benchmark measures the product; what it shares with the tests lives under bench/ and the tests import it."""
    assert "tests" not in _top_level_imports(path), f"bench/{path.name} imports from tests/"


def test_the_benchmark_rule_sees_an_import_of_the_tests(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("def f():\n    from tests.service.server import Server\n", encoding="utf-8")
    assert "tests" in _top_level_imports(probe) and len(list(BENCH.glob("*.py"))) > 3


DEMO_LMS = "autograder.commands.lti_demo"


def _demo_lms_names(text: str) -> set[str]:
    """What a test module takes of the product's demo LMS: the names it imports from it, and ``*module*`` for the
    module itself (through which anything of it could be reached)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            names |= {"*module*" for a in node.names if a.name == DEMO_LMS}
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            if node.module == DEMO_LMS:
                names |= {a.name for a in node.names}
            elif node.module == DEMO_LMS.rpartition(".")[0]:
                names |= {"*module*" for a in node.names if a.name == DEMO_LMS.rpartition(".")[2]}
    return names


def _declared_public(path: Path) -> set[str]:
    """The names of ``path``'s ``__all__`` (read from its source, not by importing it)."""
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            return set(ast.literal_eval(node.value))
    return set()


def test_the_tests_use_only_the_public_names_of_the_demo_lms():
    """The fake LMS the tests drive is tests/service/lti/fake_lms.py; of the product's demo LMS (what ``make
    serve`` starts) a test module may import only the names its ``__all__`` declares."""
    public = _declared_public(PACKAGE / "commands" / "lti_demo.py")
    private = {str(p.relative_to(TESTS)): sorted(names) for p in sorted(TESTS.rglob("*.py"))
               if (names := _demo_lms_names(p.read_text(encoding="utf-8")) - public)}
    assert not private, f"test modules import what {DEMO_LMS} does not export (public: {sorted(public)}): {private}"


def test_the_demo_lms_rule_sees_private_names_and_module_imports():
    public = _declared_public(PACKAGE / "commands" / "lti_demo.py")
    assert {"DemoPlatform", "User"} <= public and "_gradebook_html" not in public
    text = ("from autograder.commands.lti_demo import DemoPlatform, _item_id\n"
            "def f():\n    import autograder.commands.lti_demo\n    from autograder.commands import lti_demo\n")
    assert _demo_lms_names(text) - public == {"_item_id", "*module*"}
