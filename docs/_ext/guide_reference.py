"""Sphinx extension of the guides: the reference generated from the code, and links into the code.

* ``{autograder-commands}`` (a directive without arguments): one section per command of ``autograder`` (every
  sub-command, at every depth: ``autograder lti bind``), labelled ``cmd-lti-bind`` for ``{ref}``, each with the
  command's one-line description and exactly what ``autograder ... --help`` prints in a terminal :data:`COLUMNS`
  characters wide.  The parser is the program's own (:func:`autograder.cli.build_parser`), so the page cannot drift
  from it; tests/docs/test_reference.py runs every ``--help`` and compares.
* ``{course-yml-keys}``: the table of every ``course.yml`` key from :data:`autograder.service.policy.KEYS`, the list
  the parser itself accepts.
* ``{source}`path` `` and ``{source}`path:Name.attr` ``: a file of the repository, or a class, function or
  module-level name in it.  The build fails when the file or the name does not exist, so a rule's "the one place in
  the code" cannot point at code that moved.  With a repository in the deployment setting it links to the line there;
  otherwise it is the path as code text.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import functools
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from docutils import nodes
from docutils.parsers.rst import Directive
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.errors import ExtensionError
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util import logging

ROOT = Path(__file__).resolve().parents[2]
#: The terminal width the reference's ``--help`` texts are formatted for (argparse reads ``COLUMNS``).
COLUMNS = 100
LOGGER = logging.getLogger(__name__)


@contextlib.contextmanager
def terminal_width(columns: int = COLUMNS) -> Iterator[None]:
    """Format argparse's help as a terminal of ``columns`` characters would (argparse reads ``COLUMNS``)."""
    before = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(columns)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = before


def commands(parser: argparse.ArgumentParser | None = None, path: tuple[str, ...] = (),
             summary: str = "") -> Iterator[tuple[tuple[str, ...], str, argparse.ArgumentParser]]:
    """Every command of ``autograder`` as (its words after ``autograder``, its one-line help, its parser), the
    program itself first, each group before its sub-commands, in the order the parser defines them."""
    if parser is None:
        from autograder.cli import build_parser

        parser = build_parser()
        summary = parser.description or ""
    yield path, summary, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
            for name, sub in action.choices.items():
                yield from commands(sub, (*path, name), helps.get(name, ""))


def help_text(parser: argparse.ArgumentParser) -> str:
    """What ``--help`` prints for ``parser`` in a terminal :data:`COLUMNS` wide."""
    with terminal_width():
        return parser.format_help()


def command_id(path: tuple[str, ...]) -> str:
    """The anchor of a command's section: ``cmd-lti-bind`` (``cmd-autograder`` for the program itself)."""
    return "cmd-" + ("-".join(path) if path else "autograder")


class CommandsDirective(Directive):
    """``{autograder-commands}``: a section per command with its ``--help`` (see the module's docstring)."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        env = self.state.document.settings.env
        for module in [ROOT / "autograder" / "cli.py", *sorted((ROOT / "autograder" / "commands").glob("*.py"))]:
            env.note_dependency(str(module))  # the page is read again when a command's options change
        out: list[nodes.Node] = []
        for path, summary, parser in commands():
            section = nodes.section(names=[command_id(path)])
            self.state.document.note_explicit_target(section, section)  # a label: {ref}`cmd-lti-bind`
            title = " ".join(("autograder", *path))
            section += nodes.title("", "", nodes.literal(title, title))
            if summary:
                section += nodes.paragraph(summary, summary)
            text = help_text(parser)
            block = nodes.literal_block(text, text, language="text")
            block["classes"].append("command-help")
            section += block
            out.append(section)
        return out


def shown(value: Any) -> str:
    """A default as ``course.yml`` would write it."""
    if value is None:
        return "（不设）"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class KeysDirective(Directive):
    """``{course-yml-keys}``: every key of ``course.yml`` (:data:`autograder.service.policy.KEYS`) as a definition list:
    the key, then what it takes and its default, then what it decides (a list reads on a phone, a four-column table
    does not)."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        from autograder.service.policy import ASSIGNMENT, KEYS

        self.state.document.settings.env.note_dependency(str(ROOT / "autograder" / "service" / "policy.py"))
        listing = nodes.definition_list(classes=["course-yml-keys"])
        for key in KEYS:
            item = nodes.definition_list_item(ids=["key-" + key.path.replace(ASSIGNMENT, "assignment").replace(".", "-")])
            item += nodes.term("", "", nodes.literal(key.path, key.path))
            definition = nodes.definition()
            kind = key.takes if key.low is None else f"{key.low} 到 {key.high} 之间的{key.takes}"
            takes = nodes.paragraph("", "取值：" + kind + "；默认：")
            takes += nodes.literal(shown(key.default), shown(key.default)) if key.default is not None else nodes.Text(shown(None))
            definition += takes
            definition += nodes.paragraph(key.decides, key.decides)
            item += definition
            listing += item
        return [listing]


