"""What a student reads in a variant follows the book's rules for its quiz data: only the terms the glossary
chose (tests/book/test_vocabulary.py) and no run of 20 Chinese characters shared with a seed document
(tests/book/test_seed_overlap.py); plain text only (no TeX, no Markdown: the book's script shows it as text)."""

from __future__ import annotations

import re

import pytest

from autograder.quiz import QUIZ_MISTAKES, TEMPLATES, make_variant, variant_seed
from tests.book.prose import Source
from tests.book.test_seed_overlap import _committed, shared_runs
from tests.book.test_vocabulary import variant_hits

VARIANTS = 20


def texts(template) -> list[Source]:
    out = [Source(f"{template.id}: 标题", template.title)]
    for i in range(VARIANTS):
        for form in template.forms:
            v = make_variant(template, variant_seed("wording", f"s{i}", template.id, 0), form)
            where = f"{template.id} seed={v.seed} {form}"
            out += [Source(f"{where}: 题干", p) for p in v.stem] + [Source(f"{where}: 解答", v.solution)]
            out += [Source(f"{where}: 选项 {o.letter}", o.text) for o in v.options]
            out += [Source(f"{where}: 选项 {o.letter} 的解析", o.explanation) for o in v.options]
            out += [Source(f"{where}: 错误数值的解析", d.explanation) for d in v.diagnoses]
            if v.key:
                out.append(Source(f"{where}: 作答要求", v.key.instruction()))
    return out


@pytest.mark.parametrize("template", TEMPLATES, ids=lambda t: t.id)
def test_variants_use_the_chosen_terms_their_own_words_and_plain_text(template):
    sources = texts(template)
    hits = [h for s in sources for h in variant_hits(s)]
    assert not hits, "请改用术语表选定的词：\n" + "\n".join(hits[:10])
    runs = shared_runs(sources, _committed())
    assert not runs, "\n".join(runs[:5])
    markup = [s.where for s in sources if re.search(r"\$|\\[a-z]+|\*\*|`", s.text)]
    assert not markup, markup[:5]


def test_mistake_titles_use_the_chosen_terms():
    hits = [h for m in QUIZ_MISTAKES for h in variant_hits(Source(m.id, m.title))]
    assert not hits, hits
