"""Sphinx extension: every formula typeset at build time (MathJax 3 in Node, SVG), no math script in the pages.

The reader's browser used to download MathJax (266 kB) and typeset every formula on its own CPU; now the
build does it once.  Sphinx writes formulas as usual (``<span class="math ...">\\(TeX\\)</span>``,
``<div class="math ...">\\[TeX\\]</div>`` with its equation number), through a math renderer of its own
(``static``) that adds no script to any page.  After the build, :func:`typeset_site`:

1. collects the TeX of every formula of every page (a formula already typeset by an earlier build keeps
   its TeX in ``data-tex``);
2. typesets them all in one Node process (``mathjax_node/render.cjs``, the npm package ``mathjax-full``
   pinned in ``mathjax_node/package.json``), except those that an earlier build typeset (its typesetting is
   kept next to the doctrees; the single-page build of the PDF, the other edition and a build with another
   deployment setting reuse the formulas of the site's build): SVG whose characters are ``<use>`` of glyph paths defined once
   per page (MathJax's "global" font cache), in ``currentColor`` (dark mode, print), with assistive MathML
   (a screen reader reads the formula);
3. puts each rendering into its span/div, keeping the equation number and its anchor (``{eq}``
   references), with the TeX in ``data-tex`` (search snippets; ``_static/copy_tex.js``, on the pages
   with formulas, copies a selection's formulas as TeX);
4. gives each page with formulas one hidden ``<svg class="mjx-glyphs">`` with the paths of the glyphs it
   uses, and a link to ``_static/math/math.css`` (MathJax's few rules for its SVG output).

Why SVG and not CommonHTML (the first version): CommonHTML draws each character as an ``<mjx-c>`` element
styled by attribute and class selectors, thousands per formula-heavy page, and the phone's main thread
spent 0.5-1.2 s styling and laying them out (Lighthouse's Total Blocking Time); an SVG glyph is a
``<use>`` that CSS neither matches nor lays out, and no web font is downloaded (``make bench-pages`` measures
it: docs/maintainers/benchmarks.md).

A formula MathJax cannot typeset (a TeX error, an undefined macro) fails the build with its page and
source.  Macros: ``mathjax3_config["tex"]["macros"]`` of the configuration, as for MathJax in a browser.
"""

from __future__ import annotations

import hashlib
import html
import json
import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx
from sphinx.errors import ExtensionError
from sphinx.ext import mathjax
from sphinx.util import logging

from coursebook.deployment import book_pages

logger = logging.getLogger(__name__)

NODE_DIR = Path(__file__).parent / "mathjax_node"
RENDER_SCRIPT = NODE_DIR / "render.cjs"
MATHJAX_PACKAGE = NODE_DIR / "node_modules" / "mathjax-full"
TARGET = "math"  # _static/math/math.css
STYLESHEET = "math.css"

#: Sphinx's inline formula (the TeX is HTML-escaped, so it holds no "<").
INLINE = re.compile(r'<span class="(?P<cls>[^"]*math notranslate nohighlight)"(?P<attrs>[^>]*)>\\\((?P<tex>[^<]*?)\\\)</span>')
#: Sphinx's display formula: optional number, then \[TeX\] (or the bare TeX of a "nowrap" amsmath block).
DISPLAY = re.compile(r'<div class="(?P<cls>[^"]*math notranslate nohighlight)"(?P<attrs>[^>]*)>(?P<eqno>\s*<span class="eqno">'
                     r'.*?</span>)?(?P<body>[^<]*)</div>', re.S)
#: A formula typeset by an earlier build.
DONE = re.compile(r'<(?:span|div) class="[^"]*math notranslate nohighlight"[^>]*\bdata-tex="(?P<tex>[^"]*)"'
                  r'[^>]*\bdata-display="(?P<display>[01])"')
STYLE_LINK = re.compile(r'<link rel="stylesheet" href="[^"]*_static/math/(?:chtml|math)\.css[^"]*" */?>\n?')
#: A character of a formula: a ``<use>`` of a glyph path (MathJax's ids: ``MJX-TEX-I-1D44E``, ...).
GLYPH_USE = re.compile(r'<use\b[^>]*?\bhref="#(MJX-[^"]+)"')
#: The glyph paths of a page (written by :func:`with_glyphs`), before ``</body>``.
GLYPH_BLOCK = re.compile(r'<svg class="mjx-glyphs"[^>]*>.*?</svg>\n?', re.S)


class MathRenderError(ExtensionError):
    """A formula of the site that MathJax cannot typeset (its page and TeX in the message)."""