@functools.cache
def _definitions(path: Path) -> dict[str, int]:
    """The line of every class, function and module-level name of a Python file, dotted (``Class.method``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: dict[str, int] = {}

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                found[prefix + node.name] = node.lineno
                visit(node.body, prefix + node.name + ".")
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    if isinstance(target, ast.Name):
                        found[prefix + target.id] = node.lineno

    visit(tree.body, "")
    return found


def locate(target: str) -> tuple[str, str, int]:
    """``path[:Name]`` -> (path, name, line); raises :class:`ExtensionError` naming what does not exist."""
    path, _, name = target.partition(":")
    file = ROOT / path
    if not file.exists():
        raise ExtensionError(f"{{source}}: no file {path} in the repository")
    if not name:
        return path, "", 1
    if file.suffix != ".py":
        raise ExtensionError(f"{{source}}`{target}`: names can be looked up in Python files only")
    line = _definitions(file).get(name)
    if line is None:
        raise ExtensionError(f"{{source}}`{target}`: {path} defines no {name}")
    return path, name, line


def source_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    """``{source}`path[:Name]` ``: see the module's docstring."""
    try:
        path, symbol, line = locate(text.strip())
    except ExtensionError as exc:
        message = inliner.reporter.error(str(exc), line=lineno)
        return [inliner.problematic(rawtext, rawtext, message)], [message]
    shown_text = f"{path} · {symbol}" if symbol else path
    literal = nodes.literal(shown_text, shown_text, classes=["source-link"])
    config = inliner.document.settings.env.config
    repository, branch = config.guide_repository
    if not repository:
        return [literal], []
    anchor = f"#L{line}" if symbol else ""
    return [nodes.reference("", "", literal, refuri=f"{repository}/blob/{branch}/{path}{anchor}")], []


class PagesNotYetHere(SphinxPostTransform):
    """A link to a page that another part of the project adds (``guide_expected_pages``) is its text while the page
    is missing: not a warning, and not the broken in-page link MyST would make of it.  Once the page exists, the link
    is an ordinary one."""

    default_priority = 8  # before MyST's resolver of Markdown links (9)

    def run(self, **kwargs: Any) -> None:
        env = self.env
        missing = {name for name in env.config.guide_expected_pages if name not in env.found_docs}
        if not missing:
            return
        for node in list(self.document.findall(addnodes.pending_xref)):
            target = str(node.get("reftarget", "")).split("#")[0]
            if node.get("reftype") == "myst" and Path(target).stem in missing and Path(target).suffix in ("", ".md"):
                LOGGER.info("guide: %s links to %s, which is not here yet (shown as text)", env.docname, target)
                node.replace_self(node[0].deepcopy() if len(node) else nodes.Text(target))


#: The guides' own words for the Chinese search (jieba cuts 访问码 into 访问 + 码, and the search box does not cut queries).
SEARCH_TERMS = Path(__file__).resolve().parent / "search_terms.txt"


def _search_settings(app: Sphinx, config: Any) -> None:
    """The search box's placeholder, and jieba's word list: the book's (course_site set it) and the guides' words."""
    options = dict(config.html_theme_options or {})
    options["search_bar_text"] = "搜索指南……"
    config.html_theme_options = options
    search = dict(config.html_search_options or {})
    words = Path(app.doctreedir) / "search_terms.txt"
    words.parent.mkdir(parents=True, exist_ok=True)
    book = Path(search["dict"]).read_text(encoding="utf-8") if search.get("dict") else ""
    words.write_text(book.rstrip("\n") + "\n" + SEARCH_TERMS.read_text(encoding="utf-8"), encoding="utf-8")
    search["dict"] = str(words)
    config.html_search_options = search


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_config_value("guide_repository", ("", "main"), "env")
    app.add_config_value("guide_expected_pages", [], "env")
    app.add_directive("autograder-commands", CommandsDirective)
    app.add_directive("course-yml-keys", KeysDirective)
    app.add_role("source", source_role)
    app.add_post_transform(PagesNotYetHere)
    app.connect("config-inited", _search_settings, priority=900)  # after course_site's settings for the book
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
