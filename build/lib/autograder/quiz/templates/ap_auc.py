"""Templates of the chapter on AP, AUC and d' (book/ap_auc/)."""

from __future__ import annotations

import math
from fractions import Fraction
from statistics import NormalDist

import numpy as np

from ... import reference as ref
from ..model import IllPosed
from ..seeds import Draw
from ..template import Candidate, Posed, Template
from ._common import fixed, frac, listing, num, wrong

PHI = NormalDist()


# ---------------------------------------------------------------------------------- ap-points
def _ap_points(draw: Draw) -> Posed:
    n = draw.integer(5, 7)
    y = np.array([draw.integer(0, 1) for _ in range(n)])
    n_pos = int(y.sum())
    if n_pos < 2 or n_pos > n - 2:
        raise IllPosed("needs two of each class")
    s = np.arange(n, 0, -1, dtype=float)
    key = ref.average_precision(y, s)
    trapezoid = wrong("ap_trapezoid", "average_precision", "no_start")(y, s)
    interpolated = wrong("ap_interpolated", "average_precision", "interpolated")(y, s)
    mean_p = wrong("ap_mean_precision", "average_precision", "mean")(y, s)
    tps = np.cumsum(y)
    points = [(Fraction(int(t), n_pos), Fraction(int(t), k)) for k, t in enumerate(tps, start=1)]
    table = "、".join(f"({frac(r)}, {frac(p)})" for r, p in points)
    gains = [(r - r0, p) for (r0, _), (r, p) in zip([(Fraction(0), None), *points[:-1]], points) if r > r0]
    terms = " + ".join(f"{frac(dr)} × {frac(p)}" for dr, p in gains)
    stem = (f"把分类阈值从高到低依次放在 {n} 个不同得分上，PR 曲线依次经过这些点 (召回率, 精确率)：{table}。",
            "由这些点计算平均精确率 AP = Σ (Rₖ − Rₖ₋₁)·Pₖ（R₀ = 0）。AP 等于多少？（保留三位小数）")
    solution = (f"只有召回率增加的点才贡献：AP = {terms} ≈ {key:.3f}。每一项用的是这个点自己的精确率，点与点之间不插值。")
    candidates = (
        Candidate(interpolated, "ap_interpolated", f"{interpolated:.3f} 把每个点的精确率换成了它右侧（召回率更高处）的最大精确率，"
                  "这是插值 AP；课程的 AP 直接用每个点自己的精确率。", required=True),
        Candidate(trapezoid, "ap_trapezoid", f"{trapezoid:.3f} 是相邻两点之间按梯形求的面积；AP 每一项只用当前点的精确率，"
                  "不在点之间做线性插值。", required=True),
        Candidate(mean_p, "ap_mean_precision", f"{mean_p:.3f} 是 {n} 个点的精确率的简单平均，召回率不变的点也算了进去；"
                  "每个精确率要乘以它带来的召回率增量。"),
    )
    return Posed(stem, key, solution, candidates, fixed(3), {"y_true": y.tolist()}, tolerance=0.001)


# ---------------------------------------------------------------------------------- auc-groups
def _auc_groups(draw: Draw) -> Posed:
    levels = sorted(draw.sample([0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9], draw.integer(3, 4)), reverse=True)
    counts = [(draw.integer(0, 4), draw.integer(0, 4)) for _ in levels]
    n_pos, n_neg = sum(c[0] for c in counts), sum(c[1] for c in counts)
    if n_pos < 2 or n_neg < 2 or not any(p and q for p, q in counts):
        raise IllPosed("needs both classes and a tie between them")
    y = np.array([1] * n_pos + [0] * n_neg)
    s = np.array([lv for lv, (p, _) in zip(levels, counts) for _ in range(p)] +
                 [lv for lv, (_, q) in zip(levels, counts) for _ in range(q)])
    key = ref.pairwise_auc(y, s)
    if not 0.5 < key < 1:
        raise IllPosed("a model that ranks worse than chance is another lesson")
    strict = wrong("auc_ties_zero", "pairwise_auc", "strict")(y, s)
    ge = wrong("auc_ties_one", "pairwise_auc", "ge")(y, s)
    rows = "；".join(f"得分 {num(lv)}：正样本 {p} 个、负样本 {q} 个" for lv, (p, q) in zip(levels, counts))
    above = sum(p * sum(q2 for lv2, (_, q2) in zip(levels, counts) if lv2 < lv) for lv, (p, _) in zip(levels, counts))
    tied = sum(p * q for p, q in counts)
    pairs = n_pos * n_neg
    stem = (f"一个模型只给出几种得分。各得分上的样本数是：{rows}。",
            "把 AUC 写成正负样本对的平均（同分的对记 1/2），它等于多少？（保留三位小数）")
    solution = (f"共 {n_pos} × {n_neg} = {pairs} 对。正样本得分更高的对：对每个正样本数出得分比它低的负样本，共 {above} 对；"
                f"同分的对是每种得分上正、负样本数之积的和，共 {tied} 对。AUC = ({above} + {tied}/2)/{pairs} ≈ {key:.3f}。")
    candidates = (
        Candidate(strict, "auc_ties_zero", f"{strict:.3f} = {above}/{pairs} 把同分的 {tied} 对记成了 0。并列的正负样本对计 1/2。",
                  required=True),
        Candidate(ge, "auc_ties_one", f"{ge:.3f} = {above + tied}/{pairs} 把同分的 {tied} 对记成了 1。并列对既不算排对也不算排错。"),
        Candidate(1 - key, "auc_reversed", f"{1 - key:.3f} 是负样本得分更高的对所占的比例（同分记 1/2），即 1 − AUC。"),
    )
    return Posed(stem, key, solution, candidates, fixed(3), {"levels": levels, "counts": [list(c) for c in counts]},
                 tolerance=0.001)


