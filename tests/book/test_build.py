"""The whole book builds with warnings as errors, with no missing-glyph warning, and the public build
does not leak instructor-only content."""

from __future__ import annotations

import pickle
import re
import sys
from pathlib import Path

import pytest
from docutils import nodes
from sphinx import addnodes

from coursebook.deployment import book_pages

from .conftest import ROOT

pytestmark = pytest.mark.slow

GLYPH_WARNING = re.compile(r"missing from (current )?font|Glyph \d+ .*missing", re.IGNORECASE)


def test_book_builds_without_warnings(book_build):
    assert book_build.returncode == 0, book_build.log[-4000:]
    warnings = [line for line in book_build.log.splitlines() if "WARNING" in line and "IPKernelApp" not in line]
    assert not warnings, "\n".join(warnings)


def test_no_missing_glyph_warnings_in_build(book_build):
    assert not GLYPH_WARNING.search(book_build.log)


def test_pages_and_assets_exist(book_html):
    for page in ("index.html", "book/intro.html", "book/binary/index.html", "book/binary/confusion.html",
                 "book/binary/fixed_threshold.html", "book/binary/thresholds_costs.html", "search.html"):
        assert (book_html / page).is_file(), page
    for asset in ("_static/quiz.js", "_static/quiz.css", "_static/math/math.css", "_static/copy_tex.js"):
        assert (book_html / asset).is_file(), asset


def _formulas_in_source(doctree_path: Path) -> int:
    """Formulas of a page as parsed (inline and display math nodes), without the instructor-only blocks."""
    sys.path.insert(0, str(ROOT / "book" / "_ext"))  # the quiz and exercise nodes of the pickled doctree
    try:
        tree = pickle.loads(doctree_path.read_bytes())
    finally:
        sys.path.remove(str(ROOT / "book" / "_ext"))

    def public(node: nodes.Node) -> bool:
        parent = node.parent
        while parent is not None:
            if isinstance(parent, addnodes.only):
                return False
            parent = parent.parent
        return True

    return sum(1 for node in tree.findall(lambda n: isinstance(n, (nodes.math, nodes.math_block))) if public(node))


def test_every_formula_is_typeset_at_build_time(book_html):
    """As many typeset formulas in each page's article as math nodes in its source; no TeX left, no math
    script, the stylesheet of the formulas linked and their glyphs defined (book/_ext/static_math.py)."""
    doctrees = ROOT / "_build" / ".doctrees"
    counted = 0
    problems = []
    for doctree_path in sorted(doctrees.rglob("*.doctree")):
        page = book_html / doctree_path.relative_to(doctrees).with_suffix(".html")
        if not page.is_file():
            continue
        html = page.read_text(encoding="utf-8")
        article = html[html.find("<article"):html.find("</article>")]
        expected = _formulas_in_source(doctree_path)
        typeset = len(re.findall(r'<(?:span|div) class="[^"]*math notranslate nohighlight"[^>]*\bdata-tex="[^"]*"'
                                 r'[^>]*>(?:\s*<span class="eqno">.*?</span>)?<mjx-container[^>]*><svg ', article, re.S))
        counted += expected
        if typeset != expected:
            problems.append(f"{page.name}: {typeset} typeset formulas, {expected} in the source")
        text = re.sub(r'data-tex="[^"]*"|<pre.*?</pre>', "", article, flags=re.S)
        if re.search(r"\\\(|\\\[|\$\$", text):
            problems.append(f"{page.name}: untypeset TeX in the article")
        if re.search(r"<script[^>]*mathjax|MathJax\s*=", html, re.I):
            problems.append(f"{page.name}: a MathJax script")
        if expected and not re.search(r'<link rel="stylesheet" href="[^"]*_static/course-site\.css\?v=', html):
            problems.append(f"{page.name}: the site's stylesheet (with the formulas' rules) is not linked")
        if expected and html.count('<svg class="mjx-glyphs"') != 1:
            problems.append(f"{page.name}: not one block of glyph paths")
    assert "mjx-container" in (book_html / "_static" / "course-site.css").read_text(encoding="utf-8")
    assert counted > 1000  # the book's formulas were found at all
    assert not problems, "\n".join(problems)


