"""What of the instructor's repository must never reach a student, as fingerprints to scan public artefacts for.

Five kinds of material are private (:class:`Category`):

* ``solution``: the body of every nbgrader solution cell of ``solutions/`` (between ``### BEGIN SOLUTION`` and
  ``### END SOLUTION``, or the whole cell without them);
* ``hidden_test``: the hidden tests, i.e. the source of ``autograder/check/specs/`` and the planted faulty
  implementations of assignment 5 (``autograder/check/mutants.py``), and any ``### BEGIN HIDDEN TESTS`` block;
* ``misconception``: the misconception catalogue (``autograder/check/misconceptions.py``): its code and each
  entry's explanation.  The entries' titles and hints are published on purpose: the book's assignments page
  lists them (``book/assignments/index.md``) so that students can check their code before submitting;
* ``reference``: the source of ``autograder/reference/``, which implements every graded function;
* ``instructor_only``: the ``{instructor-only}`` blocks of the book's pages (solutions of 综合练习 5-7), found by
  the book's own rule (``scrub_text`` of ``book/_ext/instructor.py``).

A fingerprint is a whitespace-free piece of text, so it is found whatever the line wrapping, indentation or
HTML markup around it: for code, :data:`WINDOW` consecutive significant lines (code without comments and
docstrings, at least :data:`MIN_LINE` characters each); for prose, each run of at least :data:`MIN_HAN`
Chinese characters.  Text that is public by design is never evidence of a leak, so its fingerprints are
dropped: the cells nbgrader releases to students (given code such as the result types, visible tests), the
book's own teaching code (``book/coursebook/``) and the quizzes, which the book prints with their answers and
explanations (``book/quizzes/quizzes.yml``, and the question templates of ``autograder/quiz/templates/``, whose
variants the pages' 「再来一题」 boxes and the PDF print with their explanations); for the instructor-only blocks
also the code the book's public pages show (:func:`book_public_code`).
"""

from __future__ import annotations

import ast
import difflib
import enum
import importlib.util
import io
import json
import re
import tokenize
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

#: Consecutive significant code lines that make one fingerprint.
WINDOW = 3
#: Characters (whitespace removed) a code line needs to count: shorter ones (``else:``, ``return x``) are common.
MIN_LINE = 10
#: Chinese characters in a run of prose that make one fingerprint.
MIN_HAN = 14
#: Characters of a fingerprint made of a whole short source (fewer than WINDOW significant lines).
MIN_SHORT = 30

SOLUTION_BEGIN, SOLUTION_END = "### BEGIN SOLUTION", "### END SOLUTION"
HIDDEN_BEGIN, HIDDEN_END = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"

_WHITESPACE = re.compile(r"\s+")
_IMPORT_OR_COMMENT = re.compile(r"^\s*(?:[#%!]|import\s|from\s+\S+\s+import\s)")
_FENCED_CODE = re.compile(r"^(`{3,})[^\n]*\n(.*?)^\1[ \t]*$", re.S | re.M)
_HAN_RUN = re.compile(rf"[\u4e00-\u9fff]{{{MIN_HAN},}}")


class Category(enum.StrEnum):
    """The kinds of private material."""

    SOLUTION = "solution"
    HIDDEN_TEST = "hidden_test"
    MISCONCEPTION = "misconception"
    REFERENCE = "reference"
    INSTRUCTOR_ONLY = "instructor_only"


#: Chinese names of the categories (for the scan's report).
CATEGORY_NAMES = {
    Category.SOLUTION: "作业解答",
    Category.HIDDEN_TEST: "隐藏测试",
    Category.MISCONCEPTION: "常见错误清单",
    Category.REFERENCE: "参考实现源码",
    Category.INSTRUCTOR_ONLY: "教师版内容",
}


@dataclass(frozen=True)
class Fingerprint:
    """One piece of private text: ``text`` is whitespace-free; ``source`` says where it lives (repository-relative)."""

    text: str
    category: Category
    source: str


def squeeze(text: str) -> str:
    """``text`` without any whitespace (how fingerprints and scanned texts are compared)."""
    return _WHITESPACE.sub("", text)


# ------------------------------------------------------------------------------------------------ code


