"""Chinese full-text search: jieba segments the pages, so Chinese words are in searchindex.js.

That a search for a Chinese word finds its page is tested where a reader searches: in the browser
(test_quiz_browser.py::test_chinese_search_in_the_browser).
"""

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


def test_index_is_chinese(book_html):
    index = load_index(book_html)
    chinese_terms = [t for t in index["terms"] if re.search(r"[\u4e00-\u9fff]{2,}", t)]
    assert len(chinese_terms) > 200, "中文词没有被索引（jieba 未安装？）"
