"""Shiny for Python app: 二分类评价与超参数选择.

Tab 1 (指标随阈值变化) shows how the confusion matrix, fixed-threshold
metrics, ROC, PR, Brier score and the reliability diagram respond to the
positive share, the score distributions, the threshold and the binning.
Tab 2 (训练集、验证集与测试集) walks through the honest workflow.

Machine-checkable output (used by ``tests/demo``): elements with the ids
``cm-tp``, ``cm-fp``, ``cm-tn``, ``cm-fn``, ``n-total``, ``metric-accuracy``,
``metric-precision``, ``metric-recall``, ``metric-fpr``, ``metric-specificity``,
``metric-f1``, ``auc-value``, ``ap-value``, ``pi-value``, ``brier-value``,
``brier-baseline``, ``ece-value``, ``deploy-precision`` and the table
``calib-table`` hold the numbers formatted as documented in :mod:`demo.views`.
``#t1-state`` carries ``data-pi``, ``data-threshold`` (two decimals) and
``data-bins`` of the inputs the numbers were computed from; ``#t1-error`` holds
an input error message.  Tab 2 uses the ids ``t2-*`` likewise.
"""

from __future__ import annotations

import math
from pathlib import Path

from htmltools import Tag, TagList
from shiny import App, reactive, render, ui

from coursebook import setup_plotting
from coursebook.deployment import load_settings

from .data import DISTRIBUTIONS, DemoInputError, make_workflow_data
from .plots import message_figure, pr_figure, reliability_figure, roc_figure, score_figure
from .views import UNDEFINED, Tab1Result, compute_tab1, fmt, fmt_threshold, share
from .workflow import CANDIDATES, RULES, Rule, fit_candidates, run_workflow

setup_plotting()

#: The course's icon (the book's favicon), served at ``favicon.svg`` next to the app's page.
FAVICON = Path(__file__).resolve().parents[1] / "book" / "_static" / "favicon.svg"

STRATEGIES = {"uniform": "等宽分箱", "quantile": "等频分箱（分位数）"}

#: The book, from the one deployment setting (``COURSE_SITE_CONFIG``; ``deploy/local.yml`` by default).
BOOK_URL = load_settings().site_url

#: On a phone the controls sit above the outputs and stay in view (a sticky bar of at most 40 % of the screen,
#: scrolling on its own), so moving τ shows its effect without scrolling the page; the tabs stay visible.
SIDEBAR_OPEN = {"desktop": "always", "mobile": "always-above"}
MOBILE_CONTROLS_HEIGHT = "40vh"
SIDEBAR_TOGGLE_NAME = "展开或收起控件栏"

CSS = """
body { font-size: 15px; }
.cm-table { border-collapse: collapse; margin: 0 auto; }
.cm-table td, .cm-table th { border: 1px solid #ccc; padding: 4px 8px; text-align: center; }
.cm-table .cell { font-size: 1.25em; font-weight: 600; min-width: 3.6em; }
.cm-table .cm-row { white-space: nowrap; }
.cm-tp { background: #30a14e22; } .cm-tn { background: #1f77b422; }
.cm-fp { background: #d6272822; } .cm-fn { background: #9467bd22; }
.metric-table td { padding: 2px 6px; } .metric-table td.v { text-align: right; font-family: monospace; font-size: 1.1em; }
.undefined { color: #b35900; font-style: italic; }
.demo-note { color: #555; font-size: 0.9em; }
.card-header { font-weight: 600; }
.best-row { background: #fff3cd; }
.book-link { white-space: nowrap; }
@media (max-width: 575.98px) {
  .bslib-sidebar-layout > .sidebar { position: sticky; top: 0; z-index: 1020; background: #f8f9fa;
    box-shadow: 0 2px 6px #0002; }
  .bslib-sidebar-layout > .sidebar .shiny-input-container { margin-bottom: .25rem; }
  .navbar > .container-fluid { flex-wrap: wrap; row-gap: 0; }
  .navbar-brand { font-size: 1rem; flex-basis: 100%; margin: 0; padding: .1rem 0; }
  .navbar .navbar-collapse { flex-basis: 100%; }
  .navbar .navbar-nav { flex-direction: row !important; flex-wrap: wrap; column-gap: .9rem; }
  .navbar .nav-link { padding: .35rem 0; }
}
"""