@dataclass(frozen=True)
class Formula:
    """One formula to typeset: its TeX (as written, unescaped) and whether it is a display formula."""

    tex: str
    display: bool


def _display_tex(body: str) -> str:
    """TeX of a display formula from the text of its div: ``\\[...\\]`` or a bare amsmath environment."""
    text = html.unescape(body).strip()
    for start, end in (("\\[", "\\]"), ("$$", "$$"), ("$", "$")):  # Sphinx's, or a notebook's text/latex
        if text.startswith(start) and text.endswith(end) and len(text) >= len(start) + len(end):
            return text[len(start):-len(end)].strip()
    return text


def formulas_of(page: str) -> list[Formula]:
    """Every formula of a page's HTML, typeset already or not, in document order."""
    found = [(m.start(), Formula(html.unescape(m.group("tex")), False)) for m in INLINE.finditer(page)]
    found += [(m.start(), Formula(_display_tex(m.group("body")), True)) for m in DISPLAY.finditer(page)
              if m.group("body").strip()]
    found += [(m.start(), Formula(html.unescape(m.group("tex")), m.group("display") == "1")) for m in DONE.finditer(page)]
    return [formula for _, formula in sorted(found, key=lambda item: item[0])]


@dataclass(frozen=True)
class Typesetting:
    """What :func:`render` answers: MathJax's stylesheet, the path of every glyph drawn (by id), and per
    formula its HTML or its error."""

    css: str
    glyphs: dict[str, str]
    results: list[str | Exception]


def render(formulas: list[Formula], macros: dict[str, Any] | None = None, node: str = "node") -> Typesetting:
    """Typeset ``formulas`` in one Node process (``mathjax_node/render.cjs``).

    Parameters
    ----------
    formulas : list of Formula
        The formulas, each typeset once.
    macros : dict, optional
        TeX macros, as in MathJax's ``tex.macros`` setting.
    node : str
        The Node executable.

    Returns
    -------
    Typesetting
        In the order of ``formulas``, each one's ``<mjx-container>`` or its TeX error.
    """
    if not (MATHJAX_PACKAGE / "package.json").is_file():
        raise ExtensionError(f"static_math: {MATHJAX_PACKAGE} is missing; run `make setup` "
                             f"(npm install in {NODE_DIR})")
    request = {"macros": macros or {},
               "formulas": [{"tex": f.tex, "display": f.display} for f in formulas]}
    done = subprocess.run([node, str(RENDER_SCRIPT)], input=json.dumps(request), capture_output=True,
                          text=True, encoding="utf-8", cwd=NODE_DIR, check=False)
    if done.returncode != 0:
        raise ExtensionError(f"static_math: MathJax in Node failed: {done.stderr.strip()[-2000:]}")
    answer = json.loads(done.stdout)
    results: list[str | Exception] = [r["html"] if "html" in r else ValueError(r["error"]) for r in answer["results"]]
    return Typesetting(answer["css"], answer["glyphs"], results)


def compact_css(css: str) -> str:
    """MathJax's stylesheet minified (no comments, no spaces around punctuation)."""
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    css = re.sub(r"\s*([{};:,>])\s*", r"\1", css)
    return re.sub(r"\s+", " ", css).replace(";}", "}").strip() + "\n"


def _attrs(formula: Formula) -> str:
    return f' data-tex="{html.escape(formula.tex, quote=True)}" data-display="{int(formula.display)}"'


def typeset_page(page: str, rendered: dict[Formula, str]) -> str:
    """``page`` with every untypeset formula replaced by its rendering (equation numbers kept)."""

    def inline(match: re.Match[str]) -> str:
        formula = Formula(html.unescape(match.group("tex")), False)
        return f'<span class="{match.group("cls")}"{match.group("attrs")}{_attrs(formula)}>{rendered[formula]}</span>'

    def display(match: re.Match[str]) -> str:
        if not match.group("body").strip():
            return match.group(0)
        formula = Formula(_display_tex(match.group("body")), True)
        return (f'<div class="{match.group("cls")}"{match.group("attrs")}{_attrs(formula)}>{match.group("eqno") or ""}'
                f'{rendered[formula]}</div>')

    return DISPLAY.sub(display, INLINE.sub(inline, page))


HEAD_TEX = re.compile(r"\\\((.*?)\\\)")


