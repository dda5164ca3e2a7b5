"""The question bank an instructor browses: every template, sample variants with their keys, and the map from
mistakes to the templates and options that name them, as one self-contained HTML page (``autograder quiz-bank``).
"""

from __future__ import annotations

import html
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from .mistakes import ALL_MISTAKES
from .model import Mistake, Variant
from .seeds import variant_seed
from .template import Template
from .templates import TEMPLATES, make_variant

__all__ = ["BankEntry", "bank_entries", "bank_html", "write_bank"]

#: How many seeds the statistics of a template (mistake shares, redraws) are measured on.
STATISTICS_SEEDS = 200


@dataclass(frozen=True)
class BankEntry:
    """One template in the bank: sample variants (book form and, if different, the other form) and statistics."""

    template: Template
    samples: tuple[Variant, ...]
    mistake_shares: dict[str, float]  # mistake id -> share of variants naming it
    redraws: float  # mean number of ill-posed draws per variant


def bank_entries(course: str = "bank", samples: int = 4, statistics: int = STATISTICS_SEEDS) -> list[BankEntry]:
    """Every template with ``samples`` variants of each form it has, for students named ``样例 1`` ... of ``course``,
    and its statistics over the first attempts of ``statistics`` other students."""
    out = []
    for t in TEMPLATES:
        shown = tuple(make_variant(t, variant_seed(course, f"样例 {i + 1}", t.id, 0), form)
                      for form in t.forms for i in range(samples))
        stats = [make_variant(t, variant_seed(course, f"统计 {i}", t.id, 0)) for i in range(statistics)]
        counts = Counter(m.id for v in stats for m in set(v.mistakes))
        out.append(BankEntry(t, shown, {k: n / len(stats) for k, n in counts.most_common()},
                             sum(v.redraws for v in stats) / len(stats)))
    return out


#: The page's own style (no external file).
STYLE = """\
body { font-family: "Noto Sans CJK SC", sans-serif; max-width: 60rem; margin: 0 auto; padding: 1rem; line-height: 1.6; color: #1a1a1a; }
table { border-collapse: collapse; width: 100%; font-size: 0.9rem; }
td, th { border: 1px solid #ccc; padding: 0.25rem 0.5rem; text-align: left; vertical-align: top; }
.table { overflow-x: auto; }
section { border-top: 2px solid #1f4e79; margin-top: 2rem; }
.variant { border: 1px solid #ccc; border-radius: 0.4rem; padding: 0.5rem 0.8rem; margin: 0.8rem 0; background: #f6f8fa; }
.variant p { margin: 0.3rem 0; }
.options { list-style: none; padding-left: 0.5rem; }
.meta { color: #555; font-size: 0.85rem; }
.key, li.key strong { color: #116329; }
li.wrong strong { color: #a40e26; }
small { color: #333; }
.options li { margin: 0.3rem 0; }
"""


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _link(book_url: str, page: str, label: str, text: str) -> str:
    return f'<a href="{_e(book_url + page + ".html#" + label)}">{_e(text)}</a>'


def _mistake(book_url: str, m: Mistake) -> str:
    return f"“{_e(m.title)}”（{_link(book_url, m.page, m.label, m.section)}）"


def _variant(book_url: str, v: Variant) -> str:
    stem = "".join(f"<p>{_e(p)}</p>" for p in v.stem)
    if v.form == "choice":
        rows = "".join(
            f'<li class="{"key" if o.correct else "wrong"}"><strong>{_e(o.letter)}. {_e(o.text)}</strong> '
            + ("✔ 正确答案" if o.correct else "✘ " + _mistake(book_url, o.mistake)) + f"<br><small>{_e(o.explanation)}</small></li>"
            for o in v.options)
        body = f"<ol class='options'>{rows}</ol>"
    else:
        assert v.key is not None
        rows = "".join(f"<li class='wrong'><strong>答 {_e(d.text)}</strong> ✘ {_mistake(book_url, d.mistake)}"
                       f"<br><small>{_e(d.explanation)}</small></li>" for d in v.diagnoses)
        body = (f"<p class='ask'>{_e(v.key.instruction())}</p><p class='key'>正确答案：{_e(v.key.text)}</p>"
                f"<ul class='options'>{rows}</ul>")
    return (f"<div class='variant'><p class='meta'>{'选择题' if v.form == 'choice' else '填写数值'} · seed {v.seed}"
            f"{f' · 重抽 {v.redraws} 次' if v.redraws else ''}</p>{stem}{body}<p class='solution'>解答：{_e(v.solution)}</p></div>")


