"""Find submissions: ``SUBMISSIONS/<student_id>/<assignment>/<notebook>.ipynb``, or zip/LMS downloads.

Zip archives (``SUBMISSIONS`` itself or ``*.zip`` files inside it) are extracted
safely (no absolute paths, no ``..``, size-capped).  Extracted files already laid
out as ``<student_id>/<assignment>/<notebook>.ipynb`` are used as they are; other
``.ipynb`` files are matched with nbgrader's ``FileNameCollectorPlugin`` (the
plugin ``nbgrader zip_collect`` uses) and a regular expression with the named
group ``student_id`` (default: LMS names like ``s001_roc_auc.ipynb`` or
``s001_attempt_2024-05-01_roc_auc.ipynb``); the notebook name then tells the assignment.
"""

from __future__ import annotations

import re
import shutil
import zipfile
from dataclasses import dataclass
from pathlib import Path


from ..check.specs import Assignment

SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@-]{0,99}$")
DEFAULT_REGEXP = r"(?:.*/)?(?P<student_id>[A-Za-z0-9.@-]+)_(?:attempt_[0-9T:\-]+_)?(?P<file_id>[A-Za-z0-9_]+\.ipynb)$"
MAX_UNZIPPED = 2 << 30


@dataclass
class Submission:
    student: str
    assignment: str
    notebook: Path | None  # None: the assignment folder exists but holds no notebook of that name


def _extract(archive: Path, dest: Path) -> None:
    total = 0
    with zipfile.ZipFile(archive) as zf:
        for info in zf.infolist():
            name = info.filename
            parts = Path(name).parts
            if info.is_dir() or name.startswith("/") or ".." in parts or not name.endswith(".ipynb"):
                continue
            total += info.file_size
            if total > MAX_UNZIPPED:
                raise ValueError(f"{archive} 解压后过大")
            target = dest / Path(*parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            with zf.open(info) as src, open(target, "wb") as out:
                shutil.copyfileobj(src, out)


def _from_zips(root: Path, work: Path, assignments: dict[str, Assignment], regexp: str, warn) -> Path:
    raw = work / "extracted"
    collected = work / "submitted"
    for d in (raw, collected):
        if d.exists():
            shutil.rmtree(d)
        d.mkdir(parents=True)
    archives = [root] if root.is_file() else sorted(root.glob("*.zip"))
    for i, archive in enumerate(archives):
        _extract(archive, raw / f"{i:03d}")
    by_notebook = {a.notebook + ".ipynb": a.name for a in assignments.values()}
    from nbgrader.plugins.zipcollect import FileNameCollectorPlugin  # only for zip downloads (slow import)

    plugin = FileNameCollectorPlugin(named_regexp=regexp, valid_ext=[".ipynb"])
    for f in sorted(raw.rglob("*.ipynb")):
        rel = f.relative_to(raw).parts[1:]
        if len(rel) >= 3 and rel[-2] in assignments:
            student, assignment, name = rel[-3], rel[-2], rel[-1]
        else:
            info = plugin.collect(str(f))
            if not info:
                warn(f"无法从文件名识别学生：{f.name}")
                continue
            student = info["student_id"]
            name = info.get("file_id") or f.name
            assignment = by_notebook.get(name)
            if assignment is None:
                warn(f"无法识别作业：{f.name}")
                continue
        dest = collected / student / assignment / name
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(f, dest)
    return collected


def find_submissions(root: Path, assignments: dict[str, Assignment], work: Path, *, regexp: str = DEFAULT_REGEXP,
                     warn=print) -> list[Submission]:
    """All (student, assignment) pairs present under ``root``."""
    if root.is_file() or any(root.glob("*.zip")):
        root = _from_zips(root, work, assignments, regexp, warn)
    subs = []
    for sdir in sorted(p for p in root.iterdir() if p.is_dir()):
        if not SAFE_ID.match(sdir.name):
            warn(f"跳过不合法的学生目录名：{sdir.name!r}")
            continue
        for adir in sorted(p for p in sdir.iterdir() if p.is_dir()):
            a = assignments.get(adir.name)
            if a is None:
                warn(f"跳过未知作业目录：{sdir.name}/{adir.name}")
                continue
            nb = adir / f"{a.notebook}.ipynb"
            subs.append(Submission(sdir.name, a.name, nb if nb.is_file() and not nb.is_symlink() else None))
    return subs
