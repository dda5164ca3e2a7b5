"""Sphinx extension: 「再来一题」 -- variants of a question, generated at build time by the course's question
templates (:mod:`autograder.quiz`) and embedded in the page as data.

A template that varies one of the book's quizzes (``Template.quiz``) is shown right under that quiz, wherever
the ``quiz-group`` directive (``quiz.py``) puts it; no page names it.  Any other template is placed where a page
writes::

    ```{quiz-variant} ece-samples
    ```

(one argument, the template's id; no body, no options).  Either way the page gets a box with

* for readers without JavaScript, and for the PDF: the first variant as text, its answer and every wrong
  option's mistake in a ``<details>`` (``variants-static``);
* the links to the book section of every mistake the template's variants name, and of the section the
  template practises (``variants-map``, resolved by Sphinx like any ``{ref}``: a missing label fails the
  build);
* :data:`COUNT` variants as JSON (``<script type="application/json">``): ``_static/quiz_variants.js`` shows one at
  a time with its own feedback and a 「再来一题」 button (no kernel, no network), and ``coursebook/print.js``
  prints the first one with its answer in the appendix.

Every template must be shown exactly once in the book (checked when the build ends).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from autograder.quiz import TEMPLATES, Template, TemplateError, Variant, get_template, make_variant, variant_seed
from autograder.quiz.template import EMPTY_ANSWER, NOT_A_NUMBER, UNKNOWN_WRONG

logger = logging.getLogger(__name__)

#: How many variants of each template a page carries.
COUNT = 24
#: The seeds of the book's variants: a fixed "reader" of a fixed "course", attempts 0 .. COUNT - 1.
BOOK_COURSE, BOOK_READER = "book", "reader"
QUIZ_PACKAGE = Path(__file__).resolve().parents[2] / "autograder" / "quiz"
SECTION = "#section"  # the data-mistake key of the link to the section the template practises
STATIC = Path(__file__).resolve().parent.parent / "_static"
ASSETS = ("quiz_variants.css", "quiz_variants.js")


def book_variants(template: Template, count: int = COUNT) -> list[Variant]:
    """The variants of ``template`` that the book shows, in order (the first is the printed one)."""
    return [make_variant(template, variant_seed(BOOK_COURSE, BOOK_READER, template.id, i)) for i in range(count)]


def page_data(template: Template, variants: list[Variant]) -> dict[str, Any]:
    """What the page's script needs, and nothing else (no seeds, no drawn numbers)."""
    mistakes = {m.id: m.title for v in variants for m in v.mistakes}
    out = []
    for v in variants:
        item: dict[str, Any] = {"stem": list(v.stem), "solution": v.solution, "answer": v.answer_text}
        if v.form == "choice":
            item["options"] = [{"letter": o.letter, "text": o.text, "correct": o.correct, "mistake": o.mistake.id if o.mistake else None,
                                "explanation": o.explanation} for o in v.options]
        else:
            assert v.key is not None
            item["key"] = {"value": v.key.value, "tolerance": v.key.tolerance, "text": v.key.text,
                           "instruction": v.key.instruction()}
            item["diagnoses"] = [{"value": d.value, "text": d.text, "mistake": d.mistake.id, "explanation": d.explanation}
                                 for d in v.diagnoses]
        out.append(item)
    messages = {"unknown": UNKNOWN_WRONG, "not_a_number": NOT_A_NUMBER, "empty": EMPTY_ANSWER}
    return {"template": template.id, "title": template.title, "form": template.book_form, "mistakes": mistakes,
            "messages": messages, "variants": out}


# --------------------------------------------------------------------------------------- nodes
class variants_box(nodes.General, nodes.Element):
    """The whole box (``div.quiz-variants``)."""


class variants_details(nodes.General, nodes.Element):
    """``<details>`` with a ``<summary>`` (``summary`` attribute)."""


class variants_link(nodes.Inline, nodes.TextElement):
    """``<span data-mistake="ID">`` around a resolved link to a section."""


class variants_json(nodes.General, nodes.Element):
    """``<script type="application/json">`` with the variants (``data`` attribute: the JSON text)."""


def _visit_box(self, node: variants_box) -> None:
    attrs = {k: v for k, v in node.attributes.items() if k.startswith(("data-", "aria-")) or k == "role"}
    self.body.append(self.starttag(node, "div", "", CLASS="quiz-variants", **attrs))


