"""Import nbgrader's gradebook without what a grading process never uses (its Jupyter server extensions).

``import nbgrader.api`` first runs the package's ``__init__``, which loads nbgrader's four Jupyter server
extensions (tornado handlers, the exchange, nbconvert, requests ...), and jsonschema, which nbformat
imports, builds an Earley parser for RFC 3987 at import time.  Together that is about 2.5 of the 3.9 s
of CPU an ``autograder grade`` spent importing its gradebook, on the same cores as the first grading
jobs.  :func:`prepare` avoids both without changing what any of it does:

* the package ``nbgrader`` is registered with its real path, spec and version but without running its
  ``__init__``; its submodules (``nbgrader.api``, ``nbgrader.apps`` ...) import as usual, and the first
  access to any other attribute of the package runs the real ``__init__`` in it (module ``__getattr__``),
  so a server that loads nbgrader's extensions later still finds them;
* ``rfc3987_syntax.is_valid_syntax`` (jsonschema's "iri" format check) is a stand-in that imports the real
  module and delegates on its first call, so the check behaves exactly as before, only later.

Both apply only to modules not imported yet in this process; call :func:`prepare` before the first import
of nbgrader (:mod:`.gradebook` does).
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
import types

_lock = threading.Lock()


def _package_stub(name: str) -> types.ModuleType | None:
    """The package ``name`` registered without running its ``__init__`` (None when it is not installed)."""
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None or not spec.submodule_search_locations:
        return None
    module = types.ModuleType(name)
    module.__spec__, module.__file__, module.__loader__ = spec, spec.origin, spec.loader
    module.__path__, module.__package__ = list(spec.submodule_search_locations), name
    done = threading.Event()

    def complete(attr: str):
        """Run the package's real ``__init__`` in the registered module, then look ``attr`` up again.

        Not for dunder names and submodules (``from . import utils`` asks for the attribute before it
        imports the submodule): those are simply not there yet."""
        if attr.startswith("__") or importlib.util.find_spec(f"{name}.{attr}") is not None:
            raise AttributeError(f"module {name!r} has no attribute {attr!r}")
        with _lock:
            if not done.is_set():
                del module.__dict__["__getattr__"]
                spec.loader.exec_module(module)
                done.set()
        if attr not in module.__dict__:
            raise AttributeError(f"module {name!r} has no attribute {attr!r}")
        return module.__dict__[attr]

    module.__getattr__ = complete  # called only for names the module does not have yet (PEP 562)
    sys.modules[name] = module
    try:
        module.__version__ = importlib.import_module(f"{name}._version").__version__
    except (ImportError, AttributeError):
        pass
    finally:
        del sys.modules[name]
    return module


def _deferred_rfc3987() -> types.ModuleType | None:
    """``rfc3987_syntax`` whose ``is_valid_syntax`` (and any other attribute) imports the real module first."""
    spec = importlib.util.find_spec("rfc3987_syntax")
    if spec is None:
        return None
    module = types.ModuleType("rfc3987_syntax")
    module.__spec__, module.__file__, module.__loader__ = spec, spec.origin, spec.loader
    if spec.submodule_search_locations is not None:
        module.__path__ = list(spec.submodule_search_locations)

    def real() -> types.ModuleType:
        with _lock:
            if sys.modules.get("rfc3987_syntax") is module:
                del sys.modules["rfc3987_syntax"]
            found = importlib.import_module("rfc3987_syntax")
        if found is module:
            raise ImportError("rfc3987_syntax: the stand-in is still registered")
        return found

    def is_valid_syntax(*args, **kwargs):
        return real().is_valid_syntax(*args, **kwargs)

    module.is_valid_syntax = is_valid_syntax  # what jsonschema imports from it
    module.__getattr__ = lambda attr: getattr(real(), attr)
    return module


def prepare() -> None:
    """Register the light ``nbgrader`` package and the deferred RFC 3987 parser, unless already imported."""
    with _lock:
        for name, make in (("nbgrader", _package_stub), ("rfc3987_syntax", _deferred_rfc3987)):
            if name not in sys.modules:
                module = make(name) if make is _package_stub else make()
                if module is not None:
                    sys.modules[name] = module
