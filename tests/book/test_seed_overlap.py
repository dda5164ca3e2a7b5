"""The book is written in its own words: no 12 Chinese characters of its own prose in a row are shared with a seed.

The seeds (the five source documents, ``../shared/seeds/*.txt`` next to the repository) give the
course its facts, examples and structure, not its sentences (CONTRIBUTING.md).  Re-punctuating a copied
sentence, or putting a symbol, a number or a space into it, does not make it original, so the
comparison reads only the Chinese characters: the reader-visible text -- the book's pages outside code,
the quiz data and the glossary data -- and the seeds are both *squeezed* (punctuation, digits, Latin
letters, math, spaces and line breaks removed).  A *shared stretch* is a maximal stretch of a squeezed
text every ``RUN`` consecutive characters of which also occur in a squeezed seed.

The course's own terms may be shared: both texts must say 精确率, 假正率, 交叉验证.  So a character that
belongs to an occurrence of a glossary term in the text (the ``term`` and ``search`` words of
``book/glossary/terms.yml``; a term with math in it is found through its ``search`` words) is not
counted, and the test fails on a shared stretch only when at least ``RUN`` of its characters lie outside
such occurrences.  A stretch made only (or mostly) of terms, such as “真正例、假正例、真负例和假负例”, does not
count; a copied clause does, however many terms it contains, because terms are discounted without
breaking the stretch (so the rule is stricter than treating terms as separators: the words on both
sides of a term add up).  The title of a work in 《》 is discounted the same way: citing a source by its title
(the licence page credits the seeds) is not writing its sentences.  A hit is reported with the line, the original wording of the page and both
counts, so the writer sees what to rewrite.

The seeds are not part of the repository, and a copy of their sentences must not be either: the
repository keeps only a fingerprint of each stretch of ``RUN`` characters of a squeezed seed
(``seed_fingerprints.txt``: the first 16 hex digits of its SHA-256).  Where the seeds are present, the
test checks that the fingerprints are current; everywhere (a clean clone in CI included) it checks the
book against the fingerprints.  Regenerate with ``python -m tests.book.test_seed_overlap`` next to the
seeds (or name their folder: ``python -m tests.book.test_seed_overlap /path/to/seeds``).
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest
import yaml

from .prose import CJK, ROOT, Source, glossary_sources, page_sources, quiz_sources

SEEDS = ROOT.parent / "shared" / "seeds"
FINGERPRINTS = Path(__file__).with_name("seed_fingerprints.txt")
TERMS = ROOT / "book" / "glossary" / "terms.yml"
RUN = 12
_HAN = re.compile(rf"[{CJK}]")
TITLE = re.compile(r"《[^》\n]{1,80}》")  # the title of a work, as a citation names it (the licence page credits the seeds)


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


def glossary_words(path: Path = TERMS) -> list[str]:
    """The words that count as terms: each term (a list such as “真正例、假正例” split) and its ``search`` words.

    Words with math in them (``$k$ 折交叉验证``) are left out: math is blanked in the prose, and their
    ``search`` words (交叉验证) stand for them.  Words without a Chinese character discount nothing.
    """
    words = set()
    for term in yaml.safe_load(path.read_text(encoding="utf-8"))["terms"]:
        for word in [*str(term["term"]).split("、"), *term.get("search", [])]:
            if "$" not in word and _HAN.search(word):
                words.add(word.strip())
    return sorted(words, key=len, reverse=True)


def term_pattern(words: list[str]) -> re.Pattern[str] | None:
    """A regex matching any of ``words``, a space inside a word (“ROC 曲线”) matching any white space."""
    if not words:
        return None
    return re.compile("|".join(re.escape(w).replace(r"\ ", r"\s*") for w in sorted(words, key=len, reverse=True)))


def shared_runs(sources: list[Source], prints: set[str], n: int = RUN, terms: re.Pattern[str] | None = None) -> list[str]:
    """``where:line: wording`` for every shared stretch with at least ``n`` characters outside the ``terms``."""
    hits = []
    for source in sources:
        chars, offsets = squeeze(source.text)
        in_term = {k for m in (terms.finditer(source.text) if terms else ()) for k in range(m.start(), m.end())}
        in_term |= {k for m in TITLE.finditer(source.text) for k in range(m.start(), m.end())}  # a cited work's title
        found = [fingerprint(chars[i:i + n]) in prints for i in range(len(chars) - n + 1)]
        i = 0
        while i < len(found):
            if not found[i]:
                i += 1
                continue
            j = i
            while j + 1 < len(found) and found[j + 1]:
                j += 1
            first, last = i, j + n - 1                     # the stretch is chars[first:last + 1]
            i = j + 1
            own = sum(offsets[k] not in in_term for k in range(first, last + 1))
            if own < n:
                continue
            start, end = offsets[first], offsets[last] + 1
            line = source.text.count("\n", 0, start) + 1
            wording = re.sub(r"\s+", " ", source.text[start:end])
            hits.append(f"{source.where}:{line}: “{wording}”（去掉标点、数字、字母与空白后，与种子文档共有"
                        f"“{chars[first:last + 1]}”，{last + 1 - first} 个汉字，术语以外 {own} 个）")
    return hits


def _committed() -> set[str]:
    return {line.strip() for line in FINGERPRINTS.read_text(encoding="utf-8").splitlines() if line and not line.startswith("#")}


def write_fingerprints(folder: Path = SEEDS) -> None:
    lines = sorted(fingerprint(g) for g in seed_grams(folder))
    FINGERPRINTS.write_text(f"# SHA-256 (first 16 hex digits) of every stretch of {RUN} Chinese characters of the seed documents,\n"
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
    assert _committed() == {fingerprint(g) for g in seed_grams()}, "种子文档变了（或 RUN 改了）：重新生成 seed_fingerprints.txt"


SEED_PROBE = "一二三四五六七八九十甲乙丙丁戊己庚辛壬癸子丑"


def test_detector_finds_a_copied_sentence():
    """The check itself: a stretch of a seed (with wrapping and math around it) is found from its fingerprint."""
    probe = {fingerprint(SEED_PROBE[:RUN])}
    page = f"前言 $x$ 一句话。\n{SEED_PROBE[:7]}\n{SEED_PROBE[7:]}，结束。"
    assert shared_runs([Source("probe", page)], probe)
    assert not shared_runs([Source("probe", SEED_PROBE[:RUN - 1] + "末" + SEED_PROBE[RUN - 1:])], probe)


def test_detector_sees_through_punctuation_digits_and_letters():
    """Re-punctuating a copied sentence, or putting numbers, symbols and spaces into it, does not hide it."""
    probe = {fingerprint(g) for g in grams_of(SEED_PROBE)}
    s = SEED_PROBE
    page = f"开头。{s[:3]}，{s[3:6]} 0.75 {s[6:9]}（AUC）{s[9:12]}、$\\tau$ {s[12:]}。"
    hits = shared_runs([Source("probe", page)], probe)
    assert len(hits) == 1 and "probe:1:" in hits[0] and s in hits[0], hits


def test_terms_are_discounted_but_do_not_break_a_stretch():
    """A shared stretch counts by its characters outside glossary terms; the terms do not split it.

    With the terms 甲乙丙 and 子丑, the 22-character probe has 17 characters of its own: it is a hit.  The
    first 14 characters with a term of 5 at each end keep only 4 of their own: not a hit, though 14 >= RUN.
    A stretch split by a term into two halves of fewer than RUN characters each still counts when the
    halves together reach RUN (terms are not separators).
    """
    probe = {fingerprint(g) for g in grams_of(SEED_PROBE)}
    terms = term_pattern(["甲乙丙", "子丑"])
    assert len(shared_runs([Source("probe", SEED_PROBE)], probe, terms=terms)) == 1
    only_terms = term_pattern(["一二三四五", "十甲乙丙丁"])
    assert shared_runs([Source("probe", SEED_PROBE[:14])], probe) and not shared_runs([Source("probe", SEED_PROBE[:14])], probe, terms=only_terms)
    middle = term_pattern(["七八九"])       # 6 own characters on its left, 13 on its right: counted together
    assert shared_runs([Source("probe", SEED_PROBE[:6 + 3 + RUN - 6])], probe, terms=middle)


def test_a_cited_title_is_discounted_but_prose_around_it_is_not():
    seed = "监督学习性能评估交叉验证分类指标是一篇文章"
    prints = {fingerprint(g) for g in grams_of(seed)}
    assert shared_runs([Source("p", "资料有《监督学习性能评估：交叉验证、分类指标》等。")], prints) == []
    assert shared_runs([Source("p", "监督学习性能评估：交叉验证、分类指标。")], prints)


def test_glossary_words_are_read_from_the_terms_file():
    words = glossary_words()
    assert {"精确率", "召回率", "真正例", "假负例", "交叉验证"} <= set(words)
    assert not [w for w in words if "$" in w]
    assert term_pattern(["ROC 曲线"]).fullmatch("ROC\n曲线")


@pytest.mark.parametrize("kind", ["pages", "quizzes", "glossary"])
def test_no_sentence_is_copied_from_a_seed(prints, kind):
    sources = {"pages": page_sources, "quizzes": quiz_sources, "glossary": lambda: glossary_sources(variants=True)}[kind]()
    hits = shared_runs(sources, prints, terms=term_pattern(glossary_words()))
    assert not hits, (f"{len(hits)} 处与种子文档相同的连续汉字（术语以外至少 {RUN} 个），请用自己的话改写：\n"
                      + "\n".join(hits))


if __name__ == "__main__":
    import sys

    write_fingerprints(Path(sys.argv[1]) if len(sys.argv) > 1 else SEEDS)
