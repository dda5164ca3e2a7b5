"""``autograder export-public``: the public repository tree holds what a course may publish and nothing else; the
command refuses what it cannot export safely.  (The whole export of the built site and PDF, and a planted leak that
stops it: tests/book/test_public_course.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from autograder import cli
from autograder.commands import private_material as pm
from autograder.commands.public_export import PUBLIC_TREE, CannotExport, export_public, public_tree
from autograder.commands.public_scan import scan


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    dest = tmp_path_factory.mktemp("public") / "repository"
    public_tree(dest)
    return dest


def test_the_tree_holds_the_public_parts_and_nothing_private(tree):
    top = sorted(p.name for p in tree.iterdir())
    assert top == sorted([*PUBLIC_TREE, "README.md"])
    for private in ("solutions", "autograder", "tests", "deploy", "docs", "bench", ".github", "Makefile"):
        assert not (tree / private).exists(), private
    assert (tree / "exercises" / "ps2_roc_auc" / "roc_auc.ipynb").is_file()
    assert (tree / "demo" / "app.py").is_file() and (tree / "book" / "coursebook" / "licence.py").is_file()
    assert not list(tree.rglob("node_modules")) and not list(tree.rglob("__pycache__"))


def test_the_tree_s_pages_have_no_instructor_only_block(tree):
    pages = list((tree / "book").rglob("*.md"))
    assert len(pages) > 30
    assert not [p for p in pages if "{instructor-only}" in p.read_text(encoding="utf-8")]
    answers = (tree / "book" / "binary" / "answers.md").read_text(encoding="utf-8")
    assert "此处为教师版内容" in answers  # the book's placeholder where the solutions were


def test_the_tree_passes_the_scan_and_its_readme_states_the_licences(tree):
    report = scan([tree])
    assert report.clean, [x.describe() for x in report.leaks + report.unscanned]
    assert report.kinds["text"] > 50 and report.kinds["ipynb"] == len(list((pm.REPO / "exercises").rglob("*.ipynb")))
    readme = (tree / "README.md").read_text(encoding="utf-8")
    assert "CC BY 4.0" in readme and "MIT" in readme and "LICENSE-TEXT" in readme


def test_the_export_refuses_an_existing_folder_or_a_missing_build(tmp_path):
    site, pdf = tmp_path / "html", tmp_path / "course.pdf"
    (tmp_path / "out").mkdir()
    with pytest.raises(CannotExport, match="输出目录已存在"):
        export_public(tmp_path / "out", site, pdf)
    with pytest.raises(CannotExport, match="make book"):
        export_public(tmp_path / "new", site, pdf)
    site.mkdir()
    (site / "index.html").write_text("<html></html>", encoding="utf-8")
    with pytest.raises(CannotExport, match="make pdf"):
        export_public(tmp_path / "new", site, pdf)
    assert not (tmp_path / "new").exists()


def test_the_command_reports_why_it_cannot_export(tmp_path, capsys):
    code = cli.main(["export-public", str(tmp_path / "out"), "--site", str(tmp_path / "none"), "--pdf", str(tmp_path / "x.pdf")])
    assert code == 2
    assert "无法导出：找不到构建好的网站" in capsys.readouterr().err