def bank_html(entries: list[BankEntry], book_url: str = "", title: str = "题库：题目模板与常见错误",
              statistics: int = STATISTICS_SEEDS) -> str:
    """The bank as one HTML page (no scripts, no external files); section links start with ``book_url``."""
    toc = "".join(
        f"<tr><td><a href='#t-{_e(e.template.id)}'><code>{_e(e.template.id)}</code></a></td><td>{_e(e.template.title)}</td>"
        f"<td>{_link(book_url, 'book/' + e.template.page, e.template.label, e.template.page)}</td>"
        f"<td>{f'第 {e.template.quiz} 题下' if e.template.quiz else '该小节所在的页面'}</td>"
        f"<td>{'、'.join({'choice': '选择', 'numeric': '数值'}[f] for f in e.template.forms)}</td>"
        f"<td>{len(e.mistake_shares)}</td></tr>" for e in entries)
    by_mistake: dict[str, list[tuple[str, float]]] = {}
    for e in entries:
        for mid, share in e.mistake_shares.items():
            by_mistake.setdefault(mid, []).append((e.template.id, share))
    mistake_rows = "".join(
        f"<tr><td>{_mistake(book_url, ALL_MISTAKES[mid])}</td><td><code>{_e(mid)}</code></td><td>"
        + "、".join(f"<a href='#t-{_e(t)}'>{_e(t)}</a>（{share:.0%}）" for t, share in uses) + "</td></tr>"
        for mid, uses in sorted(by_mistake.items(), key=lambda item: (ALL_MISTAKES[item[0]].page, item[0])))
    sections = []
    for e in entries:
        t = e.template
        shares = "".join(f"<li>{_mistake(book_url, ALL_MISTAKES[mid])}：{share:.0%} 的变式</li>"
                         for mid, share in e.mistake_shares.items())
        where = f"随第 {t.quiz} 题显示" if t.quiz else "由页面上的 quiz-variant 指令显示"
        form = "选择题" if t.book_form == "choice" else "填写数值"
        sections.append(
            f"<section id='t-{_e(t.id)}'><h2>{_e(t.title)} <code>{_e(t.id)}</code></h2>"
            f"<p>练习的小节：{_link(book_url, 'book/' + t.page, t.label, t.page + '#' + t.label)}；{where}；书中用{form}。"
            f"每个变式平均重抽 {e.redraws:.2f} 次（在 {statistics} 个学生上统计）。"
            f"模板指纹 <code>{t.fingerprint[:12]}</code>。</p>"
            f"<h3>常见错误（错误选项出现的比例）</h3><ul>{shares}</ul>"
            f"<h3>样例变式</h3>{''.join(_variant(book_url, v) for v in e.samples)}</section>")
    return f"""<!DOCTYPE html>
<html lang="zh-CN"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{_e(title)}</title>
<style>
{STYLE}</style></head><body>
<h1>{_e(title)}</h1>
<p>共 {len(entries)} 个题目模板。每个模板由种子（课程、学生、题目、第几次作答）抽出自己的数字，用参考实现 <code>autograder.reference</code>
算出答案，错误选项来自有名字的常见错误，并链接到课本中讲清这一点的小节。同一个种子在任何机器上都得到同一道题；一次抽取不良定时
（分母为 0、两个选项相同或相差在容差以内），按同一种子的下一次抽取重抽。下面每个模板列出样例变式（学生“样例 1”……的第一次作答）。</p>
<h2>模板一览</h2><div class="table"><table><thead><tr><th>模板</th><th>题目</th><th>练习的小节</th><th>在书中显示于</th>
<th>作答方式</th><th>常见错误数</th></tr></thead><tbody>{toc}</tbody></table></div>
<h2>常见错误与模板</h2><p>每个常见错误由哪些模板的错误选项代表，括号中是它在该模板的变式中出现的比例。</p>
<div class="table"><table><thead><tr><th>常见错误（课本小节）</th><th>id</th><th>模板</th></tr></thead>
<tbody>{mistake_rows}</tbody></table></div>
{''.join(sections)}
</body></html>
"""


def write_bank(out: Path, course: str = "bank", samples: int = 4, book_url: str = "",
               statistics: int = STATISTICS_SEEDS) -> Path:
    """Write the bank to ``out/index.html`` (the folder is created) and return that path."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / "index.html"
    path.write_text(bank_html(bank_entries(course, samples, statistics), book_url, statistics=statistics), encoding="utf-8")
    return path
