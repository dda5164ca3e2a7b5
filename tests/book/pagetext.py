"""What a reader sees on a built page, and the markup that must never leak into it.

:func:`page_problems` parses one HTML page of the built site (BeautifulSoup), takes the article's
visible text outside code and math, and lists every leak it finds:

* raw Markdown table rows (``| a | b |``, ``|---|``);
* unresolved roles and directives (``{ref``, ``{eq}``, ``{glue:text}``, code fences, ``:::``);
* a doubled equation/figure/table prefix (``式 式 (3)``: ``math_eqref_format`` already adds ``式``);
* ASCII quotes touching Chinese text, and curly quotes that do not pair up (``”…”``);
* a space between a number and ``%``, and a line break between two Chinese characters (a browser draws
  it as a space);
* unconverted math (``$...$``, ``\\frac`` outside a math element);
* images without a meaningful ``alt`` text (not a file name), images whose file is missing, and relative links to a missing file or a missing anchor.

Each page is parsed once per process: the anchors of a link's target page come from its parse when it was
checked, or else from a parse that its own check then takes over (:func:`_parsed`, :func:`_ids`); html.parser on
the pages' inline SVG formulas is most of the checker's time (a page was parsed two to three times).
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

from bs4 import BeautifulSoup, Tag

from coursebook.deployment import book_pages

#: Elements whose text is not prose: code, math, scripts, the permalink signs, the index's letter bar
#: (``A | B | C``: Sphinx's separators between its links, not a leaked table row; its links are still checked).
NOT_PROSE = ("script", "style", "pre", "code", "kbd", "samp", "tt", "svg", "mjx-container",
             ".math", ".headerlink", ".highlight", ".cell_input", ".MathJax", ".genindex-jumpbox")
#: Block elements: a pair of quotes never spans two of them.
BLOCKS = ("p", "li", "td", "th", "dt", "dd", "h1", "h2", "h3", "h4", "h5", "h6", "figcaption", "caption",
          "button", "blockquote", "div")

CJK = "\u3000-\u303f\u4e00-\u9fff\uff00-\uffef"
CHECKS: list[tuple[str, re.Pattern[str]]] = [
    ("Markdown 表格行", re.compile(r"\|[^|\n]*\|[^|\n]*\||\|\s*:?-{2,}:?\s*\|")),
    ("未解析的角色或指令", re.compile(r"(?<![A-Za-z\\])\{[a-zA-Z][\w:.-]*(?![\w:.-])")),
    ("代码围栏", re.compile(r"```|:::")),
    ("重复的编号前缀", re.compile(r"([式图表])\s*\1\s*[(（]?\s*\d")),
    ("ASCII 引号紧挨中文", re.compile(rf"[{CJK}]\s*[\"']|[\"']\s*[{CJK}]")),
    ("数字与 % 之间有空格", re.compile(r"\d\s+%")),
    ("未转换的数学", re.compile(r"\$[^$\n]*\$|\$\$|\\(?:frac|mathrm|operatorname|sum|alpha|tau|le|ge|hat)\b")),
]
QUOTES = {"“": "”", "‘": "’"}
CJK_BREAK = re.compile(rf"[{CJK}“”]\s*\n\s*[{CJK}“”]")


def _article(soup: BeautifulSoup) -> Tag:
    return soup.select_one("article.bd-article") or soup.select_one("main") or soup.body or soup


def _strip_non_prose(article: Tag) -> None:
    """Replace code and math by a placeholder ``X`` (so that the prose around them stays apart)."""
    for selector in NOT_PROSE:
        for el in article.select(selector):
            el.replace_with("X")


def block_texts(article: Tag) -> list[str]:
    """The text of every innermost block (a paragraph, a list item, a table cell, ...)."""
    texts = []
    for block in article.find_all(BLOCKS):
        if block.find(BLOCKS):
            # keep only the block's own text runs, not those of nested blocks
            own = [s for s in block.find_all(string=True) if s.find_parent(BLOCKS) is block]
            text = "".join(own)
        else:
            text = block.get_text()
        if text.strip():
            texts.append(text.strip())
    return texts


def quote_problems(text: str) -> list[str]:
    """Curly quotes that do not pair up inside one block (a closing one first, or one left open).

    At most one problem per kind of quote and block.
    """
    problems = []
    for opening, closing in QUOTES.items():
        depth = 0
        for i, ch in enumerate(text):
            problem = None
            if ch == opening:
                if depth and opening == "“":
                    problem = "引号嵌套或未闭合"
                depth += 1
            elif ch == closing:
                if depth:
                    depth -= 1
                elif not (closing == "’" and i > 0 and text[i - 1].isascii() and text[i - 1].isalpha()):
                    problem = "多余的右引号"  # (an apostrophe after a Latin letter is fine: Student’s)
            if problem:
                problems.append(f"{problem}：…{text[max(0, i - 15):i + 15]}…")
                break
        else:
            if depth:
                problems.append(f"未闭合的左引号 {opening}：…{text[:40]}…")
    return problems


#: The ids of every page parsed so far (by resolved path), and the parses that no page check has taken yet.
_IDS: dict[Path, frozenset[str]] = {}
_UNCHECKED: dict[Path, BeautifulSoup] = {}


def _parsed(path: Path) -> BeautifulSoup:
    """``path`` parsed: the parse that :func:`_ids` made for it, if any (handed over once), or a new one; its ids
    are kept for the links to it."""
    key = path.resolve()
    soup = _UNCHECKED.pop(key, None)
    if soup is None:
        soup = BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")
        _IDS[key] = frozenset(el["id"] for el in soup.find_all(id=True))
    return soup


def _ids(path: Path) -> frozenset[str]:
    """The ids of the page ``path`` (a link's anchors); a page not parsed yet is parsed here and the parse kept
    for its own check."""
    key = path.resolve()
    if key not in _IDS:
        _UNCHECKED[key] = _parsed(key)
    return _IDS[key]


def link_problems(page: Path, article: Tag, site: Path) -> list[str]:
    """Missing images and dead relative links (file or anchor) of one page."""
    problems = []
    for img in article.find_all("img"):
        src = img.get("src", "")
        alt = (img.get("alt") or "").strip()
        if len(alt) < 4 or re.search(r"\.(png|svg|jpe?g|gif)$|^<|^image$|^Figure|^_images/", alt, re.IGNORECASE):
            problems.append(f"图片没有有意义的替代文本：alt={alt!r} src={src[:40]!r}")
        if not src and img.find_parent(class_="animation"):
            continue  # a matplotlib animation's frame: its script sets the source
        if src.startswith("data:") or urlsplit(src).scheme:
            continue
        if not (page.parent / unquote(urlsplit(src).path)).resolve().is_file():
            problems.append(f"图片文件不存在：{src}")
    for a in article.find_all("a", href=True):
        href = a["href"]
        parts = urlsplit(href)
        if parts.scheme or href.startswith("//"):
            continue
        if parts.path.startswith("/"):  # site-absolute (the 404 page's links): from the site's root
            root = next((d for d in page.resolve().parents if (d / "_static").is_dir()), page.parent)
            target = (root / unquote(parts.path).lstrip("/")).resolve()
        else:
            target = page.resolve() if not parts.path else (page.parent / unquote(parts.path)).resolve()
        if target.is_dir():
            target = target / "index.html"
        if not target.is_file():
            problems.append(f"链接目标不存在：{href}")
        elif parts.fragment and target.suffix == ".html" and unquote(parts.fragment) not in _ids(target):
            problems.append(f"链接锚点不存在：{href}")
        elif not str(target).startswith(str(site.resolve())):
            problems.append(f"链接指向站点之外：{href}")
    return problems


def page_problems(page: Path, site: Path) -> list[str]:
    """Everything wrong with what a reader sees on ``page`` (a file of the built ``site``)."""
    article = _article(_parsed(page))  # parsed once: its ids are kept for the links to it (and its own anchors)
    problems = link_problems(page, article, site)
    _strip_non_prose(article)
    for run in article.find_all(string=True):  # a break inside one run of text, not between controls
        match = CJK_BREAK.search(run)
        if match:
            context = re.sub(r"\s+", " ", run[max(0, match.start() - 15):match.end() + 15])
            problems.append(f"中文之间的换行（显示为空格）：…{context}…")
    for raw in block_texts(article):
        text = re.sub(r"\s+", " ", raw)
        for name, pattern in CHECKS:
            match = pattern.search(text)  # one problem of each kind per block
            if match:
                start = max(0, match.start() - 20)
                problems.append(f"{name}：…{text[start:match.end() + 20]}…")
        problems.extend(quote_problems(text))
    return problems


def site_pages(site: Path) -> list[Path]:
    """Every HTML page of a built book (not the copied sources or static files, nor the guides built into it)."""
    skip = {"_static", "_sources", "_images", "_downloads"}
    return [p for p in book_pages(site) if not skip & set(p.relative_to(site).parts)]
