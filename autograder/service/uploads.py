"""An uploaded notebook, from the request body to a file in the data folder; refused early when it is bad.

Order of the checks (each refusal, an :class:`~.errors.Invalid`, says in Chinese what is wrong, and nothing is
written):

1. the request body is read with a hard cap and 2. the multipart form is parsed in memory by the web layer
   (:mod:`autograder.service.web.forms`); then the file's name must be a plain UTF-8 file name ending in
   ``.ipynb`` (no folders, no ``..``, no control characters, :func:`check_filename`);
3. the notebook (:func:`check_notebook`): UTF-8, JSON (parsed by the C parser, which gives up on a nesting
   bomb after ~1000 levels) nested at most :data:`MAX_DEPTH` levels, nbformat 4 with a list of cells, and the
   assignment's notebook (its nbgrader answer cells, or - pasted into a new notebook - its functions);
4. the file is stored as ``DATA/submissions/<assignment>/<student>/<id>.ipynb`` under a name the service
   chose (:func:`store_file`), written to a temporary file, flushed to disk and renamed into place.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from .errors import Invalid

MAX_DEPTH = 64
MAX_CONTAINERS = 200_000  # lists and objects in one notebook (a large real one has a few thousand)


def check_filename(name: str | None) -> str:
    """A plain file name ending in ``.ipynb`` (NFC), else 400.  It is only recorded, never used as a path."""
    if not name:
        raise Invalid("缺少文件：请在表单字段 notebook 中上传 .ipynb 文件")
    name = unicodedata.normalize("NFC", name)
    bad = ("/" in name or "\\" in name or name.startswith(".") or ".." in name or len(name.encode()) > 255
           or any(unicodedata.category(ch)[0] == "C" for ch in name))
    if bad:
        raise Invalid("文件名不合法：只能是不含路径、控制字符和“..”的普通文件名")
    if not name.lower().endswith(".ipynb"):
        raise Invalid("只接受 Jupyter 笔记本（.ipynb 文件）")
    return name


def too_deep(obj: object, limit: int = MAX_DEPTH, containers: int = MAX_CONTAINERS) -> bool:
    """Is ``obj`` (parsed JSON) nested more than ``limit`` levels, or made of more than ``containers`` lists and
    objects?  Iterative; stops at the first branch too deep or when the count is passed."""
    stack = [(obj, 1)]
    seen = 0
    while stack:
        item, depth = stack.pop()
        seen += 1
        if depth > limit or seen > containers:
            return True
        children = item.values() if type(item) is dict else item
        kinds = set(map(type, children))  # C speed: a long list of numbers or strings costs little
        if dict in kinds or list in kinds:
            stack.extend((c, depth + 1) for c in children if type(c) in (dict, list))
    return False


@dataclass(frozen=True)
class NotebookRules:
    """What identifies an assignment's notebook: the grade ids of its source and its student functions."""

    assignment: str
    title: str
    grade_ids: frozenset[str]
    functions: tuple[str, ...]
    owners: dict  # grade id -> assignment, over all assignments (to name the one a wrong notebook belongs to)


@dataclass(frozen=True)
class ReadNotebook:
    """A readable nbformat-4 notebook and what tells whose it is: its nbgrader grade ids and its code."""

    nb: dict
    grade_ids: frozenset[str]
    code: str


