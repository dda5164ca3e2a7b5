"""Sphinx extension: lighter pages for readers on a phone (measured by ``bench/bench_pages.py``).

After an HTML build, every page is rewritten once (idempotent):

* Font Awesome: pydata-sphinx-theme loads ``fontawesome.js`` (1.5 MB, about 540 kB compressed, and a
  long main-thread task that swaps every ``<i class="fa-...">`` for an SVG).  The site uses about twenty
  icons; they become ``_static/course-speed.css``: one CSS mask per icon, made from the same icon paths
  (read from the theme's ``fontawesome.js``), about 10 kB;
* search: the theme loads Sphinx's search tools and the whole search index (``searchindex.js``, 170 kB)
  synchronously in the head of EVERY page, for an as-you-type search the course does not use; only
  ``search.html`` keeps them (the search box of every page submits to it), and there they no longer delay
  the page's first paint: the search tools are deferred (before ``search_text.js``, which wraps them), and
  the index is not a script tag of the page any more: ``_static/search_index.js`` loads it (the file's
  address, with a version of its content, in the loader's ``data-index``), at once when the page has a
  query, after the page's ``load`` event when it has none (the index is then in the cache for the
  query the reader types next); see :func:`search_page`;
* the other scripts of the head (doctools, clipboard, copy and toggle buttons, translations, ...) no
  longer block the first paint: they get ``defer`` (they keep their order and still run before
  ``DOMContentLoaded``; the inline settings between them are plain variables read later).  Only
  ``documentation_options.js`` stays synchronous: an inline script right after it writes to it.
  ``translations.js`` (the Chinese interface strings) moves up to right after ``doctools.js``: a deferred
  script runs when the document is no longer "loading", so ``sphinx_highlight.js`` builds its
  "隐藏搜索结果" link at once, and the translations must be in place before it;
* the theme's stylesheets (pydata-sphinx-theme's Bootstrap and theme, sphinx-design, sphinx-book-theme,
  myst-nb) without the rules no page can match (``unused_css.py``): a copy ``<name>.site.css`` next to
  each (Sphinx keeps its own copy), linked instead with a version of its content.  Only for the site
  (the ``html`` builder): the PDF edition's single page keeps the full stylesheets for its print script;
* every render-blocking stylesheet of a page (the theme's, the extensions', the course's, the icons', the
  formulas': fourteen files, one of them ``@import``-ing another) in one file ``_static/course-site.css``,
  linked with a version of its content and purged of the rules no page can match (``style_bundle.py``,
  ``unused_css.py``): one request before the first paint instead of a chain of them (the site only; the
  PDF edition keeps its stylesheets).  The theme's ``<link rel="preload">`` of its two deferred scripts
  goes too: they are fetched when the parser reaches their tags, after the stylesheet and the text, and
  no longer compete with them on a slow connection;
* the first frame of an animation (its poster) was inline in the HTML as a ``data:`` URI (67 kB of the
  ROC page's compressed HTML): in the site it is the frame's file (``anim_frames.py`` wrote it), loaded
  lazily like every figure;
* the theme's script (pydata-sphinx-theme.js) without its loop that measures every scrollable box of the
  page at once on ``load`` (``theme_script.py``; ``a11y.js`` gives those boxes their tab stops in small
  batches): a copy ``pydata-sphinx-theme.site.js``, linked instead with a version of its content;
* figures (``_images/*.png``) load lazily (``loading="lazy"``), with their pixel size as ``width`` and
  ``height`` so that the page does not jump when they arrive: a phone downloads only the figures the
  reader scrolls to.  Figures of several panels side by side are marked ``data-wide``: on a phone they
  keep a readable width and scroll sideways (``course.css``).
"""

from __future__ import annotations

import base64
import hashlib
import re
from pathlib import Path
from typing import Any
from urllib.parse import quote

from sphinx.application import Sphinx
from sphinx.errors import ExtensionError
from sphinx.util import logging

