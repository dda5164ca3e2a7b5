"""``autograder scan-public``: private material is found in every kind of public file, whatever the markup around it.

The planted texts are the repository's own private material (a solution cell's body, a reference module, a hidden
test, a misconception's explanation, an instructor-only block), written the way each kind of artefact carries text.
"""

from __future__ import annotations

import html
import json
import random
import zipfile
from pathlib import Path

import pytest

from autograder import cli
from autograder.commands import private_material as pm
from autograder.commands.private_material import Category
from autograder.commands.public_scan import Scanner, scan


@pytest.fixture(scope="module")
def scanner() -> Scanner:
    return Scanner(pm.private_fingerprints())


def _solution_body() -> str:
    path = pm.REPO / "solutions" / "ps2_roc_auc" / "roc_auc.ipynb"
    return next(b for c in pm.notebook_cells(path) for b in pm.solution_bodies(c))


def _highlighted(code: str) -> str:
    """Code as a highlighted HTML block: every token in a span, entities escaped (what Pygments writes)."""
    spans = "".join(f'<span class="n">{html.escape(token)}</span>' if token.strip() else token
                    for token in code.replace("(", " ( ").split(" "))
    return f'<div class="highlight"><pre>{spans}</pre></div>'


def _snippet(text: str, lines: int = 12) -> str:
    return "\n".join(text.splitlines()[:lines])


def _page(tmp_path: Path, name: str, body: str) -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"<html><body><article>{body}</article></body></html>", encoding="utf-8")
    return path


def _categories(report) -> set[Category]:
    return {leak.category for leak in report.leaks}


def test_a_clean_folder_passes(tmp_path, scanner):
    _page(tmp_path / "site", "index.html", "<p>课程首页：混淆矩阵、ROC 曲线与 AUC。</p>")
    (tmp_path / "site" / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)))
    report = scan([tmp_path / "site"], scanner)
    assert report.clean, report.leaks
    assert report.kinds == {"html": 1, "media": 1}


def test_a_solution_in_highlighted_html_is_found(tmp_path, scanner):
    _page(tmp_path / "site", "book/binary/roc.html", "<p>示例：</p>" + _highlighted(_snippet(_solution_body())))
    report = scan([tmp_path / "site"], scanner)
    assert _categories(report) == {Category.SOLUTION}
    leak = report.leaks[0]
    assert leak.artefact == "site/book/binary/roc.html" and leak.source.startswith("solutions/ps2_roc_auc/roc_auc.ipynb#")
    assert "作业解答" in leak.describe()


