"""Sphinx extension: the course's quizzes, rendered from data into static, interactive HTML.

Usage in a MyST page (see CONTRIBUTING.md, "Quizzes")::

    ```{quiz-group} 5-8
    ```

The directive reads ``book/quizzes/quizzes.yml`` and renders, for every quiz in the range, its
stem, its options as buttons and one pre-rendered explanation per option.  Stems, options and
explanations are parsed as MyST Markdown, so ``$...$`` becomes real math nodes (typeset at build
time by ``static_math.py``).  ``_static/quiz.js`` (no dependencies, no network)
shows the explanation of the option the reader picks; the reader may pick again.  Options are
never shuffled.  Without JavaScript every explanation is shown, so the page still reads as a key.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml
from docutils import nodes
from docutils.statemachine import StringList
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

logger = logging.getLogger(__name__)

QUIZ_DATA = Path(__file__).resolve().parent.parent / "quizzes" / "quizzes.yml"
KIND_LABELS = {"single": "单项选择题", "truefalse": "判断题"}
LETTERS = "ABCDEFGH"
RANGE_RE = re.compile(r"^\s*(\d+)\s*(?:-\s*(\d+))?\s*$")
_CJK = "\u3000-\u303f\u4e00-\u9fff\uff00-\uffef\u2018-\u201d"
_CJK_BREAK = re.compile(rf"(?<=[{_CJK}])[ \t]*\n[ \t]*|[ \t]*\n[ \t]*(?=[{_CJK}])")


def join_lines(text: str) -> str:
    """Join the lines of a paragraph written over several YAML lines.

    A line break next to a Chinese character or full-width punctuation disappears (Chinese has no
    spaces between words); elsewhere it becomes one space.  Blank lines (paragraph breaks) stay.
    """
    paragraphs = re.split(r"\n[ \t]*\n", str(text).strip())
    return "\n\n".join(_CJK_BREAK.sub("", p).replace("\n", " ") for p in paragraphs)


class QuizDataError(ValueError):
    """The quiz data file is malformed."""


def load_quizzes(path: Path = QUIZ_DATA) -> dict[str, Any]:
    """Load and validate the quiz data.

    Returns
    -------
    dict
        ``{"groups": [...], "quizzes": {number: entry}}``.

    Raises
    ------
    QuizDataError
        On a structural error (duplicate number, no or several correct options, missing text).
    """
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    quizzes: dict[int, dict[str, Any]] = {}
    for entry in raw.get("quizzes", []):
        number = entry.get("number")
        if not isinstance(number, int) or number in quizzes:
            raise QuizDataError(f"quiz number {number!r} is missing, not an integer or duplicated")
        if entry.get("kind") not in KIND_LABELS:
            raise QuizDataError(f"quiz {number}: kind must be one of {sorted(KIND_LABELS)}")
        options = entry.get("options") or []
        if len(options) < 2 or len(options) > len(LETTERS):
            raise QuizDataError(f"quiz {number}: needs 2-{len(LETTERS)} options")
        if sum(bool(o.get("correct")) for o in options) != 1:
            raise QuizDataError(f"quiz {number}: exactly one option must be correct")
        for key in ("stem",):
            if not str(entry.get(key, "")).strip():
                raise QuizDataError(f"quiz {number}: empty {key}")
        for i, option in enumerate(options):
            for key in ("text", "explanation"):
                if not str(option.get(key, "")).strip():
                    raise QuizDataError(f"quiz {number}, option {LETTERS[i]}: empty {key}")
        if entry["kind"] == "truefalse" and [o["text"] for o in options] != ["正确", "错误"]:
            raise QuizDataError(f"quiz {number}: true/false options must be exactly 正确, 错误 in this order")
        quizzes[number] = entry
    return {"groups": raw.get("groups", []), "quizzes": quizzes}


# --------------------------------------------------------------------------------------- nodes
class quiz_group(nodes.General, nodes.Element):
    """A group of quizzes (``div.quiz-group``)."""


class quiz(nodes.General, nodes.Element):
    """One quiz (``div.quiz``)."""


class quiz_options(nodes.General, nodes.Element):
    """The option buttons of one quiz."""


class quiz_option(nodes.General, nodes.Element):
    """One option button (inline content only)."""


class quiz_feedback(nodes.General, nodes.Element):
    """The live region that holds one explanation per option."""


class quiz_explanation(nodes.General, nodes.Element):
    """The explanation of one option, with its verdict."""


class quiz_status(nodes.General, nodes.Element):
    """A visually hidden live region: quiz.js writes the verdict of each pick into it for screen readers."""


def _attrs(node: nodes.Element) -> dict[str, str]:
    return {k: v for k, v in node.attributes.items() if k.startswith("data-") or k in ("role", "aria-label", "aria-live")}


def _visit_div(tag: str, base_class: str):
    def visit(self, node: nodes.Element) -> None:
        self.body.append(self.starttag(node, tag, "", CLASS=base_class, **_attrs(node)))

    def depart(self, node: nodes.Element) -> None:
        self.body.append(f"</{tag}>\n")

    return visit, depart


def _visit_option(self, node: quiz_option) -> None:
    self.body.append(
        self.starttag(node, "button", "", CLASS="quiz-option", type="button", **{"aria-pressed": "false"}, **_attrs(node))
    )
    self.body.append(f'<span class="quiz-letter">{node["letter"]}</span><span class="quiz-option-text">')


def _depart_option(self, node: quiz_option) -> None:
    self.body.append("</span></button>\n")


def _visit_passthrough(self, node: nodes.Element) -> None:
    pass


def _depart_passthrough(self, node: nodes.Element) -> None:
    pass


# ----------------------------------------------------------------------------------- directive
class QuizGroupDirective(SphinxDirective):
    """``{quiz-group} FIRST-LAST`` -- render quizzes FIRST..LAST from the quiz data."""

    required_arguments = 1
    optional_arguments = 0
    final_argument_whitespace = False
    has_content = False
    option_spec: dict[str, Any] = {}

    def run(self) -> list[nodes.Node]:
        match = RANGE_RE.match(self.arguments[0])
        if not match:
            raise self.error(f"quiz-group: argument must be FIRST-LAST or N, got {self.arguments[0]!r}")
        first = int(match.group(1))
        last = int(match.group(2) or first)
        if last < first:
            raise self.error(f"quiz-group: empty range {first}-{last}")
        self.env.note_dependency(str(QUIZ_DATA))
        self.env.note_dependency(str(Path(__file__).resolve()))
        try:
            data = load_quizzes()
        except (OSError, QuizDataError, yaml.YAMLError) as exc:
            raise self.error(f"quiz-group: cannot load {QUIZ_DATA}: {exc}") from exc

        shown = _shown(self.env)
        group = quiz_group()
        group["data-range"] = f"{first}-{last}"
        for g in data["groups"]:
            if list(g.get("range", [])) == [first, last] and g.get("intro"):
                intro = nodes.container(classes=["quiz-intro"])
                self.state.nested_parse(StringList(join_lines(g["intro"]).splitlines(), source=str(QUIZ_DATA)), 0, intro)
                group += intro
        for number in range(first, last + 1):
            entry = data["quizzes"].get(number)
            if entry is None:
                raise self.error(f"quiz-group: quiz {number} is not in {QUIZ_DATA.name}")
            if number in shown and shown[number] != self.env.docname:
                raise self.error(f"quiz-group: quiz {number} is already shown on {shown[number]}")
            shown[number] = self.env.docname
            group += self._render(number, entry)
        return [group]

    def _parse_block(self, text: str, classes: list[str]) -> nodes.container:
        box = nodes.container(classes=classes)
        self.state.nested_parse(StringList(join_lines(text).splitlines(), source=str(QUIZ_DATA)), 0, box)
        return box

    def _render(self, number: int, entry: dict[str, Any]) -> quiz:
        label = f"{KIND_LABELS[entry['kind']]} {number}"
        node = quiz(ids=[f"quiz-{number}"])
        node["data-quiz"] = str(number)
        node["data-kind"] = entry["kind"]
        title = nodes.paragraph(classes=["quiz-title"])
        title += nodes.strong(text=label)
        node += title
        node += self._parse_block(entry["stem"], ["quiz-stem"])
        opts = quiz_options()
        opts["role"] = "group"
        opts["aria-label"] = f"{label} 的选项"
        feedback = quiz_feedback()
        status = quiz_status()
        status["role"] = "status"
        status["aria-live"] = "polite"
        for i, option in enumerate(entry["options"]):
            letter = LETTERS[i]
            correct = bool(option.get("correct"))
            button = quiz_option(letter=f"{letter}." if entry["kind"] == "single" else "")
            button["data-option"] = letter
            button["data-correct"] = "true" if correct else "false"
            inline_nodes, messages = self.state.inline_text(join_lines(option["text"]), self.lineno)
            button.extend(inline_nodes)
            button.extend(messages)
            opts += button

            explanation = quiz_explanation()
            explanation["data-option"] = letter
            explanation["data-correct"] = button["data-correct"]
            verdict = nodes.paragraph(classes=["quiz-verdict"])
            choice = f"选项 {letter}" if entry["kind"] == "single" else f"“{option['text']}”"
            # which option this explanation is about: shown when every explanation is (quiz.css), not after a pick
            verdict += nodes.inline(text=f"{choice}：", classes=["quiz-option-head"])
            verdict += nodes.strong(text=("✔ 回答正确" if correct else "✘ 回答错误"))
            verdict += nodes.inline(text=f"（你选择了{choice}）", classes=["quiz-chosen-note"])
            explanation += verdict
            explanation += self._parse_block(option["explanation"], ["quiz-explanation-body"])
            feedback += explanation
        node += opts
        node += status
        node += feedback
        return node


def _shown(env: BuildEnvironment) -> dict[int, str]:
    if not hasattr(env, "course_quizzes_shown"):
        env.course_quizzes_shown = {}
    return env.course_quizzes_shown


def _purge(app: Sphinx, env: BuildEnvironment, docname: str) -> None:
    shown = _shown(env)
    for number in [n for n, d in shown.items() if d == docname]:
        del shown[number]


def _merge(app: Sphinx, env: BuildEnvironment, docnames: set[str], other: BuildEnvironment) -> None:
    _shown(env).update(_shown(other))


def _add_static_path(app: Sphinx, config: Any) -> None:
    static = str(Path(__file__).resolve().parent.parent / "_static")
    if static not in config.html_static_path:
        config.html_static_path.append(static)


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the directive, the nodes and the static assets."""
    translators = {}
    for node_cls, tag, base in (
        (quiz_group, "div", "quiz-group"),
        (quiz, "div", "quiz"),
        (quiz_options, "div", "quiz-options"),
        (quiz_feedback, "div", "quiz-feedback"),
        (quiz_explanation, "div", "quiz-explanation"),
        (quiz_status, "p", "quiz-status"),
    ):
        translators[node_cls] = _visit_div(tag, base)
    translators[quiz_option] = (_visit_option, _depart_option)
    for node_cls, html_pair in translators.items():
        passthrough = (_visit_passthrough, _depart_passthrough)
        app.add_node(node_cls, html=html_pair, latex=passthrough, text=passthrough, man=passthrough, texinfo=passthrough)
    app.add_directive("quiz-group", QuizGroupDirective)
    app.connect("config-inited", _add_static_path)
    app.add_css_file("quiz.css")
    app.add_js_file("quiz.js", loading_method="defer")
    app.connect("env-purge-doc", _purge)
    app.connect("env-merge-info", _merge)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True, "env_version": 1}
