"""Static and numerical checks of the chapter book/case_study (introductory ROC/AUC case study)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from autograder import reference as ref

PAGE = Path(__file__).resolve().parents[2] / "book" / "case_study" / "index.md"
LABELS = [0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]
SCORES = [0.1, 0.2, 0.2, 0.3, 0.3, 0.4, 0.5, 0.7, 0.9, 0.15, 0.45, 0.55, 0.75, 0.75, 0.85, 0.95, 0.75, 0.85, 0.95]


def test_page_uses_the_seed_data() -> None:
    text = PAGE.read_text(encoding="utf-8")
    compact = re.sub(r"\s+", "", text)
    assert "cs_labels=np.array([" + ",".join(map(str, LABELS)) + "])" in compact
    assert "cs_scores=np.array([" + ",".join(f"{s:g}" for s in SCORES) + "])" in compact


def test_seed_numbers() -> None:
    assert ref.roc_auc(LABELS, SCORES) == pytest.approx(0.8, abs=1e-12)
    assert ref.pairwise_auc(LABELS, SCORES) == pytest.approx(0.8, abs=1e-12)
    r = ref.roc_curve(LABELS, SCORES)
    # the three points checked one by one in the seed
    assert (r.fpr[0], r.tpr[0]) == (0.0, 0.0)
    assert (r.fpr[1], r.tpr[1]) == (0.0, 0.2)
    assert r.thresholds[2] == 0.9 and round(r.fpr[2], 2) == 0.11 and r.tpr[2] == 0.2


def test_matches_scikit_learn() -> None:
    metrics = pytest.importorskip("sklearn.metrics")
    fpr, tpr, _ = metrics.roc_curve(LABELS, SCORES, drop_intermediate=False)
    r = ref.roc_curve(LABELS, SCORES)
    assert np.allclose(fpr, r.fpr) and np.allclose(tpr, r.tpr)
    ref_fpr, ref_tpr, ref_thresholds = r  # the same positional order as scikit-learn, as the page says
    assert np.allclose(fpr, ref_fpr) and np.allclose(tpr, ref_tpr) and np.isinf(ref_thresholds[0])
    assert metrics.roc_auc_score(LABELS, SCORES) == pytest.approx(0.8, abs=1e-12)


@pytest.mark.slow  # the book build
def test_rendered_page_states_the_shared_return_order(book_html: Path) -> None:
    html = (book_html / "book" / "case_study" / "index.html").read_text(encoding="utf-8")
    text = re.sub(r"<[^>]+>", "", html)
    assert "都按 (fpr, tpr, thresholds) 的顺序返回" in re.sub(r"\s+", " ", text)
    assert "(thresholds, fpr, tpr)" not in text
