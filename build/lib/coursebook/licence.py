"""The course's licences and the third-party material it uses: one place for the footer, the PDF and the book.

* :data:`TEXT` (CC BY 4.0) covers the course text and figures, :data:`CODE` (MIT) the source code; why these two is
  said on the book's page 版权与许可 (:data:`PAGE`, ``book/licence.md``);
* :func:`notice` is the one-line statement of both, printed on every page's footer (``book/_ext/licence_notice.py``
  and ``templates/copyright.html``) and on the PDF's cover (:mod:`coursebook.pdf`);
* :data:`CREDITS` lists the third-party material the built course bundles or was made with, with the files of
  the built site that come from each (:func:`uncredited_files` finds a bundled file nobody is credited for).
"""

from __future__ import annotations

import fnmatch
import importlib.metadata
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from .deployment import ROOT

#: The book page that states the licences, why they were chosen and the credits (a Sphinx document name).
PAGE = "book/licence"


@dataclass(frozen=True)
class Licence:
    """One licence of the course: what it covers, its short name, full name, deed and the repository file."""

    covers: str
    short: str
    name: str
    url: str
    file: str


TEXT = Licence("课程文字与图表", "CC BY 4.0", "知识共享署名 4.0 国际许可协议（Creative Commons Attribution 4.0 International）",
               "https://creativecommons.org/licenses/by/4.0/deed.zh-hans", "LICENSE-TEXT")
CODE = Licence("代码", "MIT", "MIT 许可证（MIT License）", "https://opensource.org/license/mit", "LICENSE")


def notice(holder: str, year: str, link: Callable[[str, str], str] | None = None) -> str:
    """The licence statement in one line: plain text, or with links made by ``link(text, target)``, whose target is a
    licence's deed or :data:`PAGE` (the footer links them; the PDF's cover prints the text).  Each link's text has
    a Chinese word: the page's interface is Chinese, a bare "MIT" would read as an English interface string."""
    def a(text: str, target: str) -> str:
        return link(text, target) if link else text

    return (f"© {year} {holder}。{TEXT.covers}采用 {a(TEXT.short + ' 许可', TEXT.url)}，{CODE.covers}采用 {a(CODE.short + ' 许可', CODE.url)}；"
            f"第三方材料保留各自的许可，见{a('“版权与许可”', PAGE)}。")


@dataclass(frozen=True)
class Credit:
    """Third-party material: its name, what the course uses it for, its licence and address.

    ``distribution`` names the Python distribution whose installed version is shown; ``version_file`` and
    ``version_pattern`` read the version from a file instead (repository-relative, or inside a distribution as
    ``dist:NAME/path``); ``files`` are the patterns of the built site's files (relative to ``_static/``) that come
    from it.
    """

    name: str
    use: str
    licence: str
    url: str
    distribution: str = ""
    version_file: str = ""
    version_pattern: str = ""
    files: tuple[str, ...] = ()

    def version(self) -> str:
        """The version the course uses ("" when it has none: data, a paper, fonts of the system)."""
        if self.distribution:
            return importlib.metadata.version(self.distribution)
        if not self.version_file:
            return ""
        text = _located(self.version_file).read_text(encoding="utf-8", errors="replace")
        match = re.search(self.version_pattern, text)
        if match is None:
            raise ValueError(f"{self.version_file} 中找不到 {self.name} 的版本号")
        return match.group(1)


def _located(name: str) -> Path:
    if name.startswith("dist:"):
        dist, _, inside = name[len("dist:"):].partition("/")
        files = importlib.metadata.distribution(dist).files or []
        matches = [f for f in files if str(f).endswith(inside)]
        if not matches:
            raise FileNotFoundError(f"{dist} 中没有 {inside}")
        return Path(matches[0].locate())
    return ROOT / name


