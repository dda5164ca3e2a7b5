"""Sphinx configuration of the guides: instructors' (Chinese) and authors' and maintainers' (English).

Built by ``make guide`` (and by ``make book``) into ``_build/html/guide/``, beside the book, with warnings as
errors and nitpicky references; tests/docs/ builds it the same way.  The interface, the search (jieba with the
course's dictionary) and the look are the book's: its extensions ``course_site`` and ``search_language`` and its
locale catalogue are loaded from ``book/_ext``.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(HERE / "_ext"), str(ROOT / "book" / "_ext")]

from coursebook.deployment import GUIDE_FOLDER, load_settings  # noqa: E402 (installed with the repository)

project = "评价二分类模型 · 指南"
author = "课程团队"
copyright = "2026"
language = "zh_CN"
root_doc = "index"

extensions = [
    "myst_parser",
    "sphinx_design",  # the landing page's cards
    "sphinx_copybutton",  # a copy button on every command block
    "course_site",  # the book's theme settings, scripts and styles, and its jieba dictionary for the search
    "search_language",  # the book's Chinese search language (jieba), without numbers and TeX command names
    "guide_reference",  # the reference generated from the code, {source} links into the code
    "licence_notice",  # the course's licences on every page's footer, linking the book's page 版权与许可
]
myst_enable_extensions = ["colon_fence", "deflist", "fieldlist"]
myst_heading_anchors = 3
#: _generated/ holds what benchmarks write, included into pages ({include}), never a page of its own.
exclude_patterns = ["_build", "README.md", "_generated"]
templates_path = ["_templates"]
locale_dirs = [str(ROOT / "book" / "_ext" / "locale")]

html_theme = "sphinx_book_theme"
html_title = "评价二分类模型 · 指南"
#: From the guides' root to the book's (the guides are built into the book's folder GUIDE_FOLDER): the footer's link
#: to the book's page 版权与许可.
licence_book_root = "../" * len(GUIDE_FOLDER.split("/"))
html_favicon = str(ROOT / "book" / "_static" / "favicon.svg")
html_static_path = ["_static"]
html_css_files = ["guide.css"]
html_search_language = "zh"
html_show_sourcelink = False
html_copy_source = False
html_last_updated_fmt = ""
html_theme_options = {"home_page_in_toc": True, "use_download_button": False, "show_toc_level": 2}
#: The book theme's sidebar, with the way back to the course under the search box.
html_sidebars = {"**": ["navbar-logo.html", "search-button-field.html", "course-link.html", "sbt-sidebar-nav.html"]}

_site = load_settings()
#: Where {source} links point: the repository's files when the deployment setting names a repository.
guide_repository = (_site.repository_url.rstrip("/"), _site.repository_branch)
#: Pages that other parts of the project add (docs/<name>.md): while one is missing, links to it are its text, not a
#: broken link (guide_reference.PagesNotYetHere); the toctree "*" of index.md lists it once it is there.
guide_expected_pages = ["public-private", "jupyterhub"]
