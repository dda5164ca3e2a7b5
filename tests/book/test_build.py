"""The whole book builds with warnings as errors, with no missing-glyph warning, and the public build
does not leak instructor-only content."""

from __future__ import annotations

import re

import pytest

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
    for asset in ("_static/quiz.js", "_static/quiz.css", "_static/mathjax/tex-mml-chtml.js",
                  "_static/mathjax/output/chtml/fonts/woff-v2/MathJax_Main-Regular.woff"):
        assert (book_html / asset).is_file(), asset


def test_mathjax_is_served_locally(book_html):
    html = (book_html / "book/binary/fixed_threshold.html").read_text(encoding="utf-8")
    assert "_static/mathjax/tex-mml-chtml.js" in html
    assert "cdn.jsdelivr" not in html


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
