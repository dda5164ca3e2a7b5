"""Sphinx extension: animation frames leave the HTML and load only when the reader plays them.

:func:`coursebook.animation.frame_player` lists every frame of an animation as a ``data:`` URI in
the ``data-frames`` attribute of its player (so a downloaded notebook plays offline).  After an HTML
build (site, instructor site or the single page of the PDF edition) this extension writes each such
frame once to ``_images/anim-<hash>.png`` and puts its relative URL in the attribute instead; the
poster (the first frame, an ``<img>``) stays inline so the page shows it without another request.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx
from sphinx.util import logging

from coursebook.deployment import book_pages

logger = logging.getLogger(__name__)

FRAMES_ATTR = re.compile(r'(data-frames(?:-narrow)?)="([^"]*)"')  # the frames, and those with the panels in one column
DATA_URI = re.compile(r"data:image/png;base64,([A-Za-z0-9+/=]+)")
IMAGE_DIR = "_images"


def externalize(html: str, page: Path, outdir: Path, *, relative_to_root: bool = False) -> tuple[str, int]:
    """Replace the ``data:`` frames in every ``data-frames`` attribute of ``html`` by files.

    URLs are relative to the page's folder, or to ``outdir`` when ``relative_to_root`` (the
    single-page builder writes every link relative to the output root).
    Returns the new HTML and the number of frames written or reused.
    """
    count = 0
    images = outdir / IMAGE_DIR
    prefix = IMAGE_DIR if relative_to_root else Path(os.path.relpath(images, page.parent)).as_posix()

    def one_frame(match: re.Match[str]) -> str:
        nonlocal count
        data = base64.b64decode(match.group(1))
        name = f"anim-{hashlib.sha256(data).hexdigest()[:20]}.png"
        target = images / name
        if not target.exists():
            images.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        count += 1
        return f"{prefix}/{name}"

    def one_attr(match: re.Match[str]) -> str:
        return f'{match.group(1)}="{DATA_URI.sub(one_frame, match.group(2))}"'

    return FRAMES_ATTR.sub(one_attr, html), count


def _externalize_all(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    outdir = Path(app.outdir)
    for page in book_pages(outdir):
        text = page.read_text(encoding="utf-8")
        if 'data-frames="data:' not in text and 'data-frames-narrow="data:' not in text:
            continue
        new, count = externalize(text, page, outdir, relative_to_root=app.builder.name == "singlehtml")
        page.write_text(new, encoding="utf-8")
        logger.info(f"{count} animation frames of {page.relative_to(outdir)} moved to {IMAGE_DIR}/")


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the post-build step."""
    app.connect("build-finished", _externalize_all)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
