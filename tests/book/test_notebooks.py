"""Readers can run the pages: every page's downloadable notebook executes from a clean folder.

The ``.ipynb`` that each page offers for download (``_build/html/_sources/<page>.ipynb``, written by
``book/_ext/publishing.py``) is copied into an empty folder and run with ``pytest --nbval-lax`` (nbval,
a fresh kernel per notebook, two workers): every cell must run without error; outputs are not compared.
This is what a reader does who opens the downloaded notebook in Jupyter and runs it.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import jupytext
import pytest

ROOT = Path(__file__).resolve().parents[2]
def _notebook_pages() -> list[str]:
    """Every page of the book that is a MyST notebook (has a kernelspec in its header)."""
    pages = []
    for path in sorted((ROOT / "book").rglob("*.md")):
        if "_build" in path.parts:
            continue
        head = path.read_text(encoding="utf-8")[:600]
        if head.startswith("---") and "kernelspec" in head:
            pages.append(str(path.relative_to(ROOT)))
    return pages


PAGES = _notebook_pages()
PAGES_WITH_CODE = [p for p in PAGES if any(c.cell_type == "code" for c in jupytext.read(ROOT / p).cells)]

pytestmark = pytest.mark.slow


def _download_name(page: str) -> str:
    return page.replace("/", "__").removesuffix(".md") + ".ipynb"


@pytest.fixture(scope="module")
def nbval_results(book_html, tmp_path_factory) -> dict[str, list[str]]:
    """Run nbval over the downloaded notebooks in a clean folder; failures per notebook file name."""
    work = tmp_path_factory.mktemp("downloaded-notebooks")
    for page in PAGES:
        source = book_html / "_sources" / page.replace(".md", ".ipynb")
        assert source.is_file(), f"{page}: no downloadable notebook {source}"
        shutil.copy2(source, work / _download_name(page))
    (work / "pytest.ini").write_text("[pytest]\naddopts =\n", encoding="utf-8")
    report = work / "report.xml"
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "--nbval-lax", "--nbval-current-env", "-p", "no:cacheprovider", "-q",
         "-n", "2", "--dist", "loadfile", f"--junitxml={report}", "."],
        cwd=work, capture_output=True, text=True, errors="replace", timeout=1800,
    )
    assert report.is_file(), (proc.stdout + proc.stderr)[-4000:]
    results: dict[str, list[str]] = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        name = Path(case.get("classname", "")).name  # nbval items: classname = notebook file name
        failures = [f"{case.get('name')}: {(e.get('message') or '')[:300]}" for e in case if e.tag in ("failure", "error")]
        results.setdefault(name, []).extend(failures)
    return results


@pytest.mark.parametrize("page", PAGES)
def test_downloaded_notebook_runs_from_a_clean_folder(nbval_results, page):
    name = _download_name(page)
    if page not in PAGES_WITH_CODE:  # nothing to run; nbval collects no item
        assert name not in nbval_results
        return
    assert name in nbval_results, f"nbval ran no cell of {name}"
    assert not nbval_results[name], "\n".join(nbval_results[name])
