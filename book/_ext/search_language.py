"""Sphinx extension: the search index holds only words a reader's query can find.

Sphinx's Chinese search language (``sphinx.search.zh.SearchChinese``, words cut by jieba) indexes every
token of a page's text.  Two kinds of them no query can use, and they made up about a tenth of
``searchindex.js``, the largest file of the search page:

* **numbers** (``0.8417``, ``98014.6050``, ``--``: tokens without a letter; about 1,600 of 7,600 terms,
  mostly printed outputs of the notebooks).  The search page splits a query at every character that is
  not a letter, digit or underscore and drops the words that are only digits (``searchtools.js``,
  ``_parseQuery``), and a partial match needs a query word of three or more characters inside the term:
  a term without a letter or underscore can never be matched, exactly or partly;
* **TeX commands** of formulas (``\\frac``, ``\\mathrm``, ``\\operatorname``, ...): the reader sees a
  typeset formula, and its search snippet shows the formula as text (``_static/search_text.js``), so a
  result found by ``frac`` would show no ``frac``.  The command names go; what they wrap stays
  (``\\mathrm{TP}`` is indexed as ``TP``).  A backslash-word of code (an escape such as ``\\n``) goes too.

:class:`CourseChinese` replaces Sphinx's Chinese search language with these two filters, everything else
(jieba, the course's dictionary ``search_terms.txt`` from ``html_search_options``, the English stemmer)
unchanged.  Tested by ``tests/book/test_search.py``.

The results' titles are text a reader can read (:func:`readable_titles`, after the index is written): a formula
in a heading becomes plain text (``\\(m(S)\\)`` showed as TeX: the search page typesets nothing), and a page
listed in the contents under a title of its own (``_toc.yml``'s ``title``: 第一章's page has the book's title)
is listed so in the results too, as in the sidebar (two results were both titled 评价二分类模型).  The ranking:
``_static/search_scorer.js``.

It also keeps the Latin words it has seen in a set of its own.  Sphinx's keeps them in a list on the class, never
emptied, and looks every word up in it before stemming: a linear search per word through every Latin word cut so
far (28,000 stems of a build, 10 of a build's 70 s profiled, in every build of the course: public, instructor,
published; the list also grows across builds in one process).  A word is in the set exactly when it is in the
build's list, so the index is byte for byte the same (checked on both editions when this was written).
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx
from sphinx.search.zh import SearchChinese

#: A TeX command (``\frac``) or a backslash escape of code (``\n``): never a word a reader searches for.
BACKSLASH_WORD = re.compile(r"\\[A-Za-z]+")
#: A term a query can match holds a letter (of any script) or an underscore: ``searchtools.js`` drops the
#: query words of ASCII digits only (``/^\d+$/``), and splits at every other character.
SEARCHABLE = re.compile(r"[^\W0-9]")


def searchable(term: str) -> bool:
    """Whether a query of the search page can ever match the index term ``term`` (see the module's docstring)."""
    return len(term) > 1 and SEARCHABLE.search(term) is not None


class _Words(set):
    """The Latin words cut so far, with the one list method Sphinx's ``split`` uses."""

    def extend(self, words: list[str]) -> None:
        self.update(words)


class CourseChinese(SearchChinese):
    """Sphinx's Chinese search language without TeX command names and without terms no query can match."""

    def init(self, options: dict[str, str]) -> None:
        """Sphinx's set-up (jieba's dictionary, the stemmer), and a set of this build's Latin words."""
        super().init(options)
        self.latin_terms = _Words()

    def split(self, input: str) -> list[str]:  # noqa: A002 - Sphinx's signature
        """The words of ``input`` as jieba and Sphinx cut them, after the TeX command names are removed."""
        return super().split(BACKSLASH_WORD.sub(" ", input))

    def word_filter(self, stemmed_word: str) -> bool:
        """Index only terms that a query can match (Sphinx's rule: longer than one character; and a letter)."""
        return searchable(stemmed_word)


#: ``searchindex.js``: ``Search.setIndex(<JSON>)``.
INDEX = re.compile(r"^Search\.setIndex\((?P<json>.*)\)\s*;?\s*$", re.S)
#: A formula in a title as Sphinx writes it into the index (rendered HTML).
TITLE_MATH = re.compile(r'<span class="math[^"]*">\\\((?P<tex>.*?)\\\)</span>', re.S)


def _plain(tex: str) -> str:
    from publishing import plain_math

    return plain_math(tex)


def readable_titles(index: dict[str, Any], toc_titles: dict[str, str]) -> dict[str, Any]:
    """The index with every result title readable as text (see the module docstring).

    ``index``: the frozen search index (``titles`` and ``docnames`` in one order, ``alltitles``: a section's title
    -> ``[[doc number, anchor], ...]``); ``toc_titles``: docname -> its title in the contents, where that differs.
    """
    titles = [TITLE_MATH.sub(lambda m: html.escape(_plain(m["tex"])), title) for title in index["titles"]]
    titles = [html.escape(toc_titles[doc]) if doc in toc_titles else title for doc, title in zip(index["docnames"], titles)]
    alltitles: dict[str, list] = {}
    for title, places in index["alltitles"].items():
        alltitles.setdefault(_plain(title) if "\\" in title else title, []).extend(places)
    return {**index, "titles": titles, "alltitles": alltitles}


def _readable_titles(app: Sphinx, exception: Exception | None) -> None:
    path = Path(app.outdir) / "searchindex.js"
    if exception is not None or app.builder.name != "html" or not path.is_file():
        return
    match = INDEX.match(path.read_text(encoding="utf-8"))
    if match is None:
        raise ValueError(f"{path}: not Search.setIndex(...) as Sphinx writes it")
    site_map = getattr(app.env, "external_site_map", None)
    toc_titles = {doc: site_map[doc].title for doc in (site_map or {}) if site_map[doc].title} if site_map else {}
    index = readable_titles(json.loads(match["json"]), toc_titles)
    text = json.dumps(index, separators=(",", ":"), sort_keys=True)  # as Sphinx writes it
    path.write_text(f"Search.setIndex({text})", encoding="utf-8")


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the course's Chinese search language (``html_search_language: zh``) and the readable titles."""
    app.add_search_language(CourseChinese)
    app.connect("build-finished", _readable_titles, priority=300)  # before page_speed.py reads the index
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
