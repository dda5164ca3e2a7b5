"""Static checks of the chapter 概率校准 (book/calibration/).

Fast checks that do not build the book: page conventions, equation labels and references,
and that the prose states no number that is not glued (the full build executes
the pages and checks the rest).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHAPTER = ROOT / "book" / "calibration"
PAGES = sorted(CHAPTER.glob("*.md"))
SECTIONS = ["definition", "ece", "beyond_mean", "recalibration"]

CODE_CELL = re.compile(r"```\{code-cell\}[^\n]*\n(.*?)```", re.S)
DISPLAY_MATH = re.compile(r"^\$\$\n.*?^\$\$(?: \((eq-[\w-]+)\))?$", re.S | re.M)


def _prose(text: str) -> str:
    """Page text with front matter, code cells, display math, inline math and roles removed."""
    text = re.sub(r"\A---\n.*?\n---\n", "", text, flags=re.S)
    text = CODE_CELL.sub("", text)
    text = DISPLAY_MATH.sub("", text)
    text = re.sub(r"\$[^$\n]+\$", "", text)
    text = re.sub(r"\{[\w:-]+\}`[^`]*`", "", text)
    text = re.sub(r"`[^`]*`", "", text)
    text = re.sub(r"^\(.*\)=$", "", text, flags=re.M)
    return text.split("## 参考文献")[0]


def test_chapter_pages_exist_and_are_in_the_toc():
    toc = (ROOT / "_toc.yml").read_text(encoding="utf-8")
    names = {p.stem for p in PAGES}
    assert names == {"index", *SECTIONS}
    block = toc.split("- file: book/calibration/index", 1)[1]
    listed = re.findall(r"^\s+- file: book/calibration/(\w+)$", block, flags=re.M)
    assert listed[: len(SECTIONS)] == SECTIONS


def test_equation_labels_are_prefixed():
    labels = [label for page in PAGES for label in re.findall(r"^\$\$ \((eq-[\w-]+)\)$", page.read_text(encoding="utf-8"), flags=re.M)]
    assert labels and all(label.startswith("eq-cal-") for label in labels)


def test_section_references_resolve():
    targets: set[str] = set()
    refs: set[str] = set()
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        targets |= set(re.findall(r"^\(([\w-]+)\)=$", text, flags=re.M))
        refs |= set(re.findall(r"\{ref\}`([\w-]+)`", text))
    assert refs <= targets, f"引用了不存在的小节：{refs - targets}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.stem)
def test_prose_states_no_unglued_number(page: Path):
    prose = _prose(page.read_text(encoding="utf-8"))
    numbers = [m.group(0) for m in re.finditer(r"(?<![\w.])\d+(?:\.\d+)?%?", prose)]
    # list markers of the chapter overview ("1. ", "2. ", ...) are not numbers of the text
    numbers = [n for n in numbers if not re.search(rf"^{re.escape(n)}\. ", prose, flags=re.M)]
    assert not numbers, f"{page.name} 正文中出现了未经 glue 的数字：{numbers}"