def test_a_solution_in_a_notebook_download_is_found(tmp_path, scanner):
    notebook = {"cells": [{"cell_type": "code", "source": _snippet(_solution_body()).splitlines(keepends=True),
                           "outputs": [{"output_type": "display_data", "data": {"image/png": "iVBORw0KGgo="}}]}],
                "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "roc.ipynb").write_text(json.dumps(notebook, ensure_ascii=True, indent=1), encoding="utf-8")
    assert _categories(scan([tmp_path / "roc.ipynb"], scanner)) == {Category.SOLUTION}


def test_text_rewrapped_like_a_printed_page_is_found(tmp_path, scanner):
    """A PDF's text breaks long code lines anywhere and drops indentation; the scan does not depend on either."""
    code = _snippet((pm.REPO / "autograder" / "reference" / "ranking.py").read_text(encoding="utf-8").split("\ndef ", 3)[3], 20)
    flat = "".join(line.strip() for line in code.splitlines())
    rewrapped = "\n".join(flat[i:i + 37] for i in range(0, len(flat), 37))
    (tmp_path / "print.txt").write_text("第 12 页\n" + rewrapped + "\n第 13 页\n", encoding="utf-8")
    assert _categories(scan([tmp_path / "print.txt"], scanner)) == {Category.REFERENCE}


@pytest.mark.parametrize("category, text", [
    (Category.HIDDEN_TEST, lambda: (pm.REPO / "autograder" / "check" / "specs" / "a2_roc.py").read_text(encoding="utf-8")),
    (Category.HIDDEN_TEST, lambda: (pm.REPO / "autograder" / "check" / "mutants.py").read_text(encoding="utf-8")),
    (Category.REFERENCE, lambda: (pm.REPO / "autograder" / "reference" / "probability.py").read_text(encoding="utf-8")),
    (Category.MISCONCEPTION, lambda: __import__("autograder.check.misconceptions", fromlist=["CATALOGUE"]).CATALOGUE[0].explanation),
    (Category.INSTRUCTOR_ONLY, lambda: pm.instructor_only_blocks((pm.REPO / "book" / "binary" / "answers.md").read_text(encoding="utf-8"))[0]),
], ids=["spec", "mutants", "reference", "misconception", "instructor-only"])
def test_each_kind_of_private_material_is_found(tmp_path, scanner, category, text):
    (tmp_path / "page.md").write_text("# 公开页面\n\n" + text() + "\n", encoding="utf-8")
    assert category in _categories(scan([tmp_path / "page.md"], scanner))


def test_every_fingerprint_is_found_at_every_offset(scanner):
    """The scan looks up only every ``step``-th position; an occurrence at any offset is still found."""
    rng = random.Random(7)
    prints = pm.private_fingerprints()
    for f in rng.sample(prints, 60) + [min(prints, key=lambda f: len(f.text))]:
        for pad in range(scanner.step + 2):
            text = "前言" * rng.randrange(5) + "x" * pad + f.text + "。后记"
            assert f.text in {found.text for found, _ in scanner.find(text)}, (pad, f.text)


def test_a_file_that_cannot_be_read_is_not_passed(tmp_path, scanner):
    site = tmp_path / "site"
    site.mkdir()
    (site / "answers.bin").write_bytes(b"\x80\x81" + _solution_body().encode("utf-16"))
    (site / "broken.whl").write_bytes(b"PK\x03\x04 not a whole archive")
    with zipfile.ZipFile(site / "nested.zip", "w") as z:
        z.writestr("inner.zip", b"PK")
    (site / "link.html").symlink_to(tmp_path)
    report = scan([site], scanner)
    assert not report.leaks and not report.clean
    reasons = {u.artefact: u.reason for u in report.unscanned}
    assert set(reasons) == {"site/answers.bin", "site/broken.whl", "site/nested.zip!/inner.zip", "site/link.html"}
    assert "UTF-8" in reasons["site/answers.bin"] and "符号链接" in reasons["site/link.html"]
    assert "zip" in reasons["site/broken.whl"] and "压缩包里又有压缩包" in reasons["site/nested.zip!/inner.zip"]


def test_a_wheel_is_read_file_by_file(tmp_path, scanner):
    """A wheel offered for download (a zip archive) is opened: private code in one of its files is found and named
    by the file, a wheel of public code passes."""
    site = tmp_path / "site"
    site.mkdir()
    with zipfile.ZipFile(site / "clean-0.1-py3-none-any.whl", "w") as z:
        z.writestr("coursebook/style.py", (pm.REPO / "book" / "coursebook" / "style.py").read_text(encoding="utf-8"))
        z.writestr("clean-0.1.dist-info/METADATA", "Metadata-Version: 2.1\nName: clean\n")
    clean = scan([site], scanner)
    assert clean.clean and clean.kinds == {"text": 2}
    reference = (pm.REPO / "autograder" / "reference" / "ranking.py").read_text(encoding="utf-8")
    with zipfile.ZipFile(site / "leaky-0.1-py3-none-any.whl", "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("coursebook/style.py", "STYLE = {}\n")
        z.writestr("autograder/reference/ranking.py", reference)
    report = scan([site], scanner)
    assert _categories(report) == {Category.REFERENCE} and not report.unscanned
    assert {leak.artefact for leak in report.leaks} == {"site/leaky-0.1-py3-none-any.whl!/autograder/reference/ranking.py"}


def test_the_command_exits_1_on_a_leak_0_when_clean_2_on_a_missing_path(tmp_path, capsys):
    clean = _page(tmp_path / "clean", "index.html", "<p>公开内容</p>")
    assert cli.main(["scan-public", str(clean.parent)]) == 0
    assert "没有发现私有材料" in capsys.readouterr().out
    leaky = _page(tmp_path / "leaky", "index.html", _highlighted(_snippet(_solution_body())))
    assert cli.main(["scan-public", str(leaky.parent)]) == 1
    out = capsys.readouterr().out
    assert "leaky/index.html：作业解答" in out and "公开材料中发现私有内容：作业解答" in out
    assert cli.main(["scan-public", str(tmp_path / "nowhere")]) == 2
    assert "找不到要检查的路径" in capsys.readouterr().err
