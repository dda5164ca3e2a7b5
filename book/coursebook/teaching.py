"""The lecturer's plan of the course (the page 教学建议, ``book/teaching.md``): data, its checks and the tables.

* :data:`CALENDAR`: sixteen weeks, each with the book's pages lectured that week (the exam in the last one);
  the quizzes of a week are those on its pages (found in the pages' ``{quiz-group}`` directives);
* :data:`ASSIGNMENTS`: when each programming assignment is released and due, and the pages it needs;
* :func:`plan_problems`: what would make the plan wrong (a page of the book lectured twice or never, an
  assignment released before the pages it needs, ...), empty for a sound plan;
* :func:`workload`: an estimate of the hours each assignment takes a student, measured on the solutions
  (:data:`READING_CHARS_PER_MINUTE`, :data:`LINES_PER_HOUR`, :data:`OVERHEAD_HOURS` are the assumptions);
* :data:`ZHOU_CH2`: how the terms of chapter 2 of 周志华《机器学习》 map onto the course's words and sections.
  It names words the book itself does not use (the glossary lists them as variants), which is its purpose.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from .deployment import ROOT
from .pdf import toc_outline

#: Lecture hours (学时, 45 minutes each) per teaching week; the exam takes the same slot.
HOURS_PER_WEEK = 2
#: The caption of the part of ``_toc.yml`` that holds reference pages, which are read, not lectured.
APPENDIX = "附录"


@dataclass(frozen=True)
class Week:
    """One week of the calendar: its topic and the book pages lectured (document names), or the exam."""

    number: int
    topic: str
    pages: tuple[str, ...] = ()
    exam: bool = False


CALENDAR: tuple[Week, ...] = (
    Week(1, "课程导入：评价的三个层面与四个前提；混淆矩阵", ("book/binary/index", "book/binary/confusion")),
    Week(2, "固定阈值下的指标；作业的获取、提交与评分", ("book/binary/fixed_threshold", "book/assignments/index")),
    Week(3, "分类阈值与误判代价", ("book/binary/thresholds_costs",)),
    Week(4, "ROC 曲线：工作点、同分样本与逐步构造", ("book/binary/roc",)),
    Week(5, "AUC：面积、正负样本对与比较", ("book/binary/auc",)),
    Week(6, "PR 曲线与平均精确率", ("book/binary/pr",)),
    Week(7, "概率预测：对数损失、Brier 分数与校准曲线", ("book/binary/probability",)),
    Week(8, "第一部分复习：小结、综合练习与案例", ("book/binary/summary", "book/binary/exercises", "book/binary/answers",
                                         "book/case_study/index")),
    Week(9, "AP 与 AUC 的细节：并列、mAP、基线、平衡点与可分解性", ("book/ap_auc/index", "book/ap_auc/ap", "book/ap_auc/auc")),
    Week(10, "d′ 与 DET 曲线；代价曲线；只排序一次就算出 AP 与 AUC 的程序",
         ("book/ap_auc/dprime", "book/ap_auc/det", "book/ap_auc/cost_curves", "book/ap_auc/program")),
    Week(11, "校准的定义与分箱 ECE", ("book/calibration/index", "book/calibration/definition", "book/calibration/ece")),
    Week(12, "超越平均的校准与再校准", ("book/calibration/beyond_mean", "book/calibration/recalibration")),
    Week(13, "误差与过拟合；重采样方法；评估结果的偏差与方差",
         ("book/methodology/index", "book/methodology/resampling", "book/methodology/estimates")),
    Week(14, "置信区间、比较学习器的检验与偏差-方差分解",
         ("book/methodology/intervals", "book/methodology/tests", "book/methodology/bias_variance")),
    Week(15, "多分类（κ、MCC、Hand-Till AUC、多分类校准）与回归指标；总复习",
         ("book/methodology/multiclass", "book/methodology/multiclass_depth", "book/methodology/regression")),
    Week(16, "期末考试", exam=True),
)


@dataclass(frozen=True)
class AssignmentSlot:
    """When an assignment is released and due (week numbers), and the pages a student needs for it."""

    name: str
    release: int
    due: int
    needs: tuple[str, ...]


ASSIGNMENTS: tuple[AssignmentSlot, ...] = (
    AssignmentSlot("ps1_threshold_metrics", 2, 4, ("book/binary/fixed_threshold",)),
    AssignmentSlot("ps2_roc_auc", 5, 7, ("book/binary/roc", "book/binary/auc")),
    AssignmentSlot("ps3_pr_ap", 7, 9, ("book/binary/pr",)),
    AssignmentSlot("ps4_calibration", 9, 11, ("book/binary/probability",)),
    AssignmentSlot("ps5_testing", 11, 13, ("book/binary/fixed_threshold", "book/binary/auc")),
)


def lectured_pages(toc_file: Path = ROOT / "_toc.yml") -> list[str]:
    """The pages of the book that the lectures cover: every page of ``_toc.yml``'s parts but the appendix (the
    home page, which introduces the book, is not a lecture's)."""
    root, parts = toc_outline(toc_file)
    return [e["doc"] for part in parts if part["caption"] != APPENDIX for e in part["entries"] if e["doc"] != root]


