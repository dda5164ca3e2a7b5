"""Chinese full-text search: jieba segments the pages, so Chinese words are in searchindex.js.

That a search for a Chinese word finds its page is tested where a reader searches: in the browser
(test_quiz_browser.py::test_chinese_search_in_the_browser).
"""

from __future__ import annotations

import json
import re

import pytest

from .test_search_index import search_language

pytestmark = pytest.mark.slow


def load_index(book_html):
    text = (book_html / "searchindex.js").read_text(encoding="utf-8")
    match = re.match(r"Search\.setIndex\((.*)\)\s*;?\s*$", text, re.S)
    assert match, "searchindex.js 的格式无法识别"
    return json.loads(match.group(1))


def test_index_is_chinese(book_html):
    index = load_index(book_html)
    chinese_terms = [t for t in index["terms"] if re.search(r"[\u4e00-\u9fff]{2,}", t)]
    assert len(chinese_terms) > 200, "中文词没有被索引（jieba 未安装？）"


def test_index_holds_no_number_and_no_tex_command(book_html):
    """No term that no query can match (numbers: book/_ext/search_language.py) and no TeX command name leads
    to a page; the words the formulas wrap do.  (A term an earlier build indexed keeps an empty list of pages
    after an incremental build: Sphinx's own pruning; it leads nowhere.)"""
    index = load_index(book_html)
    for key in ("terms", "titleterms"):
        dead = [term for term, pages in index[key].items() if pages != [] and not search_language.searchable(term)]
        assert not dead, f"{key}: {len(dead)} terms no query can match, e.g. {dead[:10]}"
    tex = [term for term in ("mathrm", "operatornam", "mathbb", "tfrac", "lvert") if index["terms"].get(term, []) != []]
    assert not tex, f"TeX command names in the index: {tex}"
    assert index["terms"].get("tpr") and index["terms"].get("召回率"), "the words of the formulas and of the prose"

