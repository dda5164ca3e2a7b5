"""Chinese full-text search: jieba segments the pages, so Chinese words are in searchindex.js."""

from __future__ import annotations

import json
import re

import pytest

pytestmark = pytest.mark.slow


def load_index(book_html):
    text = (book_html / "searchindex.js").read_text(encoding="utf-8")
    match = re.match(r"Search\.setIndex\((.*)\)\s*;?\s*$", text, re.S)
    assert match, "searchindex.js 的格式无法识别"
    return json.loads(match.group(1))


def pages_for(index, word):
    docs = index["terms"].get(word)
    if docs is None:
        return set()
    docs = docs if isinstance(docs, list) else [docs]
    return {index["docnames"][d] for d in docs}


def test_index_is_chinese(book_html):
    index = load_index(book_html)
    chinese_terms = [t for t in index["terms"] if re.search(r"[\u4e00-\u9fff]{2,}", t)]
    assert len(chinese_terms) > 200, "中文词没有被索引（jieba 未安装？）"


@pytest.mark.parametrize(
    ("word", "page"),
    [("召回率", "book/binary/fixed_threshold"), ("混淆矩阵", "book/binary/confusion"), ("假发现率", "book/binary/fixed_threshold"),
     ("误判代价", "book/binary/thresholds_costs")],
)
def test_word_finds_page(book_html, word, page):
    import jieba

    index = load_index(book_html)
    # Sphinx segments the query the same way (jieba in search mode); every segment must hit the page.
    segments = [w for w in jieba.cut_for_search(word) if w.strip()]
    hits = [pages_for(index, w) | {index["docnames"][d] for d in _title_hits(index, w)} for w in segments]
    assert any(page in h for h in hits), f"搜索“{word}”找不到 {page}：{segments}"


def _title_hits(index, word):
    docs = index.get("titleterms", {}).get(word, [])
    return docs if isinstance(docs, list) else [docs]