def _skipped_lines(tree: ast.AST) -> set[int]:
    """Lines of docstrings and of import statements (which name a public interface, they implement nothing)."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            lines.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                lines.update(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    return lines


def _significant(source: str) -> list[tuple[int, str]]:
    """``(line index, squeezed code)`` of each significant line of Python ``source``: comments, docstrings and imports
    removed, lines shorter than :data:`MIN_LINE` dropped.  Source that does not parse (a cell with IPython magics)
    loses only its whole-line comments and its imports."""
    lines = source.splitlines()
    try:
        tree = ast.parse(source)
        comments = [t for t in tokenize.generate_tokens(io.StringIO(source).readline) if t.type == tokenize.COMMENT]
    except (SyntaxError, tokenize.TokenError, IndentationError):
        return [(i, s) for i, line in enumerate(lines) if not _IMPORT_OR_COMMENT.match(line) and len(s := squeeze(line)) >= MIN_LINE]
    for token in reversed(comments):  # cut each comment off its line (right to left keeps the columns valid)
        row, col = token.start
        lines[row - 1] = lines[row - 1][:col]
    skip = _skipped_lines(tree)
    return [(i, s) for i, line in enumerate(lines) if i + 1 not in skip and len(s := squeeze(line)) >= MIN_LINE]


def code_lines(source: str) -> list[str]:
    """The significant lines of Python ``source`` (see :func:`_significant`), whitespace squeezed out."""
    return [s for _, s in _significant(source)]


def code_fingerprints(source: str, category: Category, where: str) -> list[Fingerprint]:
    """The fingerprints of Python ``source``, so that a copy is found with or without its comments and docstrings:

    * every :data:`WINDOW` consecutive significant lines (a copy without comments);
    * every :data:`WINDOW` consecutive non-blank lines as written, when at least two of them are significant (a
      verbatim copy, whose comments sit between the code lines);
    * a source with fewer significant lines than that: all of them, when long enough.
    """
    significant = _significant(source)
    lines = [s for _, s in significant]
    if len(lines) < WINDOW:
        whole = "".join(lines)
        return [Fingerprint(whole, category, where)] if len(whole) >= MIN_SHORT else []
    prints = [Fingerprint("".join(lines[i:i + WINDOW]), category, where) for i in range(len(lines) - WINDOW + 1)]
    code = {i for i, _ in significant}
    raw = [(i, squeeze(line)) for i, line in enumerate(source.splitlines()) if line.strip()]
    for k in range(len(raw) - WINDOW + 1):
        window = raw[k:k + WINDOW]
        if sum(i in code for i, _ in window) >= 2:
            prints.append(Fingerprint("".join(text for _, text in window), category, where))
    return prints


def prose_fingerprints(text: str, category: Category, where: str) -> list[Fingerprint]:
    """Every run of at least :data:`MIN_HAN` Chinese characters of ``text``."""
    return [Fingerprint(m.group(0), category, where) for m in _HAN_RUN.finditer(text)]


# ------------------------------------------------------------------------------------------- notebooks


@dataclass(frozen=True)
class Cell:
    """One cell of an nbgrader source notebook."""

    grade_id: str
    cell_type: str
    source: str
    solution: bool


def notebook_cells(path: Path) -> list[Cell]:
    """The cells of an nbgrader notebook, with their ``grade_id`` (``cell-N`` when the cell has none)."""
    notebook = json.loads(path.read_text(encoding="utf-8"))
    cells = []
    for i, cell in enumerate(notebook.get("cells", [])):
        meta = cell.get("metadata", {}).get("nbgrader", {})
        source = cell.get("source", "")
        cells.append(Cell(meta.get("grade_id", f"cell-{i}"), cell.get("cell_type", ""),
                          source if isinstance(source, str) else "".join(source), bool(meta.get("solution"))))
    return cells


def _between(text: str, begin: str, end: str) -> list[str]:
    blocks, inside, current = [], False, []
    for line in text.splitlines():
        if line.strip() == begin:
            inside, current = True, []
        elif line.strip() == end and inside:
            inside = False
            blocks.append("\n".join(current))
        elif inside:
            current.append(line)
    return blocks


def solution_bodies(cell: Cell) -> list[str]:
    """What a solution cell holds that the student version replaces (nothing for another cell)."""
    if not cell.solution:
        return []
    return _between(cell.source, SOLUTION_BEGIN, SOLUTION_END) or [cell.source]


def released_text(cell: Cell) -> str:
    """What nbgrader releases of a cell: everything but its solution and hidden-test blocks."""
    text = cell.source
    for body in solution_bodies(cell) + _between(text, HIDDEN_BEGIN, HIDDEN_END):
        text = text.replace(body, "")
    return text


def assignment_notebooks(repo: Path = REPO) -> list[Path]:
    """The instructor's source notebooks (``solutions/<assignment>/<notebook>.ipynb``)."""
    return sorted((repo / "solutions").glob("*/*.ipynb"))


# ------------------------------------------------------------------------------------- the book's rule


