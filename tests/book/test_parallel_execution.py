"""The book's notebooks run side by side before Sphinx reads the pages (book/_ext/parallel_execution.py).

Each test builds a small Sphinx project of its own (myst-nb with the book's execution settings: the cache,
an empty temporary folder, errors fatal) whose notebooks write to a log when they run, so that a test can
see which ran, how often and when:

* two notebooks missing from the cache run at the same time, once each (a page with the same code as another
  shares its run), and their pages show their outputs;
  a rebuild that reads every page again runs none of them;
* a failing cell fails the build, naming the page and the error, and the other notebooks are cached;
* if myst-nb reads a page differently from the extension (here a ``source-read`` handler changes a cell),
  it would execute that notebook a second time: the build fails and names the page;
* a kernel forked from the server that has imported the libraries (``book/_ext/kernel_forks.py``) prints
  and draws what a kernel started by jupyter_client does (folder, parent, session, backend, environment,
  figure bytes), with the libraries already imported.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from .conftest import ROOT

pytestmark = pytest.mark.slow

EXT = ROOT / "book" / "_ext"
HEADER = """---
jupytext:
  text_representation: {extension: .md, format_name: myst}
kernelspec: {display_name: Python 3, language: python, name: python3}
---
"""


def _page(name: str, log: Path, body: str = "") -> str:
    """A notebook page that logs its start and end (1.5 s apart) and prints ``<name>-done``."""
    return HEADER + textwrap.dedent(f"""
        # {name}

        ```{{code-cell}} ipython3
        import os, time
        with open({str(log)!r}, "a") as log:
            log.write(f"{name} start {{time.time()}} {{os.getcwd()}}\\n")
        time.sleep(1.5)
        {body}
        with open({str(log)!r}, "a") as log:
            log.write(f"{name} end {{time.time()}} {{os.getcwd()}}\\n")
        print("{name}-done")
        ```
        """)


def _project(tmp_path: Path, pages: dict[str, str], extra_conf: str = "") -> Path:
    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text(textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(EXT)!r})
        extensions = ["myst_nb", "parallel_execution"]
        exclude_patterns = ["_build"]
        nb_execution_mode = "cache"
        nb_execution_cache_path = {str(tmp_path / "cache")!r}
        nb_execution_in_temp = True
        nb_execution_raise_on_error = True
        nb_execution_timeout = 120
        course_execution_workers = 2
        """) + extra_conf, encoding="utf-8")
    toctree = "\n".join(pages)
    (src / "index.md").write_text(f"# Index\n\n```{{toctree}}\n{toctree}\n```\n", encoding="utf-8")
    for name, text in pages.items():
        (src / f"{name}.md").write_text(text, encoding="utf-8")
    return src


def _build(src: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-W", "--keep-going", *extra, str(src),
                           str(src.parent / "html")], capture_output=True, text=True, errors="replace", timeout=600)


def _runs(log: Path) -> dict[str, list[tuple[str, float, str]]]:
    runs: dict[str, list] = {}
    if log.exists():
        for line in log.read_text(encoding="utf-8").splitlines():
            name, event, when, cwd = line.split(" ", 3)
            runs.setdefault(name, []).append((event, float(when), cwd))
    return runs


def test_missing_notebooks_run_side_by_side_once_and_a_rebuild_runs_none(tmp_path):
    log = tmp_path / "runs.log"
    # "twin" has the code of "first": the cache holds one notebook for both, so it runs once
    src = _project(tmp_path, {"first": _page("first", log), "second": _page("second", log), "twin": _page("first", log)})
    build = _build(src)
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    runs = _runs(log)
    assert sorted(runs) == ["first", "second"]
    assert all([e for e, _, _ in events] == ["start", "end"] for events in runs.values()), runs  # each ran once
    (_, start1, cwd1), (_, end1, _) = runs["first"]
    (_, start2, cwd2), (_, end2, _) = runs["second"]
    assert start1 < end2 and start2 < end1, f"the notebooks ran one after the other: {runs}"
    assert cwd1 != cwd2 and str(src) not in cwd1 + cwd2, "each notebook runs in an empty folder of its own"
    assert "executing 2 notebooks, 2 at a time" in build.stdout
    for page, name in (("first", "first"), ("second", "second"), ("twin", "first")):
        assert f"{name}-done" in (tmp_path / "html" / f"{page}.html").read_text(encoding="utf-8")

    again = _build(src, "-E")  # a fresh environment: every page is read again
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    assert _runs(log) == runs, "a notebook in the cache ran again"
    assert "executing" not in again.stdout
    assert "first-done" in (tmp_path / "html" / "first.html").read_text(encoding="utf-8")