def _value(value_id: str, text: str) -> Tag:
    cls = "undefined" if text == UNDEFINED else None
    return ui.tags.span(text, id=value_id, class_=cls)


def _error_box(message: str, box_id: str) -> Tag:
    return ui.div(ui.tags.strong("输入有误："), message, id=box_id, class_="alert alert-warning", role="alert")


def _sidebar_tab1() -> Tag:
    return ui.sidebar(  # the two controls a reader moves most come first (on a phone: in view at the top)
        ui.input_slider("threshold", "阈值 τ（得分 ≥ τ 判为正类）", 0.0, 1.0, 0.5, step=0.01),
        ui.input_slider("pi", "正类比例 π", 0.0, 1.0, 0.5, step=0.01),
        ui.input_numeric("m", "每类样本数 m", 200, min=10, max=2000, step=10),
        ui.input_radio_buttons("dist", "两类得分分布", DISTRIBUTIONS),
        ui.input_slider("sep", "分离度 d（0 = 两类相同）", 0.0, 4.0, 1.5, step=0.1),
        ui.input_slider("sigma", "正类标准差 σ（仅双正态）", 0.25, 4.0, 1.0, step=0.25),
        ui.input_numeric("n_bins", "校准分箱数", 10, min=0, max=50, step=1),
        ui.input_radio_buttons("strategy", "分箱方式", STRATEGIES),
        ui.input_numeric("seed", "随机种子", 1, min=0, step=1),
        ui.input_numeric("deploy_prior", "部署时正类比例 π′（修正精确率）", 0.05, min=0, max=1, step=0.01),
        width=300,
        open=SIDEBAR_OPEN,
        max_height_mobile=MOBILE_CONTROLS_HEIGHT,
    )


def _tab1() -> Tag:
    intro = ui.p(
        "每类先由随机种子抽取 m 个得分，与 π 无关；π = a/(a+b) 时每个正类得分计 a 次、每个负类得分计 b 次。"
        "于是两类的条件得分分布不随 π 改变：拖动 π，ROC 曲线与 AUC 一字不变，精确率、PR 曲线与 AP 却随之移动。",
        class_="demo-note",
    )
    plots = ui.layout_columns(
        ui.card(ui.card_header("ROC 曲线（红点：当前阈值）"), ui.output_plot("roc_plot", height="380px"), class_="mb-2"),
        ui.card(ui.card_header("PR 曲线（虚线：基线 π）"), ui.output_plot("pr_plot", height="380px"), class_="mb-2"),
        ui.card(ui.card_header("校准曲线（下：每箱样本数）"), ui.output_plot("reliability_plot", height="380px"), class_="mb-2"),
        col_widths=(4, 4, 4),
    )
    return ui.nav_panel(
        "指标随阈值变化",
        ui.layout_sidebar(_sidebar_tab1(), intro, ui.output_ui("tab1_numbers"), plots),
        value="tab1",
    )


def _sidebar_tab2() -> Tag:
    return ui.sidebar(
        ui.input_numeric("n2", "样本量 n", 1000, min=50, max=20000, step=50),
        ui.input_slider("pi2", "正类比例 π", 0.0, 1.0, 0.2, step=0.01),
        ui.input_numeric("seed2", "随机种子", 0, min=0, step=1),
        ui.input_radio_buttons("rule", "在验证集上选模型与阈值的准则", RULES),
        ui.panel_conditional(
            "input.rule === 'cost'",
            ui.input_numeric("c_fp", "一个假正例的代价 c_FP", 1.0, min=0, step=0.5),
            ui.input_numeric("c_fn", "一个假负例的代价 c_FN", 5.0, min=0, step=0.5),
        ),
        ui.panel_conditional(
            "input.rule === 'fpr_cap'",
            ui.input_slider("max_fpr", "FPR 上限", 0.0, 1.0, 0.1, step=0.01),
        ),
        width=300,
        open=SIDEBAR_OPEN,
        max_height_mobile=MOBILE_CONTROLS_HEIGHT,
    )


