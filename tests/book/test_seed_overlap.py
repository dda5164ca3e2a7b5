"""The book is written in its own words: no run of 20 Chinese characters is shared with a seed.

The seeds (the five source documents, ``../shared/seeds/*.txt`` next to the repository) give the
course its facts, examples and structure, not its sentences (CONTRIBUTING.md).  This test takes every
run of consecutive Chinese characters (punctuation, Latin letters, digits, math and line breaks end a
run) in the reader-visible text -- the book's pages outside code, the quiz data and the glossary data --
and fails on every stretch of ``RUN`` characters that also occurs inside a run of a seed.

The seeds are not part of the repository.  Where the folder is absent (a clean clone elsewhere),
the test is skipped with that reason, so a skip in the report means "not checked here".
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from .prose import CJK, ROOT, Source, glossary_sources, joined, page_sources, quiz_sources

SEEDS = ROOT.parent / "shared" / "seeds"
RUN = 20
_RUN = re.compile(rf"[{CJK}]{{{RUN},}}")


def seed_grams(folder: Path = SEEDS, n: int = RUN) -> set[str]:
    """Every stretch of ``n`` consecutive Chinese characters of the seed documents."""
    grams: set[str] = set()
    for path in sorted(folder.glob("*.txt")):
        for run in _RUN.findall(path.read_text(encoding="utf-8")):
            grams.update(run[i:i + n] for i in range(len(run) - n + 1))
    return grams


def shared_runs(sources: list[Source], grams: set[str], n: int = RUN) -> list[str]:
    """``where: run`` for every run of the sources that contains a seed stretch (each run once)."""
    hits = []
    for source in sources:
        for run in _RUN.findall(joined(source.text)):
            shared = next((run[i:i + n] for i in range(len(run) - n + 1) if run[i:i + n] in grams), None)
            if shared:
                hits.append(f"{source.where}: “{run}”（与种子文档共有“{shared}”）")
    return hits


@pytest.fixture(scope="module")
def grams() -> set[str]:
    if not SEEDS.is_dir():
        pytest.skip(f"种子文档目录 {SEEDS} 不存在（仓库外的文件），无法检查与种子文档的重合")
    found = seed_grams()
    assert found, f"{SEEDS} 中没有任何 .txt 种子文档"
    return found


def test_detector_finds_a_copied_sentence(grams):
    """The check itself: a sentence copied from a seed (with wrapping and math around it) is found."""
    seed = next(iter(sorted(grams)))
    page = f"前言 $x$ 一句话。\n{seed[:7]}\n{seed[7:]}，结束。"
    assert shared_runs([Source("probe", page)], grams)
    assert not shared_runs([Source("probe", seed[:RUN - 1] + "。" + seed[RUN - 1:])], grams)


@pytest.mark.parametrize("kind", ["pages", "quizzes", "glossary"])
def test_no_sentence_is_copied_from_a_seed(grams, kind):
    sources = {"pages": page_sources, "quizzes": quiz_sources, "glossary": lambda: glossary_sources(variants=True)}[kind]()
    hits = shared_runs(sources, grams)
    assert not hits, f"{len(hits)} 处连续 {RUN} 个以上的汉字与种子文档相同，请用自己的话改写：\n" + "\n".join(hits)