import style_bundle
import theme_script
import unused_css
from coursebook.deployment import book_pages

logger = logging.getLogger(__name__)

#: Bump when the rewriting below changes: pages already written are then written (and rewritten) again.
VERSION = "14"

ICONS_CSS = "course-speed.css"  # the icons and the sizing rule of lazy figures
FONTAWESOME_TAG = re.compile(r'<script defer src="(?P<prefix>[^"]*?)_static/scripts/fontawesome\.js[^"]*"></script>')
SEARCH_TAGS = re.compile(r'\s*<script src="[^"]*(?:_static/searchtools\.js|_static/language_data\.js|searchindex\.js)"></script>')
#: The search page's scripts of Sphinx's search (``search_page``): the tools, and the index.
SEARCH_TOOLS = re.compile(r'\s*<script src="(?P<src>[^"]*_static/(?:searchtools|language_data)\.js)"></script>')
SEARCH_INDEX_TAG = re.compile(r'\s*<script src="(?P<src>[^"]*searchindex\.js)"></script>')
#: The course's scripts of the search page (``course_site.py``): formulas as text, and the index loader.
SEARCH_TEXT_TAG = re.compile(r'<script [^>]*src="[^"]*_static/search_text\.js[^"]*"></script>')
SEARCH_LOADER_TAG = re.compile(r'<script (?P<attrs>[^>]*src="[^"]*_static/search_index\.js[^"]*")(?: data-index="[^"]*")?></script>')
BLOCKING_SCRIPT = re.compile(r'<script (?![^>]*\b(?:defer|async|type=)[^>]*>)([^>]*\bsrc="(?![^"]*documentation_options\.js)[^"]+"[^>]*)></script>')
FIGURE_IMG = re.compile(r'<img (?![^>]*\bloading=)([^>]*?\bsrc="(?P<src>[^"]*_images/[^"]+\.png)"[^>]*?)\s*/?>')
DOCTOOLS_TAG = re.compile(r'<script [^>]*src="[^"]*_static/doctools\.js[^"]*"></script>')
TRANSLATIONS_TAG = re.compile(r'\s*<script [^>]*src="[^"]*_static/translations\.js[^"]*"></script>')
#: The theme's stylesheets that are purged of unused rules (paths under ``_static``, without ``.css``).
THEME_CSS = re.compile(r'(?P<base>_static/(?:styles/pydata-sphinx-theme|styles/sphinx-book-theme|sphinx-design\.min|'
                       r'mystnb\.[0-9a-f]+))(?:\.site)?\.css(?:\?[^"]*)?"')
THEME_JS = re.compile(r'(?P<base>_static/scripts/pydata-sphinx-theme)(?:\.site)?\.js(?:\?[^"]*)?"')
#: The theme's preloads of its two deferred scripts (``bootstrap.js``, ``pydata-sphinx-theme.js``).
SCRIPT_PRELOAD = re.compile(r'\s*<link rel="preload" as="script" href="[^"]*_static/scripts/[^"]+" */?>')
#: An animation's poster inline (``coursebook.animation``): the first of its ``data-frames``, as a data URI.
POSTER = re.compile(r'data-frames="(?P<first>[^" ]*/_images/anim-(?P<hash>[0-9a-f]{20})\.png)(?P<rest>[^"]*)">'
                    r'<img class="anim-frame" src="data:image/png;base64,(?P<data>[A-Za-z0-9+/=]+)"')
BUNDLE = "course-site.css"  # the one stylesheet of every page of the site, under _static/
BUNDLE_SOURCES = "course-site.sources"  # its sources, in order (pages written by an earlier build link only it)
ICON_CLASS = re.compile(r"\bfa-([a-z0-9]+(?:-[a-z0-9]+)*)")
_ICON_DEF = re.compile(r'(?:"([a-z0-9-]+)"|\b([a-z][a-z0-9]*)):\[(\d+),(\d+),\[[^\]]*\],"[0-9a-f]+","(M[^"]+)"\]')
_NOT_ICONS = {"solid", "regular", "brands", "lg", "xs", "sm", "xl", "2x", "3x", "fw", "spin", "flip-horizontal"}