def _tab2() -> Tag:
    steps = ui.tags.ol(
        ui.tags.li("训练集（60%）：拟合每个候选模型的参数。"),
        ui.tags.li("验证集（20%）：按所选准则为每个模型选阈值，再选出准则最好的模型——超参数与阈值都在这里定。"),
        ui.tags.li("测试集（20%）：对固定下来的模型与阈值只评价一次。"),
        class_="demo-note",
    )
    names = "、".join(name for name, _, _ in CANDIDATES)
    return ui.nav_panel(
        "训练集、验证集与测试集",
        ui.layout_sidebar(
            _sidebar_tab2(),
            ui.p(f"候选模型：{names}。数据由 scikit-learn 的 make_classification 按种子生成，按固定种子三分。", class_="demo-note"),
            steps,
            ui.output_ui("tab2_results"),
        ),
        value="tab2",
    )


def _chinese_sidebar_toggles(node: object) -> None:
    """bslib names its sidebar's collapse button "Toggle sidebar": in Chinese, as the rest of the demo (the sidebars are
    always open, so the button is hidden, but its name stays in the page for assistive tools).  ``node``: rendered tags."""
    attrs, children = getattr(node, "attrs", None), getattr(node, "children", None)
    if isinstance(attrs, dict) and "collapse-toggle" in str(attrs.get("class", "")).split():
        attrs["title"] = SIDEBAR_TOGGLE_NAME
        attrs["aria-label"] = SIDEBAR_TOGGLE_NAME
    for child in children if children is not None else (node if isinstance(node, (list, tuple, TagList)) else ()):
        _chinese_sidebar_toggles(child)


app_ui = ui.page_navbar(
    _tab1(),
    _tab2(),
    ui.nav_spacer(),
    ui.nav_control(ui.tags.a("← 回到课程", href=BOOK_URL, id="book-link", class_="nav-link book-link")),
    title="二分类评价与超参数选择",
    id="tabs",
    navbar_options=ui.navbar_options(collapsible=False),  # the tabs stay visible on a phone, no menu button
    header=ui.TagList(ui.head_content(ui.tags.link(rel="icon", type="image/svg+xml", href="favicon.svg")), ui.tags.style(CSS)),
    lang="zh-CN",
    window_title="二分类评价与超参数选择 · 交互演示",
).tagify()  # rendered once here (the sidebars' buttons exist only then), and named in Chinese below
_chinese_sidebar_toggles(app_ui)


def _confusion_card(r: Tab1Result) -> Tag:
    m = r.metrics
    cell = ui.tags.td
    table = ui.tags.table(
        ui.tags.tr(ui.tags.th(""), ui.tags.th("预测", ui.tags.br(), "为正", class_="cm-row"),
                   ui.tags.th("预测", ui.tags.br(), "为负", class_="cm-row")),
        ui.tags.tr(
            ui.tags.th("真实", ui.tags.br(), "为正", class_="cm-row"),  # two characters a line in a narrow card
            cell(ui.div("TP"), _value("cm-tp", str(m.tp)), class_="cell cm-tp"),
            cell(ui.div("FN"), _value("cm-fn", str(m.fn)), class_="cell cm-fn"),
        ),
        ui.tags.tr(
            ui.tags.th("真实", ui.tags.br(), "为负", class_="cm-row"),
            cell(ui.div("FP"), _value("cm-fp", str(m.fp)), class_="cell cm-fp"),
            cell(ui.div("TN"), _value("cm-tn", str(m.tn)), class_="cell cm-tn"),
        ),
        class_="cm-table",
    )
    note = ui.p(
        "n = ",
        _value("n-total", str(r.data.y_true.size)),
        f"（正 {int(r.data.y_true.sum())}，负 {int((r.data.y_true == 0).sum())}），π = ",
        _value("pi-value", f"{share(r.data):.2f}"),
        class_="demo-note mt-2 mb-0",
    )
    return ui.card(ui.card_header(f"混淆矩阵（τ = {r.threshold:.2f}）"), table, note)


def _metrics_card(r: Tab1Result) -> Tag:
    m = r.metrics
    rows = [
        ("准确率", "metric-accuracy", m.accuracy, "(TP+TN)/n"),
        ("精确率", "metric-precision", m.precision, "TP/(TP+FP)"),
        ("召回率 TPR", "metric-recall", m.recall, "TP/(TP+FN)"),
        ("假正例率 FPR", "metric-fpr", m.fpr, "FP/(FP+TN)"),
        ("特异度", "metric-specificity", m.specificity, "TN/(TN+FP)"),
        ("F1", "metric-f1", m.f1, "2TP/(2TP+FP+FN)"),
    ]
    body = [ui.tags.tr(ui.tags.td(label, title=formula), ui.tags.td(_value(vid, fmt(v)), class_="v")) for label, vid, v, formula in rows]
    notes = []
    if any(math.isnan(v) for _, _, v, _ in rows):
        notes.append(ui.p(f"“{UNDEFINED}”：分母为 0（如没有预测正类），不用 0 代替。", class_="demo-note mb-0"))
    return ui.card(ui.card_header("固定阈值指标"), ui.tags.table(*body, class_="metric-table"), *notes)


