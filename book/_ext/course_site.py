"""Sphinx extension: site-wide settings of the course that ``_config.yml`` cannot express.

* template variable ``default_mode = "auto"`` for the pydata/book theme (it is read by the theme's
  ``layout.html`` but is not a theme option): without it the theme logs a console error
  ("Got invalid theme mode") on a reader's first visit.
* the course's own jieba dictionary (``search_terms.txt``) for the Chinese search index, so that
  terms such as 召回率 or 混淆矩阵 are indexed as whole words (the search box does not segment queries);
* sphinx-thebe's scripts are not registered at all.  Jupyter Book always loads sphinx-thebe, even
  with ``launch_buttons.thebe: false``; its ``env-before-read-docs`` hook adds an inline
  ``const THEBE_JS_URL = ...`` that can be emitted twice per page (a console error: "Identifier
  'THEBE_JS_URL' has already been declared") and points at a CDN the offline course never uses.
* scripts and style sheets registered twice are emitted once;
* one header, in Chinese: pydata-sphinx-theme 0.17 renders its own top bar (a second search box, and a
  hidden ☰ and page-contents button) whenever a ``navbar_*`` option is set, and its default
  ``navbar_persistent`` is the search box.  The theme then binds its sidebar handler to the first
  ``.primary-toggle``/``.secondary-toggle`` of the page, the hidden one, so that on a phone neither
  sidebar opens (pydata/pydata-sphinx-theme#2451, executablebooks/sphinx-book-theme#988).  With every
  ``navbar_*`` option empty that bar is not rendered: the book theme's buttons above the article are the
  only ones, and the theme's own handlers work again.  The two buttons' templates (``templates/``) give
  them Chinese names; ``search_bar_text`` is the search box's placeholder;
* ``_static/a11y.js``: accessible names for the theme's icon buttons and navigation toggles (checked by
  the axe-core audit, tests/book/test_accessibility.py); ``_static/sidebars.js``: a close button, focus
  and ``aria-expanded`` for the two sidebars on a phone; ``_static/search_text.js`` (search page only):
  formulas in search results as text, not TeX; ``_static/search_index.js`` (search page only): loads the
  search index without delaying the page's first paint (``page_speed.py``); ``_static/course.css``:
  page-wide styles.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sphinx.application import Sphinx


TEMPLATES = Path(__file__).resolve().parent / "templates"
#: Options of the theme the course sets, unless _config.yml sets them (the placeholder always: Jupyter Book presets an English one).
THEME_OPTIONS = {
    "navbar_start": [], "navbar_center": [], "navbar_end": [], "navbar_persistent": [],
    "search_bar_text": "搜索本书……",
}


def _theme_options(app: Sphinx, config: Any) -> None:
    options = dict(config.html_theme_options or {})
    for key, value in THEME_OPTIONS.items():
        if key == "search_bar_text" or key not in options:
            options[key] = value
    config.html_theme_options = options
    if str(TEMPLATES) not in map(str, config.templates_path):
        config.templates_path = [str(TEMPLATES), *config.templates_path]
    context = dict(config.html_context or {})
    context.setdefault("default_mode", "auto")
    config.html_context = context
    search_options = dict(config.html_search_options or {})
    search_options.setdefault("dict", str(Path(__file__).resolve().parent / "search_terms.txt"))
    config.html_search_options = search_options
    static = str(Path(__file__).resolve().parent.parent / "_static")
    if static not in config.html_static_path:
        config.html_static_path.append(static)


def _dedupe_assets(app: Sphinx, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    for key in ("script_files", "css_files"):
        files = context.get(key)
        if not files:
            continue
        seen: set = set()
        unique = []
        for asset in files:
            ident = (str(getattr(asset, "filename", asset)), tuple(sorted(getattr(asset, "attributes", {}).items())))
            if ident not in seen:
                seen.add(ident)
                unique.append(asset)
        files[:] = unique  # in place: later handlers keep appending to the same list


def _drop_thebe(app: Sphinx) -> None:
    """Unregister sphinx-thebe's script injection (the course has no kernel to launch)."""
    try:
        import sphinx_thebe
    except ImportError:  # pragma: no cover - not installed: nothing to remove
        return
    hooks = {sphinx_thebe.init_thebe_core}
    for listener in list(app.events.listeners.get("env-before-read-docs", [])):
        if listener.handler in hooks:
            app.disconnect(listener.id)


def _search_page_scripts(app: Sphinx, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    if pagename == "search":
        app.add_js_file("search_text.js", loading_method="defer")
        app.add_js_file("search_index.js", loading_method="defer")


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the config hook."""
    app.connect("config-inited", _theme_options)
    app.connect("builder-inited", _drop_thebe)
    app.connect("html-page-context", _search_page_scripts)
    app.connect("html-page-context", _dedupe_assets, priority=999)  # after handlers that add page scripts
    app.add_js_file("a11y.js", loading_method="defer")
    app.add_js_file("sidebars.js", loading_method="defer")
    app.add_css_file("course.css")
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
