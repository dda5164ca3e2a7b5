"""The extension book/_ext/cjk_breaks.py joins line breaks between Chinese characters, nothing else."""

from __future__ import annotations

import importlib.util

from docutils import nodes
from docutils.frontend import get_default_settings
from docutils.parsers.rst import Parser
from docutils.utils import new_document

from .quizdata import ROOT

_spec = importlib.util.spec_from_file_location("course_cjk_breaks", ROOT / "book" / "_ext" / "cjk_breaks.py")
cjk_breaks = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cjk_breaks)


def _texts(paragraph: nodes.paragraph) -> list[str]:
    return [child.astext() for child in paragraph.children]


def test_breaks_between_chinese_characters_go_and_others_stay():
    doc = new_document("page", get_default_settings(Parser))
    para = nodes.paragraph("", "", nodes.Text("面"), nodes.Text("\n"), nodes.inline("", "0.7"),  # digit after: stays
                           nodes.Text("小三角形："), nodes.Text("\n"), nodes.Text("精确率"),     # a soft break node
                           nodes.Text("甲\n乙"), nodes.Text("AUC\n的"), nodes.literal("", "代\n码"))
    doc += para
    cjk_breaks._remove_breaks(None, doc, "page")
    assert _texts(para) == ["面", "\n", "0.7", "小三角形：", "精确率", "甲乙", "AUC\n的", "代\n码"]


def test_join_cjk_lines():
    assert cjk_breaks.join_cjk_lines("对角线 \n 下方，“正例”\n“负例”") == "对角线下方，“正例”“负例”"
    assert cjk_breaks.join_cjk_lines("ROC\n曲线") == "ROC\n曲线"


def _paragraph(*children: nodes.Node) -> tuple[nodes.document, nodes.paragraph]:
    doc = new_document("page", get_default_settings(Parser))
    para = nodes.paragraph("", "", *children)
    doc += para
    return doc, para


def _shape(node: nodes.Node) -> list:
    """The paragraph as [text, ("math", tex), ("nobreak", [...])], to compare."""
    out = []
    for child in node.children:
        if isinstance(child, nodes.Text):
            out.append(str(child))
        elif isinstance(child, nodes.math):
            out.append(("math", child.astext()))
        else:
            out.append((" ".join(child["classes"]), _shape(child)))
    return out


def test_punctuation_after_a_formula_stays_on_its_line():
    doc, para = _paragraph(nodes.Text("面积为 "), nodes.math("", "A"), nodes.Text("，其中"), nodes.math("", "b"),
                           nodes.Text("是底"))
    assert cjk_breaks.keep_punctuation_with_formulas(doc) == 1
    assert _shape(para) == ["面积为 ", ("cjk-nobreak", [("math", "A"), "，"]), "其中", ("math", "b"), "是底"]


def test_bracket_before_and_several_marks_after_are_kept_whole():
    doc, para = _paragraph(nodes.Text("即（"), nodes.math("", "x"), nodes.Text("）。"), nodes.math("", "y"),
                           nodes.Text("、"), nodes.math("", "z"), nodes.Text("。"))
    assert cjk_breaks.keep_punctuation_with_formulas(doc) == 3
    assert _shape(para) == ["即", ("cjk-nobreak", ["（", ("math", "x"), "）。"]),
                            ("cjk-nobreak", [("math", "y"), "、"]), ("cjk-nobreak", [("math", "z"), "。"])]


def test_ascii_punctuation_and_code_are_left_alone():
    doc, para = _paragraph(nodes.math("", "a"), nodes.Text(", and"), nodes.literal("", "", nodes.math("", "c"),
                                                                                     nodes.Text("，")))
    assert cjk_breaks.keep_punctuation_with_formulas(doc) == 0
    assert _shape(para)[:2] == [("math", "a"), ", and"]



def test_code_names_in_tables_break_after_underscores_and_dots_only():
    row = ('<table class="table"><tr><td><code class="docutils literal notranslate"><span class="pre">'
           'ps1_threshold_metrics</span></code></td><td><code class="docutils literal notranslate">'
           '<span class="pre">threshold_metrics.ipynb</span></code> 与 <code class="docutils literal notranslate">'
           '<span class="pre">0.5</span></code></td></tr></table>')
    outside = '<p><code class="docutils literal notranslate"><span class="pre">ps1_roc_auc</span></code></p>'
    html = cjk_breaks.break_code_names_in_tables(outside + row)
    assert html.startswith(outside)  # a code name outside a table: unchanged
    assert '<span class="pre">ps1_<wbr>threshold_<wbr>metrics</span>' in html
    assert '<span class="pre">threshold_<wbr>metrics.<wbr>ipynb</span>' in html
    assert '<span class="pre">0.5</span>' in html  # a number keeps together
    assert html.replace("<wbr>", "") == outside + row  # nothing else changes
