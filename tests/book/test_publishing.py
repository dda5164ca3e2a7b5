"""The site as it is published on a static host.

* no link depends on the machine that built it, so ``_build/html`` works from any sub-path (checked
  in the browser under ``/any/sub/path/``); the 404 page's links carry the site's path;
* every page has a favicon, a description, Open Graph tags and a canonical URL, is in ``sitemap.xml``,
  and its download menu offers the whole book as PDF and (notebook pages) the page as ``.ipynb``;
* the public ``.ipynb`` downloads carry no instructor-only content;
* a build with a deployment setting (``COURSE_SITE_CONFIG``) into a separate folder, reusing the
  execution cache, links to the configured demo, submission page and hubs and never to loopback;
  the default build (``make serve``) has no launch buttons.
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import re
import threading
import xml.etree.ElementTree as ET
from pathlib import Path
from urllib.parse import urljoin

import nbformat
import pytest

from coursebook.deployment import is_loopback, load_settings

from .conftest import ROOT, _jupyter_book
from .mathcheck import MATH_PROBLEMS
from .test_quiz_browser import open_page
from .test_site_browser import PAGES

pytestmark = pytest.mark.slow

ABSOLUTE_LINK = re.compile(r'''(?:href|src|action)=["'](/[^/"'][^"']*|/|file:[^"']*)["']''')
LOOPBACK = re.compile(r"(?:https?:)?//(?:127\.\d+\.\d+\.\d+|localhost|\[::1\]|0\.0\.0\.0)\b")


def _html_files(site: Path) -> list[Path]:
    return sorted(p for p in site.rglob("*.html") if "_static" not in p.parts)


def test_no_link_depends_on_the_build_machine(book_html):
    for path in _html_files(book_html):
        if path.name == "404.html":
            continue
        text = path.read_text(encoding="utf-8")
        rel = path.relative_to(book_html)
        assert not ABSOLUTE_LINK.findall(text), f"{rel}: absolute links {ABSOLUTE_LINK.findall(text)[:3]}"
        assert str(ROOT) not in text, f"{rel} names the build folder {ROOT}"


def _meta(text: str, attr: str, name: str) -> str | None:
    match = re.search(rf'<meta {attr}="{re.escape(name)}" content="([^"]*)"', text)
    return match.group(1) if match else None


@pytest.mark.parametrize("page", PAGES)
def test_page_metadata(book_html, page):
    settings = load_settings()
    text = (book_html / page).read_text(encoding="utf-8")
    assert re.search(r'<link rel="icon" href="(\.\./)*_static/favicon\.svg"', text), "no favicon"
    description = _meta(text, "name", "description")
    assert description and len(description) >= 20, "no description"
    assert "\\" not in description, f"TeX source in the description: {description}"
    assert _meta(text, "property", "og:title")
    assert _meta(text, "property", "og:url") == settings.site_url + page
    assert _meta(text, "property", "og:image") == settings.site_url + "_static/og-image.png"
    assert f'<link rel="canonical" href="{settings.site_url}{page}"' in text
    assert (book_html / "_static" / "og-image.png").is_file()


def test_sitemap_robots_and_404(book_html):
    settings = load_settings()
    ns = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9"}
    locs = {e.text for e in ET.parse(book_html / "sitemap.xml").getroot().findall("s:url/s:loc", ns)}
    missing = {settings.site_url + p for p in PAGES} - locs
    assert not missing, f"not in sitemap.xml: {sorted(missing)}"
    assert f"Sitemap: {settings.site_url}sitemap.xml" in (book_html / "robots.txt").read_text(encoding="utf-8")
    page404 = (book_html / "404.html").read_text(encoding="utf-8")
    assert "找不到页面" in page404 and "favicon.svg" in page404
    links = re.findall(r'(?:href|src)="([^"#]+)"', page404)
    local = [u for u in links if not u.startswith(("http:", "https:", "mailto:"))]
    assert local and all(u.startswith(settings.site_path) for u in local), local[:5]


@pytest.mark.parametrize("page", PAGES)
def test_downloads_offer_the_book_pdf_and_the_notebook(book_html, page):
    text = (book_html / page).read_text(encoding="utf-8")
    pdf = re.findall(r'href="([^"]*course\.pdf)"', text)
    assert pdf, "no link to the PDF edition"
    assert (book_html / page).parent.joinpath(pdf[0]).resolve() == (book_html / "course.pdf").resolve()
    source = ROOT / page.replace(".html", ".md")
    if "kernelspec" in source.read_text(encoding="utf-8")[:600]:
        links = re.findall(r'href="([^"]*_sources/[^"]*\.ipynb)"', text)
        assert links, "no .ipynb download"
        notebook = ((book_html / page).parent / links[0]).resolve()
        nb = nbformat.read(notebook, as_version=4)
        nbformat.validate(nb)
        assert nb.metadata["kernelspec"]["name"] == "python3"


def test_public_notebooks_have_no_instructor_content(book_html):
    notebooks = list((book_html / "_sources").rglob("*.ipynb"))
    assert len(notebooks) >= 20
    for path in notebooks:
        text = path.read_text(encoding="utf-8")
        assert "{instructor-only}" not in text and "sol-binary-5" not in text, path


class _SubPathHandler(http.server.SimpleHTTPRequestHandler):
    """Serves the site under PREFIX only; everything else is 404, as on a static host's sub-path."""

    prefix = "/any/sub/path/"

    def translate_path(self, path: str) -> str:
        if not path.startswith(self.prefix):
            return "/nonexistent-outside-the-site"
        return super().translate_path("/" + path[len(self.prefix):])

    def log_message(self, *args) -> None:
        pass


