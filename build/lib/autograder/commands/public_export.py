"""``autograder export-public OUT``: the student-facing course, exported from the instructor's repository and checked.

``OUT`` (a new folder) receives:

* ``site/``: the built public site (``make book``; ``_build/html``), with its ``.ipynb`` downloads and ``course.pdf``;
* ``course.pdf``: the public PDF edition (``make pdf``; ``_build/pdf/course.pdf``);
* ``notebooks/``: the released assignment notebooks (``exercises/``, checked to be what ``solutions/`` generates);
* ``repository/``: a public repository tree, :data:`PUBLIC_TREE` and nothing else: the licences, the book's
  sources with every ``{instructor-only}`` block replaced by the book's placeholder, the released notebooks and the
  demo, and a README saying what the tree is.  What stays private (``solutions/``, ``autograder/`` with the
  reference implementation, the hidden tests and the misconception catalogue, ``tests/``, ``deploy/``, ``docs/``)
  is simply not on the list.

Everything is written to a temporary folder next to ``OUT`` and scanned (:mod:`.public_scan`); only a clean export
is renamed to ``OUT``.  Exit status: 0 exported; 1 private material found (nothing exported, each find listed);
2 the export could not run (``OUT`` exists, the site or PDF is missing, ``exercises/`` is stale).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

from .private_material import REPO, scrub_instructor_only
from .public_scan import print_report, scan

#: What the public repository tree holds (repository-relative); everything else of the repository stays private.
PUBLIC_TREE = ("LICENSE", "LICENSE-TEXT", "_config.yml", "_toc.yml", "requirements.txt", "book", "exercises", "demo")
#: Names never copied from inside those folders (build output, caches, installed packages).
NOT_COPIED = ("node_modules", "__pycache__", ".ipynb_checkpoints", "_build", ".pytest_cache")

PUBLIC_README = """\
# 评价二分类模型（公开版）

本目录是课程“评价二分类模型”向学生公开的部分，由教师仓库用 `autograder export-public` 导出并检查过：
不含作业解答、隐藏测试、评分程序的参考实现与常见错误清单，书页中的教师版内容已换成占位说明。

* `book/`：课本各页的源文件（MyST Markdown 笔记本）与构建用的扩展；
* `exercises/`：编程作业的学生版笔记本；
* `demo/`：交互演示“二分类评价与超参数选择”的源代码；
* 已构建的网站与 PDF 由课程网站发布。书页与演示调用评分程序的参考实现计算数字，
  这部分代码只在教师仓库中，所以本目录用于阅读和完成作业，不能单独重新构建网站。

许可：课程文字与图表采用 CC BY 4.0（`LICENSE-TEXT`），代码采用 MIT 许可（`LICENSE`）；
第三方材料的来源与许可见课本的“版权与许可”一页（`book/licence.md`）。
"""


class CannotExport(Exception):
    """The export cannot run (the message says why, in Chinese)."""


def _ignore(directory: str, names: list[str]) -> set[str]:
    return {n for n in names if n in NOT_COPIED}


def public_tree(dest: Path, repo: Path = REPO) -> None:
    """Write the public repository tree of ``repo`` into ``dest`` (a new folder)."""
    dest.mkdir(parents=True)
    for name in PUBLIC_TREE:
        source = repo / name
        if not source.exists():
            raise CannotExport(f"仓库中没有 {name}")
        if source.is_dir():
            shutil.copytree(source, dest / name, ignore=_ignore, symlinks=False)
        else:
            shutil.copy2(source, dest / name)
    for page in (dest / "book").rglob("*.md"):
        text = page.read_text(encoding="utf-8")
        scrubbed = scrub_instructor_only(text, repo)
        if scrubbed != text:
            page.write_text(scrubbed, encoding="utf-8")
    (dest / "README.md").write_text(PUBLIC_README, encoding="utf-8")


def _check_inputs(out: Path, site: Path, pdf: Path, repo: Path) -> None:
    if out.exists():
        raise CannotExport(f"输出目录已存在：{out}（导出只写入新目录，以免混入旧文件）")
    if not (site / "index.html").is_file():
        raise CannotExport(f"找不到构建好的网站：{site}/index.html（先运行 make book）")
    if not pdf.is_file():
        raise CannotExport(f"找不到 PDF：{pdf}（先运行 make pdf）")
    from ..check import all_assignments
    from .exercises import stale_exercises

    stale = stale_exercises(repo / "solutions", repo / "exercises", sorted(all_assignments()))
    if stale:
        raise CannotExport(f"exercises/ 与 solutions/ 不一致：{', '.join(stale)}（先运行 autograder generate）")


def export_public(out: Path, site: Path, pdf: Path, repo: Path = REPO) -> int:
    """Export and scan; return the exit status (0 exported, 1 private material found)."""
    _check_inputs(out, site, pdf, repo)
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    try:
        shutil.copytree(site, staging / "site", symlinks=False)
        shutil.copy2(pdf, staging / "course.pdf")
        shutil.copytree(repo / "exercises", staging / "notebooks", ignore=_ignore)
        public_tree(staging / "repository", repo)
        report = scan([staging / name for name in ("site", "course.pdf", "notebooks", "repository")])
        print_report(report)
        if not report.clean:
            print("autograder: 没有导出任何内容。", file=sys.stderr)
            return 1
        staging.rename(out)
        print(f"已导出公开版：{out}")
        return 0
    finally:
        if staging.exists():
            shutil.rmtree(staging)


def add_parser(sub) -> None:
    """``autograder export-public``."""
    p = sub.add_parser("export-public", help="导出给学生的公开版（网站、PDF、作业笔记本、公开仓库目录），"
                                             "并检查其中没有解答、隐藏测试、常见错误清单、参考实现源码与教师版内容")
    p.add_argument("out", metavar="OUT", help="输出目录（不得已存在）")
    p.add_argument("--site", default=str(REPO / "_build" / "html"), help="构建好的公开版网站（默认 _build/html，make book）")
    p.add_argument("--pdf", default=str(REPO / "_build" / "pdf" / "course.pdf"),
                   help="公开版 PDF（默认 _build/pdf/course.pdf，make pdf）")


def main(args: argparse.Namespace) -> int:
    try:
        return export_public(Path(args.out).resolve(), Path(args.site).resolve(), Path(args.pdf).resolve())
    except CannotExport as exc:
        print(f"autograder: 无法导出：{exc}", file=sys.stderr)
        return 2