_QUIZ_GROUP = re.compile(r"^`{3,}\{quiz-group\}\s+(\d+)\s*-\s*(\d+)\s*$", re.M)


def quiz_groups(pages: list[str], book_root: Path = ROOT) -> dict[str, list[tuple[int, int]]]:
    """The quiz groups (first, last) that each page shows."""
    found = {}
    for page in pages:
        text = (book_root / f"{page}.md").read_text(encoding="utf-8")
        found[page] = [(int(a), int(b)) for a, b in _QUIZ_GROUP.findall(text)]
    return found


def week_of(page: str, calendar: tuple[Week, ...] = CALENDAR) -> int | None:
    """The week in which ``page`` is lectured."""
    return next((w.number for w in calendar if page in w.pages), None)


def plan_problems(calendar: tuple[Week, ...] = CALENDAR, assignments: tuple[AssignmentSlot, ...] = ASSIGNMENTS,
                  pages: list[str] | None = None, assignment_names: list[str] | None = None) -> list[str]:
    """Everything that is wrong with the plan (in Chinese); empty when the plan is sound."""
    pages = lectured_pages() if pages is None else pages
    problems = []
    if [w.number for w in calendar] != list(range(1, len(calendar) + 1)):
        problems.append("周次必须从 1 起连续编号")
    if not calendar or not calendar[-1].exam or any(w.exam for w in calendar[:-1]):
        problems.append("考试必须在最后一周，且只有一次")
    planned = [p for w in calendar for p in w.pages]
    for page in sorted(set(pages) | set(planned)):
        n = planned.count(page)
        if page not in pages:
            problems.append(f"{page} 不是课本中要讲授的页面")
        elif n != 1:
            problems.append(f"{page} 安排了 {n} 次（应为 1 次）")
    last_lecture = max((w.number for w in calendar if not w.exam), default=0)
    for slot in assignments:
        needed = [week_of(p, calendar) for p in slot.needs]
        if None in needed:
            problems.append(f"{slot.name} 需要的页面没有排进日历")
        elif slot.release < max(needed):
            problems.append(f"{slot.name} 在第 {slot.release} 周发布，早于它需要的第 {max(needed)} 周的内容")
        if not slot.release < slot.due <= last_lecture:
            problems.append(f"{slot.name} 的截止周必须晚于发布周，且不晚于最后一次授课（第 {last_lecture} 周）")
    if assignment_names is not None and sorted(s.name for s in assignments) != sorted(assignment_names):
        problems.append("日历中的作业与评分程序的作业不一致")
    return problems


# --------------------------------------------------------------------------------------- workload

#: Characters of instructions a student reads per minute (careful reading of technical Chinese, about half
#: the speed of ordinary reading); each notebook's instructions are read twice.
READING_CHARS_PER_MINUTE = 150
READING_PASSES = 2
#: Significant lines of solution code a student writes, tests and debugs per hour: (fast, slow).
LINES_PER_HOUR = (20, 10)
#: Hours per assignment besides reading and coding: setting up, submitting, reading the feedback.
OVERHEAD_HOURS = 0.5


@dataclass(frozen=True)
class Workload:
    """What an assignment asks and the estimated hours (rounded up to half hours) for a fast and a slow student."""

    name: str
    title: str
    functions: int
    solution_lines: int
    instruction_chars: int
    hours_fast: float
    hours_slow: float


def _half_hours_up(hours: float) -> float:
    return math.ceil(hours * 2) / 2


