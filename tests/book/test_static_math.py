"""The extension book/_ext/static_math.py typesets a site's formulas at build time (MathJax 3 in Node).

On small pages written like Sphinx writes them (inline, numbered display, a notebook's text/latex output,
a bare amsmath environment): every formula becomes SVG with its MathML and its TeX, the equation number
and its anchor stay, the page defines every glyph its formulas draw (and only those) once, no web font is
shipped, a second pass changes nothing, and a formula MathJax cannot typeset fails with its page and its
source.  A build typesets only the formulas that no earlier build of the book typeset, and writes the same pages.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import sys

import pytest

from .quizdata import ROOT

_spec = importlib.util.spec_from_file_location("course_static_math", ROOT / "book" / "_ext" / "static_math.py")
static_math = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = static_math  # its dataclass looks its module up
_spec.loader.exec_module(static_math)

PAGE = """<html><head><title>把报告换成 \\(m(S)\\)</title></head><body><article>
<p>真正例 <span class="math notranslate nohighlight">\\(\\mathrm{TP}_k &lt; n\\)</span> 个。</p>
<div class="math notranslate nohighlight" id="equation-eq-recall">
<span class="eqno">(6)<a class="headerlink" href="#equation-eq-recall" title="Link to this equation">#</a></span>\
\\[\\operatorname{Recall}=\\frac{\\mathrm{TP}}{\\mathrm{TP}+\\mathrm{FN}}\\]</div>
<div class="output text_latex math notranslate nohighlight">
\\[\\displaystyle \\operatorname{AP}=\\frac{1}{6}\\]
</div>
<div class="math notranslate nohighlight">\\begin{aligned} a &amp;= b \\\\ c &amp;= d \\end{aligned}</div>
<p>见 <a href="#equation-eq-recall">式 (6)</a>。</p>
</article></body></html>
"""


@pytest.fixture
def site(tmp_path):
    (tmp_path / "book").mkdir()
    (tmp_path / "book" / "page.html").write_text(PAGE, encoding="utf-8")
    (tmp_path / "plain.html").write_text("<html><head></head><body>没有公式</body></html>", encoding="utf-8")
    return tmp_path


def test_every_formula_becomes_html_with_its_mathml_and_its_tex(site):
    assert static_math.typeset_site(site) == 1
    page = (site / "book" / "page.html").read_text(encoding="utf-8")
    assert "\\(" not in page.split("</head>")[1] and "\\[" not in page and "\\begin" not in page.split('data-tex="')[0]
    assert page.count("<mjx-container") == 4 and page.count("<mjx-assistive-mml") == 4
    assert 'data-tex="\\mathrm{TP}_k &lt; n" data-display="0"' in page
    assert 'data-tex="\\operatorname{Recall}=\\frac{\\mathrm{TP}}{\\mathrm{TP}+\\mathrm{FN}}" data-display="1"' in page
    # the number and its anchor stay before the formula, the cross-reference still points to it
    assert re.search(r'id="equation-eq-recall"[^>]*>\s*<span class="eqno">\(6\)<a class="headerlink" href="#equation-eq-recall"', page)
    assert 'class="output text_latex math notranslate nohighlight"' in page
    assert "<mi>Recall</mi>" in page  # what a screen reader reads
    assert "<title>把报告换成 m(S)</title>" in page
    assert '<link rel="stylesheet" href="../_static/math/math.css?v=' in page
    plain = (site / "plain.html").read_text(encoding="utf-8")
    assert "math.css" not in plain and "mjx-glyphs" not in plain  # no formula, no stylesheet, no glyphs
    # SVG in the text's colour; each character a <use> of a path defined once, in the page's one glyph block
    assert page.count("<svg") == 5 and 'fill="currentColor"' in page and not re.search(r"<mjx-c[ >]", page)
    used = set(re.findall(r'<use[^>]*? href="#([^"]+)"', page))
    defined = re.findall(r'<path id="([^"]+)"', page)
    assert page.count('<svg class="mjx-glyphs"') == 1 and page.index("mjx-glyphs") > page.index("</article>")
    assert sorted(defined) == sorted(used) and "MJX-TEX-I-1D45B" in used  # the italic n of "< n"
    assert not (site / "_static" / "math" / "fonts").exists()
    css = (site / "_static" / "math" / "math.css").read_text(encoding="utf-8")
    assert "@font-face" not in css and 'mjx-container[jax="SVG"]' in css


def test_a_second_pass_changes_nothing(site):
    static_math.typeset_site(site)
    before = (site / "book" / "page.html").read_text(encoding="utf-8")
    assert static_math.typeset_site(site) == 0
    assert (site / "book" / "page.html").read_text(encoding="utf-8") == before


def test_a_formula_that_cannot_be_typeset_fails_with_its_page_and_source(site):
    bad = PAGE.replace("\\mathrm{TP}_k", "\\mathrmx{TP}_k")
    (site / "book" / "page.html").write_text(bad, encoding="utf-8")
    with pytest.raises(static_math.MathRenderError) as failure:
        static_math.typeset_site(site)
    message = str(failure.value)
    assert "book/page.html" in message and "\\mathrmx{TP}_k" in message and "Undefined control sequence" in message
    assert "\\(" in (site / "book" / "page.html").read_text(encoding="utf-8")  # nothing half-written


def test_a_build_with_the_same_formulas_reuses_the_typesetting(site, tmp_path, monkeypatch):
    cache = tmp_path / "cache.json"
    static_math.typeset_site(site, cache=cache)
    first = (site / "book" / "page.html").read_text(encoding="utf-8")
    (site / "book" / "page.html").write_text(PAGE, encoding="utf-8")  # the page written again by Sphinx

    def no_node(*args, **kwargs):
        raise AssertionError("Node started although no formula changed")

    monkeypatch.setattr(static_math, "render", no_node)
    static_math.typeset_site(site, cache=cache)
    assert (site / "book" / "page.html").read_text(encoding="utf-8") == first
    (site / "book" / "page.html").write_text(PAGE.replace("\\mathrm{TP}_k", "\\mathrm{FP}_k"), encoding="utf-8")
    with pytest.raises(AssertionError, match="Node started"):  # a changed formula: typeset again
        static_math.typeset_site(site, cache=cache)


def test_another_build_of_the_book_reuses_its_typesetting(site, tmp_path, monkeypatch):
    """The single-page build, the other edition and another deployment typeset only the formulas that no other
    build of the book typeset, and write the pages a typesetting of their own would write."""
    html_cache = tmp_path / "doctrees" / "static_math-html.json"
    static_math.typeset_site(site, cache=html_cache)
    single = tmp_path / "single"
    new_formula = '<p>另一版才有的 <span class="math notranslate nohighlight">\\(\\hat{p}_i\\)</span>。</p></article>'
    pages = {"all.html": PAGE, "more.html": PAGE.replace("</article>", new_formula)}

    def written(reuse: tuple) -> dict[str, str]:
        shutil.rmtree(single, ignore_errors=True)
        single.mkdir()
        for name, text in pages.items():
            (single / name).write_text(text, encoding="utf-8")
        static_math.typeset_site(single, cache=tmp_path / "doctrees" / "static_math-singlehtml.json", reuse=reuse)
        return {name: (single / name).read_text(encoding="utf-8") for name in pages}

    alone = written(())  # typeset on its own: what the build must write
    (tmp_path / "doctrees" / "static_math-singlehtml.json").unlink()
    typeset = []
    render = static_math.render
    monkeypatch.setattr(static_math, "render", lambda formulas, *a, **k: typeset.extend(formulas) or render(formulas, *a, **k))
    assert written((html_cache,)) == alone
    assert typeset == [static_math.Formula("\\hat{p}_i", False)]  # only the formula the other build did not have