def test_every_page_links_one_stylesheet_with_every_rule_of_its_sources(book_html):
    """The render-blocking stylesheets of a page are one file (book/_ext/page_speed.py, style_bundle.py);
    it holds the rules of each of its sources that a page can match, in their order."""
    static = book_html / "_static"
    bundle = (static / "course-site.css").read_text(encoding="utf-8")
    sources = (static / "course-site.sources").read_text(encoding="utf-8").split()
    assert {"styles/theme.css", "course.css", "quiz.css", "math/math.css", "course-speed.css"} <= set(sources)
    assert bundle.startswith('@charset "UTF-8";') and "@import" not in bundle
    for selector in ("html.course-all-sections article.bd-article section section",  # course.css
                     "dialog .course-sidebar-close", 'mjx-container[jax="SVG"]>svg', ".fa-magnifying-glass::before"):
        assert selector.replace(" ", "") in bundle.replace(" ", ""), selector
    for path in book_pages(book_html):
        if "_static" in path.parts or path.name == "index.html" and path.parent == book_html:
            continue
        head = path.read_text(encoding="utf-8").split("</head>", 1)[0]
        links = re.findall(r'<link\b[^>]*rel="stylesheet"[^>]*>', head)
        assert len(links) == 1 and "_static/course-site.css?v=" in links[0], (path, links)
        assert 'rel="preload" as="script"' not in head, path


def test_numbered_equations_and_cross_references(book_html):
    html = (book_html / "book/binary/fixed_threshold.html").read_text(encoding="utf-8")
    for label in ("eq-accuracy", "eq-precision", "eq-recall", "eq-fpr", "eq-f1", "eq-fdr-prior"):
        assert f'id="equation-{label}"' in html, label
    assert 'href="#equation-eq-accuracy"' in html  # a {eq} reference resolved to a link
    assert "式 (" in html


def test_public_build_hides_instructor_only_content(book_html):
    for path in book_html.rglob("*.html"):
        assert 'class="instructor-only' not in path.read_text(encoding="utf-8"), path
    for path in (book_html / "_sources").rglob("*.md"):
        assert "{instructor-only}" not in path.read_text(encoding="utf-8"), path


def test_instructor_scrubber():
    from .quizdata import ROOT
    import importlib.util

    spec = importlib.util.spec_from_file_location("course_instructor_ext", ROOT / "book/_ext/instructor.py")
    ext = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ext)
    text = "前\n::::{instructor-only}\n```{solution} ex\n秘密\n```\n::::\n后\n"
    out = ext.scrub_text(text)
    assert "秘密" not in out and out.startswith("前\n") and out.endswith("后\n")


def test_index_lists_every_glossary_term_by_its_english_names(book_html):
    """genindex.html ("索引") is the glossary by English name (book/_ext/course_glossary.py), not an empty page:
    every term under the first letter of each of its English names, linking to its entry on the glossary page."""
    sys.path.insert(0, str(ROOT / "book" / "_ext"))
    try:
        from course_glossary import index_names, load_terms
    finally:
        sys.path.remove(str(ROOT / "book" / "_ext"))
    index = (book_html / "genindex.html").read_text(encoding="utf-8")
    glossary = (book_html / "book" / "glossary.html").read_text(encoding="utf-8")
    entries = re.findall(r'<li><a href="book/glossary\.html#(term-[a-z0-9-]+)">([^<]+)</a>', index)
    terms = load_terms()["terms"]
    assert {anchor for anchor, _ in entries} == {f"term-{t['id']}" for t in terms}
    assert len(entries) == sum(len(index_names(t["english"])) for t in terms)
    for anchor, _ in entries:
        assert f'id="{anchor}"' in glossary, f"genindex links to a missing entry {anchor}"
    assert ("term-recall", "recall（召回率）") in entries and ("term-recall", "true positive rate (TPR)（召回率）") in entries
    assert ("term-tp-fp-tn-fn", "FP（假正例）") in entries, "names and words listed in the same order are paired"
    letters = re.findall(r'<h2 id="([A-Z])">', index)
    assert letters == sorted(letters) and {"A", "C", "R", "P"} <= set(letters)
    assert 'href="../genindex.html"' in glossary, "the glossary page points to the index"
