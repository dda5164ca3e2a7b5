"""The search index holds only words a query can find, and the search page paints before the index loads.

Fast tests of book/_ext/search_language.py (numbers and TeX command names out of the index, the words a
formula wraps in) and of page_speed.search_page (the rewrite of search.html's script tags).  The built
index is checked in tests/book/test_search.py, the search page in the browser in test_search_browser.py.
"""

from __future__ import annotations

import contextlib
import importlib
import sys

import pytest

from .quizdata import ROOT


@contextlib.contextmanager
def _extensions_importable():
    path = str(ROOT / "book" / "_ext")
    sys.path.insert(0, path)  # page_speed imports its sibling modules by name, as Sphinx loads them
    try:
        yield
    finally:
        sys.path.remove(path)


with _extensions_importable():
    search_language = importlib.import_module("search_language")
    page_speed = importlib.import_module("page_speed")


@pytest.fixture(scope="module")
def chinese():
    language = search_language.CourseChinese({"dict": str(ROOT / "book" / "_ext" / "search_terms.txt")})
    return language


def test_tex_commands_are_not_words_but_what_they_wrap_is(chinese):
    words = chinese.split(r"\operatorname{Recall}=\frac{\mathrm{TP}}{\mathrm{TP}+\mathrm{FN}}，即召回率")
    assert "operatorname" not in words and "frac" not in words and "mathrm" not in words
    assert {"Recall", "TP", "FN", "召回率"} <= set(words)


def test_code_words_stay(chinese):
    words = chinese.split("from sklearn.metrics import roc_auc_score\ndef frac(x): ...")
    assert {"roc_auc_score", "frac", "sklearn"} <= set(words)


def test_stems_are_sphinx_own_and_the_latin_words_belong_to_one_build(chinese):
    """Every word stems as Sphinx's Chinese language stems it (acronyms of the page kept whole), with the build's
    Latin words in a set of its own (Sphinx's list on the class, searched word by word, cost 10 s a build)."""
    from sphinx.search.zh import SearchChinese

    text = "ROC 曲线与 AUC：召回率 recall、precision、thresholds、ECE 和 the running means"
    sphinx_own = SearchChinese({})
    ours = search_language.CourseChinese({})
    words = ours.split(text)
    assert words == sphinx_own.split(text)
    assert [ours.stem(w) for w in words] == [sphinx_own.stem(w) for w in words]
    assert ours.stem("ECE") == "ece" and ours.stem("running") == "run"
    assert isinstance(ours.latin_terms, set) and "recall" in ours.latin_terms
    assert "recall" not in search_language.CourseChinese({}).latin_terms  # a new build starts empty


@pytest.mark.parametrize("term", ["0.8417", "98014.6050", "2024", "--", "...", "0%", "x"])
def test_terms_no_query_can_match_are_not_indexed(chinese, term):
    assert not chinese.word_filter(term)


@pytest.mark.parametrize("term", ["auc", "roc_auc_score", "f1", "召回率", "np.mean", "__init__", "ece"])
def test_words_a_query_can_match_are_indexed(chinese, term):
    assert chinese.word_filter(term)


HEAD = """<head>
    <script src="_static/documentation_options.js?v=1"></script>
    <script src="_static/doctools.js?v=2"></script>
    <script defer="defer" src="_static/search_text.js?v=3"></script>
    <script defer="defer" src="_static/search_index.js?v=4"></script>
    <script>DOCUMENTATION_OPTIONS.pagename = 'search';</script>
  <script src="_static/searchtools.js"></script>
  <script src="_static/language_data.js"></script>
  <script src="searchindex.js"></script>
</head><body></body>"""


def test_search_page_defers_the_tools_and_hands_the_index_to_its_loader():
    page = page_speed.search_page(HEAD, "abc123")
    assert '<script src="searchindex.js">' not in page
    assert 'src="_static/search_index.js?v=4" data-index="searchindex.js?v=abc123"' in page
    tools = page.index('<script defer src="_static/searchtools.js">')
    data = page.index('<script defer src="_static/language_data.js">')
    text = page.index("_static/search_text.js")
    assert tools < data < text, "the tools, then the script that wraps them"
    assert '<script src="_static/searchtools.js">' not in page and '<script src="_static/language_data.js">' not in page


def test_search_page_rewrite_is_idempotent_and_takes_the_new_version():
    once = page_speed.search_page(HEAD, "abc123")
    again = page_speed.search_page(once, "def456")
    assert again == once.replace("abc123", "def456")


@pytest.mark.parametrize("missing, message", [
    ('<script defer="defer" src="_static/search_index.js?v=4"></script>', "search_index.js"),
    ('<script src="searchindex.js"></script>', "searchindex.js"),
    ('<script defer="defer" src="_static/search_text.js?v=3"></script>', "search_text.js"),
])
def test_search_page_without_a_tag_it_needs_fails_the_build(missing, message):
    with pytest.raises(page_speed.SearchPageChanged, match=message.replace(".", r"\.")):
        page_speed.search_page(HEAD.replace(missing, ""), "abc123")