def _summary_card(r: Tab1Result) -> Tag:
    pi = share(r.data)
    if r.deploy_error is not None:
        deploy = [ui.tags.span("—", id="deploy-precision"), ui.div(r.deploy_error, id="deploy-error", class_="text-danger small")]
        prior_text = "π′"
    else:
        deploy = [_value("deploy-precision", fmt(r.deploy_precision))]
        prior_text = f"π′ = {r.deploy_prior:g}"
    rows = [
        ui.tags.tr(ui.tags.td("AUC"), ui.tags.td(_value("auc-value", fmt(r.auc)), class_="v")),
        ui.tags.tr(ui.tags.td(f"AP（基线 {pi:.2f}）"), ui.tags.td(_value("ap-value", fmt(r.ap)), class_="v")),
        ui.tags.tr(ui.tags.td("Brier 分数"), ui.tags.td(_value("brier-value", fmt(r.brier)), class_="v")),
        ui.tags.tr(ui.tags.td("Brier 基线 π(1−π)"), ui.tags.td(_value("brier-baseline", fmt(r.brier_base)), class_="v")),
        ui.tags.tr(ui.tags.td("ECE", title="期望校准误差"), ui.tags.td(_value("ece-value", fmt(r.ece)), class_="v")),
        ui.tags.tr(ui.tags.td(f"部署精确率 {prior_text}", title="按部署先验修正的精确率"), ui.tags.td(*deploy, class_="v")),
    ]
    c = r.calibration
    calib = ui.tags.details(
        ui.tags.summary("各分箱样本数（表）"),
        ui.tags.table(
            ui.tags.tr(ui.tags.th("分箱"), ui.tags.th("样本数"), ui.tags.th("平均预测"), ui.tags.th("正类占比")),
            *[
                ui.tags.tr(
                    ui.tags.td(f"({lo:.3f}, {hi:.3f}]"),
                    ui.tags.td(str(int(n)), class_="v"),
                    ui.tags.td(fmt(p), class_="v"),
                    ui.tags.td(fmt(y), class_="v"),
                )
                for (lo, hi), n, p, y in zip(c.bin_edges, c.count, c.mean_predicted, c.fraction_positive)
            ],
            id="calib-table",
            class_="metric-table",
        ),
    )
    verdict = "低于" if r.brier < r.brier_base else "不低于"
    return ui.card(
        ui.card_header("排序与概率质量"),
        ui.tags.table(*rows, class_="metric-table"),
        ui.p(f"Brier 分数{verdict}常数基线。", class_="demo-note mb-0"),
        calib,
    )


def _state(input_pi: object, threshold: float, bins: object, extra: str = "") -> Tag:
    pi_text = f"{float(input_pi):.2f}" if isinstance(input_pi, (int, float)) else str(input_pi)
    state = {"data-pi": pi_text, "data-threshold": f"{threshold:.2f}", "data-bins": str(bins), "data-status": extra}
    return ui.tags.span(id="t1-state", style="display:none", **state)


def _metric_row(label: str, value_id: str, text: str, *, number: bool = True) -> Tag:
    return ui.tags.tr(ui.tags.td(label), ui.tags.td(_value(value_id, text), class_="v" if number else "text-end"))