def read_notebook(data: bytes) -> ReadNotebook:
    """The notebook of ``data`` if it is a readable nbformat-4 notebook (UTF-8 JSON, bounded), else 400."""
    if not data.strip():
        raise Invalid("上传的文件是空的")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise Invalid("上传的文件不是 UTF-8 编码的 JSON，不是可读的 Jupyter 笔记本") from None
    try:
        nb = json.loads(text)  # C parser: a nesting bomb ends in RecursionError after ~1000 levels, using no memory
    except RecursionError:
        nb = None
    except ValueError:
        raise Invalid("上传的文件不是合法的 JSON，不是可读的 Jupyter 笔记本") from None
    if nb is not None and (not isinstance(nb, dict) or nb.get("nbformat") != 4 or not isinstance(nb.get("cells"), list)):
        raise Invalid("上传的文件不是 nbformat 4 格式的 Jupyter 笔记本")
    if nb is None or too_deep(nb):
        raise Invalid(f"上传的 JSON 嵌套超过 {MAX_DEPTH} 层或结构过于庞杂，不是正常的 Jupyter 笔记本")
    ids, code = set(), []
    for cell in nb["cells"]:
        if not isinstance(cell, dict) or cell.get("cell_type") not in ("code", "markdown", "raw"):
            raise Invalid("笔记本的单元格式不正确（nbformat 4）")
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) and all(isinstance(s, str) for s in source) else source
        if not isinstance(source, str):
            raise Invalid("笔记本的单元格式不正确（nbformat 4）")
        meta = cell.get("metadata")
        gid = meta.get("nbgrader", {}).get("grade_id") if isinstance(meta, dict) and isinstance(meta.get("nbgrader"), dict) else None
        if isinstance(gid, str):
            ids.add(gid)
        if cell["cell_type"] == "code":
            code.append(source)
    return ReadNotebook(nb, frozenset(ids), "\n".join(code))


def belongs(read: ReadNotebook, rules: NotebookRules) -> bool:
    """Is ``read`` the notebook of ``rules.assignment``: its answer cells, or - pasted into a new notebook, with no
    other assignment's cells - its functions?"""
    if read.grade_ids & rules.grade_ids:
        return True
    if any(g in rules.owners for g in read.grade_ids):
        return False
    return any(re.search(rf"^\s*def\s+{re.escape(f)}\s*\(", read.code, re.M) for f in rules.functions)


def check_notebook(data: bytes, rules: NotebookRules) -> dict:
    """The parsed notebook if it is a readable nbformat-4 notebook of ``rules.assignment``, else 400."""
    read = read_notebook(data)
    if belongs(read, rules):
        return read.nb
    others = sorted({rules.owners[g] for g in read.grade_ids if g in rules.owners} - {rules.assignment})
    if others:
        raise Invalid(f"这是作业 {others[0]} 的笔记本，不是作业 {rules.assignment}（{rules.title}）的")
    raise Invalid(f"这不是作业 {rules.assignment}（{rules.title}）的笔记本：既没有作业的答题单元，"
                  f"也没有定义要求的函数（{', '.join(rules.functions)}）")


def stored_path(folder: str, assignment: str, student: str, submission_id: str) -> Path:
    """Where an uploaded notebook is kept, relative to the data folder."""
    return Path(folder) / assignment / student / f"{submission_id}.ipynb"


def store_file(data_root: Path, assignment: str, student: str, submission_id: str, data: bytes,
               folder: str = "submissions") -> tuple[str, str]:
    """Write ``data`` atomically and durably under the data folder's ``folder``; return ``(relative path, sha256)``."""
    rel = stored_path(folder, assignment, student, submission_id)
    root = data_root.resolve()
    target = (root / rel).resolve()
    if root not in target.parents:  # names are checked before; this is the last line of defence
        raise Invalid("文件路径不合法")
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{submission_id}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o640)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    dir_fd = os.open(target.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
    return rel.as_posix(), hashlib.sha256(data).hexdigest()


def _grade_ids(source: Path) -> set[str]:
    nb = json.loads(source.read_text(encoding="utf-8"))
    return {c["metadata"]["nbgrader"]["grade_id"] for c in nb["cells"]
            if isinstance(c.get("metadata", {}).get("nbgrader"), dict) and "grade_id" in c["metadata"]["nbgrader"]}


def notebook_rules(assignment, source: Path, all_sources: dict[str, Path | None]) -> NotebookRules:
    """The :class:`NotebookRules` of ``assignment`` (a :class:`autograder.check.Assignment`) from the sources."""
    owners = {}
    for name, path in all_sources.items():
        if path is not None and path.is_file() and name != assignment.name:
            owners.update({g: name for g in _grade_ids(path)})
    ids = _grade_ids(source)
    return NotebookRules(assignment.name, assignment.title, frozenset(ids),
                         tuple(assignment.functions), {g: n for g, n in owners.items() if g not in ids})
