"""Sphinx extension: content printed only in the instructor build.

``::::{instructor-only}`` ... ``::::`` wraps content (e.g. sphinx-exercise solutions of 综合练习 5-7) that
only the instructor build shows.  The switch is the Sphinx tag ``instructor``: set it with
``sphinx-build -t instructor`` or, for ``jupyter-book build`` (which has no ``-t``), with the environment
variable ``COURSE_INSTRUCTOR=1`` (what ``make book-instructor`` does).

In the public build the block becomes an ``only`` node, so Sphinx drops it before writing the HTML and
the search index.  Because the download button serves the page source from ``_sources/``, the public
build also scrubs every ``{instructor-only}`` block from those copies after the build.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

logger = logging.getLogger(__name__)

TAG = "instructor"
ENV_VAR = "COURSE_INSTRUCTOR"
OPEN_RE = re.compile(r"^(?P<fence>:{3,}|`{3,})\{instructor-only\}.*$")
PLACEHOLDER = "（此处为教师版内容，公开版不提供。）"


def is_instructor_build(app: Sphinx) -> bool:
    """True when the ``instructor`` tag is set (by ``-t instructor`` or ``COURSE_INSTRUCTOR=1``)."""
    return app.tags.has(TAG)


class InstructorOnlyDirective(SphinxDirective):
    """Content shown only in the instructor build."""

    has_content = True
    required_arguments = 0
    optional_arguments = 0

    def run(self) -> list[nodes.Node]:
        only = addnodes.only(expr=TAG)
        self.set_source_info(only)
        box = nodes.container(classes=["instructor-only"])
        badge = nodes.paragraph(classes=["instructor-badge"])
        badge += nodes.Text("教师版")
        box += badge
        box += self.parse_content_to_nodes()
        only += box
        return [only]


def scrub_text(text: str) -> str:
    """Replace every ``{instructor-only}`` block of a MyST source by a one-line placeholder."""
    out: list[str] = []
    lines = text.splitlines(keepends=True)
    i = 0
    while i < len(lines):
        match = OPEN_RE.match(lines[i].strip())
        if not match:
            out.append(lines[i])
            i += 1
            continue
        fence = match.group("fence")
        closing = re.compile(rf"^{re.escape(fence[0])}{{{len(fence)},}}\s*$")
        i += 1
        while i < len(lines) and not closing.match(lines[i].strip()):
            i += 1
        i += 1  # skip the closing fence
        out.append(PLACEHOLDER + "\n")
    return "".join(out)


def _set_tag(app: Sphinx, config: Any) -> None:
    if os.environ.get(ENV_VAR, "").strip() not in ("", "0"):
        app.tags.add(TAG)


def _scrub_sources(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or is_instructor_build(app) or app.builder.format != "html":
        return
    sources = Path(app.outdir) / "_sources"
    if not sources.is_dir():
        return
    for path in sources.rglob("*"):
        if path.suffix not in (".md", ".txt") or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8")
        if "{instructor-only}" in text:
            path.write_text(scrub_text(text), encoding="utf-8")
            logger.info(f"instructor-only content removed from {path.relative_to(app.outdir)}")


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the directive and the build switch."""
    app.add_directive("instructor-only", InstructorOnlyDirective)
    app.connect("config-inited", _set_tag)
    app.connect("build-finished", _scrub_sources)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
