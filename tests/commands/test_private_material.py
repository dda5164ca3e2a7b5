"""What counts as private material, and that the rules find it in this repository (the scan is not vacuous)."""

from __future__ import annotations

from collections import Counter

from autograder.commands import private_material as pm
from autograder.commands.private_material import Category


def _fingerprints() -> list[pm.Fingerprint]:
    return pm.private_fingerprints()


def test_every_kind_of_private_material_is_fingerprinted_from_every_place_it_lives():
    prints = _fingerprints()
    counts = pm.categories(prints)
    assert all(n >= 20 for n in counts.values()), counts
    sources = Counter(f.source.split("#")[0] for f in prints)
    expected = [str(p.relative_to(pm.REPO)) for p in pm.assignment_notebooks()]
    expected += [str(p.relative_to(pm.REPO)) for p in sorted((pm.REPO / "autograder" / "check" / "specs").glob("a*.py"))]
    expected += ["autograder/check/mutants.py", "autograder/check/misconceptions.py"]
    expected += [str(p.relative_to(pm.REPO)) for p in sorted((pm.REPO / "autograder" / "reference").glob("[!_]*.py"))
                 if p.name != "__init__.py"]
    expected += ["book/binary/answers.md"]  # the solutions of 综合练习 5-7, instructor-only
    missing = [s for s in expected if not sources.get(s)]
    assert not missing, f"no fingerprint from {missing}"
    assert len(expected) >= 17


def test_a_solution_cell_body_is_what_nbgrader_removes():
    cell = pm.Cell("a1_solution", "code", "import numpy as np\n### BEGIN SOLUTION\ndef f(x):\n    return x\n### END SOLUTION\n", True)
    assert pm.solution_bodies(cell) == ["def f(x):\n    return x"]
    assert "return x" not in pm.released_text(cell) and "import numpy" in pm.released_text(cell)
    whole = pm.Cell("a1_answer", "markdown", "我的回答", True)
    assert pm.solution_bodies(whole) == ["我的回答"]
    given = pm.Cell("a1_setup", "code", "def given():\n    pass\n", False)
    assert pm.solution_bodies(given) == [] and pm.released_text(given) == given.source


def test_code_lines_keep_only_what_implements_something():
    source = ('"""Module docstring that names roc_curve."""\nimport numpy as np\nfrom .x import (\n    a_long_name,\n)\n\n\n'
              'def f(y_true, y_score):\n    """Docstring."""\n    order = np.argsort(-y_score, kind="stable")  # why\n'
              '    # a whole-line comment that is long enough\n    return y_true[order]\n')
    assert pm.code_lines(source) == ["deff(y_true,y_score):", 'order=np.argsort(-y_score,kind="stable")', "returny_true[order]"]
    assert pm.code_lines("%timeit f(x)\nresult = compute_everything(x)\n") == ["result=compute_everything(x)"]


def test_fingerprints_are_windows_of_significant_lines_and_runs_of_chinese():
    code = "\n".join(f"value_{i} = compute(value_{i - 1})" for i in range(1, 6))
    windows = {f.text for f in pm.code_fingerprints(code, Category.REFERENCE, "x.py")}
    assert len(windows) == 5 - pm.WINDOW + 1
    assert "value_1=compute(value_0)value_2=compute(value_1)value_3=compute(value_2)" in windows
    commented = code.replace("\n", "  # a remark on why\n", 1)
    both = {f.text for f in pm.code_fingerprints(commented, Category.REFERENCE, "x.py")}
    assert windows <= both  # without the comment, as a copy that drops it
    assert "value_1=compute(value_0)#aremarkonwhyvalue_2=compute(value_1)value_3=compute(value_2)" in both  # verbatim
    prose = pm.prose_fingerprints("短句。这是一个足够长的中文句子用来做指纹的测试吗，不够长。", Category.MISCONCEPTION, "y")
    assert [f.text for f in prose] == ["这是一个足够长的中文句子用来做指纹的测试吗"]


def test_instructor_only_blocks_are_exactly_what_the_book_scrubs():
    page = (pm.REPO / "book" / "binary" / "answers.md").read_text(encoding="utf-8")
    blocks = pm.instructor_only_blocks(page)
    assert blocks and all("{instructor-only}" in b.splitlines()[0] for b in blocks)
    assert all(f"ex-binary-{n}" in "\n".join(blocks) for n in (5, 6, 7))  # the solutions of 综合练习 5-7
    scrubbed = pm.scrub_instructor_only(page)
    assert "{instructor-only}" not in scrubbed
    for block in blocks:
        inner = [line for line in block.splitlines()[1:-1] if len(line.strip()) > 30]
        assert inner and not any(line in scrubbed for line in inner)
    assert pm.instructor_only_blocks("# 没有教师版内容\n") == []


def test_the_published_hints_are_not_private_but_the_explanations_are():
    prints = {f.text for f in _fingerprints() if f.category is Category.MISCONCEPTION}
    source = (pm.REPO / "autograder" / "check" / "misconceptions.py").read_text(encoding="utf-8")
    from autograder.check.misconceptions import CATALOGUE

    explained = dict(pm.catalogue_explanations(source))
    assert set(explained) == {m.id for m in CATALOGUE}
    for entry in CATALOGUE:
        assert explained[entry.id] == entry.explanation
        runs = [f.text for f in pm.prose_fingerprints(entry.hint, Category.MISCONCEPTION, "")]
        assert not any(run in prints for run in runs), f"{entry.id}: its hint is on the assignments page by design"
    assert sum(any(f.text in prints for f in pm.prose_fingerprints(m.explanation, Category.MISCONCEPTION, "")) for m in CATALOGUE) >= 15


def test_what_is_public_by_design_removes_no_private_code_of_the_solutions():
    """The given cells (types, visible tests) are public, but no solution body is dropped as if it were."""
    public = "\n".join(pm.public_by_design())
    for path in pm.assignment_notebooks():
        for cell in pm.notebook_cells(path):
            for body in pm.solution_bodies(cell):
                kept = [f for f in pm.code_fingerprints(body, Category.SOLUTION, "") if f.text not in public]
                assert kept, f"{path.name}#{cell.grade_id}: every fingerprint of the solution is also public"