#: Software whose files the built site serves to every reader.
BUNDLED = (
    Credit("Sphinx", "把页面生成网站；搜索、页面脚本与基本样式", "BSD-2-Clause", "https://www.sphinx-doc.org/",
           distribution="sphinx",
           files=("basic.css", "doctools.js", "searchtools.js", "language_data.js", "sphinx_highlight.js",
                  "documentation_options.js", "translations.js", "file.png", "minus.png", "plus.png")),
    Credit("Jupyter Book", "把笔记本页面组织成一本书", "BSD-3-Clause", "https://jupyterbook.org/", distribution="jupyter-book"),
    Credit("sphinx-book-theme", "网站的版式", "BSD-3-Clause", "https://sphinx-book-theme.readthedocs.io/",
           distribution="sphinx-book-theme",
           files=("scripts/sphinx-book-theme.js*", "styles/sphinx-book-theme.css*", "styles/sphinx-book-theme.site.css",
                  "sbt-webpack-macros.html", "images/logo_*")),
    Credit("PyData Sphinx Theme", "网站版式的基础、界面文字的各语言翻译", "BSD-3-Clause", "https://pydata-sphinx-theme.readthedocs.io/",
           distribution="pydata-sphinx-theme",
           files=("scripts/pydata-sphinx-theme*", "styles/pydata-sphinx-theme*", "styles/theme.css", "webpack-macros.html",
                  "locales/*")),
    Credit("Bootstrap", "主题的布局与交互（随 PyData Sphinx Theme 分发）", "MIT", "https://getbootstrap.com/",
           version_file="dist:pydata-sphinx-theme/static/scripts/bootstrap.js.LICENSE.txt",
           version_pattern=r"Bootstrap v(\d+\.\d+\.\d+)", files=("scripts/bootstrap.js*",)),
    Credit("Font Awesome Free", "按钮图标（随 PyData Sphinx Theme 分发）", "图标 CC BY 4.0，字体 SIL OFL 1.1，代码 MIT",
           "https://fontawesome.com/license/free",
           version_file="dist:pydata-sphinx-theme/static/scripts/fontawesome.js.LICENSE.txt",
           version_pattern=r"Font Awesome Free (\d+\.\d+\.\d+)", files=("scripts/fontawesome.js*", "vendor/fontawesome/*")),
    Credit("MyST-NB", "执行笔记本页面并显示结果", "BSD-3-Clause", "https://myst-nb.readthedocs.io/", distribution="myst-nb",
           files=("mystnb.*.css",)),
    Credit("sphinx-copybutton", "代码块的复制按钮", "MIT", "https://sphinx-copybutton.readthedocs.io/",
           distribution="sphinx-copybutton", files=("copybutton*", "copy-button.svg", "check-solid.svg")),
    Credit("clipboard.js", "复制到剪贴板（随 sphinx-copybutton 分发）", "MIT", "https://clipboardjs.com/",
           version_file="dist:sphinx-copybutton/_static/clipboard.min.js", version_pattern=r"clipboard\.js v(\d+\.\d+\.\d+)",
           files=("clipboard.min.js",)),
    Credit("sphinx-togglebutton", "折叠与展开代码", "MIT", "https://sphinx-togglebutton.readthedocs.io/",
           distribution="sphinx-togglebutton", files=("togglebutton.*",)),
    Credit("sphinx-design", "标签页等版面元素", "MIT", "https://sphinx-design.readthedocs.io/", distribution="sphinx-design",
           files=("sphinx-design.min*.css", "design-tabs.js")),
    Credit("sphinx-exercise", "综合练习与解答的版式", "MIT", "https://ebp-sphinx-exercise.readthedocs.io/",
           distribution="sphinx-exercise", files=("exercise.css",)),
    Credit("sphinx-thebe", "Jupyter Book 默认加载的文件（本课程不启用在线内核）", "MIT",
           "https://sphinx-thebe.readthedocs.io/", distribution="sphinx-thebe",
           files=("sphinx-thebe.*", "play-solid.svg")),
    Credit("Pygments", "代码的语法高亮", "BSD-2-Clause", "https://pygments.org/", distribution="pygments",
           files=("pygments.css",)),
    Credit("MathJax", "构建时把公式排成 SVG（字形来自 MathJax 的 TeX 字体）及其样式", "Apache-2.0", "https://www.mathjax.org/",
           version_file="book/_ext/mathjax_node/package.json", version_pattern=r'"mathjax-full":\s*"([^"]+)"',
           files=("math/*",)),
)