def plain_head(page: str) -> str:
    """``page`` with the formulas of its head (``<title>``, the titles of the next/previous links, the
    Open Graph title) as their bare TeX: a browser tab cannot typeset, ``\\(m(S)\\)`` becomes ``m(S)``."""
    head_end = page.find("</head>")
    return HEAD_TEX.sub(r"\1", page[:head_end]) + page[head_end:] if head_end != -1 else page


def with_glyphs(page: str, glyphs: dict[str, str]) -> str:
    """``page`` with one hidden ``<svg>`` (before ``</body>``) defining the glyph paths its formulas use.

    Raises
    ------
    MathRenderError
        If a formula of the page draws a glyph that ``glyphs`` lacks.
    """
    page = GLYPH_BLOCK.sub("", page)
    used = sorted(set(GLYPH_USE.findall(page)))
    if not used:
        return page
    missing = [name for name in used if name not in glyphs]
    if missing:
        raise MathRenderError(f"static_math: no path for the glyphs {', '.join(missing)}")
    paths = "".join(f'<path id="{name}" d="{glyphs[name]}"></path>' for name in used)
    block = f'<svg class="mjx-glyphs" aria-hidden="true" style="display:none"><defs>{paths}</defs></svg>\n'
    body_end = page.rfind("</body>")
    return page[:body_end] + block + page[body_end:] if body_end != -1 else page + block


def with_stylesheet(page: str, href: str) -> str:
    """``page`` linking the math stylesheet ``href`` once (in its head), if it has a formula."""
    page = STYLE_LINK.sub("", page)
    if "data-tex=" not in page:
        return page
    head_end = page.find("</head>")
    return page[:head_end] + f'<link rel="stylesheet" href="{href}" />\n' + page[head_end:]


STATIC_LINK = re.compile(r'(?:href|src)="([^"]*?)_static/')


def _static_prefix(page: str, relative_root: str) -> str:
    """How ``page`` reaches the site's root in its links to ``_static/`` (absolute on the 404 page, which is
    served at any depth), or else the relative path to the root."""
    found = STATIC_LINK.search(page)
    if found:
        return found.group(1)
    return "" if relative_root == "." else relative_root.replace(os.sep, "/") + "/"


def _setup_key(macros: dict[str, Any]) -> str:
    """What a rendering depends on besides its TeX: the macros and the render script."""
    return hashlib.sha256(json.dumps([macros, RENDER_SCRIPT.read_text()], ensure_ascii=False).encode()).hexdigest()


