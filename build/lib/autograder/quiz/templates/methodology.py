"""Templates of the chapter on evaluation methods (book/methodology/): nested cross-validation, the bootstrap and
the .632 estimator, confidence intervals of a proportion, McNemar's test, macro averages, RMSE.

Where :mod:`autograder.reference` has the function (a proportion's interval, a class's recall), the key is
computed with it; the others are arithmetic the book's formula states, checked by ``tests/quiz`` against an
independent computation (a loop that counts fits, statsmodels, scikit-learn).
"""

from __future__ import annotations

import math

import numpy as np

from ... import reference as ref
from ..model import IllPosed
from ..seeds import Draw
from ..template import Candidate, Posed, Template
from ._common import fixed, interval, listing, num

Z95 = 1.959963984540054  # the 0.975 quantile of the standard normal distribution
Z90 = 1.6448536269514722


# ---------------------------------------------------------------------------------- nested-cv
def _nested_cv(draw: Draw) -> Posed:
    outer, inner, configs = draw.choice([3, 4, 5, 10]), draw.choice([3, 4, 5]), draw.integer(2, 8)
    per_fold = inner * configs + 1
    key = outer * per_fold
    stem = (f"嵌套交叉验证：外层 {outer} 折，内层 {inner} 折，候选超参数配置 {configs} 种。在外层的每一折上，内层对每种配置做一次 "
            f"{inner} 折交叉验证，选出最好的配置后，在这一折的训练部分上用它重新训练一次，再到留出的那一折上评估。",
            "不算最后在全部数据上的那次训练，一共要训练多少次模型？")
    solution = (f"外层每一折：内层 {inner} × {configs} = {inner * configs} 次，加上选出配置后的 1 次重新训练，共 {per_fold} 次；"
                f"外层 {outer} 折，共 {outer} × {per_fold} = {key} 次。")
    candidates = (
        Candidate(outer * inner * configs, "nested_no_refit", f"{outer * inner * configs} = {outer} × {inner} × {configs} 只数了内层的训练，"
                  "漏掉了外层每一折上用选中的配置重新训练的那一次。", required=True),
        Candidate(outer * inner * configs + 1, "nested_refit_once", f"{outer * inner * configs + 1} 把重新训练只算了一次；"
                  f"外层的每一折都要重新选配置、重新训练，共 {outer} 次。", required=True),
        Candidate(outer + inner * configs, "nested_added", f"{outer + inner * configs} = {outer} + {inner} × {configs}：两层是嵌套的，"
                  "外层的每一折都要完整跑一遍内层，次数相乘而不是相加。"),
    )
    return Posed(stem, key, solution, candidates, fixed(0), {"outer": outer, "inner": inner, "configs": configs},
                 tolerance=0, decimals=0)


# ---------------------------------------------------------------------------------- e632
def _e632(draw: Draw) -> Posed:
    apparent = draw.integer(0, 20) / 100
    loo_boot = draw.integer(15, 45) / 100
    if loo_boot - apparent < 0.05:
        raise IllPosed("the two errors are too close")
    key = 0.368 * apparent + 0.632 * loo_boot
    stem = (f"一个分类器的表观误差（训练集上的错误率）是 {num(apparent)}，留一自助误差 ε⁽¹⁾ 是 {num(loo_boot)}。",
            ".632 估计量给出的错误率是多少？（保留三位小数）")
    solution = (f".632 估计量 = 0.368 × 表观误差 + 0.632 × ε⁽¹⁾ = 0.368 × {num(apparent)} + 0.632 × {num(loo_boot)} ≈ {key:.3f}。"
                "表观误差偏乐观、ε⁽¹⁾ 偏悲观，较大的权重 0.632 = 1 − e⁻¹ 给的是 ε⁽¹⁾。")
    swapped = 0.632 * apparent + 0.368 * loo_boot
    mean = (apparent + loo_boot) / 2
    candidates = (
        Candidate(swapped, "e632_weights_swapped", f"{swapped:.3f} 把两个权重对调了：0.632 应乘在留一自助误差上，"
                  "0.368 乘在表观误差上。", required=True),
        Candidate(mean, "e632_plain_mean", f"{mean:.3f} 是两种误差的简单平均；.632 估计量的权重是 0.368 和 0.632。"),
        Candidate(loo_boot, "e632_oob_only", f"{num(loo_boot)} 只是留一自助误差本身，它偏悲观；.632 估计量把它与表观误差加权平均。"),
    )
    return Posed(stem, key, solution, candidates, fixed(3), {"apparent": apparent, "loo_bootstrap": loo_boot}, tolerance=0.001)