@cache
def _instructor_extension(repo: Path):
    path = repo / "book" / "_ext" / "instructor.py"
    spec = importlib.util.spec_from_file_location("course_instructor_ext", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def scrub_instructor_only(text: str, repo: Path = REPO) -> str:
    """A book page's source with every ``{instructor-only}`` block replaced by the book's placeholder."""
    return _instructor_extension(repo).scrub_text(text)


def instructor_only_blocks(text: str, repo: Path = REPO) -> list[str]:
    """The ``{instructor-only}`` blocks of a page's source: exactly what :func:`scrub_instructor_only` removes."""
    if "{instructor-only}" not in text:
        return []
    before, after = text.splitlines(), scrub_instructor_only(text, repo).splitlines()
    matcher = difflib.SequenceMatcher(a=before, b=after, autojunk=False)
    return ["\n".join(before[i1:i2]) for op, i1, i2, _, _ in matcher.get_opcodes() if op in ("replace", "delete")]


def catalogue_explanations(source: str) -> list[tuple[str, str]]:
    """``(id, explanation)`` of every ``Misconception(id, assignment, title, explanation, ...)`` in the catalogue's source."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Misconception":
            entry_id, explanation = node.args[0], node.args[3]
            if isinstance(entry_id, ast.Constant) and isinstance(explanation, ast.Constant):
                found.append((str(entry_id.value), str(explanation.value)))
    return found


# ------------------------------------------------------------------------------------------ the whole


def _rel(path: Path, repo: Path) -> str:
    return str(path.relative_to(repo))


def _private(repo: Path) -> Iterator[Fingerprint]:
    for path in assignment_notebooks(repo):
        for cell in notebook_cells(path):
            where = f"{_rel(path, repo)}#{cell.grade_id}"
            for body in solution_bodies(cell):
                if cell.cell_type == "code":
                    yield from code_fingerprints(body, Category.SOLUTION, where)
                else:
                    yield from prose_fingerprints(body, Category.SOLUTION, where)
            for block in _between(cell.source, HIDDEN_BEGIN, HIDDEN_END):
                yield from code_fingerprints(block, Category.HIDDEN_TEST, where)
    check = repo / "autograder" / "check"
    for path in sorted((check / "specs").glob("*.py")) + [check / "mutants.py"]:
        yield from code_fingerprints(path.read_text(encoding="utf-8"), Category.HIDDEN_TEST, _rel(path, repo))
    catalogue = check / "misconceptions.py"
    yield from code_fingerprints(catalogue.read_text(encoding="utf-8"), Category.MISCONCEPTION, _rel(catalogue, repo))
    for entry_id, explanation in catalogue_explanations(catalogue.read_text(encoding="utf-8")):
        yield from prose_fingerprints(explanation, Category.MISCONCEPTION, f"{_rel(catalogue, repo)}#{entry_id}")
    for path in sorted((repo / "autograder" / "reference").glob("*.py")):
        yield from code_fingerprints(path.read_text(encoding="utf-8"), Category.REFERENCE, _rel(path, repo))
    for path in sorted((repo / "book").rglob("*.md")):
        if "node_modules" in path.parts:
            continue
        for block in instructor_only_blocks(path.read_text(encoding="utf-8"), repo):
            where = _rel(path, repo)
            yield from prose_fingerprints(block, Category.INSTRUCTOR_ONLY, where)
            for m in _FENCED_CODE.finditer(block):
                yield from code_fingerprints(m.group(2), Category.INSTRUCTOR_ONLY, where)


def _code_text(source: str) -> str:
    """Python source as the scan compares it: written (squeezed) and without comments, docstrings and imports."""
    return squeeze(source) + "\n" + "".join(code_lines(source))


def public_by_design(repo: Path = REPO) -> list[str]:
    """The texts published on purpose, as the scan compares them: private text found in them is no leak."""
    texts = []
    for path in assignment_notebooks(repo):
        for cell in notebook_cells(path):
            released = released_text(cell)
            texts.append(_code_text(released) if cell.cell_type == "code" else squeeze(released))
    for path in sorted((repo / "book" / "coursebook").glob("*.py")):
        texts.append(_code_text(path.read_text(encoding="utf-8")))
    quizzes = repo / "book" / "quizzes" / "quizzes.yml"  # every quiz is printed with its answer and explanations
    texts.append(squeeze(quizzes.read_text(encoding="utf-8")))
    for path in sorted((repo / "autograder" / "quiz" / "templates").glob("*.py")):  # so is every template's variants
        texts.append(squeeze(path.read_text(encoding="utf-8")))
    return texts


def book_public_code(repo: Path = REPO) -> list[str]:
    """The code the book's pages show outside their instructor-only blocks (as the scan compares it).

    An instructor-only solution may repeat code a public page teaches (the input checks of 综合练习 5 are those of
    the page on the O(n log n) program): those lines are the book's own, published by the page.  Only the
    instructor-only material is compared with them; the other kinds of private material live outside the book.
    """
    texts = []
    for path in sorted((repo / "book").rglob("*.md")):
        if "node_modules" not in path.parts:
            public = scrub_instructor_only(path.read_text(encoding="utf-8"), repo)
            texts += [_code_text(m.group(2)) for m in _FENCED_CODE.finditer(public)]
    return texts


def private_fingerprints(repo: Path = REPO) -> list[Fingerprint]:
    """Every fingerprint of the private material of ``repo`` (one per text), except those found in
    :func:`public_by_design` and, for instructor-only material, in :func:`book_public_code`."""
    unique: dict[str, Fingerprint] = {}
    for fingerprint in _private(repo):
        unique.setdefault(fingerprint.text, fingerprint)
    public = "\n".join(public_by_design(repo))
    book = "\n".join(book_public_code(repo))
    return [f for text, f in unique.items()
            if text not in public and not (f.category is Category.INSTRUCTOR_ONLY and text in book)]


def categories(fingerprints: Iterable[Fingerprint]) -> dict[Category, int]:
    """How many fingerprints each category has."""
    counts = {c: 0 for c in Category}
    for f in fingerprints:
        counts[f.category] += 1
    return counts