def workload(repo: Path = ROOT) -> list[Workload]:
    """Measure each assignment's solution (significant code lines of its solution cells, the rule of the public-
    export scan) and its released instructions (characters of the student notebook's Markdown), and turn them
    into hours with the assumptions above."""
    from autograder.check.specs import all_assignments, get_assignment
    from autograder.commands.private_material import code_lines, notebook_cells, solution_bodies, squeeze

    out = []
    for name in sorted(all_assignments()):
        spec = get_assignment(name)
        solved = notebook_cells(repo / "solutions" / name / f"{spec.notebook}.ipynb")
        released = notebook_cells(repo / "exercises" / name / f"{spec.notebook}.ipynb")
        lines = sum(len(code_lines(body)) for cell in solved if cell.cell_type == "code" for body in solution_bodies(cell))
        chars = sum(len(squeeze(cell.source)) for cell in released if cell.cell_type == "markdown")
        reading = READING_PASSES * chars / READING_CHARS_PER_MINUTE / 60
        fast, slow = (reading + lines / rate + OVERHEAD_HOURS for rate in LINES_PER_HOUR)
        out.append(Workload(name, spec.title, len(spec.functions), lines, chars, _half_hours_up(fast), _half_hours_up(slow)))
    return out


# ---------------------------------------------------------------------------- 周志华《机器学习》第 2 章


@dataclass(frozen=True)
class ZhouTerm:
    """A term of chapter 2 of 周志华《机器学习》, its section there, the course's word for it (a glossary ``term``
    id, or the words themselves), the course's section (a label) and a note."""

    zhou: str
    section: str
    course: str
    label: str
    note: str = ""


ZHOU_CH2: tuple[ZhouTerm, ...] = (
    ZhouTerm("错误率", "2.1", "glossary:error-rate", "binary-accuracy"),
    ZhouTerm("精度", "2.1、2.3.1", "glossary:accuracy", "binary-accuracy", "周书的“精度”就是准确率，不是精确率"),
    ZhouTerm("训练误差（经验误差）、泛化误差", "2.1", "训练误差、glossary:generalization-error", "meth-error"),
    ZhouTerm("过拟合、欠拟合", "2.1", "glossary:overfitting、欠拟合", "meth-error"),
    ZhouTerm("留出法、分层采样", "2.2.1", "glossary:holdout、glossary:stratified", "meth-holdout"),
    ZhouTerm("交叉验证法（k 折交叉验证）", "2.2.2", "glossary:kfold", "meth-kfold"),
    ZhouTerm("留一法", "2.2.2", "glossary:loo", "meth-loo"),
    ZhouTerm("自助法、包外估计", "2.2.3", "glossary:bootstrap", "meth-bootstrap", "本课程还讲了 .632 与 .632+ 估计"),
    ZhouTerm("调参、验证集", "2.2.4", "glossary:hyperparameter、glossary:validation-set", "meth-model-selection"),
    ZhouTerm("混淆矩阵", "2.3.2", "glossary:confusion-matrix", "binary-confusion"),
    ZhouTerm("真正例、假正例、真反例、假反例", "2.3.2", "glossary:tp-fp-tn-fn", "binary-confusion-cells",
             "周书把负类的样本称为“反例”，本课程称为负样本"),
    ZhouTerm("查准率 P", "2.3.2", "glossary:precision", "binary-precision"),
    ZhouTerm("查全率 R", "2.3.2", "glossary:recall", "binary-recall"),
    ZhouTerm("P-R 曲线、平衡点（BEP）", "2.3.2", "glossary:pr-curve", "binary-pr",
             "本课程不用平衡点，用平均精确率概括整条曲线"),
    ZhouTerm("F1、Fβ", "2.3.2", "glossary:f1", "binary-f1"),
    ZhouTerm("宏查准率、宏查全率、宏 F1；微查准率……", "2.3.2", "glossary:macro-micro", "meth-mc-per-class"),
    ZhouTerm("ROC、AUC", "2.3.3", "glossary:roc、glossary:auc", "binary-roc"),
    ZhouTerm("真正例率 TPR", "2.3.3", "glossary:recall", "binary-recall", "真正例率与召回率是同一个量"),
    ZhouTerm("假正例率 FPR", "2.3.3", "glossary:fpr", "binary-fpr"),
    ZhouTerm("排序损失", "2.3.3", "AUC 的正负样本对形式", "apauc-auc-pairs",
             "AUC 等于 1 减排序损失；两边都把同分的一对计为一半"),
    ZhouTerm("非均等代价、代价矩阵", "2.3.4", "glossary:cost", "binary-thresholds-costs"),
    ZhouTerm("代价敏感错误率", "2.3.4", "期望代价", "binary-cost"),
    ZhouTerm("代价曲线", "2.3.4", "（本课程没有画代价曲线）", "binary-cost",
             "最接近的内容是按误判代价与正类比例选阈值"),
    ZhouTerm("假设检验、二项检验、t 检验", "2.4.1", "单个错误率的二项检验、t 检验", "meth-binomial-test"),
    ZhouTerm("交叉验证 t 检验（5×2 交叉验证）", "2.4.2", "成对 t 检验、5×2 交叉验证 t 检验", "meth-5x2cv"),
    ZhouTerm("McNemar 检验", "2.4.3", "McNemar 检验", "meth-mcnemar"),
    ZhouTerm("Friedman 检验、Nemenyi 后续检验", "2.4.4", "Friedman 检验、Nemenyi 后续检验", "meth-friedman"),
    ZhouTerm("偏差与方差（偏差-方差分解）", "2.5", "评估结果的偏差与方差", "meth-bias-variance",
             "周书分解的是学习算法的泛化误差；本课程讨论的是评估方法给出的那个数字的偏差与方差"),
    ZhouTerm("均方误差", "2.3", "均方误差（MSE）", "meth-regression"),
)