def solid_icons(fontawesome_js: str) -> dict[str, tuple[int, int, str]]:
    """``{name: (width, height, svg_path)}`` of the solid icon set defined in the theme's ``fontawesome.js``."""
    start = fontawesome_js.rfind('d("fas",p)')
    block_end = start if start != -1 else len(fontawesome_js)
    block_start = fontawesome_js.rfind("var p={", 0, block_end)
    icons = {}
    for match in _ICON_DEF.finditer(fontawesome_js, block_start, block_end):
        name = match.group(1) or match.group(2)
        icons[name] = (int(match.group(3)), int(match.group(4)), match.group(5))
    return icons


#: Pseudo-elements that the theme draws with the Font Awesome web font (``font: var(--fa-font-solid)``), and
#: the icon each shows: admonition titles (exercises, errors, the others) and external links of the
#: navigation.  As masks, the 157 kB ``fa-solid-900.woff2`` is never downloaded.
PSEUDO_ICONS = (
    ("div.admonition>.admonition-title::after", "bell"),
    ("div.admonition.error>.admonition-title::after", "circle-xmark"),
    ("div.exercise.admonition>.admonition-title::after", "pencil"),  # sphinx-exercise's icon
    ("nav.bd-links li>a.reference.external::after", "arrow-up-right-from-square"),
)


def _icon_url(icon: tuple[int, int, str]) -> str:
    width, height, path = icon
    svg = f"<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 {width} {height}'><path d='{path}'/></svg>"
    return f'url("data:image/svg+xml,{quote(svg, safe=" =:/,.-")}")'


def icons_css(names: set[str], icons: dict[str, tuple[int, int, str]]) -> str:
    """CSS that draws each named icon in the current text colour (a mask over ``currentColor``)."""
    rules = [
        "/* Icons of the course site: Font Awesome Free solid icons (CC BY 4.0) as CSS masks; see book/_ext/page_speed.py */",
        # the theme's CSS gives these classes the Font Awesome web font: not needed any more, never downloaded
        ".fa,.fas,.fa-solid,.far,.fa-regular,.fab,.fa-brands{display:inline-block;font-style:normal;line-height:1;"
        "vertical-align:-0.125em;font-family:inherit!important}",
        ".fa-lg{font-size:1.25em;line-height:.05em;vertical-align:-.075em}",
        "img[data-size=intrinsic]{max-width:100%;height:auto}",  # lazy figures: width/height give the ratio only
        "nav.bd-links li>a.reference.external::after{display:inline-block;width:.75em;height:.75em}",
    ]
    for selector, name in PSEUDO_ICONS:
        if name in icons:  # the theme draws these with the web font: the same icon as a mask, no font download
            rules.append(f"{selector}{{--i:{_icon_url(icons[name])};content:''!important;font:inherit!important;"
                         "background-color:currentColor;-webkit-mask:var(--i) no-repeat center/contain;"
                         "mask:var(--i) no-repeat center/contain}")
    for name in sorted(names):
        if name not in icons:
            continue
        width, height, path = icons[name]
        svg = f"<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 {width} {height}'><path d='{path}'/></svg>"
        rules.append(f".fa-{name}::before{{--i:url(\"data:image/svg+xml,{quote(svg, safe=' =:/,.-')}\");content:'';"
                     f"display:inline-block;height:1em;width:{width / height:.4g}em;background-color:currentColor;"
                     "-webkit-mask:var(--i) no-repeat center/contain;mask:var(--i) no-repeat center/contain}")
    return "\n".join(rules) + "\n"


def png_size(path: Path) -> tuple[int, int] | None:
    """Width and height of a PNG file from its header, or None if it is not a readable PNG."""
    try:
        with path.open("rb") as fh:
            head = fh.read(24)
    except OSError:
        return None
    if len(head) < 24 or head[:8] != b"\x89PNG\r\n\x1a\n":
        return None
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