def server(input, output, session):  # noqa: A002 - Shiny's signature
    @reactive.calc
    def tab1() -> Tab1Result | str:
        try:
            return compute_tab1(
                input.m(),
                input.pi(),
                input.dist(),
                input.sep(),
                input.sigma(),
                input.seed(),
                input.threshold(),
                input.n_bins(),
                input.strategy(),
                input.deploy_prior(),
            )
        except ValueError as exc:  # DemoInputError and the reference's Chinese messages
            return str(exc)
        except Exception as exc:  # noqa: BLE001 - never show a traceback in the page
            return f"计算失败（{type(exc).__name__}），请检查输入。"

    def plot_or_message(draw):
        """The figure, or a placeholder that points to the error message while the inputs are invalid."""
        r = tab1()
        return draw(r) if isinstance(r, Tab1Result) else message_figure("输入有误，暂不作图\n（原因见上方提示）")

    @render.ui
    def tab1_numbers():
        r = tab1()
        if isinstance(r, str):
            return ui.div(_error_box(r, "t1-error"), _state(input.pi(), float(input.threshold() or 0), input.n_bins(), "error"))
        return ui.div(
            _state(input.pi(), r.threshold, r.n_bins, "ok"),
            ui.layout_columns(
                _confusion_card(r),
                _metrics_card(r),
                _summary_card(r),
                ui.card(ui.card_header("两类得分分布与阈值"), ui.output_plot("score_plot", height="300px"), class_="mb-2"),
                col_widths=(3, 3, 3, 3),
            ),
        )

    @render.plot(alt="ROC 曲线与当前工作点")
    def roc_plot():
        return plot_or_message(roc_figure)

    @render.plot(alt="PR 曲线、基线与当前工作点")
    def pr_plot():
        return plot_or_message(pr_figure)

    @render.plot(alt="校准曲线与各分箱样本数")
    def reliability_plot():
        return plot_or_message(reliability_figure)

    @render.plot(alt="两类得分分布与阈值")
    def score_plot():
        return plot_or_message(score_figure)

    # ---- tab 2 -------------------------------------------------------------
    @reactive.calc
    def fitted():
        try:
            data = make_workflow_data(input.n2(), input.pi2(), input.seed2())
            from .workflow import _check_split

            for y, name in ((data.y_train, "训练集"), (data.y_val, "验证集"), (data.y_test, "测试集")):
                _check_split(y, name)
            return data, fit_candidates(data, int(input.seed2()))
        except ValueError as exc:
            return str(exc)
        except Exception as exc:  # noqa: BLE001 - never show a traceback in the page
            return f"训练失败（{type(exc).__name__}），请检查输入。"

    @reactive.calc
    def tab2():
        f = fitted()
        if isinstance(f, str):
            return f
        data, models = f
        try:
            rule = _rule()
            return run_workflow(data, rule, int(input.seed2()), models)
        except ValueError as exc:
            return str(exc)
        except Exception as exc:  # noqa: BLE001 - never show a traceback in the page
            return f"选择失败（{type(exc).__name__}），请检查输入。"

    def _rule() -> Rule:
        name = input.rule()
        if name == "cost":
            c_fp, c_fn = input.c_fp(), input.c_fn()
            for value, label in ((c_fp, "c_FP"), (c_fn, "c_FN")):
                if value is None or not math.isfinite(float(value)) or float(value) < 0:
                    raise DemoInputError(f"{label} 必须是非负数，实际为 {value!r}")
            if float(c_fp) == 0 and float(c_fn) == 0:
                raise DemoInputError("c_FP 与 c_FN 不能同时为 0：那样所有阈值的代价都相同。")
            return Rule("cost", c_fp=float(c_fp), c_fn=float(c_fn))
        if name == "fpr_cap":
            return Rule("fpr_cap", max_fpr=float(input.max_fpr()))
        return Rule("f1")

    @render.ui
    def tab2_results():
        r = tab2()
        state = ui.tags.span(
            id="t2-state",
            style="display:none",
            **{"data-rule": str(input.rule()), "data-pi": f"{float(input.pi2() or 0):.2f}", "data-status": "error" if isinstance(r, str) else "ok"},
        )
        if isinstance(r, str):
            return ui.div(_error_box(r, "t2-error"), state)
        return ui.div(state, _tab2_body(r))


def _criterion_label(rule: Rule) -> str:
    if rule.name == "f1":
        return "F1"
    if rule.name == "cost":
        return f"期望代价（c_FP = {rule.c_fp:g}，c_FN = {rule.c_fn:g}，每个样本）"
    return f"TPR（FPR ≤ {rule.max_fpr:.2f}）"


