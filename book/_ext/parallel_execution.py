"""Sphinx extension: the pages' notebooks run side by side, before Sphinx reads the pages.

With ``execute_notebooks: cache`` myst-nb runs each notebook that is not in the execution cache while it
reads the page, one page after the other.  This extension does that work first (``env-before-read-docs``):
it reads every page that is about to be read as myst-nb will (same reader, kernel aliases, page-level
``mystnb`` settings), and runs those missing from the cache in :func:`workers` threads at a time, each with
its own kernel, exactly as myst-nb's cache client does (:func:`jupyter_cache.executors.utils.single_nb_execution`
in an empty temporary folder when ``execution_in_temp``, the same timeout, the same cache bundle).  When
Sphinx then reads the pages, myst-nb finds every notebook in the cache.

Checked, not assumed:

* a notebook with a failing cell fails the build with the page's path and the cell's error, as myst-nb's
  ``raise_on_error`` does (the other notebooks still finish and are cached);
* after the pages are read (``env-updated``), every notebook this build prepared must have been taken from
  the cache: if myst-nb saw a different notebook than this extension (so it executed it again), the build
  fails with the page's name.

The number of notebooks at a time is the Sphinx setting ``course_execution_workers`` (0, the default: one per
core this process may use).  The kernels are forks of one process that has imported the pages' libraries
(:mod:`kernel_forks`: about 2 s of CPU less per page); the Sphinx setting ``course_execution_fork = False``
starts each kernel as jupyter_client does.
"""

from __future__ import annotations

import contextlib
import copy
import os
import re
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.errors import SphinxError
from sphinx.util import logging

from kernel_forks import KernelForks, kernel_manager_class

logger = logging.getLogger(__name__)

#: ``env`` attribute: docname -> creation time of the cache record its page must be read from.
EXPECTED = "course_cached_notebooks"


class NotebookExecutionFailed(SphinxError):
    """A page's notebook raised in a cell (``execute.raise_on_error``)."""

    category = "Notebook execution failed"


class NotebookExecutedTwice(SphinxError):
    """myst-nb executed a notebook that this extension had already put in the cache."""

    category = "Notebook executed twice"


@dataclass
class Job:
    """One page's notebook that is not in the cache yet."""

    docname: str
    path: Path
    notebook: Any  # nbformat.NotebookNode
    read_fmt: dict | None
    nb_config: Any  # myst_nb.core.config.NbParserConfig, with the page's own settings


@dataclass
class Outcome:
    """What running one :class:`Job` gave: the executed notebook, its seconds, its error (``None`` if none)."""

    job: Job
    notebook: Any
    seconds: float
    error: BaseException | None
    traceback: str | None


def workers(setting: int) -> int:
    """Notebooks at a time: ``setting`` if positive, else the number of cores this process may use."""
    if setting > 0:
        return setting
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not on Linux
        return max(1, os.cpu_count() or 1)


def _read_source(env: BuildEnvironment, docname: str) -> tuple[Path, str]:
    path = Path(env.doc2path(docname))
    return path, path.read_text(encoding=env.config.source_encoding)


def page_notebook(env: BuildEnvironment, docname: str) -> Job | None:
    """The notebook of ``docname`` as myst-nb's parser will read it, or ``None`` if it is no notebook to execute
    through the cache (a plain Markdown page, ``execution_mode`` other than ``cache``, an excluded path)."""
    from myst_nb.core.nb_to_tokens import nb_node_to_dict
    from myst_nb.core.read import create_nb_reader

    path, text = _read_source(env, docname)
    nb_config = env.mystnb_config
    reader = create_nb_reader(str(path), env.myst_config, nb_config, text)
    if reader is None:
        return None
    notebook = reader.read(text)
    kernel = notebook.metadata.get("kernelspec", {}).get("name")
    if kernel is not None:
        for pattern, alias in (nb_config.kernel_rgx_aliases or {}).items():
            if re.fullmatch(pattern, kernel):
                notebook.metadata["kernelspec"]["name"] = alias
                break
    if nb_config.metadata_key in notebook.metadata:
        overrides = nb_node_to_dict(notebook.metadata[nb_config.metadata_key])
        overrides.pop("output_folder", None)
        try:
            nb_config = nb_config.copy(**overrides)
        except (TypeError, ValueError):  # the parser warns about it and keeps the book's settings
            pass
    if nb_config.execution_mode != "cache":
        return None
    posix = PurePosixPath(path.as_posix())
    if any(posix.match(pattern) for pattern in nb_config.execution_excludepatterns):
        return None
    return Job(docname, path, notebook, reader.read_fmt, nb_config)


def run(job: Job, kernel_manager_class: type | None = None) -> Outcome:
    """Execute ``job``'s notebook (a copy) as myst-nb's cache client would; never raises for a failing cell.

    ``kernel_manager_class``: nbclient's, if not its default (the forked kernels of :mod:`kernel_forks`)."""
    from jupyter_cache.executors.utils import single_nb_execution

    notebook = copy.deepcopy(job.notebook)
    config = job.nb_config
    extra = {"kernel_manager_class": kernel_manager_class} if kernel_manager_class is not None else {}
    with (tempfile.TemporaryDirectory() if config.execution_in_temp else _Folder(job.path.parent)) as cwd:
        result = single_nb_execution(notebook, cwd=os.path.abspath(cwd), allow_errors=config.execution_allow_errors,
                                     timeout=config.execution_timeout, meta_override=True, **extra)
    return Outcome(job, result.nb, result.time, result.err, result.exc_string)


