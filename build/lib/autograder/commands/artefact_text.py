"""The text a reader can get out of one public artefact (a page, a notebook download, the PDF, a source file).

Every file of a published folder is read by its kind (:func:`artefact_text`): HTML as its text and as
its markup (scripts and attributes included), a notebook as every string it holds except image data, a PDF
through ``pdftotext``, a gettext catalogue and a Sphinx inventory decoded, any other file as UTF-8 text.
Images and fonts (:data:`MEDIA`) carry no text of the course and are skipped; a file that is none of these
cannot be scanned and says why (:class:`Unreadable`), so that nothing unread is published as checked.
"""

from __future__ import annotations

import gettext
import html
import json
import re
import shutil
import subprocess
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: Suffixes of files that hold pixels or glyphs only.
MEDIA = frozenset({".png", ".jpg", ".jpeg", ".gif", ".webp", ".ico", ".woff", ".woff2", ".ttf", ".otf", ".eot"})


class Unreadable(Exception):
    """A file whose text cannot be read (``reason`` in Chinese)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class ArtefactText:
    """The text of one file and its kind (``html``, ``ipynb``, ``pdf``, ``text``, ``catalogue``, ``inventory``)."""

    kind: str
    text: str


_TAG = re.compile(r"<[^>]*>")


def _html_text(raw: str) -> str:
    """The page's text with its tags cut out (code split into highlighted spans reads whole again), then its markup."""
    return html.unescape(_TAG.sub("", raw)) + "\n" + html.unescape(raw)


def _strings(node: Any) -> Iterator[str]:
    if isinstance(node, str):
        yield node
    elif isinstance(node, list):
        for item in node:
            yield from _strings(item)
    elif isinstance(node, dict):
        for key, value in node.items():
            if not str(key).startswith("image/"):  # base64 pixels
                yield from _strings(value)


def _notebook_text(raw: str) -> str:
    try:
        notebook = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise Unreadable(f"不是有效的 JSON 笔记本：{exc}") from exc
    return "\n".join(_strings(notebook))


def _pdf_text(path: Path) -> str:
    if shutil.which("pdftotext") is None:
        raise Unreadable("没有 pdftotext（Debian 软件包 poppler-utils），无法读取 PDF 的文字")
    proc = subprocess.run(["pdftotext", "-enc", "UTF-8", str(path), "-"], capture_output=True, timeout=600)
    if proc.returncode != 0:
        raise Unreadable(f"pdftotext 读取失败：{proc.stderr.decode('utf-8', 'replace').strip()[:200]}")
    return proc.stdout.decode("utf-8", "replace")


def _catalogue_text(path: Path) -> str:
    with path.open("rb") as fp:
        try:
            catalogue = gettext.GNUTranslations(fp)._catalog  # the only way to list a .mo file's strings
        except OSError as exc:
            raise Unreadable(f"不是有效的 gettext 目录：{exc}") from exc
    return "\n".join(f"{key}\n{value}" for key, value in catalogue.items())


def _inventory_text(path: Path) -> str:
    data = path.read_bytes()
    header_end = 0
    for _ in range(4):  # four header lines, then zlib
        header_end = data.index(b"\n", header_end) + 1
    try:
        body = zlib.decompress(data[header_end:])
    except zlib.error as exc:
        raise Unreadable(f"Sphinx 清单无法解压：{exc}") from exc
    return (data[:header_end] + body).decode("utf-8", "replace")


def artefact_text(path: Path) -> ArtefactText | None:
    """The text of ``path``; ``None`` for an image or a font; :class:`Unreadable` when it cannot be read."""
    suffix = path.suffix.lower()
    if suffix in MEDIA:
        return None
    if suffix == ".pdf":
        return ArtefactText("pdf", _pdf_text(path))
    if suffix == ".mo":
        return ArtefactText("catalogue", _catalogue_text(path))
    if suffix == ".inv":
        return ArtefactText("inventory", _inventory_text(path))
    try:
        raw = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Unreadable(f"既不是图片或字体，也不是 UTF-8 文本（{exc.reason}）") from exc
    if suffix in (".html", ".htm"):
        return ArtefactText("html", _html_text(raw))
    if suffix == ".ipynb":
        return ArtefactText("ipynb", _notebook_text(raw))
    return ArtefactText("text", raw)
