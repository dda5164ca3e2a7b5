"""Templates of the calibration chapter (book/calibration/): the calibration error of a population, binned ECE,
mean matching."""

from __future__ import annotations

import numpy as np

from ... import reference as ref
from ..model import IllPosed
from ..seeds import Draw
from ..template import Candidate, Posed, Template
from ._common import fixed, listing, num, percent, wrong


def _dataset(reports: list[float], counts: list[int], positives: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """Labels and probabilities: ``counts[k]`` samples reporting ``reports[k]``, ``positives[k]`` of them positive."""
    y = np.concatenate([[1] * k + [0] * (n - k) for n, k in zip(counts, positives)])
    p = np.concatenate([[r] * n for r, n in zip(reports, counts)])
    return y, p


def _ece_of_levels(reports: list[float], counts: list[int], positives: list[int]) -> float:
    """ECE with ten equal-width bins of a data set whose reports are distinct tenths (one report per bin)."""
    y, p = _dataset(reports, counts, positives)
    return ref.expected_calibration_error(y, p, n_bins=10)


def _levels(draw: Draw, k: int) -> tuple[list[float], list[int], list[float]]:
    """``k`` distinct reports (tenths), their shares of 10 and the true positive rate at each (tenths)."""
    reports = sorted(draw.sample([x / 10 for x in range(1, 10)], k))
    cuts = sorted(draw.sample(list(range(1, 10)), k - 1))
    shares = [b - a for a, b in zip([0, *cuts], [*cuts, 10])]
    rates = [draw.integer(1, 9) / 10 for _ in reports]
    return reports, shares, rates


# ---------------------------------------------------------------------------------- ce-population
def _ce_population(draw: Draw) -> Posed:
    reports, shares, rates = _levels(draw, draw.choice([2, 3]))
    gaps = [eta - s for s, eta in zip(reports, rates)]
    if not (any(g > 0 for g in gaps) and any(g < 0 for g in gaps)):
        raise IllPosed("the question needs gaps of both signs")
    counts = [10 * w for w in shares]  # a population of 100 in these proportions
    key = _ece_of_levels(reports, counts, [round(n * eta) for n, eta in zip(counts, rates)])
    weights = [w / 10 for w in shares]
    unweighted = float(np.mean(np.abs(gaps)))
    signed = abs(sum(w * g for w, g in zip(weights, gaps)))
    largest = max(abs(g) for g in gaps)
    parts = "；".join(f"报告 {num(s)} 的输入占 {percent(w)}，其中正类的比例是 {num(eta)}" for s, w, eta in zip(reports, weights, rates))
    terms = " + ".join(f"{num(w)} × {num(abs(g))}" for w, g in zip(weights, gaps))
    stem = (f"一个预测器只会报告 {len(reports)} 个数：{listing(reports)}。在总体中，{parts}。",
            "它的总体校准误差 CE₁ = E|m(S) − S| 是多少？（m(s) 是报告为 s 的输入中正类的比例；保留三位小数）")
    solution = (f"CE₁ 对每一档报告取 |m(s) − s|，再按这一档在总体中所占的比例加权：{terms} = {key:.3f}。")
    candidates = (
        Candidate(unweighted, "ece_unweighted", f"{unweighted:.3f} 是各档 |m(s) − s| 的简单平均。总体里各档报告出现得不一样多，"
                  "要按它们所占的比例加权。", required=True),
        Candidate(signed, "calibration_signed_gaps", f"{signed:.3f} 是先把带符号的差 m(s) − s 加权平均、再取绝对值：有的档报高、"
                  "有的档报低，正负偏差互相抵消了。这只检查了均值匹配，不是校准误差。", required=True),
        Candidate(largest, "calibration_max_gap", f"{largest:.3f} 只取了偏差最大的那一档；CE₁ 是所有档偏差的加权平均。"),
    )
    return Posed(stem, key, solution, candidates, fixed(3), {"reports": reports, "shares": weights, "rates": rates},
                 tolerance=0.001)


# ---------------------------------------------------------------------------------- ece-samples
#: Probabilities on a grid of 0.05 whose bin edges (0.25, 0.5, 0.75 for four bins) are exact binary fractions.
GRID = [k / 20 for k in range(1, 20)]
EDGES = (0.25, 0.5, 0.75)


def _ece_samples(draw: Draw) -> Posed:
    n = draw.integer(8, 10)
    p = np.array([draw.choice(GRID) for _ in range(n)])
    p[draw.integer(0, n - 1)] = draw.choice(EDGES)  # a sample on an edge: which bin it joins is the point
    y = np.array([draw.integer(0, 1) for _ in range(n)])
    key = ref.expected_calibration_error(y, p, n_bins=4)
    left = wrong("calibration_left_closed", "calibration_curve", "left")(y, p, n_bins=4)
    left_ece = float(np.sum(left.count / n * np.abs(left.fraction_positive - left.mean_predicted)))
    unweighted = wrong("ece_unweighted", "expected_calibration_error", "unweighted")(y, p, n_bins=4)
    c = ref.calibration_curve(y, p, n_bins=4)
    largest = float(np.max(np.abs(c.fraction_positive - c.mean_predicted)))
    on_edge = sorted({num(x) for x in p if x in EDGES})
    stem = (f"{n} 个样本的预测概率依次是 {listing(p)}，真实标签依次是 {listing(y)}。",
            "用 4 个等宽的箱 [0, 0.25]、(0.25, 0.5]、(0.5, 0.75]、(0.75, 1] 计算 ECE（恰好落在边界上的概率归入左边的箱）。"
            "ECE 等于多少？（保留三位小数）")
    rows = "；".join(f"{'[' if lo == 0 else '('}{num(lo)}, {num(hi)}] 中 {k} 个样本，平均概率 {m:.3f}，正类比例 {f:.3f}"
                     for (lo, hi), k, m, f in zip(c.bin_edges, c.count, c.mean_predicted, c.fraction_positive))
    solution = (f"非空的箱：{rows}。ECE = Σ (nⱼ/n)·|正类比例 − 平均概率| ≈ {key:.3f}。")
    candidates = (
        Candidate(left_ece, "calibration_left_closed", f"{left_ece:.3f} 是把恰好等于边界的概率（{listing(on_edge)}）放进右边的箱得到的；"
                  "课程的箱是左开右闭的，边界上的值归入左边的箱。", required=True),
        Candidate(unweighted, "ece_unweighted", f"{unweighted:.3f} 是各个非空箱的 |正类比例 − 平均概率| 的简单平均；"
                  "ECE 要按每箱的样本数加权。", required=True),
        Candidate(largest, "calibration_max_gap", f"{largest:.3f} 只取了差距最大的那一箱；ECE 是各箱差距按样本数的加权平均。"),
    )
    return Posed(stem, key, solution, candidates, fixed(3), {"y_true": y.tolist(), "y_prob": p.tolist(), "n_bins": 4},
                 tolerance=0.001)


# ---------------------------------------------------------------------------------- mean-matching
def _mean_matching(draw: Draw) -> Posed:
    reports = sorted(draw.sample([x / 10 for x in range(1, 10)], 3))
    counts = [draw.integer(2, 8) * 5 for _ in reports]
    # each level's positive share within 0.3 of its report: a model that is off, not absurd
    positives = [round(n * min(1.0, max(0.0, r + draw.integer(-6, 6) / 20))) for r, n in zip(reports, counts)]
    y, p = _dataset(reports, counts, positives)
    n = int(y.size)
    key = float(np.mean(p) - np.mean(y))
    if key == 0:
        raise IllPosed("a zero difference has no direction to get wrong")
    ece = _ece_of_levels(reports, counts, positives)
    rates = [k / m for k, m in zip(positives, counts)]
    unweighted = float(np.mean(reports) - np.mean(rates))
    rows = "；".join(f"报告 {num(r)} 的样本 {m} 个，其中正类 {k} 个" for r, m, k in zip(reports, counts, positives))
    stem = (f"一个模型在 {n} 个样本上只报告了三个概率：{rows}。",
            "整体上，平均预测概率比实际正类比例高多少？（报告偏低时填负数；保留三位小数）")
    solution = (f"平均预测概率 = ({' + '.join(f'{num(r)} × {m}' for r, m in zip(reports, counts))})/{n} ≈ {np.mean(p):.3f}，"
                f"正类比例 = {sum(positives)}/{n} ≈ {np.mean(y):.3f}，差为 {key:.3f}。这是“均值匹配”检查的量，"
                "它为 0 并不说明每一档都校准了。")
    candidates = (
        Candidate(-key, "sign_reversed", f"{-key:.3f} 是正类比例减平均预测概率，差的方向弄反了：题目问的是预测比实际高多少。", required=True),
        Candidate(ece, "mean_as_ece", f"{ece:.3f} 是 ECE：每一档的 |正类比例 − 报告| 按样本数加权平均。均值之差先把各档的偏差"
                  "相加、允许它们抵消，再比较。", required=True),
        Candidate(unweighted, "mean_unweighted", f"{unweighted:.3f} 是三个报告的简单平均减三档正类比例的简单平均；"
                  "三档的样本数不同，要按样本数加权。"),
    )
    return Posed(stem, key, solution, candidates, fixed(3), {"reports": reports, "counts": counts, "positives": positives},
                 tolerance=0.001)


# ---------------------------------------------------------------------------------- ece-bins
def _ece_bins(draw: Draw) -> Posed:
    k = draw.choice([2, 3])
    reports = sorted(draw.sample([x / 10 for x in range(1, 10)], k))
    counts = [draw.integer(2, 8) for _ in reports]
    positives = [draw.integer(0, m) for m in counts]
    n = sum(counts)
    key = _ece_of_levels(reports, counts, positives)
    rates = [q / m for q, m in zip(positives, counts)]
    gaps = [abs(r - s) for r, s in zip(rates, reports)]
    unweighted, largest, total = float(np.mean(gaps)), max(gaps), sum(gaps)
    rows = "；".join(f"第 {i} 箱 {m} 个样本，预测概率都是 {num(s)}，其中 {q} 个正类" for i, (m, s, q) in
                     enumerate(zip(counts, reports, positives), start=1))
    stem = (f"{n} 个样本分进 {k} 个箱：{rows}。按样本数加权的 ECE 等于多少？（保留三位小数）",)
    terms = " + ".join(f"{m}/{n} × {g:.3f}" for m, g in zip(counts, gaps))
    solution = f"各箱的差距 |正类比例 − 预测概率| 依次是 {listing(gaps, lambda g: f'{g:.3f}')}；按样本数加权：{terms} ≈ {key:.3f}。"
    candidates = (
        Candidate(unweighted, "ece_unweighted", f"{unweighted:.3f} 是各箱差距的简单平均；ECE 按每箱的样本数加权。", required=True),
        Candidate(largest, "calibration_max_gap", f"{largest:.3f} 是差距最大的那一箱；ECE 是各箱差距的加权平均。"),
        Candidate(total, "calibration_gaps_summed", f"{total:.3f} 是各箱差距直接相加；ECE 的权重是每箱样本数占总数的比例，权重之和为 1。"),
    )
    return Posed(stem, key, solution, candidates, fixed(3), {"reports": reports, "counts": counts, "positives": positives},
                 tolerance=0.001)


TEMPLATES = (
    Template("ce-population", "总体校准误差", "calibration/definition", "cal-definition", _ce_population, book_form="numeric"),
    Template("ece-samples", "由样本算分箱 ECE", "calibration/ece", "cal-ece", _ece_samples, book_form="numeric"),
    Template("mean-matching", "均值匹配的差", "calibration/beyond_mean", "cal-beyond-mean", _mean_matching, book_form="numeric"),
    Template("ece-bins", "按箱计算 ECE", "calibration/ece", "cal-ece", _ece_bins, quiz=16),
)
