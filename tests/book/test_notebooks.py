"""Readers can run the pages: every page's downloadable notebook executes from a clean folder.

The ``.ipynb`` that each page offers for download (``_build/html/_sources/<page>.ipynb``, written by
``book/_ext/notebook_download.py``) is the notebook that the build executed (outputs from the execution cache),
its Markdown scrubbed of instructor-only blocks and resolved to plain Markdown.  The build runs every notebook as a reader would run the
download: a fresh kernel of this environment, in an empty temporary folder (``execute.run_in_temp`` in
``_config.yml``), every cell in order, a failing cell failing the build (``raise_on_error``).  So instead of
executing every notebook a second time (nbval), the test checks that what a reader downloads is exactly what
ran there:

* the build's execution settings are those (an empty folder, errors fatal);
* the download holds the page's code cells, verbatim and in order (read from the page's MyST source with
  jupytext; ``glue`` imported from ``coursebook.notebook`` instead of myst-nb), after one cell that installs the
  course's helper wheel, with the outputs of the build's run (from the execution cache), none of them an error.
  That it runs with public packages only: tests/book/test_serve_ports.py.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import sys

import jupytext
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "book" / "_ext"))
from notebook_download import DOWNLOAD_GLUE_IMPORT, GLUE_IMPORT  # noqa: E402


def _notebook_pages() -> list[str]:
    """Every page of the book that is a MyST notebook (has a kernelspec in its header)."""
    pages = []
    for path in sorted((ROOT / "book").rglob("*.md")):
        if "_build" in path.parts or "node_modules" in path.parts:
            continue
        head = path.read_text(encoding="utf-8")[:600]
        if head.startswith("---") and "kernelspec" in head:
            pages.append(str(path.relative_to(ROOT)))
    return pages


PAGES = _notebook_pages()

pytestmark = pytest.mark.slow


def _code(cells: list[dict]) -> list[str]:
    return ["".join(c["source"]) if isinstance(c["source"], list) else c["source"] for c in cells if c["cell_type"] == "code"]


def test_the_build_runs_every_notebook_from_an_empty_folder_and_stops_on_an_error():
    execute = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))["execute"]
    assert execute["run_in_temp"] is True, "notebooks must run in an empty folder, as a downloaded notebook does"
    assert execute["raise_on_error"] is True and execute["execute_notebooks"] in ("cache", "force")
    assert len(PAGES) >= 20


@pytest.mark.parametrize("page", PAGES)
def test_downloaded_notebook_is_the_executed_page(book_html, page):
    source = jupytext.read(ROOT / page)
    download = book_html / "_sources" / page.replace(".md", ".ipynb")
    assert download.is_file(), f"{page}: no downloadable notebook {download}"
    notebook = json.loads(download.read_text(encoding="utf-8"))
    assert notebook["metadata"]["kernelspec"]["name"] == "python3"
    code = [c for c in notebook["cells"] if c["cell_type"] == "code"]
    install, *rest = _code(notebook["cells"])
    assert install.startswith("%pip install -q ") and "/_downloads/course/binary_eval_course-" in install
    assert rest == [GLUE_IMPORT.sub(DOWNLOAD_GLUE_IMPORT, c) for c in _code(source.cells)], \
        f"{page}: the download's code is not the page's code"
    errors = [o.get("ename") for c in code for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors, f"{page}: error outputs {errors}"
    shown = [c for c in source.cells if c.cell_type == "code" and re.search(r"^\s*(plt\.show|display|print)\(|^\w+\s*$", c.source, re.M)]
    if shown:
        assert any(c.get("outputs") for c in code), f"{page}: the download has no outputs"
