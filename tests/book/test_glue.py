"""Every glued value a page shows is glued by that page's own code, so the text cannot drift from it.

A source-level check over every page of the book, run before any build: each ``{glue:text}``,
``{glue:md}`` and ``{glue:figure}`` name is defined on the same page by ``glue("name", ...)`` or by a
page helper (``show("name", ...)``, ``gl("name", ...)``); names made with an f-string (``glue(f"ap_{k}", ...)``) match any word in
place of each ``{...}``.  (The build itself would also stop on a missing name; this says which page and
which name in a second.)
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

BOOK = Path(__file__).resolve().parents[2] / "book"
PAGES = sorted(BOOK.rglob("*.md"))
USE = re.compile(r"\{glue:(?:text|md|figure)\}`([\w]+)(?::[^`]*)?`|```\{glue:(?:figure|md|text)\}\s+([\w]+)")
DEFINE = re.compile(r"""\b(?:show|glue|gl)\(\s*f?["']([\w{}.\[\]'"]+?)["']\s*,""")


def _patterns(text: str) -> list[re.Pattern[str]]:
    names = DEFINE.findall(text)
    return [re.compile("^" + re.sub(r"\\\{[^}]*\\\}", r"\\w+", re.escape(n)) + "$") for n in names]


def _missing(text: str) -> list[str]:
    used = {a or b for a, b in USE.findall(text)}
    patterns = _patterns(text)
    return sorted(n for n in used if not any(p.match(n) for p in patterns))


def test_the_check_finds_a_glued_name_no_code_defines() -> None:
    """The check below is not vacuous: a used but undefined name is reported; each way of defining one counts."""
    page = "AUC 为 {glue:text}`auc:.2f`。\n```{glue:figure} roc_fig\n```\n"
    assert _missing(page) == ["auc", "roc_fig"]
    assert _missing(page + 'glue("auc", 0.75)\nshow("roc_fig", fig)\n') == []
    assert _missing("{glue:text}`ap_micro`\n" + 'for k in ks:\n    glue(f"ap_{k}", v)\n') == []
    assert _missing("{glue:md}`roc_auc`\n" + 'gl(f"ap_{k}", v)\n') == ["roc_auc"]  # an f-string matches only its own shape
    assert _missing("{glue:md}`table`\n" + 'gl("table", t)\n') == []


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(BOOK)))
def test_every_glued_name_is_defined_on_its_page(page: Path) -> None:
    missing = _missing(page.read_text(encoding="utf-8"))
    assert not missing, f"{page.relative_to(BOOK)} 使用了本页代码没有 glue 的名称：{missing}"
