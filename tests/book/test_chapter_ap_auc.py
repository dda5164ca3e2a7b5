"""Static and numerical checks of the chapter book/ap_auc (AP, AUC and d')."""

from __future__ import annotations

import re
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pytest

from autograder import reference as ref

CHAPTER = Path(__file__).resolve().parents[2] / "book" / "ap_auc"
PAGES = ["index", "ap", "auc", "dprime", "det", "cost_curves", "program"]
SCORES = [0.9, 0.8, 0.7, 0.6, 0.6, 0.5, 0.5, 0.4, 0.3]
LABELS = [1, 1, 0, 1, 0, 0, 0, 1, 0]


def _text(page: str) -> str:
    return (CHAPTER / f"{page}.md").read_text(encoding="utf-8")


def _code_cells(page: str) -> list[str]:
    return re.findall(r"```\{code-cell\} ipython3\n(.*?)```", _text(page), flags=re.S)


def test_equation_labels_carry_the_chapter_prefix() -> None:
    labels = [label for page in PAGES for label in re.findall(r"\$\$ \((eq-[\w-]+)\)", _text(page))]
    assert labels and all(label.startswith("eq-apauc-") for label in labels), labels


def test_seed_numbers() -> None:
    assert ref.average_precision(LABELS, SCORES) == pytest.approx(0.775, abs=1e-12)
    assert ref.roc_auc(LABELS, SCORES) == pytest.approx(0.725, abs=1e-12)
    assert round(ref.d_prime(0.99), 2) == 3.29
    assert round(ref.d_prime(0.999), 2) == 4.37


def _program_namespace() -> dict:
    """Execute the cells of program.md that define the program and its O(n m) counterpart."""
    namespace: dict = {"np": np, "NamedTuple": NamedTuple}
    for cell in _code_cells("program"):
        if "def ranking_summary(" in cell or cell.startswith("def ranking_summary_rescan("):
            exec(cell, namespace)  # noqa: S102 - course code under test
    assert {"ranking_summary", "ranking_summary_rescan"} <= namespace.keys()
    return namespace


def test_program_matches_reference_with_ties() -> None:
    ns = _program_namespace()
    assert tuple(ns["ranking_summary"](LABELS, SCORES)) == pytest.approx((0.775, 0.725), abs=1e-12)
    rng = np.random.default_rng(0)
    for _ in range(200):
        n = int(rng.integers(2, 40))
        y = rng.integers(0, 2, n)
        y[0], y[-1] = 0, 1
        s = rng.integers(0, 4, n) / 3
        expected = (ref.average_precision(y, s), ref.roc_auc(y, s))
        assert tuple(ns["ranking_summary"](y, s)) == pytest.approx(expected, abs=1e-12)
        assert tuple(ns["ranking_summary_rescan"](y, s)) == pytest.approx(expected, abs=1e-12)


def test_program_is_not_the_seed_port() -> None:
    """The page's program is the course's own design, not the seed's MATLAB ported line by line."""
    text = _text("program")
    assert "ap_and_auc" not in text and "sortrows" not in text
    ns = _program_namespace()
    with pytest.raises(ValueError):
        ns["ranking_summary"]([1, 1, 1], [0.1, 0.2, 0.3])
