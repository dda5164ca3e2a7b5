"""Sphinx extension: the published site's addresses, downloads and launch buttons.

Every address comes from the deployment setting (:mod:`coursebook.deployment`: ``COURSE_SITE_CONFIG``,
default ``deploy/local.yml``, the addresses of ``make serve``):

* ``html_baseurl`` (canonical links, ``sitemap.xml``, ``robots.txt``), the Open
  Graph tags and description metadata of sphinxext-opengraph, the link prefix of the 404 page of
  sphinx-notfound-page (the site's path, so it works under any sub-path of a static host);
* the MyST substitutions ``{{ demo_url }}``, ``{{ demo_link }}``, ``{{ submit_url }}``, ``{{ submit_link }}`` and
  ``{{ guide_link }}`` (the guides, built with the site);
* the launch buttons (JupyterHub with nbgitpuller, Binder, Colab): on only when the setting names a
  repository and the hub;

and, on every page, the whole book as PDF (``course.pdf``, written by ``make pdf``) in the download menu (the
page's own notebook there: ``notebook_download.py``).
"""

from __future__ import annotations

import html
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util import logging

from coursebook.deployment import SiteSettings, load_settings

logger = logging.getLogger(__name__)

PUBLIC_PDF = "course.pdf"
INSTRUCTOR_PDF = "course-instructor.pdf"


def _settings(app: Sphinx) -> SiteSettings:
    return app.course_site_settings  # type: ignore[attr-defined]


def _configure(app: Sphinx, config: Any) -> None:
    settings = load_settings()
    app.course_site_settings = settings  # type: ignore[attr-defined]
    config.html_baseurl = settings.site_url
    subs = dict(config.myst_substitutions or {})
    subs.update({
        "demo_url": settings.demo_url,
        "demo_link": f"[点击打开“二分类评价与超参数选择”交互演示]({settings.demo_url})",
        "submit_url": settings.submit_url,
        "submit_link": f"[作业提交页面]({settings.submit_url})",
        "guide_link": f"[教师与维护者指南]({settings.guide_url})",
    })
    config.myst_substitutions = subs
    theme = dict(config.html_theme_options or {})
    theme["launch_buttons"] = {**dict(theme.get("launch_buttons") or {}), **settings.launch_buttons}
    if settings.repository_url:
        theme["repository_url"] = settings.repository_url
        theme["repository_branch"] = settings.repository_branch
        theme.setdefault("path_to_docs", "")
    config.html_theme_options = theme
    # sphinxext-opengraph: og:* tags and <meta name="description"> from each page's first paragraph
    config.ogp_site_url = settings.site_url
    config.ogp_site_name = config.html_title or config.project
    config.ogp_enable_meta_description = True
    config.ogp_social_cards = {"enable": False}
    config.ogp_image = "_static/og-image.png"
    config.ogp_image_alt = config.html_title or config.project
    # sphinx-notfound-page: links of 404.html start with the site's path
    config.notfound_urls_prefix = settings.site_path
    config.notfound_context = {
        "title": "找不到页面",
        "body": (
            "<h1>找不到页面</h1><p>这个地址没有对应的页面，可能是链接有误或页面已经改名。</p>"
            f'<p><a href="{settings.site_path}">返回课程首页</a>，或搜索本书（手机上点右上角的放大镜按钮，电脑上用左侧目录上方的搜索框）。</p>'
        ),
    }


_GREEK = {"alpha": "α", "beta": "β", "pi": "π", "tau": "τ", "mu": "μ", "sigma": "σ", "theta": "θ", "infty": "∞",
          "ge": "≥", "le": "≤", "geq": "≥", "leq": "≤", "neq": "≠", "approx": "≈", "cdot": "·", "times": "×"}


def plain_math(tex: str) -> str:
    """A readable plain-text rendering of a short TeX formula, for page descriptions.

    ``\\operatorname{AUC}`` becomes ``AUC``, ``\\tau`` becomes ``τ``; other commands and braces go.
    """
    text = re.sub(r"\\(?:operatorname|mathrm|text|mathbf|mathit|mathbb)\s*\{([^{}]*)\}", r"\1", tex)
    text = re.sub(r"\\([A-Za-z]+)", lambda m: _GREEK.get(m.group(1), ""), text)
    text = text.replace("{", "").replace("}", "").replace("\\", "")
    return re.sub(r"\s+", " ", text).strip()