# ---------------------------------------------------------------------------------- ap-ties
def _ap_ties(draw: Draw) -> Posed:
    n = draw.integer(5, 7)
    scores = sorted(draw.sample([0.95, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2], n - 1), reverse=True)
    tied_at = draw.integer(0, n - 2)
    scores.insert(tied_at, scores[tied_at])  # one tie group of two
    y = [draw.integer(0, 1) for _ in range(n)]
    y[tied_at], y[tied_at + 1] = 0, 1  # one negative, one positive in the tie (the negative written first)
    y_arr, s = np.array(y), np.array(scores)
    n_pos = int(y_arr.sum())
    if n_pos < 2 or n_pos == n:
        raise IllPosed("needs two positives and a negative")
    key = ref.average_precision(y_arr, s)
    # Splitting the tie with the positive first: the optimistic order (what a plain sort may give).
    first = np.array(y[:tied_at] + [1, 0] + y[tied_at + 2:])
    split = wrong("ap_ties_split", "average_precision", "input_order")(first, s)
    auc = ref.pairwise_auc(y_arr, s)
    prevalence = n_pos / n
    stem = (f"{n} 个样本的得分从高到低是 {listing(scores)}，对应的真实标签是 {listing(y)}。",
            f"两个 {num(scores[tied_at])} 一正一负；按课程的约定，同分样本整组进入。AP 等于多少？（保留三位小数）")
    solution_terms = []
    tp = 0
    for k in range(n):
        last_of_group = k == n - 1 or scores[k + 1] != scores[k]
        if last_of_group:
            group = [i for i in range(k + 1) if scores[i] == scores[k]]
            new = sum(y[i] for i in group)
            tp += new
            if new:
                solution_terms.append(f"{new}/{n_pos} × {tp}/{k + 1}")
    solution = (f"按得分分组，每组进入后算一次精确率，乘以这一组带来的召回率增量：AP = {' + '.join(solution_terms)} ≈ {key:.3f}。"
                f"并列的那一组一起进入，组里的正类用的是整组进入后的精确率。")
    candidates = (
        Candidate(split, "ap_ties_split", f"{split:.3f} 是把并列的正类排在负类前面的结果：它进入时的精确率被算高了。"
                  "拆开并列等于替模型决定了顺序，同分组应当整组进入。", required=True),
        Candidate(auc, "auc_as_ap", f"{auc:.3f} 是同一组得分的 ROC-AUC（正负样本对中排对的比例，同分记 1/2），不是 AP。"),
        Candidate(prevalence, "ap_as_prevalence", f"{prevalence:.3f} 是正类比例 {n_pos}/{n}，也就是阈值低到全部判为正类时的精确率，"
                  "是毫无信息的排序下 AP 的大致水平；AP 要在每个正类进入时看精确率。"),
    )
    return Posed(stem, key, solution, candidates, fixed(3), {"y_true": y, "y_score": scores}, tolerance=0.001)