def _depart_div(self, node: nodes.Element) -> None:
    self.body.append("</div>\n")


def _visit_details(self, node: variants_details) -> None:
    self.body.append(self.starttag(node, "details", ""))
    self.body.append(f"<summary>{self.encode(node['summary'])}</summary>\n")


def _depart_details(self, node: variants_details) -> None:
    self.body.append("</details>\n")


def _visit_link(self, node: variants_link) -> None:
    self.body.append(self.starttag(node, "span", "", CLASS="variants-link", **{"data-mistake": node["mistake"]}))


def _depart_link(self, node: variants_link) -> None:
    self.body.append("</span>")


def _visit_json(self, node: variants_json) -> None:
    # "<" never appears raw inside the script (no "</script>" can end it early); JSON reads "\u003c" as "<".
    text = node["data"].replace("<", "\\u003c")
    self.body.append(f'<script type="application/json" class="variants-data">{text}</script>\n')
    raise nodes.SkipNode


def _skip(self, node: nodes.Element) -> None:
    raise nodes.SkipNode


def _pass(self, node: nodes.Element) -> None:
    pass


# ------------------------------------------------------------------------------------- building
def _xref(docname: str, label: str) -> addnodes.pending_xref:
    ref = addnodes.pending_xref("", refdoc=docname, refdomain="std", reftype="ref", reftarget=label, refexplicit=False,
                                refwarn=True)
    ref += nodes.inline("", "", classes=["xref", "std", "std-ref"])
    return ref


def _link(docname: str, key: str, label: str) -> variants_link:
    node = variants_link(mistake=key)
    node += _xref(docname, label)
    return node


def _static(v: Variant, docname: str) -> nodes.container:
    """The first variant as text: stem, options (or what to type), and the key with every wrong answer's mistake."""
    box = nodes.container(classes=["variants-static"])
    for paragraph in v.stem:
        box += nodes.paragraph(text=paragraph)
    if v.form == "choice":
        options = nodes.bullet_list(classes=["variants-static-options"])
        for o in v.options:
            options += nodes.list_item("", nodes.paragraph(text=f"{o.letter}. {o.text}"))
        box += options
    else:
        assert v.key is not None
        box += nodes.paragraph(text=v.key.instruction())
    key = variants_details(summary="答案与解析", classes=["variants-key"])
    key += nodes.paragraph(text=f"正确答案：{v.answer_text}。{v.solution}")
    wrong = nodes.bullet_list()
    pairs = [(f"{o.letter}. {o.text}", o.mistake, o.explanation) for o in v.options if o.mistake] if v.form == "choice" \
        else [(f"答 {d.text}", d.mistake, d.explanation) for d in v.diagnoses]
    for shown, mistake, why in pairs:
        para = nodes.paragraph()
        para += nodes.Text(f"{shown}：常见错误“{mistake.title}”（见小节 ")
        para += _link(docname, mistake.id, mistake.label)
        para += nodes.Text(f"）。{why}")
        wrong += nodes.list_item("", para)
    key += wrong
    box += key
    return box


def variants_node(template: Template, docname: str) -> variants_box:
    """The box of ``template`` on page ``docname``."""
    variants = book_variants(template)
    data = page_data(template, variants)
    box = variants_box(ids=[f"variants-{template.id}"])
    box["data-template"] = template.id
    box["data-form"] = template.book_form
    box["role"] = "region"
    box["aria-labelledby"] = f"variants-{template.id}-title"
    title = nodes.paragraph(classes=["variants-title"], ids=[f"variants-{template.id}-title"])
    title += nodes.strong(text=f"再来一题：{template.title}")
    box += title
    intro = nodes.paragraph(classes=["variants-intro"])
    intro += nodes.Text(f"这里有 {len(variants)} 道同类的题，数字各不相同，由课程的题目模板在构建本书时生成；每道题都有自己的解析。"
                        "练习的小节：")
    intro += _link(docname, SECTION, template.label)
    intro += nodes.Text("。")
    box += intro
    box += _static(variants[0], docname)
    links = nodes.container(classes=["variants-map"])
    for mid in data["mistakes"]:
        mistake = next(m for v in variants for m in v.mistakes if m.id == mid)
        links += _link(docname, mid, mistake.label)
    box += links
    box += variants_json(data=json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False))
    return box


def _shown(env: BuildEnvironment) -> dict[str, str]:
    if not hasattr(env, "course_variants_shown"):
        env.course_variants_shown = {}
    return env.course_variants_shown