def is_wide_figure(width: int, height: int) -> bool:
    """A figure of several panels side by side: on a phone it keeps a readable width and scrolls
    sideways in its output box (``course.css``) instead of shrinking to a third of its size."""
    return width >= 900 and width >= 1.4 * height


def lazy_figures(html: str, page: Path) -> str:
    """``loading="lazy"``, ``decoding="async"`` and the pixel size on every figure image of a page."""

    def one(match: re.Match[str]) -> str:
        attrs = match.group(1)
        size = png_size((page.parent / match.group("src")).resolve())
        extra = ' loading="lazy"' + ("" if "decoding=" in attrs else ' decoding="async"') + ' data-size="intrinsic"'
        if size and "width=" not in attrs and "height=" not in attrs:
            extra += f' width="{size[0]}" height="{size[1]}"'
            if is_wide_figure(*size):
                extra += ' data-wide="true"'
        return f"<img {attrs}{extra} />"

    return FIGURE_IMG.sub(one, html)


def posters_as_files(html: str, images: Path) -> str:
    """Each animation's inline poster replaced by the file of its first frame (the same image: the name is
    the hash of its bytes, written by ``anim_frames.py``); a poster whose file is missing stays inline."""

    def one(match: re.Match[str]) -> str:
        data = base64.b64decode(match.group("data"))
        name = f"anim-{match.group('hash')}.png"
        if hashlib.sha256(data).hexdigest()[:20] != match.group("hash") or not (images / name).is_file():
            return match.group(0)
        first = match.group("first")
        return f'data-frames="{first}{match.group("rest")}"><img class="anim-frame" src="{first}"'

    return POSTER.sub(one, html)


def bundle_stylesheets(outdir: Path, texts: dict[Path, str], used: set[str]) -> dict[Path, str]:
    """Every page of ``texts`` linking one stylesheet, ``_static/course-site.css``, instead of its
    render-blocking stylesheets of ``_static/`` (see :mod:`style_bundle`); the pages' new texts.

    The sources, in order, are kept in ``_static/course-site.sources``: a page that an earlier build wrote
    (and Sphinx did not write again) links only the merged file.
    """
    static = outdir / "_static"
    manifest = static / BUNDLE_SOURCES
    found = {page: style_bundle.page_stylesheets(text[:text.find("</head>")]) if static not in page.parents else []
             for page, text in texts.items()}  # _static/*.html: the theme's templates, not pages
    earlier = manifest.read_text(encoding="utf-8").split() if manifest.is_file() else None
    sequences = []
    for page, links in found.items():
        sequence = []
        for _, name in links:
            if name != BUNDLE:
                sequence.append(name)
            elif earlier is None:
                raise ExtensionError(f"page_speed: {page} links _static/{BUNDLE} but _static/{BUNDLE_SOURCES} "
                                     "is missing: build again from scratch (rm -r _build/html)")
            else:  # a page of an earlier build (Sphinx did not write it again): the merged file's sources
                sequence += earlier
        # once each: static_math links its stylesheet again (last) on every page, also on a page whose
        # merged file holds it already (as the last source)
        sequences.append(list(dict.fromkeys(sequence)))
    try:
        order = style_bundle.merge_order(seq for seq in sequences if seq)
        css = style_bundle.with_charset(unused_css.purge(style_bundle.merge(static, order, BUNDLE), used))
    except style_bundle.BundleError as error:
        raise ExtensionError(f"page_speed: {error}") from error
    (static / BUNDLE).write_text(css, encoding="utf-8")
    manifest.write_text("\n".join(order) + "\n", encoding="utf-8")
    version = hashlib.sha256(css.encode()).hexdigest()[:12]
    logger.info(f"page_speed: {len(order)} stylesheets -> _static/{BUNDLE} ({len(css) // 1000} kB)")
    out = {}
    for page, text in texts.items():
        links = found[page]
        if not links:
            out[page] = text
            continue
        href = style_bundle.stylesheet_href(links[0][0].group(0)) or ""
        tag = f'<link rel="stylesheet" href="{href.split("_static/", 1)[0]}_static/{BUNDLE}?v={version}" />'
        pieces, last = [], 0
        for i, (match, _) in enumerate(links):
            pieces.append(text[last:match.start()] + (tag if i == 0 else ""))
            last = match.end()
        new = "".join(pieces) + text[last:]
        out[page] = SCRIPT_PRELOAD.sub("", new[:new.find("</head>")]) + new[new.find("</head>"):]
    return out