def _tab2_body(r) -> Tag:
    crit = _criterion_label(r.rule)
    (n_tr, p_tr), (n_va, p_va), (n_te, p_te) = r.sizes
    sizes = ui.p(f"训练集 {n_tr} 个（正类 {p_tr}），验证集 {n_va} 个（正类 {p_va}），测试集 {n_te} 个（正类 {p_te}）。",
                 id="t2-sizes", class_="demo-note")
    head = ui.tags.tr(*(ui.tags.th(text) for text in ("候选模型", "验证集 AUC", "验证集上选的阈值", f"验证集 {crit}", "选中")))
    rows = []
    for i, c in enumerate(r.candidates):
        rows.append(
            ui.tags.tr(
                ui.tags.td(c.name),
                ui.tags.td(fmt(c.val_auc), class_="v"),
                ui.tags.td(fmt_threshold(c.val_choice.threshold), class_="v"),
                ui.tags.td(fmt(c.val_choice.value), class_="v", id=f"t2-val-value-{i}"),
                ui.tags.td("✔" if i == r.chosen else ""),
                class_="best-row" if i == r.chosen else None,
            )
        )
    table = ui.card(ui.card_header("第 2 步：在验证集上比较候选模型"),
                    ui.tags.table(head, *rows, class_="table table-sm metric-table", id="t2-candidates"))

    def result_card(title: str, prefix: str, model: str, threshold: float, where: str, value: float, metrics, auc: float, note: str) -> Tag:
        rows = [
            _metric_row("模型", f"{prefix}-model", model, number=False),
            _metric_row(f"阈值（{where}选出）", f"{prefix}-threshold", fmt_threshold(threshold)),
            _metric_row(f"测试集 {crit}", f"{prefix}-value", fmt(value)),
        ]
        if r.rule.name != "f1":
            rows.append(_metric_row("测试集 F1", f"{prefix}-f1", fmt(metrics.f1)))
        rows += [
            _metric_row("测试集 精确率", f"{prefix}-precision", fmt(metrics.precision)),
            _metric_row("测试集 召回率", f"{prefix}-recall", fmt(metrics.recall)),
            _metric_row("测试集 FPR", f"{prefix}-fpr", fmt(metrics.fpr)),
            _metric_row("测试集 AUC", f"{prefix}-auc", fmt(auc)),
        ]
        body = ui.tags.table(*rows, class_="metric-table")
        return ui.card(ui.card_header(title), body, ui.p(note, class_="demo-note mb-0"))

    honest = result_card(
        "第 3 步：测试集只评价一次（诚实的估计）",
        "t2-test",
        r.candidates[r.chosen].name,
        r.threshold,
        "验证集上",
        r.test_value,
        r.test_metrics,
        r.test_auc,
        f"模型与阈值都在验证集上定好（选择时验证集 {crit} 为 {fmt(r.candidates[r.chosen].val_choice.value)}），测试集只用来报告这一组数字。",
    )
    optimistic = result_card(
        "反例：在测试集上做同样的选择（乐观偏差）",
        "t2-opt",
        r.candidates[r.chosen_on_test].name,
        r.optimistic_threshold,
        "测试集上",
        r.optimistic_value,
        r.optimistic_metrics,
        r.optimistic_auc,
        "在测试集上挑模型和阈值，再在同一测试集上报告：这个数字被“挑”过，系统性地偏好。",
    )
    gap = (r.optimistic_value - r.test_value) if r.rule.maximise else (r.test_value - r.optimistic_value)
    better = "高" if r.rule.maximise else "低"
    bias = ui.div(
        ui.tags.strong("乐观偏差："),
        f"在测试集上选择时，测试集 {crit} 比诚实估计{better} ",
        _value("t2-bias", fmt(gap)),
        "。这部分“提升”只是对测试集的过拟合，部署后不会兑现。",
        class_="alert alert-info mt-2",
    )
    extra = []
    if r.rule.name == "fpr_cap" and r.test_metrics.fpr > r.rule.max_fpr:
        extra.append(
            ui.div(
                f"注意：验证集上选的阈值在测试集上的 FPR 为 {fmt(r.test_metrics.fpr)}，超过了上限 {r.rule.max_fpr:.2f}——"
                "在验证集上满足的约束，到新数据上不一定满足；此时两边的 TPR 不是同一约束下的比较。",
                id="t2-cap-warning",
                class_="alert alert-warning mt-2",
            )
        )
    return ui.div(sizes, table, ui.layout_columns(honest, optimistic, col_widths=(6, 6)), bias, *extra)


app = App(app_ui, server, static_assets={"/favicon.svg": FAVICON})
