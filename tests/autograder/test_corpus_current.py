"""The committed sample corpus is exactly what ``make_corpus.py`` generates from the current sources."""

from __future__ import annotations

from pathlib import Path

import make_corpus

COMMITTED = Path(__file__).resolve().parent / "corpus"


def test_committed_corpus_is_current(tmp_path):
    make_corpus.write(tmp_path)
    fresh = {p.relative_to(tmp_path): p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    committed = {p.relative_to(COMMITTED): p.read_bytes() for p in COMMITTED.rglob("*") if p.is_file()}
    assert sorted(fresh) == sorted(committed), "regenerate: python tests/autograder/make_corpus.py"
    stale = [str(k) for k in fresh if fresh[k] != committed[k]]
    assert not stale, f"stale corpus files (regenerate with python tests/autograder/make_corpus.py): {stale}"
