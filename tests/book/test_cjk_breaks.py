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
