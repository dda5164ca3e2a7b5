"""The book is written in its own words: no run of 20 Chinese characters is shared with a seed.

The seeds (the five source documents, ``../shared/seeds/*.txt`` next to the repository) give the
course its facts, examples and structure, not its sentences (CONTRIBUTING.md).  This test takes every
run of consecutive Chinese characters (punctuation, Latin letters, digits, math and line breaks end a
run) in the reader-visible text -- the book's pages outside code, the quiz data and the glossary data --
and fails on every stretch of ``RUN`` characters that also occurs inside a run of a seed.

The seeds are not part of the repository, and a copy of their sentences must not be either: the
repository keeps only a fingerprint of each stretch (``seed_fingerprints.txt``: the first 16 hex digits
of its SHA-256).  Where the seeds are present, the test checks that the fingerprints are current;
everywhere (a clean clone in CI included) it checks the book against the fingerprints.
Regenerate with ``python -m tests.book.test_seed_overlap`` next to the seeds.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest

from .prose import CJK, ROOT, Source, glossary_sources, joined, page_sources, quiz_sources

SEEDS = ROOT.parent / "shared" / "seeds"
FINGERPRINTS = Path(__file__).with_name("seed_fingerprints.txt")
RUN = 20
_RUN = re.compile(rf"[{CJK}]{{{RUN},}}")


def seed_grams(folder: Path = SEEDS, n: int = RUN) -> set[str]:
    """Every stretch of ``n`` consecutive Chinese characters of the seed documents."""
    grams: set[str] = set()
    for path in sorted(folder.glob("*.txt")):
        for run in _RUN.findall(path.read_text(encoding="utf-8")):
            grams.update(run[i:i + n] for i in range(len(run) - n + 1))
    return grams


def fingerprint(gram: str) -> str:
    return hashlib.sha256(gram.encode("utf-8")).hexdigest()[:16]


def shared_runs(sources: list[Source], prints: set[str], n: int = RUN) -> list[str]:
    """``where: run`` for every run of the sources that contains a seed stretch (each run once)."""
    hits = []
    for source in sources:
        for run in _RUN.findall(joined(source.text)):
            shared = next((run[i:i + n] for i in range(len(run) - n + 1) if fingerprint(run[i:i + n]) in prints), None)
            if shared:
                hits.append(f"{source.where}: “{run}”（与种子文档共有“{shared}”）")
    return hits


def _committed() -> set[str]:
    return {line.strip() for line in FINGERPRINTS.read_text(encoding="utf-8").splitlines() if line and not line.startswith("#")}


def write_fingerprints() -> None:
    lines = sorted(fingerprint(g) for g in seed_grams())
    FINGERPRINTS.write_text("# SHA-256 (first 16 hex digits) of every run of 20 Chinese characters of the seed documents.\n"
                            "# Regenerate next to the seeds: python -m tests.book.test_seed_overlap\n" + "\n".join(lines) + "\n",
                            encoding="utf-8")


@pytest.fixture(scope="module")
def prints() -> set[str]:
    committed = _committed()
    assert len(committed) > 100, f"{FINGERPRINTS} 几乎是空的"
    return committed


@pytest.mark.skipif(not SEEDS.is_dir(), reason="种子文档不在这台机器上：只用仓库中的指纹检查")
def test_fingerprints_are_current():
    assert _committed() == {fingerprint(g) for g in seed_grams()}, "种子文档变了：重新生成 seed_fingerprints.txt"


def test_detector_finds_a_copied_sentence():
    """The check itself: a stretch of a seed (with wrapping and math around it) is found from its fingerprint."""
    seed = "一二三四五六七八九十甲乙丙丁戊己庚辛壬癸子丑"
    probe = {fingerprint(seed[:RUN])}
    page = f"前言 $x$ 一句话。\n{seed[:7]}\n{seed[7:]}，结束。"
    assert shared_runs([Source("probe", page)], probe)
    assert not shared_runs([Source("probe", seed[:RUN - 1] + "。" + seed[RUN - 1:])], probe)


@pytest.mark.parametrize("kind", ["pages", "quizzes", "glossary"])
def test_no_sentence_is_copied_from_a_seed(prints, kind):
    sources = {"pages": page_sources, "quizzes": quiz_sources, "glossary": lambda: glossary_sources(variants=True)}[kind]()
    hits = shared_runs(sources, prints)
    assert not hits, f"{len(hits)} 处连续 {RUN} 个以上的汉字与种子文档相同，请用自己的话改写：\n" + "\n".join(hits)


if __name__ == "__main__":
    write_fingerprints()
