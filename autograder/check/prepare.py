"""Read a submitted notebook and decide which code runs, restoring locked cells from the source.

Cells are matched to the instructor source by their nbgrader ``grade_id``:

* answer cells (``solution: true`` in the source) take the student's text;
* locked cells without tests (setup code such as the named-tuple types) always take
  the source's text, whatever the submission holds, and are re-inserted when deleted;
* test cells are never run in the student's process -- their cases are evaluated by
  the grader -- so editing or deleting them changes nothing (the feedback says so);
* cells the student added run as student code.

A locked or test cell counts as edited when its text, its type or its nbgrader metadata (grade,
solution, locked, grade_id, points) differ from the source's: that only chooses a feedback note,
since the source's text is what runs.  The notebook is read as plain JSON (grading workers need
neither nbformat nor nbgrader, whose imports take ~1.3 s per process).

Every cell that runs is first transformed by IPython's own input transformer
(``TransformerManager.transform_cell``), as a notebook kernel does: magics, shell escapes and
``!`` assignments become ``get_ipython()`` calls (answered by no-op stand-ins in the sandbox), and
valid Python -- a continuation line starting with ``%``, a ``%`` line inside a string -- is left as is.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

MAX_NOTEBOOK_BYTES = 20 << 20


@dataclass
class PreparedNotebook:
    """The code to run, in order, and what the feedback should say about the notebook."""

    cells: list[tuple[int, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    error: str | None = None  # the notebook could not be read at all


def _nbgrader_meta(cell) -> dict:
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return meta if isinstance(meta, dict) else {}


def _text(value) -> str:
    """A cell's source as stored on disk: a string or a list of lines."""
    if isinstance(value, list):
        return "".join(str(v) for v in value)
    return value if isinstance(value, str) else str(value)


def read_cells(text: str) -> list[dict]:
    """The cells of an nbformat-4 notebook given as JSON text (``ValueError`` if it is not one)."""
    nb = json.loads(text)
    if not isinstance(nb, dict) or nb.get("nbformat") != 4 or not isinstance(nb.get("cells"), list):
        raise ValueError("不是 nbformat 4 格式的笔记本")
    cells = []
    for cell in nb["cells"]:
        if isinstance(cell, dict):
            cell = dict(cell, source=_text(cell.get("source", "")))
            if not isinstance(cell.get("metadata"), dict):
                cell["metadata"] = {}
        cells.append(cell)
    return cells


def _locked_identity(cell: dict) -> tuple:
    """What makes a locked or test cell the instructor's: text, type and nbgrader metadata."""
    meta = _nbgrader_meta(cell)
    points = meta.get("points") if meta.get("grade") else None
    if isinstance(points, (int, float)) and not isinstance(points, bool):
        points = float(points)  # 2 and 2.0 are the same points
    return (cell.get("source", ""), cell.get("cell_type"), meta.get("grade", False), meta.get("solution", False),
            meta.get("locked", False), meta.get("grade_id"), points)


@lru_cache(maxsize=1)
def _transformer():
    from IPython.core.inputtransformer2 import TransformerManager

    return TransformerManager()


def to_python(source: str) -> str:
    """A cell's text as the Python an IPython kernel would run (unchanged if IPython cannot transform it)."""
    if "%" not in source and "!" not in source and "?" not in source:
        return source  # nothing for IPython to transform (its transformers key on these characters)
    try:
        return _transformer().transform_cell(source)
    except Exception:  # noqa: BLE001 - a cell IPython cannot parse fails in the sandbox, with the student's error
        return source


def source_cells(source_path: Path) -> list[dict]:
    return read_cells(source_path.read_text(encoding="utf-8"))


def prepare(source_path: Path, submission_path: Path) -> PreparedNotebook:
    """Build the list of code cells to execute for ``submission_path``."""
    out = PreparedNotebook()
    src_cells = source_cells(source_path)
    by_id = {}
    for c in src_cells:
        gid = _nbgrader_meta(c).get("grade_id")
        if gid:
            by_id[gid] = c
    try:
        if submission_path.stat().st_size > MAX_NOTEBOOK_BYTES:
            out.error = f"笔记本文件超过 {MAX_NOTEBOOK_BYTES >> 20} MiB，无法评分（请清除输出后重新提交）"
            return out
        cells = read_cells(submission_path.read_text(encoding="utf-8"))
    except Exception as exc:  # noqa: BLE001 - any malformed file is a graded (zero) submission
        out.error = f"无法读取笔记本：{type(exc).__name__}: {str(exc)[:300]}"
        return out
    seen: set[str] = set()
    run: list[tuple[int, str]] = []
    for i, cell in enumerate(cells):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        text = cell.get("source", "")
        text = "".join(text) if isinstance(text, list) else str(text)
        gid = _nbgrader_meta(cell).get("grade_id")
        src = by_id.get(gid) if isinstance(gid, str) else None
        if src is None or src.get("cell_type") != "code" or gid in seen:
            run.append((i, text))
            continue
        seen.add(gid)
        smeta = _nbgrader_meta(src)
        if smeta.get("solution"):
            run.append((i, text))
            continue
        if _locked_identity(cell) != _locked_identity(src):
            kind = "测试单元" if smeta.get("grade") else "带锁单元"
            out.notes.append(f"{kind} {gid} 被修改（或其元数据被修改）；评分使用原始版本，修改不影响分数。")
        if not smeta.get("grade"):
            run.append((i, src["source"]))
    # locked setup cells and answer cells missing from the submission
    missing_setup = []
    for c in src_cells:
        meta = _nbgrader_meta(c)
        gid = meta.get("grade_id")
        if c.get("cell_type") != "code" or not gid or gid in seen:
            continue
        if meta.get("solution"):
            out.notes.append(f"答案单元 {gid} 不在提交的笔记本中（被删除或元数据被修改）；只评分笔记本中实际存在的代码。")
        elif meta.get("grade"):
            out.notes.append(f"测试单元 {gid} 被删除；测试由评分程序执行，删除不影响分数。")
        else:
            missing_setup.append((-1 - len(missing_setup), c["source"]))
            out.notes.append(f"带锁单元 {gid} 被删除；评分时已从原始版本恢复。")
    out.cells = [(i, to_python(text)) for i, text in missing_setup + run]
    return out