class _Folder:
    """``with _Folder(path) as cwd`` gives ``path`` (the page's own folder, ``execution_in_temp: false``)."""

    def __init__(self, path: Path) -> None:
        self.path = str(path)

    def __enter__(self) -> str:
        return self.path

    def __exit__(self, *exc: object) -> None:
        return None


def _order(jobs: list[Job]) -> list[Job]:
    """Longest expected first (by the length of their code), so that no long notebook starts last."""
    def code(job: Job) -> int:
        return sum(len(cell.source) for cell in job.notebook.cells if cell.cell_type == "code")

    return sorted(jobs, key=lambda job: (-code(job), job.docname))


def execute_missing(app: Sphinx, env: BuildEnvironment, docnames: list[str]) -> None:
    """``env-before-read-docs``: put the notebook of every page about to be read into the execution cache."""
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn
    from jupyter_cache.cache.db import NbProjectRecord

    expected: dict[str, float] = {}
    setattr(env, EXPECTED, expected)
    config = getattr(env, "mystnb_config", None)
    if config is None or config.execution_mode != "cache":
        return
    cache = get_cache(config.execution_cache_path or ".jupyter_cache")
    unique: dict[str, Job] = {}  # by the cache's hash of the notebook: pages with the same code cells run once
    same: dict[str, Job] = {}  # the other pages whose code is that of a job
    for docname in sorted(docnames):
        job = page_notebook(env, docname)
        if job is None:
            continue
        try:
            expected[docname] = cache.match_cache_notebook(job.notebook).created.timestamp()
        except KeyError:
            hashkey = cache.create_hashed_notebook(job.notebook)[1]
            if hashkey in unique:
                same[docname] = job
            else:
                unique[hashkey] = job
    if not unique:
        return
    jobs = list(unique.values())
    at_once = min(workers(app.config.course_execution_workers), len(jobs))
    logger.info(f"executing {len(jobs)} notebooks, {at_once} at a time")
    records = {}
    for job in jobs:  # in this thread: the cache's database is written by one thread only
        kwargs = {"read_data": job.read_fmt} if job.read_fmt is not None else {}
        records[job.docname] = cache.add_nb_to_project(str(job.path), **kwargs)
        NbProjectRecord.remove_tracebacks([records[job.docname].pk], cache.db)
    failed: list[Outcome] = []
    start = time.perf_counter()
    forking = app.config.course_execution_fork and hasattr(os, "fork") and hasattr(os, "pidfd_open")
    with (KernelForks() if forking else contextlib.nullcontext()) as forks, \
            ThreadPoolExecutor(max_workers=at_once, thread_name_prefix="notebook") as pool:
        manager = kernel_manager_class(forks) if forks is not None else None
        futures = [pool.submit(run, job, manager) for job in _order(jobs)]
        for future in as_completed(futures):
            outcome = future.result()
            job = outcome.job
            if outcome.error is not None:
                failed.append(outcome)
                NbProjectRecord.set_traceback(records[job.docname].uri, outcome.traceback, cache.db)
                logger.info(f"executing {job.docname} failed: {type(outcome.error).__name__}")
                continue
            record = cache.cache_notebook_bundle(
                CacheBundleIn(outcome.notebook, records[job.docname].uri, data={"execution_seconds": outcome.seconds}),
                check_validity=False, overwrite=True)
            expected[job.docname] = cache.match_cache_notebook(job.notebook).created.timestamp()
            logger.info(f"executed {job.docname} in {outcome.seconds:.1f} s (cache record {record.pk})")
    logger.info(f"executed {len(jobs) - len(failed)} of {len(jobs)} notebooks in {time.perf_counter() - start:.1f} s")
    for docname, job in same.items():
        try:
            expected[docname] = cache.match_cache_notebook(job.notebook).created.timestamp()
        except KeyError:  # its twin failed: reported below
            pass
    if failed and any(outcome.job.nb_config.execution_raise_on_error for outcome in failed):
        raise NotebookExecutionFailed("\n\n".join(
            f"{outcome.job.path.relative_to(app.srcdir)}: {type(outcome.error).__name__}\n{outcome.error}"
            for outcome in sorted(failed, key=lambda o: o.job.docname)))


def check_taken_from_cache(app: Sphinx, env: BuildEnvironment) -> list[str]:
    """``env-updated``: every notebook prepared by :func:`execute_missing` was read from the cache, not run again."""
    from myst_nb.sphinx_ import NbMetadataCollector

    again = []
    for docname, created in sorted(getattr(env, EXPECTED, {}).items()):
        if docname not in env.all_docs:
            continue
        data = NbMetadataCollector.get_exec_data(env, docname)
        if data is None or data.get("mtime") is None or abs(data["mtime"] - created) > 1e-3:
            again.append(docname)
    setattr(env, EXPECTED, {})
    if again:
        raise NotebookExecutedTwice(
            "myst-nb executed these pages' notebooks again instead of taking them from the cache (the page it "
            "read differs from the one prepared before reading): " + ", ".join(again))
    return []


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_config_value("course_execution_workers", 0, "env", [int])
    app.add_config_value("course_execution_fork", True, "env", [bool])
    app.connect("env-before-read-docs", execute_missing)
    app.connect("env-updated", check_taken_from_cache)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
