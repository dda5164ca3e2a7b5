"""The reader-visible prose of the book's sources, for text checks (vocabulary, overlap with the seeds).

A page's prose is its MyST Markdown without the front matter, code cells (except their captions),
other code blocks, inline code, math, comments, labels and the targets of roles such as
``{ref}`label``` or ``{glue:text}`name```.  Removed spans are blanked with spaces of the same length,
so offsets in the prose are offsets in the source file (math leaves a ``$`` where it began).  ``joined`` then removes a line break between
two Chinese characters (a paragraph wrapped over several source lines reads as one line).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"

_FRONT_MATTER = re.compile(r"\A---\n.*?\n---\n", re.S)
_DIRECTIVE_OPTION = re.compile(r"^:[a-z-]+:.*$", re.M)
_DISPLAY_MATH = re.compile(r"\$\$.*?\$\$(?:[ \t]*\([a-z0-9-]+\))?", re.S)
_INLINE_MATH = re.compile(r"(?<!\\)\$(?!\$)[^$\n]+?(?<!\\)\$")
_INLINE_CODE = re.compile(r"``[^`]+``|`[^`\n]+`")
_ROLE = re.compile(r"\{[a-z:]+\}`([^`]*)`")
_LABEL = re.compile(r"^\([A-Za-z0-9_-]+\)=[ \t]*$", re.M)
_COMMENT = re.compile(r"<!--.*?-->|^%.*$", re.S | re.M)
_LINK_TARGET = re.compile(r"\]\([^)]*\)")
_JOIN = re.compile(rf"(?<=[{CJK}\uff00-\uffef\u3000-\u303f])[ \t]*\n[ \t]*(?=[{CJK}\uff00-\uffef\u3000-\u303f])")


def _blank(text: str, pattern: re.Pattern[str], marker: str = "") -> str:
    """Replace every match by spaces (newlines kept), starting with ``marker`` (e.g. ``$`` for math)."""

    def repl(m: re.Match[str]) -> str:
        whole = re.sub(r"[^\n]", " ", m.group(0))
        return marker + whole[len(marker):]

    return pattern.sub(repl, text)


def _visible_role_text(m: re.Match[str]) -> str:
    """``{doc}`text <target>``` shows ``text``; ``{ref}`label``` and ``{glue:text}`name``` show no source text."""
    inner = m.group(1)
    visible = inner.split("<", 1)[0] if "<" in inner else ""
    blank = re.sub(r"[^\n]", " ", m.group(0))
    return visible + blank[len(visible):]


_OPEN = re.compile(r"^[ \t]*(`{3,}|~{3,}|:{3,})(.*)$")
_CAPTION = re.compile(r"^:?\s*(?:caption|alt):\s*(.*)$")


def _blank_blocks(text: str) -> str:
    """Blank code cells (keeping their captions) and code blocks; keep directives' content.

    Fences are followed line by line, so the closing fence of a directive is never taken for the
    opening of a code block.
    """
    lines = text.split("\n")
    out = []
    stack: list[tuple[str, str]] = []          # (fence, kind): kind is "directive", "cell" or "code"
    for line in lines:
        m = _OPEN.match(line)
        if m and stack and m.group(1)[0] == stack[-1][0][0] and len(m.group(1)) >= len(stack[-1][0]) and not m.group(2).strip():
            kind = stack.pop()[1]
            out.append(" " * len(line))
            continue
        if stack and stack[-1][1] in ("cell", "code"):
            caption = _CAPTION.match(line) if stack[-1][1] == "cell" else None
            out.append(caption.group(1).ljust(len(line)) if caption else " " * len(line))
            continue
        if m:
            info = m.group(2).strip()
            kind = "cell" if info.startswith("{code-cell}") else "directive" if info.startswith("{") or m.group(1)[0] == ":" else "code"
            stack.append((m.group(1), kind))
            out.append(" " * len(line))
            continue
        out.append(line)
    return "\n".join(out)


def page_prose(text: str) -> str:
    """The prose of a MyST page."""
    text = _blank(text, _FRONT_MATTER)
    text = _blank_blocks(text)
    text = _blank(text, _COMMENT)
    text = _blank(text, _DIRECTIVE_OPTION)
    text = _blank(text, _DISPLAY_MATH, "$")
    text = _blank(text, _INLINE_MATH, "$")
    text = _ROLE.sub(_visible_role_text, text)
    text = _blank(text, _INLINE_CODE)
    text = _blank(text, _LABEL)
    text = _blank(text, _LINK_TARGET)
    return text


def strip_math(text: str) -> str:
    """A data field (MyST Markdown) without its math and inline code."""
    return page_prose(text)


def joined(text: str) -> str:
    """Remove a line break (and the blanks around it) between two Chinese characters or punctuation."""
    return _JOIN.sub("", text)


@dataclass(frozen=True)
class Source:
    """One piece of reader-visible text and where it comes from."""

    where: str
    text: str


def toc_docs() -> list[str]:
    """Every page of ``_toc.yml`` in reading order, as document names (``book/binary/roc``)."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    docs = [toc["root"]]

    def walk(entries):
        for entry in entries or []:
            if "file" in entry:
                docs.append(entry["file"])
            walk(entry.get("sections"))
            walk(entry.get("chapters"))

    for part in toc.get("parts", []):
        walk(part.get("chapters"))
    return docs


def book_pages() -> list[Path]:
    """Every MyST page of the book (``book/**/*.md``)."""
    return sorted(p for p in (ROOT / "book").rglob("*.md") if "_build" not in p.parts)


def page_sources() -> list[Source]:
    return [Source(str(p.relative_to(ROOT)), page_prose(p.read_text(encoding="utf-8"))) for p in book_pages()]


def quiz_sources(path: Path = ROOT / "book" / "quizzes" / "quizzes.yml") -> list[Source]:
    """Every text of the quiz data that a reader sees (titles, intros, stems, options, explanations)."""
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    rel = str(path.relative_to(ROOT))
    out = []
    for group in raw.get("groups", []):
        for key in ("title", "intro"):
            out.append(Source(f"{rel}: 第 {group['range'][0]}-{group['range'][1]} 题的 {key}", strip_math(str(group.get(key, "")))))
    for quiz in raw.get("quizzes", []):
        n = quiz["number"]
        out.append(Source(f"{rel}: 第 {n} 题题干", strip_math(quiz["stem"])))
        for i, option in enumerate(quiz["options"]):
            letter = "ABCDEFGH"[i]
            out.append(Source(f"{rel}: 第 {n} 题选项 {letter}", strip_math(str(option["text"]))))
            out.append(Source(f"{rel}: 第 {n} 题选项 {letter} 的解析", strip_math(option["explanation"])))
    return out


def glossary_sources(path: Path = ROOT / "book" / "glossary" / "terms.yml", variants: bool = False) -> list[Source]:
    """The glossary data a reader sees: terms, English names, definitions (and, if asked, the variants)."""
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    rel = str(path.relative_to(ROOT))
    out = []
    for group in raw.get("groups", []):
        out.append(Source(f"{rel}: 分组 {group['id']}", group["title"]))
    for term in raw.get("terms", []):
        fields = ["term", "english", "definition"]
        out += [Source(f"{rel}: {term['id']} 的 {f}", strip_math(str(term[f]))) for f in fields]
        if variants:
            for v in term.get("variants", []):
                out.append(Source(f"{rel}: {term['id']} 的其他说法", v if isinstance(v, str) else v["text"]))
    return out
