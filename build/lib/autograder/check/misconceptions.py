"""The catalogue of known misconceptions of assignments 1-4 (trusted side only; reviewed like the hidden tests).

Each :class:`Misconception` names a mistake students make, the graded functions it concerns, one or more
trusted implementations of that mistake (run in the grader's process on the hidden cases' own inputs,
never on anything a student chose), a Chinese explanation and hint that reveal no hidden input, and the
book section that explains the point (``page`` is the book page's document name, ``label`` a ``(label)=``
target on it).  An entry may carry several *variants* when the mistake's result depends on a choice the
student is free to make (the order of tied samples after a sort, where an extra point is added); the
entry is named when one variant explains the student's results (see :mod:`.diagnose`).

Mistakes that give the same result on every case are one entry (``tests/check/test_misconceptions.py``
checks that no two entries agree everywhere).  Every implementation validates its input as the reference
does (it calls the reference first, or its validators), so a mistake never differs on a validation case.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from .. import reference as R
from ..reference._validation import check_binary_labels, check_probabilities, check_zero_division, safe_divide
from .mutants import _auc_from_curve, _auc_rectangle, _bm_epsilon, _bm_strict, _roc_no_start, _validated

__all__ = ["Misconception", "CATALOGUE", "for_assignment", "by_id", "BOOK_SECTIONS"]

Impl = Callable[..., Any]


@dataclass(frozen=True)
class Misconception:
    """One known mistake.

    ``impls`` maps each function the mistake concerns to its variants (name -> implementation with the
    function's own signature).
    """

    id: str
    assignment: str
    title: str
    explanation: str
    hint: str
    page: str
    label: str
    impls: dict[str, dict[str, Impl]] = field(default_factory=dict)

    @property
    def functions(self) -> tuple[str, ...]:
        return tuple(self.impls)

    @property
    def section(self) -> str:
        """The heading of the book section (as the page writes it; checked by the tests)."""
        return SECTION_TITLES.get(self.label, "")

    def url(self) -> str:
        """The section's address relative to the book's root (``book/binary/roc.html#binary-roc-construction``)."""
        return f"{self.page}.html#{self.label}"


# -- assignment 1: fixed-threshold metrics ----------------------------------------------------------------
def _bm_fpr_as_fdr(y_true: Any, y_score: Any, threshold: Any, *, zero_division: Any = "nan") -> R.BinaryMetrics:
    m = R.binary_metrics(y_true, y_score, threshold, zero_division=zero_division)
    return m._replace(fpr=safe_divide(m.fp, m.fp + m.tp, check_zero_division(zero_division), "fpr", "FP+TP"))


def _bm_pr_swapped(y_true: Any, y_score: Any, threshold: Any, *, zero_division: Any = "nan") -> R.BinaryMetrics:
    m = R.binary_metrics(y_true, y_score, threshold, zero_division=zero_division)
    return m._replace(precision=m.recall, recall=m.precision)


def _bm_f1_mean(y_true: Any, y_score: Any, threshold: Any, *, zero_division: Any = "nan") -> R.BinaryMetrics:
    m = R.binary_metrics(y_true, y_score, threshold, zero_division=zero_division)
    return m._replace(f1=(m.precision + m.recall) / 2)


def _bm_fp_fn_swapped(y_true: Any, y_score: Any, threshold: Any, *, zero_division: Any = "nan") -> R.BinaryMetrics:
    m = R.binary_metrics(y_true, y_score, threshold, zero_division=zero_division)
    return R.metrics_from_counts(m.tp, m.fn, m.tn, m.fp, zero_division=zero_division)


# -- assignment 2: ROC and AUC ----------------------------------------------------------------------------
_TIE_ORDERS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "input_order": lambda s: np.argsort(-s, kind="stable"),  # ties in the order of the input
    "reversed_order": lambda s: np.argsort(s, kind="stable")[::-1],  # ties in reverse input order
    "argsort_neg": lambda s: np.argsort(-s),  # NumPy's default sort of -s
    "argsort_reversed": lambda s: np.argsort(s)[::-1],  # NumPy's default sort, reversed
}


def _roc_split(order: Callable[[np.ndarray], np.ndarray]) -> Impl:
    def roc(y_true: Any, y_score: Any) -> R.RocCurve:
        pos, s = _validated(y_true, y_score)
        idx = order(s)
        tps, fps = np.cumsum(pos[idx]), np.cumsum(~pos[idx])
        return R.RocCurve(fpr=np.concatenate(([0.0], fps / fps[-1])), tpr=np.concatenate(([0.0], tps / tps[-1])),
                          thresholds=np.concatenate(([np.inf], s[idx])))

    return roc


def _roc_axes_swapped(y_true: Any, y_score: Any) -> R.RocCurve:
    c = R.roc_curve(y_true, y_score)
    return R.RocCurve(fpr=c.tpr, tpr=c.fpr, thresholds=c.thresholds)


def _roc_reversed(y_true: Any, y_score: Any) -> R.RocCurve:
    c = R.roc_curve(y_true, y_score)
    return R.RocCurve(fpr=c.fpr[::-1].copy(), tpr=c.tpr[::-1].copy(), thresholds=c.thresholds[::-1].copy())


def _roc_thresholds_reversed(y_true: Any, y_score: Any) -> R.RocCurve:
    c = R.roc_curve(y_true, y_score)
    return c._replace(thresholds=c.thresholds[::-1].copy())


def _pairwise(tie_value: float) -> Impl:
    def auc(y_true: Any, y_score: Any) -> float:
        pos, s = _validated(y_true, y_score)
        p, n = np.sort(s[pos]), np.sort(s[~pos])
        below = np.searchsorted(n, p, side="left")
        tied = np.searchsorted(n, p, side="right") - below
        return float((below.sum() + tie_value * tied.sum()) / (p.size * n.size))

    return auc


# -- assignment 3: PR curve and AP ------------------------------------------------------------------------
def _ap_trapezoid(start: str) -> Impl:
    def ap(y_true: Any, y_score: Any) -> float:
        c = R.pr_curve(y_true, y_score)
        p, r = c.precision, c.recall
        if start == "one":
            p, r = np.concatenate(([1.0], p)), np.concatenate(([0.0], r))
        elif start == "first":
            p, r = np.concatenate(([p[0]], p)), np.concatenate(([0.0], r))
        return float(np.sum(np.diff(r) * (p[1:] + p[:-1]) / 2))

    return ap


def _ap_interpolated(y_true: Any, y_score: Any) -> float:
    c = R.pr_curve(y_true, y_score)
    best = np.maximum.accumulate(c.precision[::-1])[::-1]  # the largest precision at this recall or beyond
    return float(np.sum(np.diff(np.concatenate(([0.0], c.recall))) * best))


def _ap_split(order: Callable[[np.ndarray], np.ndarray]) -> Impl:
    def ap(y_true: Any, y_score: Any) -> float:
        pos, s = _validated(y_true, y_score)
        hits = pos[order(s)]
        tps = np.cumsum(hits)
        precision = tps / np.arange(1, hits.size + 1)
        return float(np.sum(precision[hits]) / tps[-1])

    return ap


def _ap_mean_precision(y_true: Any, y_score: Any) -> float:
    return float(np.mean(R.pr_curve(y_true, y_score).precision))


def _pr_extra(where: str) -> Impl:
    def pr(y_true: Any, y_score: Any) -> R.PrCurve:
        c = R.pr_curve(y_true, y_score)
        if where == "end":
            return R.PrCurve(np.append(c.precision, 1.0), np.append(c.recall, 0.0), c.thresholds)
        thresholds = np.concatenate(([np.inf], c.thresholds)) if where == "start_inf" else c.thresholds
        return R.PrCurve(np.concatenate(([1.0], c.precision)), np.concatenate(([0.0], c.recall)), thresholds)

    return pr


# -- assignment 4: Brier score and calibration -----------------------------------------------------------
def _brier_sum(y_true: Any, y_prob: Any) -> float:
    return R.brier_score(y_true, y_prob) * len(check_probabilities(y_prob))


def _brier_thresholded(strict: bool) -> Impl:
    def brier(y_true: Any, y_prob: Any) -> float:
        R.brier_score(y_true, y_prob)  # the reference's validation
        p = check_probabilities(y_prob)
        labels = check_binary_labels(y_true).astype(np.float64)
        predicted = (p > 0.5) if strict else (p >= 0.5)
        return float(np.mean((predicted.astype(np.float64) - labels) ** 2))

    return brier


def _baseline_half(y_true: Any) -> float:
    R.brier_baseline(y_true)
    return 0.25


def _curve_left_closed(y_true: Any, y_prob: Any, n_bins: Any = 10, strategy: Any = "uniform") -> R.CalibrationCurve:
    R.calibration_curve(y_true, y_prob, n_bins=n_bins, strategy=strategy)  # the reference's validation
    probs = check_probabilities(y_prob)
    positive = check_binary_labels(y_true).astype(np.float64)
    edges = _edges(probs, int(n_bins), strategy)
    ids = np.searchsorted(edges[1:-1], probs, side="right")
    return _curve_from_ids(ids, probs, positive, edges, int(n_bins), keep_empty=None)


def _curve_empty_kept(fill: float) -> Impl:
    def curve(y_true: Any, y_prob: Any, n_bins: Any = 10, strategy: Any = "uniform") -> R.CalibrationCurve:
        R.calibration_curve(y_true, y_prob, n_bins=n_bins, strategy=strategy)
        probs = check_probabilities(y_prob)
        positive = check_binary_labels(y_true).astype(np.float64)
        edges = _edges(probs, int(n_bins), strategy)
        ids = np.searchsorted(edges[1:-1], probs, side="left")
        return _curve_from_ids(ids, probs, positive, edges, int(n_bins), keep_empty=fill)

    return curve


def _edges(probs: np.ndarray, n_bins: int, strategy: str) -> np.ndarray:
    from ..reference.probability import _bin_edges

    return _bin_edges(probs, n_bins, strategy)


def _curve_from_ids(ids: np.ndarray, probs: np.ndarray, positive: np.ndarray, edges: np.ndarray, k: int,
                    keep_empty: float | None) -> R.CalibrationCurve:
    count = np.bincount(ids, minlength=k)
    sums = np.bincount(ids, weights=probs, minlength=k)
    hits = np.bincount(ids, weights=positive, minlength=k)
    keep = count > 0 if keep_empty is None else np.ones(k, dtype=bool)
    with np.errstate(invalid="ignore", divide="ignore"):
        frac, mean = hits[keep] / count[keep], sums[keep] / count[keep]
    if keep_empty is not None:
        frac[count[keep] == 0] = keep_empty
        mean[count[keep] == 0] = keep_empty
    return R.CalibrationCurve(fraction_positive=frac, mean_predicted=mean, count=count[keep].astype(np.int64),
                              bin_edges=np.column_stack((edges[:-1][keep], edges[1:][keep])))


def _ece_unweighted(y_true: Any, y_prob: Any, n_bins: Any = 10, strategy: Any = "uniform") -> float:
    R.expected_calibration_error(y_true, y_prob, n_bins=n_bins, strategy=strategy)
    c = R.calibration_curve(y_true, y_prob, n_bins=n_bins, strategy=strategy)
    return float(np.mean(np.abs(c.fraction_positive - c.mean_predicted)))


_ROC_SPLIT = {k: _roc_split(o) for k, o in _TIE_ORDERS.items()}

CATALOGUE: tuple[Misconception, ...] = (
    # ---- assignment 1 ----
    Misconception(
        "threshold_strict", "ps1_threshold_metrics", "阈值处用了严格大于",
        "你的函数似乎只把得分严格大于阈值的样本判为正类。课程的约定是得分大于或等于阈值就判为正类，"
        "所以得分恰好等于阈值的样本被你算成了负类，TP、FP 以及由它们算出的指标都会变。",
        "检查比较运算：应当是 score >= threshold。想一想得分与阈值相等、并且有多个样本并列在阈值上时会怎样。",
        "book/binary/fixed_threshold", "binary-fixed-threshold",
        {"binary_metrics": {"strict": _bm_strict}}),
    Misconception(
        "zero_division_zero", "ps1_threshold_metrics", "分母为 0 时一律返回 0",
        "分母为 0 的比值，你的函数似乎总是给出 0（例如在分母上加了一个很小的数，或写死了 0），"
        "而没有按参数 zero_division 的要求处理：\"nan\" 应返回 NaN，\"raise\" 应抛出异常，只有 0 才返回 0。",
        "分母为 0 时先看 zero_division 是哪一种，再决定返回什么；分母不为 0 时不要改动分母。",
        "book/binary/fixed_threshold", "binary-precision",
        {"binary_metrics": {"epsilon": _bm_epsilon}}),
    Misconception(
        "fpr_as_fdr", "ps1_threshold_metrics", "把 FDR 当成了假正率",
        "你的函数算出的 fpr 似乎是 FP/(FP+TP)，这是错误发现率（FDR，预测为正类的样本中负类的比例），"
        "而假正率 FPR 的分母是真实负类的个数 FP+TN。",
        "写出 FPR 的定义：在所有真实负类中，有多大比例被判成了正类？分母只包含真实负类。",
        "book/binary/fixed_threshold", "binary-fpr-vs-fdr",
        {"binary_metrics": {"fdr": _bm_fpr_as_fdr}}),
    Misconception(
        "precision_recall_swapped", "ps1_threshold_metrics", "精确率与召回率互换",
        "你的函数返回的 precision 与 recall 似乎互换了位置：精确率的分母是预测为正类的样本数 TP+FP，"
        "召回率的分母是真实正类的样本数 TP+FN。",
        "核对命名元组中两个字段的计算公式和顺序，分别问自己：分母是“判为正类的”还是“真正是正类的”？",
        "book/binary/fixed_threshold", "binary-precision",
        {"binary_metrics": {"swapped": _bm_pr_swapped}}),
    Misconception(
        "f1_arithmetic_mean", "ps1_threshold_metrics", "F1 用了算术平均",
        "你的函数似乎用 (P+R)/2 计算 F1。F1 是精确率与召回率的调和平均 2PR/(P+R)，等于 2TP/(2TP+FP+FN)；"
        "算术平均会让一个很低的指标被另一个很高的指标掩盖。",
        "用计数写出 F1 = 2TP/(2TP+FP+FN)，这样也不必单独处理精确率或召回率无定义的情况。",
        "book/binary/fixed_threshold", "binary-f1",
        {"binary_metrics": {"mean": _bm_f1_mean}}),
    Misconception(
        "fp_fn_swapped", "ps1_threshold_metrics", "FP 与 FN 互换",
        "你的函数似乎把假正例 FP 和假负例 FN 数反了：FP 是真实为负、被判为正的样本，FN 是真实为正、被判为负的样本。"
        "计数一错，精确率、召回率、FPR 等都会跟着错。",
        "对照混淆矩阵的四个格子，分别写出每一格的条件（真实标签是什么、预测是什么），再检查代码中的布尔表达式。",
        "book/binary/confusion", "binary-confusion-cells",
        {"binary_metrics": {"swapped": _bm_fp_fn_swapped}}),
    # ---- assignment 2 ----
    Misconception(
        "roc_ties_split", "ps2_roc_auc", "并列得分被拆成多个点",
        "你的函数似乎逐个样本地走过排好序的得分，每个样本产生一个点。得分并列的样本应当作为一组同时越过阈值，"
        "只产生一个点；拆开后，曲线（以及由它算出的面积）会随并列样本在数组中的先后顺序而变。",
        "排序后先找出每组相同得分的最后一个位置，只在这些位置记录 (FPR, TPR)；"
        "可以自己构造一组正负样本得分相同的数据，打乱它们的顺序，看结果是否改变。",
        "book/binary/roc", "binary-roc-construction",
        {"roc_curve": dict(_ROC_SPLIT), "roc_auc": {k: (lambda f: lambda y, s: _auc_from_curve(f(y, s)))(f)
                                                    for k, f in _ROC_SPLIT.items()}}),
    Misconception(
        "roc_no_origin", "ps2_roc_auc", "ROC 缺少起点 (0, 0)",
        "你的 ROC 似乎缺少阈值为 +inf、(FPR, TPR) = (0, 0) 的起点：阈值高于所有得分时，没有样本被判为正类，"
        "曲线从这里出发。没有它，点数少一个，由曲线算出的面积也会少掉第一段。",
        "在所有点之前加上阈值 np.inf 和 (0, 0)；检查返回的三个数组长度是否都等于“不同得分的个数 + 1”。",
        "book/binary/roc", "binary-roc-construction",
        {"roc_curve": {"no_start": _roc_no_start},
         "roc_auc": {"no_start": lambda y, s: _auc_from_curve(_roc_no_start(y, s))}}),
    Misconception(
        "roc_axes_swapped", "ps2_roc_auc", "FPR 与 TPR 互换",
        "你的函数返回的 fpr 字段似乎装的是 TPR（真阳性率），tpr 字段装的是 FPR。ROC 的横轴是假正率，纵轴是真正率。",
        "FPR 的分母是真实负类数，TPR 的分母是真实正类数；核对命名元组中字段的顺序 (fpr, tpr, thresholds)。",
        "book/binary/roc", "binary-roc",
        {"roc_curve": {"swapped": _roc_axes_swapped}}),
    Misconception(
        "roc_thresholds_ascending", "ps2_roc_auc", "阈值按升序排列",
        "你的函数似乎按阈值从小到大给出结果。课程约定与 scikit-learn 相同：阈值从 +inf 开始递减，"
        "点从 (0, 0) 走向 (1, 1)。",
        "按得分降序扫描；第一个阈值是 np.inf，最后一个是最小的得分。",
        "book/binary/roc", "binary-roc-construction",
        {"roc_curve": {"reversed": _roc_reversed, "thresholds_only": _roc_thresholds_reversed}}),
    Misconception(
        "auc_ties_zero", "ps2_roc_auc", "并列的正负样本对计 0",
        "得分相同的一对正负样本，你的函数似乎计 0 分（只数了正类得分严格更高的对；在 ROC 上相当于用阶梯下方的矩形代替梯形）。"
        "课程约定并列对计 1/2，这正是梯形面积给出的值。",
        "把每对样本的得分写成三种情况：正类更高计 1，相等计 1/2，更低计 0；用梯形法时，并列组那一步要取斜线下的面积。",
        "book/ap_auc/auc", "apauc-auc-pairs",
        {"roc_auc": {"rectangle": _auc_rectangle}, "pairwise_auc": {"strict": _pairwise(0.0)}}),
    Misconception(
        "auc_ties_one", "ps2_roc_auc", "并列的正负样本对计 1",
        "得分相同的一对正负样本，你的函数似乎计 1 分（比较时用了 >=，或取了阶梯上方的矩形）。课程约定并列对计 1/2。",
        "并列对既不算正类赢，也不算正类输：计 1/2。",
        "book/ap_auc/auc", "apauc-auc-pairs",
        {"roc_auc": {"upper": _pairwise(1.0)}, "pairwise_auc": {"ge": _pairwise(1.0)}}),
    # ---- assignment 3 ----
    Misconception(
        "ap_trapezoid", "ps3_pr_ap", "AP 用了 PR 曲线下的梯形面积",
        "你的函数似乎用梯形法计算 PR 曲线下的面积。平均精确率不在点之间做线性插值：它是每一步召回率的增量乘以该点的精确率之和，"
        "梯形法在 PR 曲线上会偏乐观。",
        "AP = Σ (Rₖ − Rₖ₋₁) · Pₖ，R₀ = 0；每一项只用当前点的精确率。",
        "book/ap_auc/ap", "apauc-ap-area",
        {"average_precision": {"no_start": _ap_trapezoid("none"), "from_one": _ap_trapezoid("one"),
                               "from_first": _ap_trapezoid("first")}}),
    Misconception(
        "ap_interpolated", "ps3_pr_ap", "AP 用了插值精确率",
        "你的函数似乎把每个点的精确率换成了它右侧（召回率更高处）的最大精确率，这是 PASCAL VOC 的插值 AP。"
        "课程（与 scikit-learn）的 AP 不做插值，直接用每个点自己的精确率。",
        "去掉“取右侧最大值”的那一步，按 Σ (Rₖ − Rₖ₋₁) · Pₖ 求和。",
        "book/ap_auc/ap", "apauc-ap",
        {"average_precision": {"interpolated": _ap_interpolated}}),
    Misconception(
        "ap_ties_split", "ps3_pr_ap", "AP 中并列得分被拆开",
        "你的函数似乎逐个样本计算精确率，把并列得分的样本拆开了。并列组应整体进入：组内的几个正类共用这一组进入后的精确率，"
        "否则结果会随并列样本的先后顺序而变。",
        "先按不同的得分分组，每组进入后计算一次精确率，再乘以这一组带来的召回率增量。",
        "book/ap_auc/ap", "apauc-ap-ties",
        {"average_precision": {k: _ap_split(o) for k, o in _TIE_ORDERS.items()}}),
    Misconception(
        "ap_mean_precision", "ps3_pr_ap", "AP 取了精确率的简单平均",
        "你的函数似乎把 PR 曲线上所有点的精确率直接取平均。AP 的每个精确率要按它带来的召回率增量加权；"
        "没有新正类进入的点（召回率不变）不贡献任何东西。",
        "每一项乘以 (Rₖ − Rₖ₋₁)，而不是除以点的个数。",
        "book/binary/pr", "binary-ap",
        {"average_precision": {"mean": _ap_mean_precision}}),
    Misconception(
        "pr_extra_point", "ps3_pr_ap", "PR 曲线多了召回率为 0 的点",
        "你的 PR 曲线似乎多了一个召回率为 0（精确率为 1）的点。这是画图时为了让曲线从纵轴出发而加的点，"
        "并不对应任何阈值；课程的 pr_curve 每个不同的得分恰好一个点。",
        "检查返回的三个数组长度是否都等于不同得分的个数。",
        "book/binary/pr", "binary-pr",
        {"pr_curve": {"start_inf": _pr_extra("start_inf"), "start": _pr_extra("start"), "end": _pr_extra("end")}}),
    # ---- assignment 4 ----
    Misconception(
        "brier_sum", "ps4_calibration", "Brier 分数求和而没有取平均",
        "你的函数似乎把每个样本的平方误差加起来，而没有除以样本数。Brier 分数是平均平方误差，取值在 0 到 1 之间，"
        "不随样本数增长。",
        "用均值：(1/n) Σ (p_i − y_i)²。",
        "book/binary/probability", "binary-brier",
        {"brier_score": {"sum": _brier_sum}}),
    Misconception(
        "brier_thresholded", "ps4_calibration", "Brier 分数用了 0/1 预测",
        "你的函数似乎先把概率按 0.5 变成 0/1 标签再计算平方误差，这样算出的是错误率，不是 Brier 分数。"
        "Brier 分数直接用预测的概率。",
        "不要对概率做阈值化：平方误差里的 p_i 就是函数收到的概率本身。",
        "book/binary/probability", "binary-brier",
        {"brier_score": {"ge": _brier_thresholded(False), "gt": _brier_thresholded(True)}}),
    Misconception(
        "brier_baseline_half", "ps4_calibration", "基线用了常数 0.5",
        "你的 brier_baseline 似乎总是用 0.5 作为常数预测（结果总是 0.25）。基线应当用数据中正类的比例 ȳ 作为常数预测，"
        "它的 Brier 分数是 ȳ(1 − ȳ)。",
        "先算正类比例 ȳ，再算每个样本都预测 ȳ 时的 Brier 分数。",
        "book/binary/probability", "binary-brier",
        {"brier_baseline": {"half": _baseline_half}}),
    Misconception(
        "calibration_left_closed", "ps4_calibration", "分箱用了左闭右开",
        "你的分箱似乎是左闭右开的 [a, b)：恰好落在内部边界上的概率被放进了右边的箱。课程约定分箱右闭 (a, b]，"
        "0 进入第一箱。",
        "检查把概率分到箱中的那一步（例如 np.searchsorted 的 side 参数，或 np.digitize 的 right 参数）。",
        "book/binary/probability", "binary-calibration-curve",
        {"calibration_curve": {"left": _curve_left_closed}}),
    Misconception(
        "calibration_empty_bins_kept", "ps4_calibration", "校准曲线保留了空箱",
        "你的校准曲线似乎保留了没有样本的箱（计数为 0）。空箱没有正类比例也没有平均概率，应当从结果中去掉，"
        "每个返回的箱都至少有一个样本。",
        "先数出每个箱的样本数，只保留样本数大于 0 的箱（四个数组用同一个掩码）。",
        "book/binary/probability", "binary-calibration-curve",
        {"calibration_curve": {"nan": _curve_empty_kept(float("nan")), "zero": _curve_empty_kept(0.0)}}),
    Misconception(
        "ece_unweighted", "ps4_calibration", "ECE 没有按箱的样本数加权",
        "你的 ECE 似乎是各箱 |正类比例 − 平均概率| 的简单平均。ECE 要按每箱的样本数加权：样本多的箱权重大，"
        "只有一两个样本的箱不应与大箱同等重要。",
        "ECE = Σ (nₖ / n) · |ȳₖ − p̄ₖ|，其中 nₖ 是第 k 箱的样本数。",
        "book/calibration/ece", "cal-ece",
        {"expected_calibration_error": {"unweighted": _ece_unweighted}}),
)

#: The heading under each ``(label)=`` target the catalogue links to (tests/check/test_misconceptions.py reads the pages).
SECTION_TITLES = {
    "binary-fixed-threshold": "固定阈值下的常见指标", "binary-precision": "精确率",
    "binary-fpr-vs-fdr": "假正率与 1 − 精确率不是一回事", "binary-f1": "F1 分数", "binary-confusion-cells": "四个格子",
    "binary-roc-construction": "从得分构造 ROC 曲线", "binary-roc": "ROC 曲线", "apauc-auc-pairs": "分解成正负样本对的平均",
    "apauc-ap-area": "AP 与 PR 曲线下面积", "apauc-ap": "平均精确率 AP", "apauc-ap-ties": "并列得分：同分样本整组进入",
    "binary-ap": "平均精确率 AP", "binary-pr": "Precision-Recall 曲线与 AP", "binary-brier": "Brier 分数",
    "binary-calibration-curve": "校准曲线", "cal-ece": "分箱估计：ECE 与校准曲线",
}

_BY_ID = {m.id: m for m in CATALOGUE}
BOOK_SECTIONS = sorted({(m.page, m.label) for m in CATALOGUE})


def by_id(misconception: str) -> Misconception:
    """The entry called ``misconception`` (``KeyError`` if the catalogue has none)."""
    return _BY_ID[misconception]


def for_assignment(assignment: str) -> list[Misconception]:
    """The entries of one assignment, in catalogue order."""
    return [m for m in CATALOGUE if m.assignment == assignment]