#: Material the course was made with: fonts, software that computed its numbers and figures, data and sources.
MADE_WITH = (
    Credit("Noto Sans CJK / Noto Serif CJK（思源黑体、思源宋体）", "图中的中文字形；PDF 版中的中文字体", "SIL OFL 1.1",
           "https://github.com/notofonts/noto-cjk"),
    Credit("mplfonts", "把 Noto Sans CJK 字体交给 Matplotlib 画图", "MIT", "https://github.com/Clarmy/mplfonts",
           distribution="mplfonts"),
    Credit("DejaVu 字体", "PDF 版中的西文与代码字体", "DejaVu 字体许可（基于 Bitstream Vera 许可）",
           "https://dejavu-fonts.github.io/License.html"),
    Credit("NumPy", "参考实现与全部计算", "BSD-3-Clause", "https://numpy.org/", distribution="numpy"),
    Credit("Matplotlib", "全部插图与动画", "Matplotlib License（基于 PSF 许可）", "https://matplotlib.org/",
           distribution="matplotlib"),
    Credit("scikit-learn", "对照计算、示例中的模型与数据集", "BSD-3-Clause", "https://scikit-learn.org/",
           distribution="scikit-learn"),
    Credit("SciPy", "统计分布与检验", "BSD-3-Clause", "https://scipy.org/", distribution="scipy"),
    Credit("jieba", "构建中文搜索索引时的分词", "MIT", "https://github.com/fxsjy/jieba", distribution="jieba"),
    Credit("nbgrader", "编程作业的生成与评分", "BSD-3-Clause", "https://nbgrader.readthedocs.io/", distribution="nbgrader"),
    Credit("Shiny for Python", "交互演示", "MIT", "https://shiny.posit.co/py/", distribution="shiny"),
    Credit("威斯康星乳腺癌（诊断）数据集", "评价方法一章的示例（随 scikit-learn 分发）", "CC BY 4.0",
           "https://archive.ics.uci.edu/dataset/17/breast+cancer+wisconsin+diagnostic"),
    Credit("手写数字数据集（Optical Recognition of Handwritten Digits）", "多分类一节的示例（随 scikit-learn 分发）", "CC BY 4.0",
           "https://archive.ics.uci.edu/dataset/80/optical+recognition+of+handwritten+digits"),
    Credit("糖尿病数据集（Efron 等，2004）", "回归指标一节的示例（随 scikit-learn 分发）", "随 scikit-learn 分发（BSD-3-Clause）",
           "https://www4.stat.ncsu.edu/~boos/var.select/diabetes.html"),
)

CREDITS = BUNDLED + MADE_WITH


def credited(path: str, among: Iterable[Credit] = BUNDLED) -> Credit | None:
    """The credit (of ``among``) a file of the built site's ``_static/`` (relative path) comes from, if any."""
    for credit in among:
        if any(fnmatch.fnmatch(path, pattern) for pattern in credit.files):
            return credit
    return None


def own_static_files() -> set[str]:
    """The course's own files in ``_static/``: those of ``book/_static/`` and those the course's extensions write."""
    own = {p.name for p in (ROOT / "book" / "_static").iterdir() if p.is_file()}
    return own | {"course-site.css", "course-site.sources", "course-speed.css"}


def uncredited_files(static: Path) -> list[str]:
    """Files of a built site's ``_static/`` that are neither the course's own nor credited in :data:`BUNDLED`."""
    own = own_static_files()
    return sorted(rel for p in static.rglob("*") if p.is_file()
                  if (rel := str(p.relative_to(static))) not in own and credited(rel) is None)

