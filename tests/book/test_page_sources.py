"""Rules every page source of the book keeps, checked once for the whole book (before any build).

* each MyST notebook page has its jupytext header; its first code cell is hidden (``remove-cell``) and calls
  ``setup_plotting()`` (fonts and colours are set in ``coursebook`` only: no ``rcParams`` on a page); random
  numbers come from a seeded ``default_rng``;
* each equation label (``$$ (eq-...)``) is defined once in the book, and each ``{eq}`` reference names a label of its
  own chapter (a page's PDF and its notebook download carry only its chapter).

The chapter modules (test_chapter_*.py) keep what is particular to a chapter: its numbers and its label prefix.
"""

from __future__ import annotations

import re
from pathlib import Path

import jupytext
import pytest

ROOT = Path(__file__).resolve().parents[2]
BOOK = ROOT / "book"
SOURCES = sorted(p for p in BOOK.rglob("*.md") if "_build" not in p.parts)
NOTEBOOK_PAGES = [p for p in SOURCES if p.read_text(encoding="utf-8")[:600].startswith("---") and "kernelspec" in p.read_text(encoding="utf-8")[:600]]
LABEL = re.compile(r"\$\$ \((eq-[\w-]+)\)")
REFERENCE = re.compile(r"\{eq\}`([\w-]+)`")


def _id(page: Path) -> str:
    return str(page.relative_to(BOOK))


def equation_problems(pages: dict[str, str]) -> list[str]:
    """Labels defined twice and references to no label of the same chapter; ``pages`` maps ``chapter/page.md`` to text."""
    defined: dict[str, list[str]] = {}
    for name, text in pages.items():
        for label in LABEL.findall(text):
            defined.setdefault(label, []).append(name)
    problems = [f"{label} 定义了 {len(where)} 次：{where}" for label, where in defined.items() if len(where) > 1]
    for name, text in pages.items():
        chapter = name.rsplit("/", 1)[0]
        for ref in REFERENCE.findall(text):
            if not any(w.rsplit("/", 1)[0] == chapter for w in defined.get(ref, [])):
                problems.append(f"{name} 引用了本章没有的公式 {ref}")
    return problems


def test_the_equation_check_reports_a_double_label_and_a_reference_outside_the_chapter() -> None:
    pages = {"a/x.md": "$$ (eq-a-1)\n{eq}`eq-a-1`", "a/y.md": "$$ (eq-a-1)", "b/z.md": "{eq}`eq-a-1` {eq}`eq-nowhere`"}
    assert equation_problems(pages) == ["eq-a-1 定义了 2 次：['a/x.md', 'a/y.md']", "b/z.md 引用了本章没有的公式 eq-a-1",
                                        "b/z.md 引用了本章没有的公式 eq-nowhere"]
    assert equation_problems({"a/x.md": "$$ (eq-a-1)", "a/y.md": "{eq}`eq-a-1`"}) == []


def test_equation_labels_are_unique_and_references_resolve_in_their_chapter() -> None:
    pages = {_id(p): p.read_text(encoding="utf-8") for p in SOURCES}
    assert sum(len(LABEL.findall(t)) for t in pages.values()) > 20  # the pattern still finds the book's labels
    assert equation_problems(pages) == []


@pytest.mark.parametrize("page", NOTEBOOK_PAGES, ids=_id)
def test_notebook_page_header_plot_setup_and_seeds(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    assert text.startswith("---\njupytext:"), "缺少 jupytext 头"
    assert "rcParams" not in text and "font.family" not in text, "字体只在 coursebook 中设置"
    code = [c for c in jupytext.reads(text, fmt="md:myst").cells if c.cell_type == "code"]
    if code:
        assert "remove-cell" in code[0].metadata.get("tags", []), "第一个代码单元必须带 remove-cell 标签"
        assert "from coursebook import setup_plotting" in code[0].source and "setup_plotting()" in code[0].source
    for cell in code:
        assert "np.random.seed" not in cell.source and "np.random.rand" not in cell.source
        if "default_rng(" in cell.source:
            assert re.search(r"default_rng\(\s*\w", cell.source), "随机数必须固定种子"
