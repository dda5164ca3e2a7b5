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

import ast
import json
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from ..model import MAX_NOTEBOOK_BYTES
from ..sandbox.command import unavailable

MAX_JSON_OBJECTS = 100_000  # an honest notebook, figures and all, has a few thousand
MAX_ANALYSED_CELL = 64 << 10  # characters of a cell that the trusted side parses (IPython transform, import rule)


@dataclass
class PreparedNotebook:
    """The code to run, in order, and what the feedback should say about the notebook."""

    cells: list[tuple[int, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    error: str | None = None  # the notebook could not be read at all
    skipped_imports: set[str] = field(default_factory=set)  # names bound by skipped imports (see skip_unavailable_imports)


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
        try:
            points = float(points)  # 2 and 2.0 are the same points
        except OverflowError:  # a 400-digit integer: certainly not the source's points
            pass
    return (cell.get("source", ""), cell.get("cell_type"), meta.get("grade", False), meta.get("solution", False),
            meta.get("locked", False), meta.get("grade_id"), points)


@lru_cache(maxsize=1)
def _transformer():
    from IPython.core.inputtransformer2 import TransformerManager

    return TransformerManager()


def to_python(source: str) -> str:
    """A cell's text as the Python an IPython kernel would run (unchanged if IPython cannot transform it).

    Cells over :data:`MAX_ANALYSED_CELL` characters are not transformed (nor scanned for imports): such a
    cell is data, not an answer, and analysing it would cost the grader's memory.
    """
    if len(source) > MAX_ANALYSED_CELL:
        return source
    if "%" not in source and "!" not in source and "?" not in source:
        return source  # nothing for IPython to transform (its transformers key on these characters)
    try:
        return _transformer().transform_cell(source)
    except Exception:  # noqa: BLE001 - a cell IPython cannot parse fails in the sandbox, with the student's error
        return source


def source_cells(source_path: Path) -> list[dict]:
    return read_cells(source_path.read_text(encoding="utf-8"))


def cell_label(index: int) -> str:
    """How the feedback names a cell: its position as JupyterLab shows it (1-based, Markdown cells
    counted), or a locked cell restored from the assignment (negative indices)."""
    return f"第 {index + 1} 个单元" if index >= 0 else "从作业原件恢复的带锁单元"


def prepare(source_path: Path, submission_path: Path) -> PreparedNotebook:
    """Build the list of code cells to execute for ``submission_path``: the submission read with bounds, its cells
    matched to the source's (:func:`_match`), the locked cells it lacks restored (:func:`_restore`), each cell
    transformed as a kernel would and its unavailable imports skipped (:func:`_runnable`)."""
    out = PreparedNotebook()
    src_cells = source_cells(source_path)
    by_id = {}
    for c in src_cells:
        gid = _nbgrader_meta(c).get("grade_id")
        if gid:
            by_id[gid] = c
    cells = _read_submission(submission_path, out)
    if cells is None:
        return out
    # (a grade_id the student's file gives as a list or an object is no cell's: it must not stop the grading)
    has_metadata = any(isinstance(gid := _nbgrader_meta(c).get("grade_id"), str) and gid in by_id
                       for c in cells if isinstance(c, dict))
    seen: set[str] = set()
    run = _match(cells, by_id, seen, out.notes)
    missing_setup = _restore(src_cells, seen, has_metadata, out.notes)
    if not has_metadata:
        out.notes.append("这个笔记本没有作业的 nbgrader 元数据（例如把答案粘贴进了新建的笔记本）：评分运行了其中全部代码单元，"
                         "并从作业原件补上了带锁的准备单元；请尽量在下发的作业笔记本中作答。")
    out.cells = _runnable(missing_setup + run, out)
    return out


def _read_submission(path: Path, out: PreparedNotebook) -> list | None:
    """The submission's cells, or None with ``out.error`` saying why it cannot be graded (too large, empty, too many
    JSON objects: bounded before parsing, millions of tiny cells cost gigabytes; not a notebook)."""
    try:
        size = path.stat().st_size
        if size > MAX_NOTEBOOK_BYTES:
            out.error = (f"笔记本文件有 {size / (1 << 20):.1f} MiB，超过上限 {MAX_NOTEBOOK_BYTES >> 20} MiB，无法评分"
                         "（多半是输出中的图片：清除全部输出后保存，再提交）")
            return None
        if size == 0:
            out.error = "提交的文件是空的（0 字节），无法评分：请在 JupyterLab 中保存笔记本后重新提交"
            return None
        raw = path.read_bytes()
        if raw.count(b"{") > MAX_JSON_OBJECTS:
            out.error = (f"笔记本的结构过于庞大（超过 {MAX_JSON_OBJECTS} 个 JSON 对象），无法评分："
                         "请提交 JupyterLab 保存的作业笔记本")
            return None
        return read_cells(raw.decode("utf-8"))
    except Exception as exc:  # noqa: BLE001 - any malformed file is a graded (zero) submission
        out.error = ("提交的文件不是可以读取的 Jupyter 笔记本（nbformat 4），无法评分"
                     f"（{type(exc).__name__}: {str(exc)[:200]}）：请提交 JupyterLab 保存的 .ipynb 文件")
        return None


def _match(cells: list, by_id: dict[str, dict], seen: set[str], notes: list[str]) -> list[tuple[int, str]]:
    """The submission's code cells that run, in order: answer cells and added cells with the student's text, locked
    cells with the source's (test cells never); ``seen`` collects the source's cells found, ``notes`` what changed."""
    run: list[tuple[int, str]] = []
    for i, cell in enumerate(cells):
        if not isinstance(cell, dict):
            continue
        gid = _nbgrader_meta(cell).get("grade_id")
        src = by_id.get(gid) if isinstance(gid, str) else None
        if cell.get("cell_type") != "code":
            if src is not None and src.get("cell_type") == "code" and _nbgrader_meta(src).get("solution"):
                seen.add(gid)
                notes.append(f"答案单元（{cell_label(i)}）被改成了 {cell.get('cell_type')} 单元，其中的代码没有运行："
                             "在 JupyterLab 中把它改回 Code 单元后重新提交。")
            continue
        text = cell.get("source", "")
        text = "".join(text) if isinstance(text, list) else str(text)
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
            notes.append(f"{kind} {gid}（{cell_label(i)}）被修改（或其元数据被修改）；评分使用原始版本，修改不影响分数。")
        if not smeta.get("grade"):
            run.append((i, src["source"]))
    return run


def _restore(src_cells: list[dict], seen: set[str], has_metadata: bool, notes: list[str]) -> list[tuple[int, str]]:
    """The source's locked setup cells missing from the submission (run first, negative indices), and a note for
    each missing cell (one note for them all when the notebook has no nbgrader metadata at all)."""
    missing_setup = []
    for c in src_cells:
        meta = _nbgrader_meta(c)
        gid = meta.get("grade_id")
        if c.get("cell_type") != "code" or not gid or gid in seen:
            continue
        if not meta.get("solution") and not meta.get("grade"):
            missing_setup.append((-1 - len(missing_setup), c["source"]))
        if not has_metadata:
            continue
        if meta.get("solution"):
            notes.append(f"答案单元 {gid} 不在提交的笔记本中（被删除，或单元的 nbgrader 元数据被改动）；"
                         "评分运行了笔记本中实际存在的全部代码单元。")
        elif meta.get("grade"):
            notes.append(f"测试单元 {gid} 被删除；测试由评分程序执行，删除不影响分数。")
        else:
            notes.append(f"带锁单元 {gid} 被删除；评分时已从作业原件恢复。")
    return missing_setup


def _runnable(cells: list[tuple[int, str]], out: PreparedNotebook) -> list[tuple[int, str]]:
    """Each cell as the Python a kernel would run, its top-level imports of unavailable modules skipped (noted first)."""
    runnable = []
    for i, text in cells:
        code, skipped = skip_unavailable_imports(to_python(text))
        for line, module in skipped:
            out.notes.insert(0, f"{cell_label(i)}第 {line} 行导入了 {module}，评分环境中没有这个模块（只提供 Python 标准库和 NumPy）："
                                "评分时跳过了这一行，单元的其余代码照常运行；若评分的函数用到了它，相应用例不得分。")
            out.skipped_imports.update(skipped_names(text, module))
        runnable.append((i, code))
    return runnable


def skip_unavailable_imports(code: str) -> tuple[str, list[tuple[int, str]]]:
    """Top-level imports of modules the grading environment does not provide, replaced by ``pass``.

    Such an import works in the student's JupyterLab (the course environment has scikit-learn, e.g. to
    compare with) but would stop the whole cell in the sandbox; skipping the line lets the rest of the
    cell (the answer's definitions) run.  Returns the new code (same number of lines) and
    ``(line, module)`` of each skipped import.  Imports inside functions are left alone: they fail when
    the function runs, and only its cases are lost.
    """
    if len(code) > MAX_ANALYSED_CELL:
        return code, []
    try:
        tree = ast.parse(code)
    except Exception:  # noqa: BLE001 - unparsable here: the sandbox reports the student's own error
        return code, []
    lines = code.split("\n")
    skipped = []
    for node in tree.body:
        if isinstance(node, ast.Import):
            bad = [a.name for a in node.names if unavailable(a.name)]
        elif isinstance(node, ast.ImportFrom):
            bad = [node.module] if node.level == 0 and unavailable(node.module) else []
        else:
            continue
        if not bad:
            continue
        keep = [a for a in node.names if not unavailable(a.name)] if isinstance(node, ast.Import) else []
        first, last = node.lineno - 1, (node.end_lineno or node.lineno) - 1
        if node.col_offset != 0 or ";" in "".join(lines[first:last + 1]):
            continue  # shares its line with other code: leave it to fail visibly
        replacement = "import " + ", ".join(a.name + (f" as {a.asname}" if a.asname else "") for a in keep) if keep else "pass"
        lines[first] = replacement
        for k in range(first + 1, last + 1):
            lines[k] = "pass"
        skipped += [(node.lineno, m) for m in bad]
    return "\n".join(lines), skipped


def skipped_names(code: str, module: str) -> set[str]:
    """Names a skipped top-level import of ``module`` would have bound (for a clear failure reason)."""
    if len(code) > MAX_ANALYSED_CELL:
        return set()
    try:
        tree = ast.parse(to_python(code))
    except Exception:  # noqa: BLE001 - as in skip_unavailable_imports
        return set()
    names = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module == module:
            names |= {a.asname or a.name for a in node.names}
        elif isinstance(node, ast.Import):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names if a.name == module}
    return names
