"""Per-student HTML feedback and the instructor summary (histograms, failure share per hidden test)."""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

from .specs import Assignment

_CSS = """body{font-family:system-ui,"Noto Sans CJK SC",sans-serif;max-width:60em;margin:2em auto;line-height:1.5}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2em .5em;text-align:left;vertical-align:top}
.fail{color:#a00}.pass{color:#070}pre{background:#f6f6f6;padding:.5em;white-space:pre-wrap;max-height:20em;overflow:auto}
.bar{background:#4a7;display:inline-block;height:1em}"""


def _e(x: Any) -> str:
    return html.escape(str(x), quote=True)


def comment_text(result: dict) -> str:
    """Short plain-text summary stored as nbgrader's autograder comment."""
    failed = [c["id"] for c in result["cases"] if not c["passed"]]
    text = f"得分 {result['score']:g}/{result['max_score']:g}。"
    if failed:
        text += f"未通过 {len(failed)} 个用例：" + "、".join(failed[:20]) + ("……" if len(failed) > 20 else "")
    return text


def feedback_html(assignment: Assignment, result: dict) -> str:
    rows = "".join(f"<tr><td>{_e(cell)}</td><td>{'可见' if cell.endswith('_visible') else '隐藏'}</td>"
                   f"<td>{v['score']:g} / {v['max_score']:g}</td></tr>" for cell, v in result["cells"].items())
    parts = [f"<!DOCTYPE html><html lang='zh-CN'><head><meta charset='utf-8'><title>{_e(assignment.title)} 反馈</title>",
             f"<style>{_CSS}</style></head><body><h1>{_e(assignment.title)}：评分反馈</h1>",
             f"<p>学生：{_e(result['student'])}　总分：<b>{result['score']:g} / {result['max_score']:g}</b></p>",
             f"<table><tr><th>测试单元</th><th>类型</th><th>得分</th></tr>{rows}</table>"]
    if result["notes"]:
        parts.append("<h2>关于提交的说明</h2><ul>" + "".join(f"<li>{_e(n)}</li>" for n in result["notes"]) + "</ul>")
    if result["cell_errors"]:
        parts.append("<h2>执行笔记本时出现的错误</h2><p>这些错误发生在运行你的代码单元时（回溯已截短）：</p>")
        for err in result["cell_errors"]:
            parts.append(f"<p>代码单元 {_e(err['cell'])}：{_e(err['type'])}</p><pre>{_e(err['traceback'])}</pre>")
    failed = [c for c in result["cases"] if not c["passed"]]
    parts.append(f"<h2>未通过的用例（{len(failed)} 个）</h2>")
    if not failed:
        parts.append("<p class='pass'>全部用例通过。</p>")
    for c in failed:
        parts.append(f"<h3 class='fail'>{_e(c['id'])}（{c['points']} 分，{'隐藏' if c['hidden'] else '可见'}测试）</h3>"
                     f"<p>{_e(c['description'])}</p><table>")
        for label, key in (("原因", "reason"), ("输入", "call"), ("参考实现的结果", "expected"), ("你的函数", "got")):
            if c.get(key):
                parts.append(f"<tr><th>{label}</th><td><code>{_e(c[key])}</code></td></tr>")
        parts.append("</table>")
        if c.get("traceback"):
            parts.append(f"<p>你的代码的回溯（已截短）：</p><pre>{_e(c['traceback'])}</pre>")
    passed = [c for c in result["cases"] if c["passed"]]
    if passed:
        parts.append("<h2>通过的用例</h2><ul>" + "".join(f"<li class='pass'>{_e(c['id'])}（{c['points']} 分）：{_e(c['description'])}</li>"
                                                        for c in passed) + "</ul>")
    parts.append("</body></html>")
    return "".join(parts)


def summary(assignments: dict[str, Assignment], results: list[dict]) -> dict:
    """Scores per assignment (with a 10-bin histogram) and, per hidden case, the share of students who failed it."""
    out: dict[str, Any] = {}
    for name, a in assignments.items():
        rs = [r for r in results if r["assignment"] == name]
        if not rs:
            continue
        max_score = a.max_score()
        hist = [0] * 10
        for r in rs:
            hist[min(9, int(10 * r["score"] / max_score))] += 1
        fails = {}
        for case in a.cases:
            if case.cell.endswith("_visible"):
                continue
            n_fail = sum(1 for r in rs for c in r["cases"] if c["id"] == case.id and not c["passed"])
            fails[case.id] = {"failed": n_fail, "students": len(rs), "share": n_fail / len(rs), "description": case.description}
        scores = sorted(r["score"] for r in rs)
        out[name] = {"title": a.title, "students": len(rs), "max_score": max_score, "mean": sum(scores) / len(scores),
                     "median": scores[len(scores) // 2], "histogram": hist, "hidden_case_failure": fails}
    return out


def summary_html(data: dict) -> str:
    parts = [f"<!DOCTYPE html><html lang='zh-CN'><head><meta charset='utf-8'><title>评分汇总</title><style>{_CSS}</style></head><body>",
             "<h1>评分汇总（教师用）</h1>"]
    for name, s in data.items():
        parts.append(f"<h2>{_e(s['title'])}（{_e(name)}）</h2><p>学生数 {s['students']}，满分 {s['max_score']}，"
                     f"平均 {s['mean']:.1f}，中位数 {s['median']:g}</p><h3>得分分布</h3><table>")
        top = max(s["histogram"]) or 1
        for i, n in enumerate(s["histogram"]):
            lo, hi = i * 10, (i + 1) * 10
            parts.append(f"<tr><td>{lo}%–{hi}%{'（含满分）' if i == 9 else ''}</td><td>{n}</td>"
                         f"<td><span class='bar' style='width:{12 * n / top:.2f}em'></span></td></tr>")
        parts.append("</table><h3>每个隐藏测试的未通过比例</h3><table><tr><th>用例</th><th>内容</th><th>未通过</th></tr>")
        for cid, f in sorted(s["hidden_case_failure"].items(), key=lambda kv: -kv[1]["share"]):
            parts.append(f"<tr><td>{_e(cid)}</td><td>{_e(f['description'])}</td><td>{f['failed']}/{f['students']}（{f['share']:.0%}）</td></tr>")
        parts.append("</table>")
    parts.append("</body></html>")
    return "".join(parts)


def write_summary(out: Path, assignments: dict[str, Assignment], results: list[dict]) -> dict:
    data = summary(assignments, results)
    (out / "summary.json").write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
    (out / "summary.html").write_text(summary_html(data), encoding="utf-8")
    return data
