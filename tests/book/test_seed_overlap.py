"""The book is written in its own words: no 20 Chinese characters in a row are shared with a seed.

The seeds (the five source documents, ``../shared/seeds/*.txt`` next to the repository) give the
course its facts, examples and structure, not its sentences (CONTRIBUTING.md).  Re-punctuating a copied
sentence, or putting a symbol, a number or a space into it, does not make it original, so the
comparison reads only the Chinese characters: the reader-visible text -- the book's pages outside code,
the quiz data and the glossary data -- and the seeds are both *squeezed* (punctuation, digits, Latin
letters, math, spaces and line breaks removed), and the test fails on every stretch of ``RUN``
characters of a squeezed text that also occurs in a squeezed seed.  A hit is reported with the line and
the original wording of the page, so the writer sees what to rewrite.

The seeds are not part of the repository, and a copy of their sentences must not be either: the
repository keeps only a fingerprint of each stretch of a squeezed seed (``seed_fingerprints.txt``: the
first 16 hex digits of its SHA-256).  Where the seeds are present, the test checks that the fingerprints
are current; everywhere (a clean clone in CI included) it checks the book against the fingerprints.
Regenerate with ``python -m tests.book.test_seed_overlap`` next to the seeds (or name their folder:
``python -m tests.book.test_seed_overlap /path/to/seeds``).
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest

from .prose import CJK, ROOT, Source, glossary_sources, page_sources, quiz_sources

SEEDS = ROOT.parent / "shared" / "seeds"
FINGERPRINTS = Path(__file__).with_name("seed_fingerprints.txt")
RUN = 20
_HAN = re.compile(rf"[{CJK}]")


def squeeze(text: str) -> tuple[str, list[int]]:
    """The Chinese characters of ``text`` in order (all else removed), and the offset of each in ``text``."""
    offsets = [m.start() for m in _HAN.finditer(text)]
    return "".join(text[i] for i in offsets), offsets


def grams_of(text: str, n: int = RUN) -> set[str]:
    """Every stretch of ``n`` consecutive characters of the squeezed ``text``."""
    chars, _ = squeeze(text)
    return {chars[i:i + n] for i in range(len(chars) - n + 1)}


def seed_grams(folder: Path = SEEDS, n: int = RUN) -> set[str]:
    """Every stretch of ``n`` consecutive characters of the squeezed seed documents."""
    return {g for path in sorted(folder.glob("*.txt")) for g in grams_of(path.read_text(encoding="utf-8"), n)}


def fingerprint(gram: str) -> str:
    return hashlib.sha256(gram.encode("utf-8")).hexdigest()[:16]


def shared_runs(sources: list[Source], prints: set[str], n: int = RUN) -> list[str]:
    """``where:line: wording`` for every maximal stretch of a squeezed source made of seed stretches."""
    hits = []
    for source in sources:
        chars, offsets = squeeze(source.text)
        found = [fingerprint(chars[i:i + n]) in prints for i in range(len(chars) - n + 1)]
        i = 0
        while i < len(found):
            if not found[i]:
                i += 1
                continue
            j = i
            while j + 1 < len(found) and found[j + 1]:
                j += 1
            start, end = offsets[i], offsets[j + n - 1] + 1
            line = source.text.count("\n", 0, start) + 1
            wording = re.sub(r"\s+", " ", source.text[start:end])
            hits.append(f"{source.where}:{line}: “{wording}”（去掉标点、数字、字母与空白后，与种子文档共有“{chars[i:j + n]}”）")
            i = j + 1
    return hits


def _committed() -> set[str]:
    return {line.strip() for line in FINGERPRINTS.read_text(encoding="utf-8").splitlines() if line and not line.startswith("#")}


def write_fingerprints(folder: Path = SEEDS) -> None:
    lines = sorted(fingerprint(g) for g in seed_grams(folder))
    FINGERPRINTS.write_text("# SHA-256 (first 16 hex digits) of every stretch of 20 Chinese characters of the seed documents,\n"
                            "# read with punctuation, digits, Latin letters and white space removed.\n"
                            "# Regenerate next to the seeds: python -m tests.book.test_seed_overlap [SEEDS_FOLDER]\n" + "\n".join(lines) + "\n",
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
    assert not shared_runs([Source("probe", seed[:RUN - 1] + "末" + seed[RUN - 1:])], probe)


def test_detector_sees_through_punctuation_digits_and_letters():
    """Re-punctuating a copied sentence, or putting numbers, symbols and spaces into it, does not hide it."""
    seed = "一二三四五六七八九十甲乙丙丁戊己庚辛壬癸子丑"
    probe = {fingerprint(g) for g in grams_of(seed)}
    page = f"开头。{seed[:3]}，{seed[3:6]} 0.75 {seed[6:9]}（AUC）{seed[9:12]}、$\\tau$ {seed[12:]}。"
    hits = shared_runs([Source("probe", page)], probe)
    assert len(hits) == 1 and "probe:1:" in hits[0] and seed in hits[0], hits


@pytest.mark.parametrize("kind", ["pages", "quizzes", "glossary"])
def test_no_sentence_is_copied_from_a_seed(prints, kind):
    sources = {"pages": page_sources, "quizzes": quiz_sources, "glossary": lambda: glossary_sources(variants=True)}[kind]()
    hits = shared_runs(sources, prints)
    assert not hits, f"{len(hits)} 处连续 {RUN} 个以上的汉字与种子文档相同，请用自己的话改写：\n" + "\n".join(hits)


if __name__ == "__main__":
    import sys

    write_fingerprints(Path(sys.argv[1]) if len(sys.argv) > 1 else SEEDS)