def _note(env: BuildEnvironment, template: Template, docname: str) -> None:
    shown = _shown(env)
    if template.id in shown and shown[template.id] != docname:
        raise TemplateError(f"题目模板 {template.id} 已经显示在 {shown[template.id]}，不能再显示在 {docname}")
    shown[template.id] = docname
    env.note_dependency(str(Path(__file__).resolve()))
    # the templates make the page's variants; the script and style are copied only by a build that writes a page
    for path in [*sorted(QUIZ_PACKAGE.rglob("*.py")), *(STATIC / name for name in ASSETS)]:
        env.note_dependency(str(path))


class QuizVariantDirective(SphinxDirective):
    """``{quiz-variant} TEMPLATE`` -- the variants of one template that no quiz of the book carries."""

    required_arguments = 1
    has_content = False
    option_spec: dict[str, Any] = {}

    def run(self) -> list[nodes.Node]:
        try:
            template = get_template(self.arguments[0].strip())
        except TemplateError as exc:
            raise self.error(f"quiz-variant: {exc}（可用：{'、'.join(t.id for t in TEMPLATES)}）") from exc
        if template.quiz is not None:
            raise self.error(f"quiz-variant: 模板 {template.id} 随第 {template.quiz} 题显示在那道题下面，页面不必再放")
        if self.env.docname != f"book/{template.page}":
            raise self.error(f"quiz-variant: 模板 {template.id} 练习的小节在 book/{template.page}.md 上，请放在那一页")
        try:
            _note(self.env, template, self.env.docname)
        except TemplateError as exc:
            raise self.error(f"quiz-variant: {exc}") from exc
        return [variants_node(template, self.env.docname)]


def _under_quizzes(app: Sphinx, doctree: nodes.document) -> None:
    """Put each quiz's template right under the quiz (``quiz.py`` renders quizzes as nodes called ``quiz``)."""
    by_quiz = {t.quiz: t for t in TEMPLATES if t.quiz is not None}
    docname = app.env.docname
    for quiz in list(doctree.findall(lambda n: isinstance(n, nodes.Element) and n.tagname == "quiz")):
        number = int(quiz.get("data-quiz", 0))
        template = by_quiz.get(number)
        if template is not None:
            _note(app.env, template, docname)
            quiz.parent.insert(quiz.parent.index(quiz) + 1, variants_node(template, docname))


def _purge(app: Sphinx, env: BuildEnvironment, docname: str) -> None:
    shown = _shown(env)
    for tid in [t for t, d in shown.items() if d == docname]:
        del shown[tid]


def _merge(app: Sphinx, env: BuildEnvironment, docnames: set[str], other: BuildEnvironment) -> None:
    _shown(env).update(_shown(other))


def _every_template_shown(app: Sphinx, env: BuildEnvironment) -> None:
    shown = _shown(env)
    for t in TEMPLATES:
        if t.id not in shown:
            where = f"第 {t.quiz} 题不在任何页面上" if t.quiz is not None else f"请在 book/{t.page}.md 上放 ```{{quiz-variant}} {t.id}```"
            logger.warning(f"题目模板 {t.id} 没有显示在书中（{where}）", type="quiz_variants")


def _add_static_path(app: Sphinx, config: Any) -> None:
    if str(STATIC) not in config.html_static_path:
        config.html_static_path.append(str(STATIC))


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the directive, the nodes, the placement under quizzes and the static assets."""
    skip = (_skip, None)
    passthrough = (_pass, _pass)
    for node_cls, html in ((variants_box, (_visit_box, _depart_div)), (variants_details, (_visit_details, _depart_details)),
                           (variants_link, (_visit_link, _depart_link)), (variants_json, (_visit_json, None))):
        other = skip if node_cls is variants_json else passthrough
        app.add_node(node_cls, html=html, latex=other, text=other, man=other, texinfo=other)
    app.add_directive("quiz-variant", QuizVariantDirective)
    app.connect("config-inited", _add_static_path)
    app.connect("doctree-read", _under_quizzes)
    app.connect("env-purge-doc", _purge)
    app.connect("env-merge-info", _merge)
    app.connect("env-check-consistency", _every_template_shown)
    app.add_css_file(ASSETS[0])
    app.add_js_file(ASSETS[1], loading_method="defer")
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True, "env_version": 1}