class SearchPageChanged(ExtensionError):
    """The search page lacks a script tag that :func:`search_page` rewrites (a new Sphinx or theme?)."""


def search_page(html: str, index_version: str) -> str:
    """The search page with Sphinx's search tools deferred and its index loaded by ``search_index.js``.

    ``searchtools.js`` and ``language_data.js`` (deferred, in their order) move to right before the
    course's ``search_text.js``, which wraps a function of theirs; the ``searchindex.js`` tag goes, and
    its address, with ``?v=index_version``, is the ``data-index`` of the ``search_index.js`` tag.  A page
    rewritten before (no index tag, a ``data-index``) gets the new version.

    Raises
    ------
    SearchPageChanged
        If a tag to move or to rewrite is missing: search would stop working without a sign.
    """
    loader = SEARCH_LOADER_TAG.search(html)
    if loader is None:
        raise SearchPageChanged("page_speed: search.html has no _static/search_index.js tag (course_site.py adds it)")
    index = SEARCH_INDEX_TAG.search(html)
    if index is None:
        if "data-index=" not in loader.group(0):
            raise SearchPageChanged("page_speed: search.html loads no searchindex.js")
        earlier = re.search(r'data-index="(?P<src>[^"?]*)', loader.group(0))
        src = earlier.group("src") if earlier else "searchindex.js"
    else:
        src = index.group("src")
        html = html[:index.start()] + html[index.end():]
    html = SEARCH_LOADER_TAG.sub(lambda m: f'<script {m.group("attrs")} data-index="{src}?v={index_version}"></script>',
                                 html, count=1)
    tools = list(SEARCH_TOOLS.finditer(html))
    if tools:
        html = SEARCH_TOOLS.sub("", html)
        text = SEARCH_TEXT_TAG.search(html)
        if text is None:
            raise SearchPageChanged("page_speed: search.html has no _static/search_text.js tag (course_site.py adds it)")
        moved = "".join(f'<script defer src="{m.group("src")}"></script>\n    ' for m in tools)
        html = html[:text.start()] + moved + html[text.start():]
    elif not re.search(r'<script defer src="[^"]*_static/searchtools\.js"', html):
        raise SearchPageChanged("page_speed: search.html loads no _static/searchtools.js")
    return html


def translations_first(head: str) -> str:
    """``head`` with the ``translations.js`` tag moved to right after the ``doctools.js`` tag (it defines
    ``Documentation.addTranslations``), before every script that may look a string up at once."""
    translations = TRANSLATIONS_TAG.search(head)
    if translations is None:
        return head
    without = head[:translations.start()] + head[translations.end():]
    doctools = DOCTOOLS_TAG.search(without)
    if doctools is None:
        return head
    return without[:doctools.end()] + translations.group(0) + without[doctools.end():]


def _used_classes(outdir: Path, texts: dict[Path, str]) -> set[str]:
    scripts = [p.read_text(encoding="utf-8", errors="replace") for p in (outdir / "_static").rglob("*.js")]
    return unused_css.used_classes(texts.values(), scripts)


