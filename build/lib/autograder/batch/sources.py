"""Every file of a submissions folder or LMS zip download, read safely.

A folder is walked without following symbolic links; zip archives (``SUBMISSIONS`` itself, or ``*.zip`` files
at the top of the folder) are read entry by entry.  Nothing a student named ever becomes a path on this
machine: notebooks from archives are extracted to numbered files in a scratch folder.  What cannot be read
safely (a symbolic link anywhere, a device or pipe, an absolute or ``..`` path, an encrypted entry, an archive
that is not a zip, more than :data:`MAX_UNZIPPED` bytes) is returned as a refusal with its reason.
"""

from __future__ import annotations

import os
import shutil
import stat
import zipfile
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Iterator

MAX_UNZIPPED = 2 << 30
READ_SUFFIXES = (".ipynb", ".txt")  # notebooks, and Blackboard's receipts (read, never graded)


@dataclass(frozen=True)
class Item:
    """One regular file (or, with ``is_dir``, one folder) of a tree.

    ``parts`` is its path below the tree's root, ``shown`` where a person finds it (``archive.zip:a/b``),
    ``path`` a readable copy on this machine (None for files that are not read), ``mtime`` the file's
    modification time or, in a zip, the entry's time (local time, as the LMS wrote it).
    """

    tree: str  # "" for the submissions folder, the archive's name for a zip
    parts: tuple[str, ...]
    shown: str
    path: Path | None
    mtime: datetime | None
    in_zip: bool
    is_dir: bool = False

    @property
    def name(self) -> str:
        return self.parts[-1]


@dataclass(frozen=True)
class Refused:
    """A file that is not read at all, and why (Chinese, for the instructor)."""

    shown: str
    reason: str


Found = Item | Refused


def walk(root: Path, scratch: Path) -> Iterator[Found]:
    """Every file and folder under ``root`` (a folder, or one zip file), zips at its top expanded."""
    if scratch.exists():
        shutil.rmtree(scratch)
    scratch.mkdir(parents=True)
    counter = iter(range(10**9))
    budget = [MAX_UNZIPPED]
    if root.is_file():
        yield from _zip(root, root.name, scratch, counter, budget)
        return
    for item in _folder(root, ()):
        if isinstance(item, Item) and not item.is_dir and len(item.parts) == 1 and item.name.lower().endswith(".zip"):
            yield from _zip(root / item.name, item.shown, scratch, counter, budget)
        else:
            yield item


def _folder(root: Path, parts: tuple[str, ...]) -> Iterator[Found]:
    try:
        entries = sorted(os.scandir(root.joinpath(*parts)), key=lambda e: e.name)
    except OSError as exc:
        yield Refused("/".join(parts) or ".", f"无法读取文件夹：{exc.strerror}")
        return
    for entry in entries:
        sub = parts + (entry.name,)
        shown = "/".join(sub)
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError as exc:
            yield Refused(shown, f"无法读取：{exc.strerror}")
            continue
        if stat.S_ISLNK(st.st_mode):
            yield Refused(shown, "符号链接：不跟随，不评分")
        elif stat.S_ISDIR(st.st_mode):
            yield Item("", sub, shown + "/", None, None, False, is_dir=True)
            yield from _folder(root, sub)
        elif stat.S_ISREG(st.st_mode):
            yield Item("", sub, shown, Path(entry.path), datetime.fromtimestamp(st.st_mtime), False)
        else:
            yield Refused(shown, "不是普通文件（设备、管道或套接字）")


def _entry_name(info: zipfile.ZipInfo) -> str:
    """The entry's name as its author wrote it: names without the UTF-8 flag are often GBK (Chinese Windows)."""
    name = info.filename
    if not info.flag_bits & 0x800:
        raw = name.encode("cp437", errors="replace")
        for codec in ("utf-8", "gbk"):
            try:
                name = raw.decode(codec)
                break
            except UnicodeDecodeError:
                continue
    return name.replace("\\", "/")


def _zip(archive: Path, label: str, scratch: Path, counter, budget: list[int]) -> Iterator[Found]:
    try:
        zf = zipfile.ZipFile(archive)
    except (OSError, zipfile.BadZipFile) as exc:
        yield Refused(label, f"无法读取的 zip 文件：{exc}")
        return
    with zf:
        for info in zf.infolist():
            name = _entry_name(info)
            shown = f"{label}:{name}"
            parts = tuple(p for p in name.split("/") if p)
            if name.startswith("/") or not parts or any(p in (".", "..") or "\0" in p for p in parts) or ":" in parts[0]:
                yield Refused(shown, "不安全的路径（绝对路径或含 ..），不解压")
                continue
            mode = info.external_attr >> 16
            if stat.S_ISLNK(mode):
                yield Refused(shown, "符号链接：不解压，不评分")
                continue
            when = _zip_time(info)
            if info.is_dir():
                yield Item(label, parts, shown, None, when, True, is_dir=True)
                continue
            if info.flag_bits & 0x1:
                yield Refused(shown, "加密的压缩条目，无法读取")
                continue
            target = None
            if name.lower().endswith(READ_SUFFIXES):
                if info.file_size > budget[0]:
                    yield Refused(shown, f"解压总量超过上限（{MAX_UNZIPPED >> 20} MiB），未解压")
                    continue
                budget[0] -= info.file_size
                target = scratch / f"{next(counter):06d}{Path(name).suffix.lower()}"
                try:
                    with zf.open(info) as src, open(target, "wb") as out:
                        shutil.copyfileobj(src, out)
                except (OSError, zipfile.BadZipFile, RuntimeError, ValueError) as exc:
                    yield Refused(shown, f"无法解压：{exc}")
                    continue
            yield Item(label, parts, shown, target, when, True)


def _zip_time(info: zipfile.ZipInfo) -> datetime | None:
    try:
        return datetime(*info.date_time)
    except ValueError:
        return None