def glossary_terms(path: Path = ROOT / "book" / "glossary" / "terms.yml") -> dict[str, str]:
    """``id -> term`` of the course's glossary."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    return {t["id"]: t["term"] for t in data["terms"]}


def course_words(entry: ZhouTerm, terms: dict[str, str]) -> str:
    """The course's words for ``entry``: each ``glossary:ID`` replaced by the glossary's term (an unknown id fails)."""
    def term(m: re.Match[str]) -> str:
        if m.group(1) not in terms:
            raise KeyError(f"术语表中没有 {m.group(1)}")
        return terms[m.group(1)]

    return re.sub(r"glossary:([a-z0-9-]+)", term, entry.course)


# ------------------------------------------------------------------------------------------ tables


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows])


def _assignment_number(name: str) -> int:
    return int(re.match(r"ps(\d+)_", name).group(1))


def calendar_markdown(calendar: tuple[Week, ...] = CALENDAR, assignments: tuple[AssignmentSlot, ...] = ASSIGNMENTS) -> str:
    """The calendar as a MyST table: week; topic with the pages (links); the week's quizzes and assignments."""
    groups = quiz_groups([p for w in calendar for p in w.pages])
    rows = []
    for week in calendar:
        pages = "、".join(f"{{doc}}`/{p}`" for p in week.pages)
        topic = f"**{week.topic}**" if week.exam else f"{week.topic}（{pages}）"
        work = [f"即时练习第 {a}-{b} 题" for p in week.pages for a, b in groups[p]]
        work += [f"作业 {_assignment_number(s.name)} 截止" for s in assignments if s.due == week.number]
        work += [f"发布作业 {_assignment_number(s.name)}" for s in assignments if s.release == week.number]
        rows.append([str(week.number), topic, "；".join(work) or "—"])
    return _table(["周", "内容与课本", "即时练习与编程作业"], rows)


def workload_markdown(loads: list[Workload]) -> str:
    """The workload estimate as a MyST table."""
    rows = [[w.title, f"{w.functions} 个函数，解答代码 {w.solution_lines} 行，说明 {w.instruction_chars} 字",
             f"{w.hours_fast:g}–{w.hours_slow:g}"] for w in loads]
    return _table(["作业", "要做的事（按参考解答计）", "估计时间（小时）"], rows)


def zhou_markdown(entries: tuple[ZhouTerm, ...] = ZHOU_CH2, terms: dict[str, str] | None = None) -> str:
    """The mapping onto 周志华《机器学习》 chapter 2 as a MyST table (course sections as links)."""
    terms = glossary_terms() if terms is None else terms
    rows = [[f"{e.zhou}（{e.section}）", f"{course_words(e, terms)}：{{ref}}`{e.label}`", e.note or "—"] for e in entries]
    return _table(["周书的术语（小节）", "本书的用词与小节", "说明"], rows)
