"""book/_ext/style_bundle.py merges a page's stylesheets into one without changing what they say.

On files written to a temporary ``_static``: imports inlined where they stood (once, from the imported
file's own folder), relative ``url()``-s rebased to the merged file's folder, data and absolute URLs left
alone, one ``@charset`` at the very start; pages that link the same stylesheets in another order are
refused.  The built site's pages link only the merged file (tests/book/test_build.py) and look the same
(the browser tests: tests/book/test_phone_layout.py, test_accessibility.py).
"""

from __future__ import annotations

import importlib.util

import pytest

from .quizdata import ROOT

_spec = importlib.util.spec_from_file_location("course_style_bundle", ROOT / "book" / "_ext" / "style_bundle.py")
style_bundle = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(style_bundle)


@pytest.fixture
def static(tmp_path):
    (tmp_path / "styles").mkdir()
    (tmp_path / "basic.css").write_text("div.body{background:url(file.png)}\n", encoding="utf-8")
    (tmp_path / "styles" / "theme.css").write_text('@import "../basic.css";\n', encoding="utf-8")
    (tmp_path / "styles" / "pydata.css").write_text(
        '@charset "UTF-8";\n@font-face{src:url(../vendor/fa.woff2)}\n'
        ".x{background:url(\"data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg'%3E\")}"
        ".y{background:url(/abs.png)}\n", encoding="utf-8")
    (tmp_path / "course.css").write_text(".z{content:'关闭'}\n", encoding="utf-8")
    return tmp_path


def test_imports_inlined_and_urls_rebased_to_the_merged_file(static):
    css = style_bundle.with_charset(style_bundle.merge(static, ["styles/theme.css", "styles/pydata.css", "course.css"],
                                                       "course-site.css"))
    assert css.startswith('@charset "UTF-8";\n') and css.count("@charset") == 1
    assert "@import" not in css
    assert 'div.body{background:url("file.png")}' in css  # basic.css lives in _static, as the merged file
    assert 'url("vendor/fa.woff2")' in css  # ../vendor from styles/ is vendor/ from _static/
    assert "url(\"data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg'%3E\")" in css
    assert "url(/abs.png)" in css
    # the rules keep the pages' order: basic (imported by theme) < pydata < course
    assert css.index("div.body") < css.index("@font-face") < css.index(".z{content:'关闭'}")


def test_merged_file_in_a_subfolder_rebases_from_there(static):
    css = style_bundle.merge(static, ["styles/theme.css"], "site/all.css")
    assert 'url("../file.png")' in css


def test_a_missing_or_self_importing_stylesheet_is_an_error(static):
    with pytest.raises(style_bundle.BundleError, match="missing.css"):
        style_bundle.merge(static, ["missing.css"], "course-site.css")
    (static / "loop.css").write_text('@import "loop.css";', encoding="utf-8")
    with pytest.raises(style_bundle.BundleError, match="imports itself"):
        style_bundle.merge(static, ["loop.css"], "course-site.css")


def test_page_stylesheets_are_the_links_of_static_for_every_medium():
    head = ('<link href="../_static/styles/theme.css?digest=1" rel="stylesheet" />'
            '<link rel="stylesheet" type="text/css" href="../_static/pygments.css?v=2" />'
            '<link rel="stylesheet" media="print" href="../_static/print.css" />'
            '<link rel="preload" as="script" href="../_static/x.js" />'
            '<link rel="stylesheet" href="https://example.org/_static/far.css" />'
            '<link rel="icon" href="../_static/favicon.svg"/>')
    assert [name for _, name in style_bundle.page_stylesheets(head)] == ["styles/theme.css", "pygments.css"]


def test_one_order_for_every_page_or_an_error():
    assert style_bundle.merge_order([["a", "b"], ["a", "c", "b"], ["b", "d"]]) == ["a", "c", "b", "d"]
    with pytest.raises(style_bundle.BundleError, match="different orders"):
        style_bundle.merge_order([["a", "b"], ["b", "a"]])


def _page_speed():
    import sys

    ext = str(ROOT / "book" / "_ext")
    sys.path.insert(0, ext)
    try:
        import page_speed
    finally:
        sys.path.remove(ext)
    return page_speed


def test_a_rebuild_that_writes_some_pages_again_keeps_every_source(static, tmp_path_factory):
    """An incremental build: one page written again by Sphinx (every stylesheet linked), one left from the
    last build (only the merged file, and the formulas' stylesheet that static_math links again)."""
    page_speed = _page_speed()
    site = static.parent / "site"
    (site / "_static").mkdir(parents=True)
    for path in static.rglob("*.css"):
        target = site / "_static" / path.relative_to(static)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    (site / "_static" / "math").mkdir()
    (site / "_static" / "math" / "math.css").write_text("mjx-container{direction:ltr}\n", encoding="utf-8")
    full = ('<html><head><link href="_static/styles/theme.css" rel="stylesheet" />'
            '<link rel="stylesheet" href="_static/course.css" /><link rel="stylesheet" href="_static/math/math.css?v=1" />'
            '<link rel="preload" as="script" href="_static/scripts/bootstrap.js" /></head><body class="z"></body></html>')
    first = page_speed.bundle_stylesheets(site, {site / "a.html": full, site / "b.html": full}, {"z", "body"})
    head = first[site / "b.html"].split("</head>")[0]
    assert head.count("<link") == 1 and "_static/course-site.css?v=" in head
    old = first[site / "b.html"].replace("</head>", '<link rel="stylesheet" href="_static/math/math.css?v=2" />\n</head>')
    second = page_speed.bundle_stylesheets(site, {site / "a.html": full, site / "b.html": old}, {"z", "body"})
    css = (site / "_static" / "course-site.css").read_text(encoding="utf-8")
    assert "div.body" in css and '.z{content:"关闭"}' in css and "mjx-container{direction:ltr}" in css
    assert second[site / "b.html"].split("</head>")[0].count("<link") == 1
    (site / "_static" / "course-site.sources").unlink()
    with pytest.raises(Exception, match="build again from scratch"):
        page_speed.bundle_stylesheets(site, {site / "b.html": old}, {"z"})