def _purge_theme_css(outdir: Path, texts: dict[Path, str], used: set[str]) -> dict[str, str]:
    """Write ``<name>.site.css`` for each theme stylesheet the pages link; ``{"_static/<name>": version}``."""
    bases = {m.group("base") for text in texts.values() for m in THEME_CSS.finditer(text)}
    versions = {}
    for base in sorted(bases):
        source = outdir / f"{base}.css"
        if not source.is_file():
            continue
        css = unused_css.purge(source.read_text(encoding="utf-8"), used)
        (outdir / f"{base}.site.css").write_text(css, encoding="utf-8")
        versions[base] = hashlib.sha256(css.encode()).hexdigest()[:12]
        logger.info(f"page_speed: {base}.css {source.stat().st_size // 1000} kB -> {len(css) // 1000} kB")
    return versions


def _theme_script(outdir: Path) -> str | None:
    """Write ``pydata-sphinx-theme.site.js`` (see :mod:`theme_script`); the version of its content."""
    source = outdir / "_static" / "scripts" / "pydata-sphinx-theme.js"
    if not source.is_file():
        return None
    try:
        script = theme_script.without_eager_tab_stops(source.read_text(encoding="utf-8"))
    except theme_script.ThemeScriptChanged as changed:
        raise ExtensionError(f"page_speed: {changed}") from changed
    source.with_name("pydata-sphinx-theme.site.js").write_text(script, encoding="utf-8")
    return hashlib.sha256(script.encode()).hexdigest()[:12]


def _lighten(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    outdir = Path(app.outdir)
    fontawesome = outdir / "_static" / "scripts" / "fontawesome.js"
    pages = book_pages(outdir)
    used: set[str] = set()
    for script in ("pydata-sphinx-theme.js", "sphinx-book-theme.js"):
        path = outdir / "_static" / "scripts" / script
        if path.is_file():
            used |= set(ICON_CLASS.findall(path.read_text(encoding="utf-8", errors="replace")))
    texts = {}
    for page in pages:
        texts[page] = page.read_text(encoding="utf-8")
        used |= set(ICON_CLASS.findall(texts[page]))
    if fontawesome.is_file():
        icons = solid_icons(fontawesome.read_text(encoding="utf-8"))
        (outdir / "_static" / ICONS_CSS).write_text(icons_css(used - _NOT_ICONS, icons), encoding="utf-8")
    site = app.builder.name == "html"  # not the single page of the PDF edition
    used = _used_classes(outdir, texts) if site else set()
    versions = _purge_theme_css(outdir, texts, used) if site else {}
    script_version = _theme_script(outdir)
    index = outdir / "searchindex.js"
    index_version = hashlib.sha256(index.read_bytes()).hexdigest()[:12] if index.is_file() else ""
    news = {}
    for page, text in texts.items():
        new = THEME_CSS.sub(lambda m: f'{m.group("base")}.site.css?v={versions[m.group("base")]}"'
                            if m.group("base") in versions else m.group(0), text)
        if script_version:
            new = THEME_JS.sub(lambda m: f'{m.group("base")}.site.js?v={script_version}"', new)
        new = FONTAWESOME_TAG.sub(lambda m: f'<link rel="stylesheet" href="{m.group("prefix")}_static/{ICONS_CSS}" />', new)
        if page.name == "search.html" and page.parent == outdir:
            new = search_page(new, index_version)
        else:
            new = SEARCH_TAGS.sub("", new)
        head_end = new.find("</head>")
        new = translations_first(BLOCKING_SCRIPT.sub(r"<script defer \1></script>", new[:head_end])) + new[head_end:]
        if site:
            new = posters_as_files(new, outdir / "_images")
        new = lazy_figures(new, page)
        news[page] = new
    if site:
        news = bundle_stylesheets(outdir, news, used)
    changed = 0
    for page, new in news.items():
        if new != texts[page]:
            page.write_text(new, encoding="utf-8")
            changed += 1
    logger.info(f"page_speed: {changed} pages without fontawesome.js and the search index")


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the post-build step (after the other build-finished steps that rewrite pages)."""
    app.add_config_value("course_page_speed_version", VERSION, "html")
    app.connect("build-finished", _lighten, priority=900)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
