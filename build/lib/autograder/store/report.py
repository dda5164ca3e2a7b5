"""Per-student HTML feedback, the gradebook comment and the instructor summary.

Pages come from the Jinja2 templates in ``templates/`` with autoescaping on, so nothing a student
controls (names, messages, tracebacks, values) is ever rendered as markup.
"""

from __future__ import annotations

import statistics
from functools import lru_cache
from pathlib import Path
from typing import Any

import jinja2

from ..model import SubmissionResult
from .class_figures import assignment_figures

TEMPLATES = Path(__file__).resolve().parent / "templates"


def _num(x: float) -> str:
    """A score as people write it: 3, 2.5 (no trailing .0)."""
    return f"{x:g}"


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    """The one Jinja2 set-up of every page (autoescape, strict undefined, the ``num`` filter): the feedback and
    summary pages here, and the service's pages (:func:`autograder.service.web.render.environment` overlays it)."""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters["num"] = _num
    return env


def comment_text(result: SubmissionResult) -> str:
    """Short plain-text summary stored as nbgrader's autograder comment."""
    failed = [c.id for c in result.listed_failures()]
    text = f"得分 {result.score:g}/{result.max_score:g}。"
    if failed:
        text += f"未通过 {len(failed)} 个用例：" + "、".join(failed[:20]) + ("……" if len(failed) > 20 else "")
    return text


FEEDBACK_POLICIES = {
    "full": "每个用例：是否通过、输入、参考结果、你的函数的结果与回溯",
    "cases": "每个用例是否通过（不显示输入、结果与回溯）",
    "score": "只显示得分",
}


@lru_cache(maxsize=1)
def default_book_url() -> str:
    """The book's address: ``site_url`` of the deployment setting (:func:`coursebook.deployment.load_settings`:
    ``COURSE_SITE_CONFIG``, which ``make serve`` sets to its own addresses, else ``deploy/local.yml``)."""
    from coursebook.deployment import load_settings

    return load_settings().site_url


def feedback_html(title: str, result: SubmissionResult, policy: str = "full", *, diagnoses: bool = True,
                  book_url: str | None = None) -> str:
    """The student's feedback page for one graded submission, cut to what ``policy`` shows.

    ``full``: every case with its input, the expected and the returned value and the traceback;
    ``cases``: which cases passed, without inputs or values (before a deadline: hidden inputs cannot be
    read back through the feedback); ``score``: the scores only.  Under ``full`` and ``cases`` a block per
    diagnosed function comes first (a known misconception: explanation, hint, book section, the failed cases
    it accounts for; it shows no input), unless ``diagnoses`` is False (a course's choice before the deadline).
    ``book_url``: the book's address for the section links (default :func:`default_book_url`).
    """
    if policy not in FEEDBACK_POLICIES:
        raise ValueError(f"unknown feedback policy {policy!r}")
    base = default_book_url() if book_url is None else book_url
    return environment().get_template("feedback.html").render(
        title=title, r=result, policy=policy, policy_text=FEEDBACK_POLICIES[policy],
        show_diagnoses=diagnoses and policy != "score", book_url=base.rstrip("/") + "/" if base else "")


def summary(titles: dict[str, str], results: list[SubmissionResult]) -> dict[str, Any]:
    """Per assignment: scores (mean, median, a 10-bin histogram), per hidden case the share of students who failed
    it, and :func:`.class_figures.assignment_figures` (students per misconception, case difficulty and
    discrimination, groups of identical wrong results worth a look).

    ``titles`` maps each assignment to report (in that order) to its title; assignments without results are left out.
    """
    out: dict[str, Any] = {}
    for name, title in titles.items():
        rs = [r for r in results if r.assignment == name]
        if not rs:
            continue
        max_score = rs[0].max_score
        hist = [0] * 10
        for r in rs:
            hist[min(9, int(10 * r.score / max_score))] += 1
        fails: dict[str, dict[str, Any]] = {}
        for case in rs[0].cases:
            if not case.hidden:
                continue
            n_fail = sum(1 for r in rs for c in r.cases if c.id == case.id and c.failed)  # a voided case is no failure
            fails[case.id] = {"failed": n_fail, "students": len(rs), "share": n_fail / len(rs), "description": case.description}
        scores = [r.score for r in rs]
        out[name] = {"title": title, "students": len(rs), "max_score": max_score, "mean": statistics.fmean(scores),
                     "median": statistics.median(scores), "histogram": hist, "hidden_case_failure": fails,
                     **assignment_figures(rs)}
    return out


def summary_html(data: dict[str, Any], not_graded: list[dict[str, Any]] | None = None,
                 feedback_links: dict[tuple[str, str], str] | None = None, book_url: str | None = None) -> str:
    """The instructor's summary page of :func:`summary`'s data, and the files of this run that were not graded
    (``{"file", "reason", "problem"}``; problems first).  ``feedback_links`` maps (student, assignment) to the
    address of the student's feedback page, relative to the summary page (students without one are not linked)."""
    rows = sorted(not_graded or [], key=lambda n: not n["problem"])
    base = default_book_url() if book_url is None else book_url
    return environment().get_template("summary.html").render(data=data, not_graded=rows,
                                                      problems=sum(1 for n in rows if n["problem"]),
                                                      links=feedback_links or {},
                                                      book_url=base.rstrip("/") + "/" if base else "")