def _description_without_tex(get_description):
    """Wrap sphinxext-opengraph's description extractor: formulas become plain text, not TeX source."""

    def wrapped(doctree: nodes.document, *args: Any, **kwargs: Any) -> str:
        copy = doctree.deepcopy()
        for node in list(copy.findall(nodes.math)):
            node.replace_self(nodes.Text(plain_math(node.astext())))
        for node in list(copy.findall(nodes.math_block)):
            node.parent.remove(node)
        return get_description(copy, *args, **kwargs)

    wrapped.course_wrapped = True
    return wrapped


def _patch_opengraph(app: Sphinx) -> None:
    try:
        import sphinxext.opengraph as ogp
    except ImportError:  # pragma: no cover - pinned in requirements.txt
        return
    if not getattr(ogp.get_description, "course_wrapped", False):
        ogp.get_description = _description_without_tex(ogp.get_description)


def _is_instructor(app: Sphinx) -> bool:
    return app.tags.has("instructor")


def _pdf_download(app: Sphinx, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    """Add the whole book's PDF to the download menu of every page."""
    name = INSTRUCTOR_PDF if _is_instructor(app) else PUBLIC_PDF
    for button in context.get("header_buttons", []):
        if button.get("label") == "download-buttons":
            button["buttons"].insert(0, {
                "type": "link",
                "url": context["pathto"](name, 1),
                "text": "全书 PDF",
                "tooltip": "下载整本书的 PDF 版",
                "icon": "fas fa-book",
                "label": "download-book-pdf-button",
            })


def _sitemap_and_robots(app: Sphinx, exception: Exception | None) -> None:
    """Write ``sitemap.xml`` (every page of the book) and ``robots.txt`` pointing to it.

    The page list comes from the saved environment (``env.found_docs``), not from the pages written by
    this run: sphinx-sitemap lists only the latter, so after an incremental build its sitemap lacked
    every unchanged page (its issue #13).
    """
    if exception is not None or app.builder.name != "html":
        return
    settings = _settings(app)
    urls = sorted(settings.site_url + app.builder.get_target_uri(doc) for doc in app.env.found_docs)
    urls += [settings.site_url + name for name in ("genindex.html", "search.html")]
    root = ET.Element("urlset", xmlns="http://www.sitemaps.org/schemas/sitemap/0.9")
    for url in urls:
        ET.SubElement(ET.SubElement(root, "url"), "loc").text = url
    ET.ElementTree(root).write(Path(app.outdir) / "sitemap.xml", encoding="utf-8", xml_declaration=True)
    lines = ["User-agent: *", "Allow: /", f"Sitemap: {settings.site_url}sitemap.xml", ""]
    (Path(app.outdir) / "robots.txt").write_text("\n".join(lines), encoding="utf-8")


def _root_redirect(app: Sphinx, exception: Exception | None) -> None:
    """Write the site root's ``index.html``: a redirect to the first page, with the book's icon and a link.

    sphinx-external-toc writes a bare ``<meta>`` refresh only when the file is missing; a browser then asks
    for ``/favicon.ico`` at the host's root, which is not the site's (a 404 under a sub-path), and a reader
    whose browser ignores the refresh sees a blank page.
    """
    if exception is not None or app.builder.name != "html" or app.config.root_doc == "index":
        return
    first = app.builder.get_target_uri(app.config.root_doc)
    title = html.escape(app.config.html_title or app.config.project)
    (Path(app.outdir) / "index.html").write_text(
        f'<!DOCTYPE html>\n<html lang="zh-CN">\n<head>\n<meta charset="utf-8" />\n'
        f'<meta http-equiv="Refresh" content="0; url={first}" />\n<title>{title}</title>\n'
        f'<link rel="icon" href="_static/favicon.svg" type="image/svg+xml" />\n</head>\n'
        f'<body><p><a href="{first}">{title}</a></p></body>\n</html>\n', encoding="utf-8")


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the hooks; the settings are read when the configuration is ready."""
    app.connect("config-inited", _configure, priority=100)  # before the extensions that read these values
    app.connect("builder-inited", _patch_opengraph)
    app.connect("html-page-context", _pdf_download, priority=502)  # after the theme built its menu
    app.connect("build-finished", _sitemap_and_robots)
    app.connect("build-finished", _root_redirect, priority=400)  # before sphinx-external-toc's bare one
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
