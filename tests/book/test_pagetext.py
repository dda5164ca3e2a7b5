"""The checker of rendered text (tests/book/pagetext.py) finds each kind of leak it is meant to find,
and passes clean prose.  No build needed: small pages written to a temporary site."""

from __future__ import annotations

import pytest

from .pagetext import page_problems, quote_problems

CLEAN = """<p>在 “固定阈值” 下，式 <a href="#equation-x">(1)</a> 给出 12.5% 的召回率；
<span class="math notranslate">\\(\\frac{a}{b}\\)</span> 与 <code>{ref}`x`</code> 是代码和数学，不算。</p>
<table><tr><td>正例</td><td>0.8</td></tr></table><img src="a.png" alt="ROC 曲线：从左下角升到右上角">
<div class="math">$$ |x| = |y| $$</div><pre>| a | b |</pre><p id="equation-x">Student’s t</p>"""

LEAKS = {
    "Markdown 表格行": "<p>| 正例 | 得分 | |---|---| | 1 | 0.9 |</p>",
    "未解析的角色或指令": "<p>这组分数也是 {ref <code>meth-tests</code> 中成对检验的原料。</p>",
    "代码围栏": "<p>```{note} 注意</p>",
    "重复的编号前缀": '<p>直接比较式 <a href="#equation-x">式 (3)</a> 可知</p>',
    "ASCII 引号紧挨中文": '<p>搜索"召回率"即可</p>',
    "数字与 % 之间有空格": "<p>正例占 12.5 % 。</p>",
    "未转换的数学": "<p>AUC 为 $\\hat A$。</p>",
    "中文之间的换行": "<p>所有的点都落在对角线附近，就是其中\n之一。</p>",
    "多余的右引号": "<p>分清”固定阈值”的表现</p>",
    "图片文件不存在": '<img src="missing.png" alt="一张缺失的图">',
    "图片没有有意义的替代文本": '<img src="a.png" alt="../_images/a.png">',
    "链接目标不存在": '<p><a href="nowhere.html">这里</a></p>',
    "链接锚点不存在": '<p><a href="#no-such-anchor">这里</a></p>',
}


def _site(tmp_path, body: str):
    (tmp_path / "a.png").write_bytes(b"\x89PNG")
    page = tmp_path / "page.html"
    page.write_text(f'<html><body><main><article class="bd-article">{body}</article></main></body></html>',
                    encoding="utf-8")
    return page


def test_clean_prose_passes(tmp_path):
    assert page_problems(_site(tmp_path, CLEAN), tmp_path) == []


@pytest.mark.parametrize("kind", sorted(LEAKS))
def test_each_leak_is_found(tmp_path, kind):
    problems = page_problems(_site(tmp_path, CLEAN + LEAKS[kind]), tmp_path)
    assert any(p.startswith(kind) for p in problems), problems


def test_quote_pairs():
    assert quote_problems("“甲”与“乙”，‘丙’") == []
    assert quote_problems("“甲") and quote_problems("甲”") and quote_problems("“甲“乙”")