# ---------------------------------------------------------------------------------- wilson
def _wilson(draw: Draw) -> Posed:
    n = draw.integer(20, 200)
    k = draw.integer(1, max(1, n // 5))
    ci = ref.proportion_ci(k, n)
    narrow = ref.proportion_ci(k, n, confidence=0.90)
    theta = k / n
    half = Z95 * math.sqrt(theta * (1 - theta) / n)
    wald = (max(0.0, theta - half), theta + half)
    w_half = (ci.high - ci.low) / 2
    centered = (max(0.0, theta - w_half), theta + w_half)
    stem = (f"一个模型在 {n} 个测试样本上判错了 {k} 个。错误率的 95% Wilson 置信区间是哪一个？（保留三位小数）",)
    center = (k + Z95 ** 2 / 2) / (n + Z95 ** 2)
    solution = (f"θ̂ = {k}/{n}，z ≈ 1.96。Wilson 置信区间的中心是 (k + z²/2)/(n + z²) ≈ {center:.3f}，被拉向 1/2；"
                f"半宽 z·√(nθ̂(1 − θ̂) + z²/4)/(n + z²) ≈ {w_half:.3f}，所以置信区间是 [{ci.low:.3f}, {ci.high:.3f}]。")
    candidates = (
        Candidate(wald, "wald_interval", "这是 Wald 置信区间 θ̂ ± z·√(θ̂(1 − θ̂)/n)（下限截在 0）。它把方差里的 θ 换成了 θ̂，"
                  "θ̂ 靠近 0 时表现很差。", required=True),
        Candidate((narrow.low, narrow.high), "z_one_sided", "这是用 z ≈ 1.645 算出的 Wilson 置信区间，即 90% 的双侧置信区间。"
                  "95% 的双侧置信区间要用标准正态分布的 0.975 分位数 1.96。", required=True),
        Candidate(centered, "wilson_centered", f"这是以 θ̂ = {num(round(theta, 4))} 为中心、用 Wilson 的半宽得到的置信区间。"
                  "Wilson 置信区间的中心是 (k + z²/2)/(n + z²)，比 θ̂ 更靠近 1/2。"),
    )
    return Posed(stem, (ci.low, ci.high), solution, candidates, interval(3), {"k": k, "n": n}, tolerance=0.0005)


# ---------------------------------------------------------------------------------- wilson-zero
def _wilson_zero(draw: Draw) -> Posed:
    n = draw.integer(10, 300)
    ci = ref.proportion_ci(0, n)
    narrow = ref.proportion_ci(0, n, confidence=0.90)
    stem = (f"一个模型在 {n} 个测试样本上一个都没有判错。错误率的 95% Wilson 置信区间是哪一个？（保留三位小数）",)
    solution = (f"k = 0 时 Wilson 置信区间的下限是 0，上限是 (z²/n)/(1 + z²/n)，取 z ≈ 1.96、n = {n} 得约 {ci.high:.3f}："
                f"总体错误率高到这个程度，也可能在 {n} 次中恰好一次不错。")
    candidates = (
        Candidate((0.0, 0.0), "wald_interval", "这是 Wald 置信区间 θ̂ ± z·√(θ̂(1 − θ̂)/n) 在 θ̂ = 0 时的结果：宽度为零，"
                  "好像确信模型永远不会判错。", required=True),
        Candidate((0.0, 3 / n), "rule_of_three", f"3/n = {3 / n:.3f} 是“三法则”，单侧 95% 上限的粗略近似，不是双侧的 Wilson 置信区间。",
                  required=True),
        Candidate((narrow.low, narrow.high), "z_one_sided", "这是用 z ≈ 1.645 算出的上限，即 90% 的双侧置信区间；"
                  "95% 要用 1.96。"),
    )
    return Posed(stem, (ci.low, ci.high), solution, candidates, interval(3), {"k": 0, "n": n}, tolerance=0.0005)


# ---------------------------------------------------------------------------------- mcnemar
def _mcnemar(draw: Draw) -> Posed:
    n01, n10 = draw.integer(3, 30), draw.integer(3, 30)
    n00, n11 = draw.integer(40, 150), draw.integer(5, 30)
    diff = abs(n01 - n10)
    if diff < 3:
        raise IllPosed("the correction would change too little to be seen")
    key = (diff - 1) ** 2 / (n01 + n10)
    plain = diff ** 2 / (n01 + n10)
    everyone = (diff - 1) ** 2 / (n00 + n01 + n10 + n11)
    z = (diff - 1) / math.sqrt(n01 + n10)
    stem = (f"在同一个测试集上比较分类器 A 与 B：两者都对 {n00} 个，A 对 B 错 {n01} 个，A 错 B 对 {n10} 个，两者都错 {n11} 个。",
            "McNemar 检验的统计量 χ²（含连续性校正）是多少？（保留两位小数）")
    solution = (f"只有意见不一致的 {n01} + {n10} = {n01 + n10} 个样本参与：χ² = (|{n01} − {n10}| − 1)²/{n01 + n10} "
                f"= {(diff - 1) ** 2}/{n01 + n10} ≈ {key:.2f}。")
    candidates = (
        Candidate(plain, "mcnemar_no_correction", f"{plain:.2f} = {diff}²/{n01 + n10} 漏掉了连续性校正：先从 |n₀₁ − n₁₀| 中减去 1 再平方。",
                  required=True),
        Candidate(everyone, "mcnemar_all_samples", f"{everyone:.2f} 的分母用了全部 {n00 + n01 + n10 + n11} 个样本；"
                  "两者都对或都错的样本不提供比较的信息，分母只有 n₀₁ + n₁₀。"),
        Candidate(z, "mcnemar_not_squared", f"{z:.2f} 是标准化以后的差 (|n₀₁ − n₁₀| − 1)/√(n₀₁ + n₁₀)，还没有平方；χ² 是它的平方。"),
    )
    return Posed(stem, key, solution, candidates, fixed(2), {"n00": n00, "n01": n01, "n10": n10, "n11": n11},
                 tolerance=0.01, decimals=2)


# ---------------------------------------------------------------------------------- macro-recall
def _macro_recall(draw: Draw) -> Posed:
    k = 3
    matrix = [[draw.integer(8, 30) if i == j else draw.integer(0, 8) for j in range(k)] for i in range(k)]
    true = np.repeat(np.repeat(np.arange(k), k), np.array(matrix).ravel())
    pred = np.repeat(np.tile(np.arange(k), k), np.array(matrix).ravel())
    # each class's recall with the reference, one class against the rest
    recalls = [ref.binary_metrics(true == c, (pred == c).astype(float), 0.5).recall for c in range(k)]
    precisions = [ref.binary_metrics(true == c, (pred == c).astype(float), 0.5).precision for c in range(k)]
    key = float(np.mean(recalls))
    n = int(true.size)
    accuracy = sum(matrix[i][i] for i in range(k)) / n
    shares = float(np.mean([matrix[i][i] / n for i in range(k)]))
    rows = "；".join(f"真实为类别 {i + 1} 的样本被预测为类别 1、2、3 的个数依次是 {listing(matrix[i])}" for i in range(k))
    stem = (f"一个三分类模型的混淆矩阵（行是真实类别，列是预测类别）：{rows}。",
            "宏平均召回率是多少？（保留三位小数）")
    terms = "、".join(f"{matrix[i][i]}/{sum(matrix[i])}" for i in range(k))
    solution = (f"每一类的召回率是对角线上的数除以这一行的和：{terms}；宏平均把三者直接平均，≈ {key:.3f}。")
    candidates = (
        Candidate(accuracy, "macro_as_micro", f"{accuracy:.3f} 是微平均召回率，也就是准确率：先把三类的 TP 加总再除以样本总数。"
                  "宏平均是每类召回率的算术平均，每类等权。", required=True),
        Candidate(float(np.mean(precisions)), "rows_columns_swapped", f"{np.mean(precisions):.3f} 是宏平均精确率：分母用了列和"
                  "（被预测为这一类的样本数）。召回率的分母是行和，即真实属于这一类的样本数。", required=True),
        Candidate(shares, "denominator_all", f"{shares:.3f} 把每类召回率的分母都写成了样本总数 {n}；召回率只在真实属于这一类的样本中计算。"),
    )
    return Posed(stem, key, solution, candidates, fixed(3), {"matrix": matrix}, tolerance=0.001)


# ---------------------------------------------------------------------------------- rmse
def _rmse(draw: Draw) -> Posed:
    n = draw.integer(4, 6)
    truth = [draw.integer(10, 40) for _ in range(n)]
    errors = [draw.integer(-5, 5) for _ in range(n)]
    if sum(e != 0 for e in errors) < 3:
        raise IllPosed("too few misses")
    pred = [t + e for t, e in zip(truth, errors)]
    sq = [e * e for e in errors]
    mse = sum(sq) / n
    key = math.sqrt(mse)
    mae = sum(abs(e) for e in errors) / n
    root_sum = math.sqrt(sum(sq))
    stem = (f"{n} 个样本的真实值依次是 {listing(truth)}，模型的预测依次是 {listing(pred)}。RMSE 是多少？（保留两位小数）",)
    solution = (f"误差依次是 {listing(errors)}，平方后依次是 {listing(sq)}；MSE = {sum(sq)}/{n} = {mse:.3f}，"
                f"RMSE = √MSE ≈ {key:.2f}，与预测值的单位相同。")
    candidates = (
        Candidate(mse, "rmse_no_root", f"{mse:.2f} 是 MSE，忘了开平方。", required=True),
        Candidate(mae, "rmse_as_mae", f"{mae:.2f} 是 MAE，误差绝对值的平均；RMSE 先平方、再平均、再开平方，对大误差更敏感。",
                  required=True),
        Candidate(root_sum, "rmse_no_mean", f"{root_sum:.2f} = √{sum(sq)}，平方和没有除以样本数 {n}。"),
    )
    return Posed(stem, key, solution, candidates, fixed(2), {"y_true": truth, "y_pred": pred}, tolerance=0.01, decimals=2)


# ---------------------------------------------------------------------------------- bootstrap-miss
def _bootstrap_miss(draw: Draw) -> Posed:
    n = draw.integer(3, 40)
    key = (1 - 1 / n) ** n
    stem = (f"用自助法从 n = {n} 个样本中有放回地抽 {n} 次。某个指定样本一次也没有被抽中的概率是多少？（保留三位小数）",)
    solution = (f"每次抽不到它的概率是 1 − 1/{n}，{n} 次都抽不到的概率是 (1 − 1/{n})^{n} ≈ {key:.3f}。"
                "n 越大，这个概率越接近 e⁻¹ ≈ 0.368。")
    candidates = (
        Candidate(math.exp(-1), "bootstrap_limit", f"e⁻¹ ≈ 0.368 是 n → ∞ 时的极限；n = {n} 时要按 (1 − 1/n)^n 计算。", required=True),
        Candidate(1 - key, "bootstrap_complement", f"{1 - key:.3f} 是这个样本至少被抽中一次的概率，方向反了。", required=True),
        Candidate(1 / n, "bootstrap_single_draw", f"1/{n} ≈ {1 / n:.3f} 是单独一次抽中它的概率；题目问的是 {n} 次都没抽中，"
                  "要把每次抽不中的概率连乘。"),
    )
    return Posed(stem, key, solution, candidates, fixed(3), {"n": n}, tolerance=0.001)


TEMPLATES = (
    Template("nested-cv", "嵌套交叉验证要训练几次", "methodology/resampling", "meth-nested", _nested_cv, book_form="numeric"),
    Template("e632", ".632 估计量", "methodology/estimates", "meth-optimism", _e632, book_form="numeric"),
    Template("wilson", "错误率的 Wilson 置信区间", "methodology/intervals", "meth-ci-proportion", _wilson, forms=("choice",)),
    Template("mcnemar", "McNemar 检验的统计量", "methodology/tests", "meth-mcnemar", _mcnemar, book_form="numeric"),
    Template("macro-recall", "宏平均召回率", "methodology/multiclass", "meth-mc-per-class", _macro_recall, book_form="numeric"),
    Template("rmse", "RMSE", "methodology/regression", "meth-reg-abs", _rmse, book_form="numeric"),
    Template("bootstrap-miss", "自助样本漏掉一个样本的概率", "methodology/resampling", "meth-bootstrap", _bootstrap_miss, quiz=19),
    Template("wilson-zero", "零错误时的 Wilson 置信区间", "methodology/intervals", "meth-ci-proportion", _wilson_zero,
             forms=("choice",), quiz=20),
)
