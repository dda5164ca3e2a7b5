"""Templates of the first chapter (book/binary/): confusion matrix, fixed-threshold metrics, costs, ROC, AUC, PR
and AP, Brier score and the calibration curve."""

from __future__ import annotations

import numpy as np

from ... import reference as ref
from ..model import IllPosed
from ..seeds import Draw
from ..template import Candidate, Posed, Template
from ._common import fixed, from_counts, listing, num, percent, point, wrong

TENTHS = [k / 10 for k in range(1, 10)]


def _samples(draw: Draw, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` labels (both classes) and scores on the grid 0.1 .. 0.9."""
    y = np.array([draw.integer(0, 1) for _ in range(n)])
    s = np.array([draw.choice(TENTHS) for _ in range(n)])
    if y.min() == y.max():
        raise IllPosed("one class only")
    return y, s


def _ids(mask: np.ndarray) -> str:
    return listing([i + 1 for i in np.flatnonzero(mask)])


# ---------------------------------------------------------------------------------- confusion-cells
def _confusion_cells(draw: Draw) -> Posed:
    tau = draw.choice([0.4, 0.5, 0.6])
    y, s = _samples(draw, 10)
    at = draw.integer(0, 9)
    y[at], s[at] = 0, tau  # a negative exactly at the threshold: the strict comparison misses it
    m = ref.binary_metrics(y, s, tau)
    strict = wrong("threshold_strict", "binary_metrics", "strict")(y, s, tau)
    swapped = wrong("fp_fn_swapped", "binary_metrics", "swapped")(y, s, tau)
    fp_mask, on_tau = (y == 0) & (s >= tau), (y == 0) & (s == tau)
    stem = (f"十个样本（编号 1–10）的得分依次是 {listing(s)}，真实标签依次是 {listing(y)}（1 为正类，0 为负类）。",
            f"分类阈值 τ = {num(tau)}：得分大于或等于 τ 的样本判为正类。假正例 FP 有几个？")
    solution = (f"得分大于或等于 {num(tau)} 的样本被判为正类；其中真实为负类的是样本 {_ids(fp_mask)}，"
                f"所以 FP = {m.fp}（其中 {int(on_tau.sum())} 个的得分恰好等于阈值，也判为正类）。")
    candidates = (
        Candidate(swapped.fp, "fp_fn_swapped", f"{swapped.fp} 是假负例 FN 的个数：真实为正类、得分低于 {num(tau)} 而被判为负类的样本"
                  f"。假正例是真实为负类、却被判为正类的样本。", required=True),
        Candidate(strict.fp, "threshold_strict", f"{strict.fp} 只数了得分严格大于 {num(tau)} 的负样本，漏掉了得分恰好等于分类阈值的"
                  f" {int(on_tau.sum())} 个。课程的约定是得分大于或等于阈值就判为正类。", required=True),
        Candidate(m.tn, "fp_tn_confused", f"{m.tn} 是真负例 TN：真实为负类、也被判为负类的样本。假正例的“正”说的是预测：被判为正类。"),
        Candidate(m.tp + m.fp, "prediction_only", f"{m.tp + m.fp} 是所有被判为正类的样本数 TP + FP，其中还有真实为正类的样本；"
                  "假正例只数真实为负类的那些。"),
    )
    return Posed(stem, m.fp, solution, candidates, fixed(0), {"y_true": y.tolist(), "y_score": s.tolist(), "threshold": tau},
                 tolerance=0, decimals=0)


# ---------------------------------------------------------------------------------- fixed-metrics
def _fixed_metrics(draw: Draw) -> Posed:
    tp, fp, fn, tn = draw.integer(10, 40), draw.integer(2, 20), draw.integer(2, 20), draw.integer(30, 80)
    y, s = from_counts(tp, fp, fn, tn)
    m = ref.binary_metrics(y, s, 0.5)
    swapped = wrong("precision_recall_swapped", "binary_metrics", "swapped")(y, s, 0.5)
    fdr = wrong("fpr_as_fdr", "binary_metrics", "fdr")(y, s, 0.5)
    n = tp + fp + fn + tn
    key = (m.accuracy, m.precision, m.recall, m.fpr)
    show = point(3)
    stem = (f"一个模型在某个分类阈值下的混淆矩阵是：TP = {tp}，FP = {fp}，FN = {fn}，TN = {tn}。",
            "把准确率、精确率、召回率、假正率依次排成一个四元组（保留三位小数），哪一组是对的？")
    solution = (f"准确率 = (TP + TN)/n = {tp + tn}/{n} ≈ {m.accuracy:.3f}；精确率 = TP/(TP + FP) = {tp}/{tp + fp} ≈ {m.precision:.3f}；"
                f"召回率 = TP/(TP + FN) = {tp}/{tp + fn} ≈ {m.recall:.3f}；假正率 = FP/(FP + TN) = {fp}/{fp + tn} ≈ {m.fpr:.3f}。"
                "四个比例的分母依次是全部样本、判为正类的样本、真实正类和真实负类。")
    candidates = (
        Candidate((m.accuracy, swapped.precision, swapped.recall, m.fpr), "precision_recall_swapped",
                  f"精确率与召回率写反了：精确率的分母是判为正类的样本数 TP + FP = {tp + fp}，召回率的分母是真实正类数 TP + FN = {tp + fn}。",
                  required=True),
        Candidate((m.accuracy, m.precision, m.recall, fdr.fpr), "fpr_as_fdr",
                  f"最后一项 {fdr.fpr:.3f} 是 FP/(FP + TP) = {fp}/{fp + tp}：判为正类的样本中负类所占的比例，即假发现率。"
                  f"假正率的分母是真实负类数 FP + TN = {fp + tn}。", required=True),
        Candidate((m.accuracy, m.precision, m.recall, m.specificity), "specificity_as_fpr",
                  f"最后一项 {m.specificity:.3f} 是特异性 TN/(FP + TN) = {tn}/{fp + tn}：真实负类中被判对的比例。"
                  "假正率是真实负类中被误判为正类的比例，两者之和为 1。"),
    )
    return Posed(stem, key, solution, candidates, show, {"tp": tp, "fp": fp, "fn": fn, "tn": tn}, tolerance=0.0005)


# ---------------------------------------------------------------------------------- fpr-fdr
def _fpr_fdr(draw: Draw) -> Posed:
    tp, fn, fp, tn = draw.integer(20, 80), draw.integer(5, 30), draw.integer(10, 60), draw.integer(100, 400)
    y, s = from_counts(tp, fp, fn, tn)
    m = ref.binary_metrics(y, s, 0.5)
    fdr = wrong("fpr_as_fdr", "binary_metrics", "fdr")(y, s, 0.5)
    n = tp + fp + fn + tn
    stem = (f"一次筛查在某个分类阈值下的结果是：TP = {tp}，FP = {fp}，FN = {fn}，TN = {tn}。",
            "这个分类阈值下的假正率是多少？")
    solution = (f"假正率 = FP/(FP + TN) = {fp}/{fp + tn} ≈ {m.fpr:.3f}：真实负类中被误判为正类的比例。"
                "它只在真实负类内部计算，与正类有多少无关。")
    candidates = (
        Candidate(fdr.fpr, "fpr_as_fdr", f"{fdr.fpr:.3f} 是 FP/(FP + TP) = {fp}/{fp + tp}：判为正类的样本里负类所占的比例。"
                  "这是假发现率（等于 1 − 精确率），分母是判为正类的样本，而不是真实负类。", required=True),
        Candidate(m.specificity, "specificity_as_fpr", f"{m.specificity:.3f} 是特异性 TN/(FP + TN) = {tn}/{fp + tn}："
                  "真实负类中被判对的比例。假正率是 1 减去它。"),
        Candidate(fp / n, "denominator_all", f"{fp / n:.3f} 是 FP/n = {fp}/{n}：分母用了全部样本。假正率的分母只包含真实负类 FP + TN。"),
    )
    return Posed(stem, m.fpr, solution, candidates, fixed(3), {"tp": tp, "fp": fp, "fn": fn, "tn": tn}, tolerance=0.001)


# ---------------------------------------------------------------------------------- expected-cost
def _expected_cost(draw: Draw) -> Posed:
    prior = draw.choice([0.05, 0.1, 0.2, 0.25, 0.3, 0.4])
    tpr = draw.integer(12, 19) / 20
    fpr = draw.integer(1, 8) / 20
    c_fp, c_fn = draw.integer(1, 5), draw.integer(2, 20)
    if c_fp == c_fn:
        raise IllPosed("equal costs")
    key = float(ref.expected_cost(tpr, fpr, prior=prior, c_fp=c_fp, c_fn=c_fn))
    swapped = float(ref.expected_cost(tpr, fpr, prior=prior, c_fp=c_fn, c_fn=c_fp))
    unweighted = c_fp * fpr + c_fn * (1 - tpr)
    recall_as_miss = c_fp * (1 - prior) * fpr + c_fn * prior * tpr
    stem = (f"上线后正类比例 π = {num(prior)}。某个分类阈值下，召回率为 {num(tpr)}，假正率为 {num(fpr)}。"
            f"每个假正例的代价 c_FP = {c_fp}，每个假负例的代价 c_FN = {c_fn}。",
            "平均每个样本的期望误判代价是多少？")
    solution = (f"期望代价 = c_FP·(1 − π)·FPR + c_FN·π·(1 − 召回率) = {c_fp} × {num(1 - prior)} × {num(fpr)} + "
                f"{c_fn} × {num(prior)} × {num(1 - tpr)} ≈ {key:.3f}。假负率是 1 − 召回率，两类的权重是它们上线后的比例。")
    candidates = (
        Candidate(swapped, "costs_swapped", f"{swapped:.3f} 是把 c_FP 乘在了漏掉的正类上、把 c_FN 乘在了误报的负类上。"
                  f"误报一个负类的代价是 c_FP = {c_fp}，漏掉一个正类的代价是 c_FN = {c_fn}。", required=True),
        Candidate(unweighted, "prior_ignored", f"{unweighted:.3f} 是 c_FP·FPR + c_FN·(1 − 召回率)，没有乘以两类的比例 1 − π 与 π。"
                  "FPR 与假负率都是类内的比例，要按上线后两类各占多少加权。", required=True),
        Candidate(recall_as_miss, "recall_as_fnr", f"{recall_as_miss:.3f} 把召回率 {num(tpr)} 当成了漏掉正类的比例。"
                  f"召回率是找到的正类所占的比例，漏掉的比例是假负率 1 − {num(tpr)} = {num(1 - tpr)}。"),
    )
    data = {"prior": prior, "tpr": tpr, "fpr": fpr, "c_fp": c_fp, "c_fn": c_fn}
    return Posed(stem, key, solution, candidates, fixed(3), data, tolerance=0.001)


# ---------------------------------------------------------------------------------- roc-point
def _roc_point(draw: Draw) -> Posed:
    n_pos, n_neg = draw.choice([4, 5]), draw.choice([4, 5])
    y = np.array([1] * n_pos + [0] * n_neg)
    tau = draw.choice([0.3, 0.4, 0.5, 0.6, 0.7])
    s = np.array([draw.choice(TENTHS) for _ in y])
    s[0], s[n_pos] = tau, tau  # a positive and a negative tied exactly at the threshold
    order = draw.shuffled(list(range(y.size)))
    y, s = y[order], s[order]
    m = ref.binary_metrics(y, s, tau)
    strict = wrong("threshold_strict", "binary_metrics", "strict")(y, s, tau)
    fdr = wrong("fpr_as_fdr", "binary_metrics", "fdr")(y, s, tau)
    stem = (f"{y.size} 个样本的得分依次是 {listing(s)}，真实标签依次是 {listing(y)}（1 为正类）。",
            f"分类阈值 τ = {num(tau)}（得分大于或等于 τ 判为正类）对应 ROC 平面上的哪个工作点 (FPR, TPR)？（保留两位小数）")
    solution = (f"判为正类的样本中，真实正类 {m.tp} 个、真实负类 {m.fp} 个（得分等于 {num(tau)} 的样本也算在内）。"
                f"TPR = {m.tp}/{n_pos} = {m.recall:.2f}，FPR = {m.fp}/{n_neg} = {m.fpr:.2f}；横坐标是 FPR，纵坐标是 TPR。")
    candidates = (
        Candidate((m.recall, m.fpr), "roc_axes_swapped", "两个坐标写反了：ROC 平面的横轴是假正率 FPR，纵轴是真正率 TPR（召回率）。",
                  required=True),
        Candidate((strict.fpr, strict.recall), "threshold_strict", f"这是只把得分严格大于 {num(tau)} 的样本判为正类的结果，"
                  "漏掉了恰好落在阈值上的并列样本。得分大于或等于阈值就判为正类。", required=True),
        Candidate((fdr.fpr, m.recall), "fpr_as_fdr", f"横坐标 {fdr.fpr:.2f} 是 FP/(FP + TP)，判为正类的样本中负类的比例（假发现率）。"
                  f"FPR 的分母是真实负类数 {n_neg}。"),
    )
    return Posed(stem, (m.fpr, m.recall), solution, candidates, point(2), {"y_true": y.tolist(), "y_score": s.tolist(),
                                                                           "threshold": tau}, tolerance=0.005, decimals=2)


# ---------------------------------------------------------------------------------- roc-area
def _roc_area(draw: Draw) -> Posed:
    n_pos, n_neg = draw.choice([4, 5]), draw.choice([4, 5])
    y = np.array([1] * n_pos + [0] * n_neg)
    s = np.array([draw.choice([0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8]) for _ in y])
    if not set(s[y == 1]) & set(s[y == 0]):
        raise IllPosed("no tie between the classes: the question is about the slanted segments")
    curve = ref.roc_curve(y, s)
    key = ref.roc_auc(y, s)
    if not 0.5 < key < 1:
        raise IllPosed("a curve below the diagonal is another lesson")
    lower = wrong("auc_ties_zero", "roc_auc", "rectangle")(y, s)
    upper = wrong("auc_ties_one", "roc_auc", "upper")(y, s)
    points = " → ".join(f"({x:.2f}, {t:.2f})" for x, t in zip(curve.fpr, curve.tpr))
    stem = (f"一条 ROC 曲线按阈值从高到低依次经过这些点 (FPR, TPR)：{points}。",
            "用梯形法求曲线下面积 AUC（保留三位小数）。")
    solution = (f"每一段的面积是宽度 × 两端高度的平均，加起来得 AUC ≈ {key:.3f}。"
                "斜着走的那一段来自并列得分的正负样本，梯形法取斜线下的面积，相当于把这些并列对各计 1/2。")
    candidates = (
        Candidate(lower, "auc_ties_zero", f"{lower:.3f} 是每一段都用左端（较低）的高度乘宽度，即阶梯下方的矩形："
                  "斜线段下的三角形被漏掉了，相当于把并列的正负样本对计 0。", required=True),
        Candidate(upper, "auc_ties_one", f"{upper:.3f} 是每一段都用右端（较高）的高度乘宽度，斜线段上方的三角形被多算了，"
                  "相当于把并列的正负样本对计 1。", required=True),
        Candidate(1 - key, "auc_reversed", f"{1 - key:.3f} 是曲线上方的面积 1 − AUC，相当于把排反的样本对当成了排对的。"),
    )
    return Posed(stem, key, solution, candidates, fixed(3), {"y_true": y.tolist(), "y_score": s.tolist(),
                                                             "fpr": curve.fpr.tolist(), "tpr": curve.tpr.tolist()},
                 tolerance=0.001)


# ---------------------------------------------------------------------------------- auc-pairs
def _auc_pairs(draw: Draw) -> Posed:
    n_pos, n_neg = draw.choice([2, 3]), draw.choice([2, 3])
    pos = sorted((draw.choice(TENTHS[2:]) for _ in range(n_pos)), reverse=True)  # positives tend to score higher
    neg = sorted((draw.choice(TENTHS[:-2]) for _ in range(n_neg)), reverse=True)
    y = np.array([1] * n_pos + [0] * n_neg)
    s = np.array(pos + neg)
    wins = sum(p > q for p in pos for q in neg)
    ties = sum(p == q for p in pos for q in neg)
    if ties == 0:
        raise IllPosed("no tied pair")
    key = ref.pairwise_auc(y, s)
    if not 0.5 < key < 1:
        raise IllPosed("a model that ranks worse than chance is another lesson")
    strict = wrong("auc_ties_zero", "pairwise_auc", "strict")(y, s)
    ge = wrong("auc_ties_one", "pairwise_auc", "ge")(y, s)
    pairs = n_pos * n_neg
    stem = (f"{n_pos} 个正样本的得分是 {listing(pos)}，{n_neg} 个负样本的得分是 {listing(neg)}。",
            "让每个正样本和每个负样本各比一次：正样本得分高记 1 分，同分记半分，负样本得分高记 0 分。"
            "所有比较的平均分就是 AUC，它等于多少？（保留三位小数）")
    solution = (f"共 {n_pos} × {n_neg} = {pairs} 对：正样本得分更高的 {wins} 对，同分的 {ties} 对。"
                f"AUC = ({wins} + {ties}/2)/{pairs} ≈ {key:.3f}。")
    candidates = (
        Candidate(strict, "auc_ties_zero", f"{strict:.3f} = {wins}/{pairs} 把同分的 {ties} 对记成了 0 分；按规则同分记半分。",
                  required=True),
        Candidate(ge, "auc_ties_one", f"{ge:.3f} = {wins + ties}/{pairs} 把同分的 {ties} 对记成了 1 分；同分既不算排对也不算排错，记半分。"),
        Candidate(1 - key, "auc_reversed", f"{1 - key:.3f} 是负样本得分更高的对（同分记半分）所占的比例，即 1 − AUC："
                  "把排反的样本对当成了排对的。"),
    )
    return Posed(stem, key, solution, candidates, fixed(3), {"positive": pos, "negative": neg}, tolerance=0.001)


# ---------------------------------------------------------------------------------- ap-ranking
def _ap_ranking(draw: Draw) -> Posed:
    n = draw.integer(4, 7)
    y = np.array([draw.integer(0, 1) for _ in range(n)])
    if y.sum() < 2 or y.sum() == n:
        raise IllPosed("needs two positives and a negative")
    s = np.arange(n, 0, -1, dtype=float)  # ranked from the highest score down
    key = ref.average_precision(y, s)
    trapezoid = wrong("ap_trapezoid", "average_precision", "from_one")(y, s)
    mean_p = wrong("ap_mean_precision", "average_precision", "mean")(y, s)
    interpolated = wrong("ap_interpolated", "average_precision", "interpolated")(y, s)
    auc = ref.roc_auc(y, s)
    hits = np.flatnonzero(y) + 1
    terms = " + ".join(f"{k}/{r}" for k, r in zip(range(1, hits.size + 1), hits))
    stem = (f"把 {n} 个样本按得分从高到低排好，真实标签依次是 ({', '.join(map(str, y))})。",
            "用正文中 AP 的求和式：每遇到一个正类，就把“召回率的增量 × 此刻的精确率”加进来。AP 等于多少？（保留三位小数）")
    solution = (f"正类排在第 {listing(hits)} 位，它们进入时的精确率依次是 {terms.replace(' + ', '、')}；"
                f"每个正类带来 1/{hits.size} 的召回率增量，AP = ({terms})/{hits.size} ≈ {key:.3f}。")
    candidates = (
        Candidate(trapezoid, "ap_trapezoid", f"{trapezoid:.3f} 是把 PR 曲线上的点（从 (0, 1) 开始）用梯形连起来得到的面积。"
                  "AP 不在点之间插值，每一项只用当前点的精确率。", required=True),
        Candidate(mean_p, "ap_mean_precision", f"{mean_p:.3f} 是 PR 曲线上所有点的精确率的简单平均，连负样本进入的点也算了进去；"
                  "AP 只在召回率增加的地方计入精确率，并按召回率的增量加权。"),
        Candidate(auc, "auc_as_ap", f"{auc:.3f} 是这个排序的 ROC-AUC（正负样本对中排对的比例），不是 AP。"),
        Candidate(interpolated, "ap_interpolated", f"{interpolated:.3f} 把每个点的精确率换成了它右侧的最大精确率（插值 AP）；"
                  "课程的 AP 用每个点自己的精确率。"),
    )
    return Posed(stem, key, solution, candidates, fixed(3), {"y_true": y.tolist()}, tolerance=0.001)


# ---------------------------------------------------------------------------------- brier
def _brier(draw: Draw) -> Posed:
    n = draw.integer(3, 5)
    y = np.array([draw.integer(0, 1) for _ in range(n)])
    p = np.array([draw.choice(TENTHS) for _ in range(n)])
    if y.min() == y.max():
        raise IllPosed("one class only")
    key = ref.brier_score(y, p)
    total = wrong("brier_sum", "brier_score", "sum")(y, p)
    hard = wrong("brier_thresholded", "brier_score", "ge")(y, p)
    absolute = float(np.mean(np.abs(p - y)))
    squares = [round((pi - yi) ** 2, 4) for pi, yi in zip(p, y)]
    stem = (f"{n} 个样本的标签依次为 ({', '.join(map(str, y))})（1 为正类）；对这几个样本，模型报出的正类概率依次为 "
            f"({', '.join(num(x) for x in p)})。",
            "Brier 分数把每个样本的“概率减标签”平方后取平均。它等于多少？（保留三位小数）")
    solution = (f"每个样本的平方误差依次是 {listing(squares)}，平均为 {num(sum(squares))}/{n} ≈ {key:.3f}。")
    candidates = (
        Candidate(total, "brier_sum", f"{total:.3f} 是平方误差之和 {num(sum(squares))}，忘了除以样本数 {n}。", required=True),
        Candidate(hard, "brier_thresholded", f"{hard:.3f} 是先把概率按 0.5 变成 0/1 标签再比较的结果，那是错误率；"
                  "Brier 分数直接用概率。"),
        Candidate(absolute, "brier_absolute", f"{absolute:.3f} 是 |概率 − 标签| 的平均，忘了平方。"),
    )
    return Posed(stem, key, solution, candidates, fixed(3), {"y_true": y.tolist(), "y_prob": p.tolist()}, tolerance=0.001)


# ---------------------------------------------------------------------------------- calibration-point
def _calibration_point(draw: Draw) -> Posed:
    mean_p = draw.integer(2, 18) / 20
    share = draw.integer(2, 18) / 20
    if abs(mean_p - share) < 0.1:
        raise IllPosed("too close to the diagonal to read")
    over = mean_p > share
    side, other = ("下方", "上方") if over else ("上方", "下方")
    said, unsaid = ("高", "低") if over else ("低", "高")
    a, b = num(mean_p), num(share)
    key = f"点是 ({a}, {b})，在对角线{side}，这一档的概率报{said}了"
    stem = (f"校准曲线上的某一个箱里，模型给出的正类概率平均为 {a}，而箱中样本真正属于正类的比例是 {b}。哪一种读法是对的？",)
    solution = (f"横坐标是箱内的平均预测概率 {a}，纵坐标是实际正类比例 {b}；{b} {'<' if over else '>'} {a}，"
                f"点在对角线 y = x 的{side}，模型在这一档把正类概率报{said}了。")
    candidates = (
        Candidate(f"点是 ({b}, {a})，在对角线{other}，这一档的概率报{unsaid}了", "calibration_axes_swapped",
                  "两个坐标弄反了：校准曲线的横轴是平均预测概率，纵轴是实际正类比例。坐标一反，点落到对角线另一侧，结论也跟着反了。",
                  required=True),
        Candidate(f"点是 ({a}, {b})，在对角线{side}，这一档的概率报{unsaid}了", "calibration_direction_reversed",
                  f"点的位置对，方向判断反了：模型说 {a}，实际是 {b}，是报{said}了。点在对角线下方表示报高，在上方表示报低。",
                  required=True),
        Candidate(f"点是 ({a}, {b})，离对角线这么远，说明模型的 AUC 一定很低", "calibration_as_ranking",
                  "校准看概率的数值可不可靠，AUC 看排序；把所有概率按同一种单调方式改一改，可以改变校准而不改变 AUC。"
                  "一个箱报得不准，说明不了排序的好坏。"),
    )
    return Posed(stem, key, solution, candidates, str, {"mean_predicted": mean_p, "fraction_positive": share})


# ---------------------------------------------------------------------------------- pr-baseline
def _pr_baseline(draw: Draw) -> Posed:
    prior = draw.integer(1, 45) / 100
    # What an uninformative ranking scores on a data set of 1000 samples in these proportions: every pair of a
    # positive and a negative is ranked either way as often (AUC 0.5), and every threshold keeps the share of
    # positives among those it selects (precision = prior).
    n_pos = round(1000 * prior)
    y = np.array([1] * n_pos + [0] * (1000 - n_pos))
    s = np.zeros(1000)  # one score for everyone: the ranking says nothing
    key = (ref.roc_auc(y, s), ref.binary_metrics(y, s, 0.0).precision)
    stem = (f"一份数据中正类占 {percent(prior)}，而模型的得分与真实标签毫无关系。"
            "作为“没有区分能力”的参照，ROC-AUC 和 PR 曲线上的精确率各是多少？（依次写成 (AUC, 精确率)）",)
    solution = (f"得分与标签无关时，一个正样本和一个负样本谁的得分高各占一半，AUC 的期望是 0.5，与正类比例无关；"
                f"任何分类阈值选出的样本里，正类所占的比例都约等于整体的正类比例 {num(prior)}，所以精确率的参照是 {num(prior)}。")
    candidates = (
        Candidate((0.5, 0.5), "pr_baseline_half", "ROC-AUC 的参照 0.5 没错，但 PR 曲线的参照不是 0.5：得分毫无信息时，"
                  f"选出的样本里正类的比例就是整体的正类比例 {num(prior)}。", required=True),
        Candidate((prior, prior), "auc_baseline_prevalence", f"精确率的参照 {num(prior)} 没错，但 AUC 的参照始终是 0.5："
                  "它只在正类与负类之间比较排序，与两类各有多少无关。", required=True),
        Candidate((0.5, 1 - prior), "baseline_negative_share", f"{num(1 - prior)} 是负类的比例；精确率是选出的样本中正类所占的比例，"
                  f"得分毫无信息时约等于 {num(prior)}。"),
    )
    return Posed(stem, key, solution, candidates, point(2), {"prior": prior}, tolerance=0.005, decimals=2)


# ---------------------------------------------------------------------------------- brier-compare
def _brier_compare(draw: Draw) -> Posed:
    label = draw.integer(0, 1)
    near, far = sorted(draw.sample([0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95], 2), reverse=True)
    p_near, p_far = (near, far) if label == 1 else (round(1 - near, 2), round(1 - far, 2))  # near: closer to the label
    first_is_near = draw.integer(0, 1) == 1
    p_a, p_b = (p_near, p_far) if first_is_near else (p_far, p_near)
    e_a, e_b = (p_a - label) ** 2, (p_b - label) ** 2
    assert abs(e_a - ref.brier_score([label], [p_a])) < 1e-12 and abs(e_b - ref.brier_score([label], [p_b])) < 1e-12
    better, worse = ("模型甲", "模型乙") if e_a < e_b else ("模型乙", "模型甲")
    kind = "正类" if label == 1 else "负类"
    stem = (f"有一个{kind}样本（y = {label}）。模型甲给它的正类概率是 {num(p_a)}，模型乙给的是 {num(p_b)}。"
            "单看这一个样本，谁的 Brier 平方误差更小？",)
    solution = (f"模型甲：({num(p_a)} − {label})² = {num(round(e_a, 4))}；模型乙：({num(p_b)} − {label})² = {num(round(e_b, 4))}。"
                f"概率离真实标签 {label} 越近，平方误差越小，所以是{better}。")
    candidates = (
        Candidate(worse, "conservative_better", f"{worse}给出的概率离 0.5 更近，看上去更“稳妥”，可这个样本确实是{kind}，"
                  f"离标签 {label} 更远的概率误差更大：{num(round(max(e_a, e_b), 4))} 大于 {num(round(min(e_a, e_b), 4))}。",
                  required=True),
        Candidate("两个模型相同", "brier_thresholded", "两个概率在 0.5 的同一侧，按 0.5 分类时两个模型给出同一个标签；"
                  "但 Brier 分数直接比较概率，两个平方误差并不相同。", required=True),
    )
    return Posed(stem, better, solution, candidates, str, {"label": label, "p_a": p_a, "p_b": p_b}, distractors=2)


TEMPLATES = (
    Template("confusion-cells", "数出混淆矩阵的一格", "binary/confusion", "binary-confusion-cells", _confusion_cells,
             book_form="numeric"),
    Template("fixed-metrics", "由混淆矩阵算四个指标", "binary/fixed_threshold", "binary-fixed-threshold", _fixed_metrics,
             forms=("choice",), quiz=1),
    Template("fpr-fdr", "假正率与假发现率", "binary/fixed_threshold", "binary-fpr-vs-fdr", _fpr_fdr, book_form="numeric"),
    Template("expected-cost", "期望误判代价", "binary/thresholds_costs", "binary-cost", _expected_cost, book_form="numeric"),
    Template("roc-point", "一个分类阈值的工作点", "binary/roc", "binary-roc-construction", _roc_point, forms=("choice",)),
    Template("roc-area", "梯形法求 AUC", "binary/auc", "binary-auc", _roc_area, book_form="numeric"),
    Template("auc-pairs", "按样本对数出 AUC", "binary/auc", "binary-auc", _auc_pairs, quiz=5),
    Template("ap-ranking", "逐个正类累加 AP", "binary/pr", "binary-ap", _ap_ranking, quiz=7),
    Template("pr-baseline", "毫无信息时的两条参照", "binary/pr", "binary-pr", _pr_baseline, forms=("choice",), quiz=6),
    Template("brier", "Brier 分数", "binary/probability", "binary-brier", _brier, quiz=9),
    Template("calibration-point", "读校准曲线上的一个点", "binary/probability", "binary-calibration-curve", _calibration_point,
             forms=("choice",), quiz=10),
    Template("brier-compare", "一个样本上比较两个模型", "binary/probability", "binary-brier", _brier_compare,
             forms=("choice",), quiz=11),
)
