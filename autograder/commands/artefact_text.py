"""The text a reader can get out of one public artefact (a page, a notebook download, the PDF, a source file).

Every file of a published folder is read by its kind (:func:`artefact_text`): HTML as its text and as
its markup (scripts and attributes included), a notebook as every string it holds except image data, a PDF
through ``pdftotext``, a gettext catalogue and a Sphinx inventory decoded, any other file as UTF-8 text.
Images and fonts (:data:`MEDIA`) carry no text of the course and are skipped; a zip archive (:data:`ARCHIVES`: a
wheel offered for download is one) is opened and each of its files read the same way (:func:`artefact_texts`).  A
file that is none of these cannot be scanned and says why (:class:`Unreadable`), so that nothing unread is
published as checked.
"""

from __future__ import annotations

import gettext
import html
import io
import json
import re
import shutil
import subprocess
import tempfile
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: Suffixes of files that hold pixels or glyphs only.
MEDIA = frozenset({".png", ".jpg", ".jpeg", ".gif", ".webp", ".ico", ".woff", ".woff2", ".ttf", ".otf", ".eot"})
#: Suffixes of zip archives, whose files are read one by one (a wheel is a zip archive: PEP 427).
ARCHIVES = frozenset({".whl", ".zip"})
#: Between an archive's name and the path of one of its files, in the name of what was read.
MEMBER_SEPARATOR = "!/"


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
    """The text of the PDF file ``path``."""
    if shutil.which("pdftotext") is None:
        raise Unreadable("没有 pdftotext（Debian 软件包 poppler-utils），无法读取 PDF 的文字")
    proc = subprocess.run(["pdftotext", "-enc", "UTF-8", str(path), "-"], capture_output=True, timeout=600)
    if proc.returncode != 0:
        raise Unreadable(f"pdftotext 读取失败：{proc.stderr.decode('utf-8', 'replace').strip()[:200]}")
    return proc.stdout.decode("utf-8", "replace")


def _pdf_data_text(data: bytes) -> str:
    """The text of a PDF held in memory (a file of an archive): pdftotext reads files."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "member.pdf"
        path.write_bytes(data)
        return _pdf_text(path)


def _catalogue_text(data: bytes) -> str:
    try:
        catalogue = gettext.GNUTranslations(io.BytesIO(data))._catalog  # the only way to list a .mo file's strings
    except OSError as exc:
        raise Unreadable(f"不是有效的 gettext 目录：{exc}") from exc
    return "\n".join(f"{key}\n{value}" for key, value in catalogue.items())


def _inventory_text(data: bytes) -> str:
    header_end = 0
    for _ in range(4):  # four header lines, then zlib
        header_end = data.index(b"\n", header_end) + 1
    try:
        body = zlib.decompress(data[header_end:])
    except zlib.error as exc:
        raise Unreadable(f"Sphinx 清单无法解压：{exc}") from exc
    return (data[:header_end] + body).decode("utf-8", "replace")


def artefact_text(path: Path) -> ArtefactText | None:
    """The text of ``path``; ``None`` for an image or a font; :class:`Unreadable` when it cannot be read (an
    archive among them: :func:`artefact_texts` reads its files)."""
    suffix = path.suffix.lower()
    if suffix == ".pdf":
        return ArtefactText("pdf", _pdf_text(path))
    return _data_text(path.name, path.read_bytes())


def _data_text(name: str, data: bytes) -> ArtefactText | None:
    """The text of the file called ``name`` holding ``data`` (see :func:`artefact_text`)."""
    suffix = Path(name).suffix.lower()
    if suffix in MEDIA:
        return None
    if suffix in ARCHIVES:
        raise Unreadable("压缩包里又有压缩包：请解开后再发布，每个文件才能被检查")
    if suffix == ".pdf":
        return ArtefactText("pdf", _pdf_data_text(data))
    if suffix == ".mo":
        return ArtefactText("catalogue", _catalogue_text(data))
    if suffix == ".inv":
        return ArtefactText("inventory", _inventory_text(data))
    try:
        raw = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Unreadable(f"既不是图片或字体，也不是 UTF-8 文本（{exc.reason}）") from exc
    if suffix in (".html", ".htm"):
        return ArtefactText("html", _html_text(raw))
    if suffix == ".ipynb":
        return ArtefactText("ipynb", _notebook_text(raw))
    return ArtefactText("text", raw)


def _archive_members(path: Path) -> list[tuple[str, bytes]]:
    """``(path inside the archive, content)`` of every file of the zip archive ``path``."""
    try:
        with zipfile.ZipFile(path) as archive:
            return [(info.filename, archive.read(info)) for info in archive.infolist() if not info.is_dir()]
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, OSError) as exc:
        raise Unreadable(f"无法作为 zip 压缩包打开：{exc}") from exc


def artefact_texts(path: Path, name: str) -> Iterator[tuple[str, ArtefactText | Unreadable | None]]:
    """What a reader can get out of the file ``path`` (called ``name`` in a report), as ``(name, text)`` pairs:
    one for a file, one per file of a zip archive (named ``archive!/member``); the text is ``None`` for an image or
    a font and :class:`Unreadable` for what cannot be read."""
    if path.suffix.lower() not in ARCHIVES:
        try:
            yield name, artefact_text(path)
        except Unreadable as exc:
            yield name, exc
        return
    try:
        members = _archive_members(path)
    except Unreadable as exc:
        yield name, exc
        return
    for member, data in members:
        try:
            yield f"{name}{MEMBER_SEPARATOR}{member}", _data_text(member, data)
        except Unreadable as exc:
            yield f"{name}{MEMBER_SEPARATOR}{member}", exc