# ---------------------------------------------------------------------------------- dprime
def _dprime(draw: Draw) -> Posed:
    auc = draw.integer(60, 98) / 100
    z = PHI.inv_cdf(auc)
    key = ref.d_prime(auc)
    stem = (f"在等方差的双正态模型下，一个模型的 AUC 为 {num(auc)}。换算成 d′ = √2·Φ⁻¹(AUC)，约等于多少？"
            f"（Φ⁻¹({num(auc)}) ≈ {z:.3f}；保留两位小数）",)
    solution = (f"d′ = √2 × {z:.3f} ≈ {key:.2f}：两类得分的均值大约相隔 {key:.2f} 个标准差。"
                "正负样本得分之差的标准差是 √2，所以 AUC = Φ(d′/√2)，反解时要乘回 √2。")
    candidates = (
        Candidate(z, "dprime_no_sqrt2", f"{z:.2f} 只是 Φ⁻¹({num(auc)})，漏乘了 √2。", required=True),
        Candidate(2 * z, "dprime_two", f"{2 * z:.2f} 是 2·Φ⁻¹(AUC)，把 √2 写成了 2。系数来自两个独立得分之差的标准差 √(1² + 1²) = √2。"),
        Candidate(math.sqrt(2) * auc, "dprime_auc_as_z", f"{math.sqrt(2) * auc:.2f} 是 {num(auc)} × √2，把 AUC 本身当成了 z 值；"
                  "先要用标准正态分布的分位数函数把 AUC 换成 z 值。"),
    )
    return Posed(stem, key, solution, candidates, fixed(2), {"auc": auc}, tolerance=0.01, decimals=2)


def phi_table(args: list[float]) -> str:
    """The values of the standard normal distribution function a student needs (and those the mistakes need)."""
    return "、".join(f"Φ({a:.3f}) ≈ {PHI.cdf(a):.3f}" for a in sorted(set(args)))


def auc_of(separation: float) -> float:
    """The AUC of the equal-variance binormal model ``separation`` standard deviations apart, checked against
    :func:`autograder.reference.d_prime` (which converts the other way)."""
    auc = PHI.cdf(separation / math.sqrt(2))
    assert abs(ref.d_prime(auc) - separation) < 1e-9
    return auc


# ---------------------------------------------------------------------------------- auc-from-dprime
def _auc_from_dprime(draw: Draw) -> Posed:
    d = draw.integer(4, 25) / 10
    r = math.sqrt(2)
    key = auc_of(d)
    args = [d / r, d, d * r, d / 2]
    read = {a: PHI.cdf(a) for a in args}
    stem = (f"等方差的双正态模型下，一个模型的 d′ = {num(d)}。它的 AUC 约等于多少？（保留三位小数）",
            f"可能用到的数值：{phi_table(args)}。")
    solution = (f"从正类和负类里各随机抽一个样本，两者得分之差服从均值 d′、方差 2 的正态分布，它大于 0 的概率是 "
                f"Φ(d′/√2) = Φ({d / r:.3f}) ≈ {key:.3f}。")
    candidates = (
        Candidate(read[d], "dprime_no_sqrt2", f"{read[d]:.3f} 是 Φ(d′) = Φ({num(d)})，漏掉了 √2：两个独立得分之差的标准差是 √2，不是 1。",
                  required=True),
        Candidate(read[d * r], "dprime_sqrt2_inverted", f"{read[d * r]:.3f} 是 Φ(d′·√2) = Φ({d * r:.3f})：除以 √2 写成了乘以 √2。",
                  required=True),
        Candidate(read[d / 2], "dprime_two", f"{read[d / 2]:.3f} 是 Φ(d′/2) = Φ({d / 2:.3f})，把 √2 写成了 2。"),
    )
    return Posed(stem, key, solution, candidates, fixed(3), {"d_prime": d}, tolerance=0.001)


TEMPLATES = (
    Template("ap-points", "由 PR 曲线的点算 AP", "ap_auc/ap", "apauc-ap-area", _ap_points, book_form="numeric"),
    Template("auc-groups", "分组计数求 AUC", "ap_auc/auc", "apauc-auc-pairs", _auc_groups, book_form="numeric"),
    Template("ap-ties", "同分样本整组进入的 AP", "ap_auc/ap", "apauc-ap-ties", _ap_ties, quiz=13),
    Template("dprime", "由 AUC 换算 d′", "ap_auc/dprime", "apauc-dprime", _dprime, quiz=15),
    Template("auc-from-dprime", "由 d′ 换算 AUC", "ap_auc/dprime", "apauc-dprime-derivation", _auc_from_dprime,
             book_form="numeric"),
)