@pytest.fixture(scope="module")
def sub_path_url(book_html):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_SubPathHandler, directory=str(book_html)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}{_SubPathHandler.prefix}"
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("page", ["index.html", "book/intro.html", "book/binary/roc.html", "book/calibration/ece.html",
                                  "search.html"])
def test_site_works_from_a_sub_path(browser, sub_path_url, page):
    redirect = page == "index.html"  # a meta refresh to book/intro.html: its formulas are checked after it
    ctx, tab, problems = open_page(browser, sub_path_url + page, math=page != "search.html" and not redirect)
    try:
        if redirect:  # the root page: its own requests may be cut short by the refresh, so they are checked here
            root = tab.request.get(sub_path_url + "index.html").text()
            assert 'content="0; url=book/intro.html"' in root and tab.request.get(sub_path_url + "_static/favicon.svg").ok
            tab.wait_for_url(sub_path_url + "book/intro.html")
            tab.wait_for_load_state("load")
            problems[:] = [p for p in problems if not p.startswith("request failed:") or "/favicon" not in p]
            problems += tab.evaluate(MATH_PROBLEMS)
        tab.wait_for_load_state("networkidle")
        assert "/any/sub/path/" in tab.url
        icon = tab.evaluate("() => document.querySelector('link[rel=icon]').href")
        assert icon.startswith(sub_path_url) and tab.request.get(icon).ok, icon
        assert not problems, "\n".join(problems)
    finally:
        ctx.close()


# --- a build with deployment settings --------------------------------------------------------------

PUBLISHED = {
    "site_url": "https://course.example.edu/binary-eval/",
    "demo_url": "https://course.example.edu/demo/",
    "submit_url": "https://course.example.edu/submit/",
    "repository_url": "https://github.com/example-org/binary-eval-course",
    "jupyterhub_url": "https://hub.example.edu",
    "binderhub_url": "https://binder.example.edu",
    "colab": True,
}


@pytest.fixture(scope="module")
def published_html(book_html, tmp_path_factory) -> Path:
    """The site built with published settings (HTML builder only, execution cache reused)."""
    out = tmp_path_factory.mktemp("published")
    config = out / "site.yml"
    config.write_text("\n".join(f"{k}: {json.dumps(v)}" for k, v in PUBLISHED.items()) + "\n", encoding="utf-8")
    # its own folder; it reads the execution cache that the public build (book_html) filled: no lock to hold
    code, log, seconds = _jupyter_book("--builder", "html", "--path-output", str(out),
                                       env=dict(os.environ, COURSE_SITE_CONFIG=str(config)))
    print(f"build with deployment settings: {seconds:.0f} s")
    assert code == 0, log[-4000:]
    return out / "_build" / "html"


def test_published_build_never_links_to_loopback(published_html):
    checked = 0
    for path in sorted(published_html.rglob("*")):
        if path.suffix not in (".html", ".xml", ".txt", ".ipynb") or "_static" in path.parts:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        hits = LOOPBACK.findall(text)
        assert not hits, f"{path.relative_to(published_html)} links to loopback: {hits[:3]}"
        checked += 1
    assert checked >= 60


def test_published_build_uses_the_configured_addresses(published_html):
    summary = (published_html / "book/binary/summary.html").read_text(encoding="utf-8")
    assert f'href="{PUBLISHED["demo_url"]}"' in summary
    intro = (published_html / "book/intro.html").read_text(encoding="utf-8")
    assert f'href="{PUBLISHED["demo_url"]}"' in intro and f'href="{PUBLISHED["submit_url"]}"' in intro
    assignments = (published_html / "book/assignments/index.html").read_text(encoding="utf-8")
    assert f'href="{PUBLISHED["submit_url"]}"' in assignments
    roc = (published_html / "book/binary/roc.html").read_text(encoding="utf-8")
    assert f'<link rel="canonical" href="{PUBLISHED["site_url"]}book/binary/roc.html"' in roc
    for hub in ("https://hub.example.edu/hub/user-redirect/git-pull?", "https://binder.example.edu/v2/gh/example-org/",
                "https://colab.research.google.com/github/example-org/binary-eval-course/"):
        assert hub in roc, f"no launch button {hub}"
    page404 = (published_html / "404.html").read_text(encoding="utf-8")
    assert 'href="/binary-eval/_static/' in page404


def test_default_build_has_no_launch_buttons_and_local_links(book_html):
    roc = (book_html / "book/binary/roc.html").read_text(encoding="utf-8")
    assert "launch-buttons" not in roc and "git-pull" not in roc and "colab" not in roc.lower()
    summary = (book_html / "book/binary/summary.html").read_text(encoding="utf-8")
    demo = re.findall(r'href="(http[^"]*)"[^>]*>[^<]*交互演示', summary)
    assert demo and is_loopback(demo[0]) and urljoin(demo[0], "/") == "http://127.0.0.1:8050/", demo
