"""One word per concept: the glossary data (book/glossary/terms.yml) against the book's prose.

* the data is well formed and every term's ``introduced`` label exists in the book;
* no variant of a term (another word for the same concept, listed in the glossary) appears in the
  prose of a page (outside code and math; figure captions included), in the quiz data or in the
  glossary's own definitions -- only the glossary lists them;
* every term is defined before it is used: reading the pages in the order of ``_toc.yml``, the first
  use of a term (overview pages, headings and table rows excepted) does not come before the section
  that introduces it, unless the data names that page in the term's ``forward`` list (a deliberate,
  reviewed forward reference, such as a preview of the next section or a link to a later chapter).
"""

from __future__ import annotations

import importlib.util
import re

import pytest

from .prose import ROOT, Source, glossary_sources, joined, page_prose, quiz_sources, toc_docs

_spec = importlib.util.spec_from_file_location("course_glossary_ext", ROOT / "book" / "_ext" / "course_glossary.py")
glossary_ext = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(glossary_ext)

DATA = glossary_ext.load_terms()
TERMS = DATA["terms"]
GLOSSARY_PAGE = "book/glossary"


PAGES = toc_docs()
RAW = {doc: (ROOT / f"{doc}.md").read_text(encoding="utf-8") for doc in PAGES}
PROSE = {doc: page_prose(text) for doc, text in RAW.items()}


def labels() -> dict[str, tuple[int, int]]:
    """``label -> (page index in reading order, offset)`` of every ``(label)=`` target."""
    found = {}
    for i, doc in enumerate(PAGES):
        for m in re.finditer(r"^\(([A-Za-z0-9_-]+)\)=[ \t]*$", RAW[doc], re.M):
            found[m.group(1)] = (i, m.start())
    return found


LABELS = labels()
HEADINGS = re.compile(r"^(?:#+ |\|).*$", re.M)   # headings and table rows announce, they do not use


def variant_hits(source: Source) -> list[str]:
    """Every variant found in one text, as readable lines."""
    text = joined(source.text)
    hits = []
    for term in TERMS:
        for variant in term.get("variants", []):
            pattern, excuses = glossary_ext.variant_rule(variant)
            for m in pattern.finditer(text):
                if any(e.start() <= m.start() and m.end() <= e.end() for ex in excuses for e in ex.finditer(text)):
                    continue
                line = text.count("\n", 0, m.start()) + 1 if "\n" in text else None
                context = text[max(0, m.start() - 12):m.end() + 12].replace("\n", " ")
                where = f"{source.where}:{line}" if line else source.where
                hits.append(f"{where}: “{m.group(0)}” → 应写“{term['term']}”（…{context}…）")
    return hits


# --------------------------------------------------------------------------------------- data
def test_every_page_of_the_toc_exists_and_the_glossary_is_listed():
    assert GLOSSARY_PAGE in PAGES
    assert all((ROOT / f"{doc}.md").is_file() for doc in PAGES)


def test_terms_are_introduced_at_existing_labels():
    missing = {t["id"]: t["introduced"] for t in TERMS if t["introduced"] not in LABELS}
    assert not missing, f"术语表引用了不存在的标签：{missing}"


def test_every_term_is_used_in_the_book():
    text = joined("".join(PROSE[d] for d in PAGES if d != GLOSSARY_PAGE))
    unused = [t["term"] for t in TERMS if not any(w in text for w in t.get("search", [t["term"]]))]
    assert not unused, f"书中没有用到这些术语：{unused}"


def test_a_variant_is_never_a_chosen_term():
    chosen = {w for t in TERMS for w in [t["term"], *t.get("search", [])]}
    for term in TERMS:
        for variant in term.get("variants", []):
            pattern, _ = glossary_ext.variant_rule(variant)
            clash = [w for w in chosen if pattern.fullmatch(w)]
            assert not clash, f"{term['id']} 的其他说法 {variant!r} 与所选术语 {clash} 相同"


@pytest.mark.parametrize(
    ("text", "expected"),
    [("按查准率排序", 1), ("正类的可靠度图", 1), ("十个等宽区间", 1), ("95% 置信区间", 0), ("区间 $[0,1]$ 中", 0),
     ("一个极小的反例", 0), ("负类（反类）", 1), ("精确率与召回率", 0), ("它过分自信", 1)],
)
def test_the_rules_themselves(text, expected):
    """Hits and excuses of the rules on hand-made sentences (so the check below can fail)."""
    assert len(variant_hits(Source("probe", page_prose(text)))) == expected, variant_hits(Source("probe", page_prose(text)))


# ---------------------------------------------------------------------------------- the prose
@pytest.mark.parametrize("doc", [d for d in PAGES if d != GLOSSARY_PAGE])
def test_page_uses_only_the_chosen_terms(doc):
    hits = variant_hits(Source(f"{doc}.md", PROSE[doc]))
    assert not hits, "请改用术语表选定的词：\n" + "\n".join(hits)


def test_pages_outside_the_toc_use_only_the_chosen_terms():
    others = [p for p in sorted((ROOT / "book").rglob("*.md")) if "_build" not in p.parts
              and str(p.relative_to(ROOT).with_suffix("")) not in PAGES]
    hits = [h for p in others for h in variant_hits(Source(str(p.relative_to(ROOT)), page_prose(p.read_text(encoding="utf-8"))))]
    assert not hits, "\n".join(hits)


def test_quizzes_use_only_the_chosen_terms():
    hits = [h for s in quiz_sources() for h in variant_hits(s)]
    assert not hits, "请改用术语表选定的词：\n" + "\n".join(hits)


def test_glossary_definitions_use_only_the_chosen_terms():
    hits = [h for s in glossary_sources() for h in variant_hits(s)]
    assert not hits, "\n".join(hits)


# ------------------------------------------------------------------------- define before use
def first_use(words: list[str], skip: set[str], after: tuple[int, int]) -> tuple[int, int, str] | None:
    """``(page index, offset, doc)`` of the first use of any of ``words`` in reading order.

    Pages in ``skip`` are passed over, except the introducing page (``after``), where only the uses
    before its label are passed over.
    """
    for i, doc in enumerate(PAGES):
        if doc in skip and i != after[0]:
            continue
        text = HEADINGS.sub(lambda m: " " * len(m.group(0)), PROSE[doc])
        positions = [m.start() for w in words for m in re.finditer(re.escape(w), text)]
        if doc in skip:
            positions = [p for p in positions if p >= after[1]]
        if positions:
            return i, min(positions), doc
    return None


@pytest.mark.parametrize("term", TERMS, ids=[t["id"] for t in TERMS])
def test_term_is_defined_before_it_is_used(term):
    skip = set(DATA["overview_pages"]) | set(term.get("forward", []))
    page, offset = LABELS[term["introduced"]]
    use = first_use(term.get("search", [term["term"]]), skip, (page, offset))
    assert use is not None, f"“{term['term']}”在正文中（预告与概览之外）没有出现"
    used_page, used_offset, doc = use
    before = (used_page, used_offset) < (page, offset)
    context = PROSE[doc][max(0, used_offset - 20):used_offset + 20].replace("\n", " ").strip()
    assert not before, (f"“{term['term']}”在 {doc}.md 中先用到（…{context}…），"
                        f"却在 {PAGES[page]}.md 的 {term['introduced']} 才定义")