def test_a_failing_cell_fails_the_build_and_names_the_page(tmp_path):
    log = tmp_path / "runs.log"
    src = _project(tmp_path, {"good": _page("good", log),
                              "broken": _page("broken", log, 'raise ValueError("broken-cell")')})
    build = _build(src)
    out = build.stdout + build.stderr
    assert build.returncode != 0, out[-3000:]
    assert "Notebook execution failed" in out and "broken.md: CellExecutionError" in out and "broken-cell" in out
    assert "good.md" not in out.split("Notebook execution failed", 1)[1], "only the failing page is named"
    runs = _runs(log)
    assert [e for e, _, _ in runs["broken"]] == ["start"] and [e for e, _, _ in runs["good"]] == ["start", "end"]

    from jupyter_cache import get_cache

    cached = {Path(record.uri).name for record in get_cache(str(tmp_path / "cache")).list_cache_records()}
    assert cached == {"good.md"}, "the good page's notebook is cached, the failing one is not"


def test_a_notebook_that_myst_nb_would_execute_again_fails_the_build(tmp_path):
    log = tmp_path / "runs.log"
    # myst-nb parses the page after this handler changed a cell: not the notebook that ran before reading
    changed = textwrap.dedent("""
        def _change(app, docname, source):
            source[0] = source[0].replace("time.sleep(1.5)", "time.sleep(0.1)")

        def setup(app):
            app.connect("source-read", _change)
        """)
    src = _project(tmp_path, {"changed": _page("changed", log)}, changed)
    build = _build(src)
    out = build.stdout + build.stderr
    assert build.returncode != 0, out[-3000:]
    assert "Notebook executed twice" in out and "changed" in out.split("Notebook executed twice", 1)[1]
    assert [e for e, _, _ in _runs(log)["changed"]] == ["start", "end", "start", "end"]


STATE_PAGE = HEADER + textwrap.dedent("""
    # state

    ```{code-cell} ipython3
    import os, sys
    print("preloaded", "sklearn.base" in sys.modules)
    import random
    import matplotlib
    import matplotlib.pyplot as plt
    import numpy as np
    print("argv0", os.path.basename(sys.argv[0]), "name", __name__, "path0", repr(sys.path[0]))
    print("cwd-empty", os.listdir(os.getcwd()) == [], "cwd-in-tmp", os.getcwd().startswith("/tmp"))
    print("parent", os.getppid() == int(os.environ["JPY_PARENT_PID"]), "session", os.getsid(0) == os.getpid())
    print("backend", matplotlib.get_backend(), "rcfile", os.path.basename(matplotlib.matplotlib_fname()))
    print("ends", int(np.random.default_rng(3).integers(1000)), sorted(k for k in os.environ if k.startswith("JPY")))
    print("random-draw", random.random())
    ```

    ```{code-cell} ipython3
    fig, ax = plt.subplots(figsize=(2, 2))
    ax.plot([0, 1], [0, 1])
    ```
    """)


def _state(tmp_path: Path, fork: bool) -> dict[str, str]:
    """The state page's printed lines (first word -> rest) and its figure's PNG, built with or without forks."""
    folder = tmp_path / ("fork" if fork else "spawn")
    folder.mkdir()
    src = _project(folder, {"state": STATE_PAGE}, f"course_execution_fork = {fork}\n")
    build = _build(src)
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    from jupyter_cache import get_cache

    cache = get_cache(str(folder / "cache"))
    (record,) = cache.list_cache_records()
    notebook = cache.get_cache_bundle(record.pk).nb
    outputs = [output for cell in notebook.cells if cell.cell_type == "code" for output in cell.outputs]
    lines = "".join(output.get("text", "") for output in outputs if output.output_type == "stream").splitlines()
    state = {line.split(" ", 1)[0]: line.split(" ", 1)[1] for line in lines}
    (png,) = [output.data["image/png"] for output in outputs if "image/png" in output.get("data", {})]
    state["png-bytes"] = png
    return state


def test_a_forked_kernel_is_a_fresh_kernel_with_the_libraries_already_imported(tmp_path):
    forked, spawned = _state(tmp_path, fork=True), _state(tmp_path, fork=False)
    assert forked.pop("preloaded") == "True" and spawned.pop("preloaded") == "False", "the kernel was not forked"
    forked.pop("random-draw"), spawned.pop("random-draw")  # Python's random: seeded anew in every process
    assert forked == spawned, "a forked kernel differs from a kernel started by jupyter_client"
    assert forked["parent"] == "True session True" and forked["cwd-empty"] == "True cwd-in-tmp True"
    assert "inline" in forked["backend"], forked["backend"]
