"""Really execute the notebook pages (MyST Markdown -> ipynb via jupytext -> fresh kernel).

Equivalent to ``pytest --nbval-lax``: every cell must run without error; outputs are not compared.
"""

from __future__ import annotations

from pathlib import Path

import jupytext
import nbclient
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


@pytest.mark.parametrize("page", PAGES)
def test_page_executes(page):
    path = ROOT / page
    nb = jupytext.read(path)
    assert nb.metadata["kernelspec"]["name"] == "python3"
    client = nbclient.NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors


@pytest.mark.parametrize("page", PAGES_WITH_CODE)
def test_first_cell_sets_up_plotting(page):
    nb = jupytext.read(ROOT / page)
    first = next(c for c in nb.cells if c.cell_type == "code")
    assert "setup_plotting()" in first.source and "remove-cell" in first.metadata.get("tags", [])
