"""Read a submitted notebook and decide which code runs, restoring locked cells from the source.

Cells are matched to the instructor source by their nbgrader ``grade_id``:

* answer cells (``solution: true`` in the source) take the student's text;
* locked cells without tests (setup code such as the named-tuple types) always take
  the source's text, whatever the submission holds, and are re-inserted when deleted;
* test cells are never run in the student's process -- their cases are evaluated by
  the grader -- so editing or deleting them changes nothing (the feedback says so);
* cells the student added run as student code.

nbgrader's checksum (the formula of ``nbgrader.utils.compute_checksum``, reimplemented on plain
JSON so that grading workers need neither nbformat nor nbgrader, whose imports take ~1.3 s per
process; ``tests/autograder/test_notebook_reader.py`` checks both against nbgrader) detects edited
locked cells.
"""

from __future__ import annotations

import ast
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

MAX_NOTEBOOK_BYTES = 20 << 20
FORBIDDEN_MODULES = ("autograder", "sklearn")


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


def checksum(cell: dict) -> str:
    """nbgrader's checksum of a graded cell (``nbgrader.utils.compute_checksum``), on a plain dict."""
    meta = _nbgrader_meta(cell)
    grade, solution = meta.get("grade", False), meta.get("solution", False)
    locked = False if solution else (True if grade else meta.get("locked", False))
    m = hashlib.md5()  # noqa: S324 - nbgrader's formula, not a security use
    for part in (cell.get("source", ""), cell.get("cell_type", ""), str(grade), str(solution), str(locked),
                 meta["grade_id"]):
        m.update(str(part).encode("utf-8"))
    if grade:
        m.update(str(float(meta["points"])).encode("utf-8"))
    return m.hexdigest()


def _same(cell: dict, src: dict) -> bool:
    try:
        return checksum(cell) == checksum(src)
    except (KeyError, TypeError, ValueError):  # metadata the formula cannot digest: certainly edited
        return False


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
        if not _same(cell, src) or text != src["source"]:
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
    out.cells = missing_setup + run
    return out


def forbidden_uses(cells: list[tuple[int, str]], functions: tuple[str, ...]) -> dict[str, str]:
    """Map each required function that uses ``autograder`` or scikit-learn to a Chinese explanation.

    Static check on the cells' syntax trees: an import of either package inside the
    function, a use of a name bound to either package at top level, a string naming
    either package (``importlib`` tricks), or a top-level binding of the function
    name to something imported from them.
    """
    tainted: set[str] = set()
    defs: dict[str, ast.AST] = {}
    direct: dict[str, str] = {}

    def bad_module(mod: str | None) -> bool:
        return bool(mod) and mod.split(".")[0] in FORBIDDEN_MODULES

    for _i, text in cells:
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            continue
        for node in tree.body:
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if bad_module(alias.name):
                        tainted.add((alias.asname or alias.name).split(".")[0])
            elif isinstance(node, ast.ImportFrom) and bad_module(node.module):
                for alias in node.names:
                    tainted.add(alias.asname or alias.name)
                    if (alias.asname or alias.name) in functions:
                        direct[alias.asname or alias.name] = f"直接从 {node.module} 导入"
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in functions:
                defs[node.name] = node
                direct.pop(node.name, None)
            elif isinstance(node, ast.Assign):
                names = {t.id for t in node.targets if isinstance(t, ast.Name)}
                for name in names & set(functions):
                    defs[name] = node
    result: dict[str, str] = dict(direct)
    for name, node in defs.items():
        for sub in ast.walk(node):
            if isinstance(sub, ast.Import) and any(bad_module(a.name) for a in sub.names):
                result[name] = "在函数中导入了 " + ", ".join(a.name for a in sub.names)
            elif isinstance(sub, ast.ImportFrom) and bad_module(sub.module):
                result[name] = f"在函数中导入了 {sub.module}"
            elif isinstance(sub, ast.Name) and sub.id in tainted:
                result[name] = f"使用了从参考实现或 scikit-learn 导入的 {sub.id}"
            elif isinstance(sub, ast.Constant) and isinstance(sub.value, str) and any(m in sub.value for m in FORBIDDEN_MODULES):
                result[name] = f"代码中出现模块名字符串 {sub.value[:60]!r}"
    return result