def _stored(cache: Path) -> dict[str, Any] | None:
    try:
        return json.loads(cache.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _cached_render(formulas: list[Formula], macros: dict[str, Any], cache: Path | None,
                   reuse: tuple[Path, ...] = ()) -> tuple[Typesetting, int]:
    """:func:`render`, or its answer of an earlier build when the site has the same formulas and macros; else
    only the formulas that neither ``cache`` nor the typesettings ``reuse`` of other builds of the same book
    (the single-page build, the other edition, another deployment) hold with the same macros are typeset.

    A formula's rendering depends only on its TeX, its kind, the macros and the render script (the book's
    formulas define no macro of their own, and MathJax's SVG stylesheet is the same for any set of formulas),
    so a formula typeset in another build is the one this build would write.  Returns the typesetting and how
    many formulas were typeset now.
    """
    key = hashlib.sha256(json.dumps([[f.tex, f.display] for f in formulas] + [macros, RENDER_SCRIPT.read_text()],
                                    ensure_ascii=False).encode()).hexdigest()
    stored = _stored(cache) if cache is not None else None
    if stored is not None and stored.get("key") == key and "formulas" in stored:  # (not a cache of an older version)
        return Typesetting(stored["css"], stored["glyphs"], stored["results"]), 0
    setup = _setup_key(macros)
    known: dict[Formula, str] = {}
    glyphs: dict[str, str] = {}
    css = None
    for other in (cache, *reuse):
        stored = _stored(other) if other is not None else None
        if stored is None or stored.get("setup") != setup:
            continue
        for (tex, display), result in zip(stored["formulas"], stored["results"]):
            known.setdefault(Formula(tex, bool(display)), result)
        glyphs.update(stored["glyphs"])
        css = css or stored["css"]
    missing = [f for f in formulas if f not in known]
    if missing or css is None:
        fresh = render(missing, macros)
        css = fresh.css
        glyphs.update(fresh.glyphs)
        known.update(zip(missing, fresh.results))  # type: ignore[arg-type]
    results: list[str | Exception] = [known[f] for f in formulas]
    used = {name for r in results if isinstance(r, str) for name in GLYPH_USE.findall(r)}
    done = Typesetting(css, {name: path for name, path in glyphs.items() if name in used}, results)
    if cache is not None and not any(isinstance(r, Exception) for r in done.results):
        cache.parent.mkdir(parents=True, exist_ok=True)
        written = cache.with_name(cache.name + f".{os.getpid()}.tmp")  # another build may read it meanwhile
        written.write_text(json.dumps({"key": key, "setup": setup, "formulas": [[f.tex, f.display] for f in formulas],
                                       "css": done.css, "glyphs": done.glyphs, "results": done.results}),
                           encoding="utf-8")
        os.replace(written, cache)
    return done, len(missing)


def typeset_site(outdir: Path, macros: dict[str, Any] | None = None, cache: Path | None = None,
                 reuse: tuple[Path, ...] = ()) -> int:
    """Typeset every formula of the HTML site in ``outdir`` (see the module docstring); pages changed.

    ``cache``: a file keeping the last typesetting; a build whose formulas did not change starts no Node.
    ``reuse``: the cache files of other builds of the book, whose formulas are not typeset again.
    """
    started = time.perf_counter()
    texts = {page: page.read_text(encoding="utf-8") for page in book_pages(outdir)}
    where: dict[Formula, Path] = {}
    for page, text in texts.items():
        for formula in formulas_of(text):
            where.setdefault(formula, page)
    if not where:
        return 0
    formulas = list(where)
    done, typeset = _cached_render(formulas, macros or {}, cache, reuse)
    failures = [f"{where[f].relative_to(outdir)}: {'$$' if f.display else '$'}{f.tex}{'$$' if f.display else '$'} "
                f"({result})" for f, result in zip(formulas, done.results) if isinstance(result, Exception)]
    if failures:
        raise MathRenderError("static_math: MathJax cannot typeset these formulas:\n  " + "\n  ".join(failures))
    rendered = dict(zip(formulas, done.results))
    css = compact_css(done.css)
    target = outdir / "_static" / TARGET
    shutil.rmtree(target, ignore_errors=True)  # an earlier build's fonts and stylesheet (CommonHTML) go
    target.mkdir(parents=True)
    (target / STYLESHEET).write_text(css, encoding="utf-8")
    version = hashlib.sha256(css.encode()).hexdigest()[:12]
    changed = 0
    for page, text in texts.items():
        href = _static_prefix(text, os.path.relpath(outdir, page.parent)) + f"_static/{TARGET}/{STYLESHEET}?v={version}"
        new = with_stylesheet(with_glyphs(plain_head(typeset_page(text, rendered)), done.glyphs), href)  # type: ignore[arg-type]
        if new != text:
            page.write_text(new, encoding="utf-8")
            changed += 1
    logger.info(f"static_math: {len(formulas)} distinct formulas ({typeset} typeset now); {changed} pages written; "
                f"{len(done.glyphs)} glyphs; {time.perf_counter() - started:.1f} s")
    return changed


def _macros(app: Sphinx) -> dict[str, Any]:
    config = app.config.mathjax3_config or {}
    return dict((config.get("tex") or {}).get("macros") or {})


def _use_static(app: Sphinx, config: Any) -> None:
    config.html_math_renderer = "static"


def _typeset(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    cache = Path(app.doctreedir) / f"static_math-{app.builder.name}.json"
    # the other builds of the book: this edition's other builder, and the default build (``_build/.doctrees``)
    # for the instructor edition and the builds into other folders
    reuse = {*Path(app.doctreedir).glob("static_math-*.json"), *(Path(app.srcdir) / "_build" / ".doctrees").glob("static_math-*.json")}
    typeset_site(Path(app.outdir), _macros(app), cache, tuple(sorted(reuse - {cache})))


def _copy_script(app: Sphinx, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    """A page with formulas gets ``copy_tex.js``: copying a selection with formulas gives their TeX."""
    if 'class="math notranslate' in (context.get("body") or ""):
        app.add_js_file("copy_tex.js", loading_method="defer")


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the ``static`` math renderer (Sphinx's markup, no script) and the typesetting step."""
    # bump when the pages' markup changes: every page is then written again
    app.add_config_value("course_static_math_version", "2", "html")
    app.connect("html-page-context", _copy_script)
    app.add_html_math_renderer("static", (mathjax.html_visit_math, None), (mathjax.html_visit_displaymath, None))
    app.connect("config-inited", _use_static)
    # before page_speed (900) rewrites the pages' heads; after the steps that add pages
    app.connect("build-finished", _typeset, priority=800)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
