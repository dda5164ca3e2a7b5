"""A page's MyST as the plain Markdown of its downloaded notebook (book/_ext/download_markdown.py), and the helper
wheel the download installs (book/_ext/helper_wheel.py): no build needed."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "book" / "_ext"))

from download_markdown import Attachments, ConversionError, remaining_markup, to_notebook_markdown  # noqa: E402
from helper_wheel import MODULES, REFERENCE_MODULES, build_wheel  # noqa: E402

from autograder.commands.private_material import Category  # noqa: E402
from autograder.commands.public_scan import scan  # noqa: E402

SITE = "https://course.example.edu/b/"


class Links:
    """What a build would know about one page."""

    glue = {"auc": {"text/plain": "0.8333333333333334"}, "n": {"text/plain": "12"},
            "fig": {"image/png": "iVBORw0KGgo=", "text/plain": "<Figure>"},
            "md": {"text/markdown": "见 {eq}`eq-auc`。"}}

    def glued(self, key):
        if key not in self.glue:
            raise ConversionError(f"no glued value {key!r}")
        return self.glue[key]

    def cross_reference(self, role, target):
        table = {("eq", "eq-auc"): ("式 (3)", SITE + "p.html#equation-eq-auc"),
                 ("ref", "binary-roc"): ("ROC 曲线", SITE + "book/binary/roc.html#binary-roc"),
                 ("ref", "这一节 <binary-roc>"): ("这一节", SITE + "book/binary/roc.html#binary-roc"),
                 ("numref", "fig-a"): ("图 2", SITE + "p.html#fig-a"),
                 ("cite:t", "fawcett2006"): ("Fawcett (2006)", None)}
        return table[(role, target)]

    def directive_title(self, label):
        return {"ex-1": "练习 1（混淆矩阵）"}[label]

    def page_url(self):
        return SITE + "p.html"

    def substitution(self, name):
        return {"submit_link": f"[作业提交页面]({SITE}submit/)"}[name]


def convert(text: str, attachments: Attachments | None = None) -> str:
    return to_notebook_markdown(text, Links(), attachments)


def test_glued_numbers_are_written_in_with_their_format():
    assert convert("AUC 为 {glue:text}`auc:.3f`，共 {glue:text}`n` 个样本。") == "AUC 为 0.833，共 12 个样本。"


def test_cross_references_become_linked_text_and_citations_text():
    text = convert("由 {eq}`eq-auc` 和 {ref}`binary-roc`、{ref}`这一节 <binary-roc>`、{numref}`fig-a`，{cite:t}`fawcett2006` 证明。")
    assert text == (f"由 [式 (3)]({SITE}p.html#equation-eq-auc) 和 [ROC 曲线]({SITE}book/binary/roc.html#binary-roc)、"
                    f"[这一节]({SITE}book/binary/roc.html#binary-roc)、[图 2]({SITE}p.html#fig-a)，Fawcett (2006) 证明。")


def test_labelled_formulas_get_their_number_and_targets_go():
    text = convert("(sec-a)=\n## 标题\n\n$$\na = b\n$$ (eq-auc)\n")
    assert "(sec-a)=" not in text and "(eq-auc)" not in text
    assert "$$\na = b\n\\tag{3}\n$$" in text


def test_directives_become_markdown():
    attachments = Attachments()
    text = convert("```{exercise} 混淆矩阵\n:label: ex-1\n\n求 {glue:text}`n`。\n```\n\n"
                   "```{glue:figure} fig\n:alt: 一张图\n:name: fig-a\n\n说明。\n```\n\n```{quiz-group} 1-3\n```\n\n"
                   "```{glue:md} md\n:format: myst\n```\n\n:::{note}\n小心。\n:::\n", attachments)
    assert "**练习 1（混淆矩阵）**\n\n求 12。" in text
    assert "![一张图](attachment:fig.png)\n\n*图 2 说明。*" in text and attachments.files == {"fig.png": {"image/png": "iVBORw0KGgo="}}
    assert f"[课程网站的本页]({SITE}p.html)" in text and "第 1-3 题" in text
    assert f"见 [式 (3)]({SITE}p.html#equation-eq-auc)。" in text
    assert "> **注意**\n>\n> 小心。" in text
    assert remaining_markup(text) == []


def test_variant_boxes_and_worked_answers_become_markdown():
    text = convert("```{quiz-variant} ece-bins\n```\n\n:::{dropdown} 参考解答\n答案是 {glue:text}`n`。\n:::\n", Attachments())
    assert "**再来一题**" in text and f"[课程网站的本页]({SITE}p.html)" in text
    assert "> **参考解答**\n>\n> 答案是 12。" in text and remaining_markup(text) == []


def test_code_is_left_as_it_is_and_substitutions_are_filled_in():
    text = convert("在{{ submit_link }}提交。\n\n```python\nx = {'a': 1}  # {glue:text}`n` stays code\n```\n")
    assert text.startswith(f"在[作业提交页面]({SITE}submit/)提交。")
    assert "x = {'a': 1}  # {glue:text}`n` stays code" in text


def test_what_has_no_rule_is_an_error_naming_it():
    with pytest.raises(ConversionError, match="unknown-thing"):
        convert("```{unknown-thing}\nx\n```\n")
    with pytest.raises(ConversionError, match="kbd"):
        convert("按 {kbd}`Ctrl`")
    with pytest.raises(ConversionError, match="no glued value 'missing'"):
        convert("{glue:text}`missing`")


def test_remaining_markup_finds_what_a_reader_would_see_raw():
    found = remaining_markup("见 {ref}`x`。\n\n(lbl)=\n\n```python\n{ref}`in code`\n```\n\n$$a$$ (eq-x)\n")
    assert found == ["{ref}`x`", "(lbl)=", "$$…$$ (eq-x)"]


def _wheel_files(wheel) -> dict[str, bytes]:
    with zipfile.ZipFile(wheel) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def test_the_public_helper_wheel_holds_the_figure_style_and_no_reference_source(tmp_path):
    wheel = build_wheel(tmp_path)
    assert wheel.name.startswith("binary_eval_course-") and wheel.name.endswith("-py3-none-any.whl")
    files = _wheel_files(wheel)
    metadata = next(data.decode() for n, data in files.items() if n.endswith("/METADATA"))
    record = next(data.decode() for n, data in files.items() if n.endswith("/RECORD"))
    assert set(MODULES) <= set(files) and "coursebook/notebook.py" in files
    assert [n for n in files if n.startswith("autograder/reference/")] == ["autograder/reference/__init__.py"]
    assert not any(n.startswith(("autograder/check", "autograder/service", "coursebook/pdf", "coursebook/deployment")) for n in files)
    assert "Requires-Dist: numpy>=2" in metadata and "Requires-Dist: mplfonts" in metadata
    assert all(n in record for n in files if not n.endswith("/RECORD"))
    assert build_wheel(tmp_path) == wheel  # the same files: the same wheel, not written again
    # what a reader's notebook meets when a cell imports the reference metrics
    package = tmp_path / "site"
    for name, data in files.items():
        (package / name).parent.mkdir(parents=True, exist_ok=True)
        (package / name).write_bytes(data)
    use = ("import autograder.reference as ref, coursebook.experiments\n"
           "try:\n    from autograder.reference import roc_auc\nexcept ImportError as e:\n    print(type(e).__name__, e)\n"
           "ref.roc_curve")
    proc = subprocess.run([sys.executable, "-c", use], cwd=package, capture_output=True, text=True,
                          env={"PYTHONPATH": str(package), "PATH": "/usr/bin:/bin"})
    assert proc.stdout.startswith("ReferenceNotPublished roc_auc：公开课程不附带课程的参考实现 autograder.reference"), proc
    assert proc.returncode == 1 and "ReferenceNotPublished: roc_curve：公开课程不附带" in proc.stderr, proc.stderr


def test_the_public_wheel_passes_the_public_scan_and_the_instructor_wheel_does_not(tmp_path):
    """The instructor edition's wheel carries the reference source, which the public scan finds."""
    public = build_wheel(tmp_path / "public")
    instructor = build_wheel(tmp_path / "instructor", reference=True)
    assert set(REFERENCE_MODULES) <= set(_wheel_files(instructor)) and instructor.name != public.name
    assert scan([public]).clean
    assert Category.REFERENCE in {leak.category for leak in scan([instructor]).leaks}


def test_nested_fences_close_at_their_own_fence():
    """An instructor-only block (4 colons) holding a solution (3 colons) holding code (backticks), as the instructor
    edition's pages have them."""
    text = convert("::::{instructor-only}\n:::{admonition} 解答\n```python\n:::\nx = 1\n```\n:::\n::::\n\n后文 {glue:text}`n`。\n")
    assert text.startswith("> **教师版**") and "> > **解答**" in text and "x = 1" in text
    assert text.rstrip().endswith("后文 12。") and remaining_markup(text) == []
