"""Import nbgrader's gradebook without what a grading process never uses (its Jupyter server extensions).

``import nbgrader.api`` first runs the package's ``__init__``, which loads nbgrader's four Jupyter server
extensions (tornado handlers, the exchange, nbconvert, requests ...).  With jsonschema's RFC 3987 parser
(which ``make setup`` no longer installs: see the Makefile) that was about 2.5 of the 3.9 s of CPU an
``autograder grade`` spent importing its gradebook, on the same cores as the first grading jobs.
:func:`prepare` avoids the extensions without changing what any of it does:

* the package ``nbgrader`` is registered with its real path, spec and version but without running its
  ``__init__``; its submodules (``nbgrader.api``, ``nbgrader.apps`` ...) import as usual, and the first
  access to any other attribute of the package runs the real ``__init__`` in it (module ``__getattr__``),
  so a server that loads nbgrader's extensions later still finds them.

* ``nbgrader.utils`` (which ``nbgrader.api`` imports) takes three archive helpers from setuptools, which only
  nbgrader's collection of zipped submissions calls; importing setuptools (and ``pkg_resources`` with it) was about
  a quarter of the gradebook's import (~0.2 s of CPU).  While ``nbgrader.utils`` is imported, a stand-in module
  gives it three functions that import the real ones at their first call; the stand-in leaves ``sys.modules`` at
  once, so any later import of ``setuptools.archive_util`` gets the real module.

It applies only if nbgrader is not imported yet in this process; call :func:`prepare` before the first import
of nbgrader (:mod:`.gradebook` does).
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
import types

import os

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


ARCHIVE_MODULE = "setuptools.archive_util"
ARCHIVE_FUNCTIONS = ("unpack_archive", "unpack_tarfile", "unpack_zipfile")  # what nbgrader.utils imports from it


def _deferred(module: str, name: str):
    """A function that imports ``module`` at its first call and calls its ``name``."""
    def call(*args, **kwargs):
        return getattr(importlib.import_module(module), name)(*args, **kwargs)

    call.__name__ = call.__qualname__ = name
    call.__doc__ = f"``{module}.{name}``, imported when first called."
    return call


def _import_utils() -> None:
    """Import ``nbgrader.utils`` with :data:`ARCHIVE_MODULE` standing in (see the module); nothing if either is
    imported already."""
    if "nbgrader.utils" in sys.modules or ARCHIVE_MODULE in sys.modules:
        return
    stand_in = types.ModuleType(ARCHIVE_MODULE)
    for name in ARCHIVE_FUNCTIONS:
        setattr(stand_in, name, _deferred(ARCHIVE_MODULE, name))
    sys.modules[ARCHIVE_MODULE] = stand_in
    try:
        importlib.import_module("nbgrader.utils")
    finally:
        if sys.modules.get(ARCHIVE_MODULE) is stand_in:
            del sys.modules[ARCHIVE_MODULE]


def prepare() -> None:
    """Register the light ``nbgrader`` package and import ``nbgrader.utils`` without setuptools, unless nbgrader is
    already imported."""
    if "stub" in os.environ.get("AUTOGRADER_OFF", "").split(","):
        return
    with _lock:
        if "nbgrader" not in sys.modules:
            module = _package_stub("nbgrader")
            if module is not None:
                sys.modules["nbgrader"] = module
                _import_utils()
