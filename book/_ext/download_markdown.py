"""A book page's MyST Markdown as the plain Markdown of a Jupyter notebook (the page's download).

Jupyter, Colab and GitHub render CommonMark with ``$...$`` math; they know none of MyST's roles and
directives.  :func:`to_notebook_markdown` rewrites one Markdown cell of a page so that a reader of the
downloaded notebook sees what the book shows:

* roles: ``{glue:text}`` / ``{glue}`` / ``{glue:md}`` become the glued value; ``{eq}``, ``{ref}``,
  ``{numref}``, ``{doc}`` become their text (``式 (3)``, the section's title, ``图 2``) linked to the page
  of the published book; ``{cite:t}`` / ``{cite:p}`` become the citation (``Fawcett (2006)``);
* a display formula's label ``$$ ... $$ (label)`` becomes its number (``\\tag{3}``); a target line
  ``(label)=`` goes; substitutions ``{{ name }}`` become their value;
* directives: ``{exercise}`` and ``{solution}`` a bold title with their body, ``{glue:figure}`` the
  glued image (a cell attachment) with its caption, ``{glue:md}`` the glued Markdown, ``{quiz-group}`` and
  ``{quiz-variant}`` a link to the interactive quizzes on the page of the book, ``{dropdown}`` (a worked answer) a
  quote under its title, admonitions (``{note}``, ``{tip}`` ...) a
  quotation under their title.  Any other directive is an error naming it: a new one needs a rule here.

The book's own knowledge (glued values, numbers, titles, addresses) comes through :class:`PageLinks`, so
this module knows nothing of Sphinx.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Protocol

#: A role: ``{name}`content```.
ROLE = re.compile(r"\{(?P<name>[A-Za-z][\w:-]*)\}`(?P<text>[^`]*)`")
#: A target line ``(label)=``.
TARGET = re.compile(r"^\((?P<label>[^()\s]+)\)=[ \t]*$", re.MULTILINE)
#: A display formula with a label after its closing ``$$``.
LABELLED_MATH = re.compile(r"\$\$(?P<body>(?:(?!\$\$).)+?)\$\$[ \t]*\((?P<label>[^()\s]+)\)", re.DOTALL)
SUBSTITUTION = re.compile(r"\{\{\s*(?P<name>[A-Za-z_]\w*)\s*\}\}")
FENCE_OPEN = re.compile(r"^(?P<fence>`{3,}|:{3,})\{(?P<name>[\w:-]+)\}[ \t]*(?P<args>.*?)[ \t]*$")
PLAIN_FENCE = re.compile(r"^(?P<fence>`{3,}|~{3,})")
OPTION = re.compile(r"^:(?P<key>[\w-]+):[ \t]*(?P<value>.*)$")
ADMONITIONS = {"note": "注意", "tip": "提示", "hint": "提示", "important": "重要", "warning": "警告", "caution": "小心",
               "attention": "注意", "danger": "危险", "error": "错误", "seealso": "另见", "admonition": ""}
CROSS_REFERENCES = ("eq", "ref", "numref", "doc", "cite:t", "cite:p", "cite", "term")


class ConversionError(ValueError):
    """A piece of MyST that the downloaded notebook cannot show (named in the message)."""


@dataclass
class Attachments:
    """Images a Markdown cell shows (``attachment:<name>``), as nbformat stores them on the cell."""

    files: dict[str, dict[str, str]] = field(default_factory=dict)

    def add(self, name: str, mime: str, data: str) -> str:
        self.files[name] = {mime: data}
        return f"attachment:{name}"


class PageLinks(Protocol):
    """What the book knows about one page: glued values, cross-references and addresses."""

    def glued(self, key: str) -> dict[str, str]:
        """The glued output of ``key`` (``doc::key`` for another page's) as MIME type -> data."""

    def cross_reference(self, role: str, target: str) -> tuple[str, str | None]:
        """The text a cross-reference role shows and the absolute address it links to (``None``: no link)."""

    def directive_title(self, label: str) -> str:
        """The title the book shows for the exercise or solution labelled ``label`` (``练习 5（…）``)."""

    def page_url(self) -> str:
        """The page's address in the published book."""

    def substitution(self, name: str) -> str:
        """The Markdown value of ``{{ name }}``."""


def format_glued_text(text: str, spec: str) -> str:
    """``{glue:text}`` of a glued ``text/plain`` value, as myst-nb formats it."""
    from myst_nb.core.variables import format_plain_text

    return format_plain_text(text, spec)


def _role(name: str, text: str, links: PageLinks, attachments: Attachments) -> str:
    if name == "glue:text":
        key, _, spec = text.rpartition(":") if ":" in text else ("", "", "")  # myst-nb's rule: the last ":" starts the format
        key, spec = (key, spec) if key else (text, "s")
        data = links.glued(key)
        if "text/plain" not in data:
            raise ConversionError(f"{{glue:text}}`{text}`: the glued value has no text/plain form")
        return format_glued_text(data["text/plain"], spec)
    if name in ("glue", "glue:any", "glue:md"):
        data = links.glued(text)
        if name == "glue:md" or "text/markdown" in data:
            return to_notebook_markdown(data.get("text/markdown", data.get("text/plain", "")), links, attachments)
        if "image/png" in data:
            return f"![{text}]({attachments.add(f'{text}.png', 'image/png', data['image/png'])})"
        return format_glued_text(data.get("text/plain", ""), "")
    if name in CROSS_REFERENCES:
        shown, url = links.cross_reference(name, text)
        return f"[{shown}]({url})" if url else shown
    raise ConversionError(f"role {{{name}}}`{text}` has no plain-Markdown form (book/_ext/download_markdown.py)")


def _roles(text: str, links: PageLinks, attachments: Attachments) -> str:
    return ROLE.sub(lambda m: _role(m["name"], m["text"], links, attachments), text)


def _options_and_body(lines: list[str]) -> tuple[dict[str, str], str]:
    options: dict[str, str] = {}
    k = 0
    while k < len(lines) and OPTION.match(lines[k]):
        m = OPTION.match(lines[k])
        options[m["key"]] = m["value"]
        k += 1
    return options, "\n".join(lines[k:]).strip("\n")


def _quote(text: str) -> str:
    return "\n".join(f"> {line}" if line else ">" for line in text.split("\n"))


def _directive(name: str, args: str, lines: list[str], links: PageLinks, attachments: Attachments) -> str:
    options, body = _options_and_body(lines)
    inner = to_notebook_markdown(body, links, attachments) if body else ""
    if name in ("exercise", "solution"):
        label = options.get("label") or ""
        title = links.directive_title(label) if label else (args or ("练习" if name == "exercise" else "解答"))
        return f"**{title}**\n\n{inner}".rstrip()
    if name == "glue:figure":
        data = links.glued(args)
        image = next(((mime, data[mime]) for mime in ("image/png", "image/jpeg", "image/svg+xml") if mime in data), None)
        if image is None:
            raise ConversionError(f"{{glue:figure}} {args}: the glued value is not an image")
        extension = {"image/png": "png", "image/jpeg": "jpg", "image/svg+xml": "svg"}[image[0]]
        alt = options.get("alt", args).replace("]", "\\]")
        figure = f"![{alt}]({attachments.add(f'{args}.{extension}', *image)})"
        caption = links.cross_reference("numref", options["name"])[0] if options.get("name") else ""
        caption = " ".join(part for part in (caption, inner) if part)
        return f"{figure}\n\n*{caption}*" if caption else figure
    if name == "glue:md":
        return to_notebook_markdown(links.glued(args).get("text/markdown", ""), links, attachments)
    if name == "quiz-group":
        return f"**小测验（第 {args} 题）**：请在[课程网站的本页]({links.page_url()})上作答，选中选项后会显示对错和解析。"
    if name == "quiz-variant":
        return f"**再来一题**：请在[课程网站的本页]({links.page_url()})上练习，每次换一组数字，答完即见对错和解析。"
    if name == "dropdown":  # a folded worked answer: in the notebook, a quoted block under its title
        return _quote(f"**{args or '展开'}**\n\n{inner}")
    if name == "instructor-only":  # the instructor edition's download (the public one has a placeholder instead)
        return _quote(f"**教师版**\n\n{inner}")
    if name in ADMONITIONS:
        title = args if name == "admonition" else ADMONITIONS[name]
        return _quote(f"**{title}**\n\n{inner}" if title else inner)
    raise ConversionError(f"directive {{{name}}} has no plain-Markdown form (book/_ext/download_markdown.py)")


def _blocks(text: str, links: PageLinks, attachments: Attachments) -> str:
    """Directives (fenced, possibly nested) converted; plain code fences kept verbatim; the rest through roles."""
    lines = text.split("\n")
    out: list[str] = []
    prose: list[str] = []

    def flush() -> None:
        if prose:
            out.append(_prose("\n".join(prose), links, attachments))
            prose.clear()

    k = 0
    while k < len(lines):
        line = lines[k]
        opened = FENCE_OPEN.match(line)
        plain = None if opened else PLAIN_FENCE.match(line)
        if not opened and not plain:
            prose.append(line)
            k += 1
            continue
        end = _closing_line(lines, k, bool(opened))
        if end == len(lines):
            raise ConversionError(f"unclosed fence {line!r}")
        flush()
        if opened:
            out.append(_directive(opened["name"], opened["args"], lines[k + 1:end], links, attachments))
        else:
            out.append("\n".join(lines[k:end + 1]))
        k = end + 1
    flush()
    return "\n".join(out)


def _closing_line(lines: list[str], start: int, directive: bool) -> int:
    """The line that closes the fence opened on ``lines[start]`` (``len(lines)`` if none).

    Fences nest: a directive's body may hold other directives and code, each closed by its own fence (a run of
    its character at least as long as its opening one); inside code, nothing opens.
    """
    first = (FENCE_OPEN if directive else PLAIN_FENCE).match(lines[start])["fence"]
    stack = [(first[0], len(first), not directive)]  # (character, length, is code)
    for end in range(start + 1, len(lines)):
        char, length, code = stack[-1]
        if re.fullmatch(rf"{re.escape(char)}{{{length},}}[ \t]*", lines[end]):
            stack.pop()
            if not stack:
                return end
            continue
        if code:
            continue
        inner = FENCE_OPEN.match(lines[end])
        plain = None if inner else PLAIN_FENCE.match(lines[end])
        if inner or plain:
            fence = (inner or plain)["fence"]
            stack.append((fence[0], len(fence), plain is not None))
    return len(lines)


def _prose(text: str, links: PageLinks, attachments: Attachments) -> str:
    text = TARGET.sub("", text)
    text = SUBSTITUTION.sub(lambda m: links.substitution(m["name"]), text)

    def numbered(m: re.Match[str]) -> str:
        shown, _ = links.cross_reference("eq", m["label"])
        number = re.sub(r"\D*(\d[\w.-]*)\D*$", r"\1", shown)
        return f"$${m['body'].rstrip()}\n\\tag{{{number}}}\n$$"

    text = LABELLED_MATH.sub(numbered, text)
    return _roles(text, links, attachments)


def to_notebook_markdown(text: str, links: PageLinks, attachments: Attachments | None = None) -> str:
    """One Markdown cell of a page (MyST) as plain Markdown; images it shows are added to ``attachments``.

    Raises
    ------
    ConversionError
        A role or directive this module has no rule for, an unclosed fence, or a glued value of the wrong kind.
    """
    return _blocks(text, links, attachments if attachments is not None else Attachments())


def remaining_markup(text: str) -> list[str]:
    """The MyST roles, directives, targets and labels still in ``text`` (outside code fences): what a reader would see raw."""
    found: list[str] = []
    in_code = False
    for line in text.split("\n"):
        if PLAIN_FENCE.match(line) and not FENCE_OPEN.match(line):
            in_code = not in_code
            continue
        if in_code:
            continue
        found += [m.group(0) for m in ROLE.finditer(line)]
        found += [m.group(0) for m in FENCE_OPEN.finditer(line)]
        found += [m.group(0) for m in TARGET.finditer(line)]
        found += [m.group(0) for m in SUBSTITUTION.finditer(line)]
    found += [f"$$…$$ ({m['label']})" for m in LABELLED_MATH.finditer(text)]
    return found
