"""Templates of the case study (book/case_study/): reading the ROC plane, the AUC of binormal scores."""

from __future__ import annotations

import math

from ..model import IllPosed
from ..seeds import Draw
from ..template import Candidate, Posed, Template
from ._common import fixed, num, point
from .ap_auc import PHI, auc_of, phi_table


def _roc_flip(draw: Draw) -> Posed:
    fpr = draw.integer(3, 19) / 20
    tpr = draw.integer(1, 17) / 20
    if tpr >= fpr or abs(fpr + tpr - 1) < 1e-9:
        raise IllPosed("the point must lie below the diagonal, off the anti-diagonal (where the flip is a mirror image)")
    key = (round(1 - fpr, 10), round(1 - tpr, 10))
    stem = (f"某个分类器在 ROC 平面上的点是 (FPR, TPR) = ({num(fpr)}, {num(tpr)})，落在对角线下方。"
            "把它的每个预测都反过来（判正改判负、判负改判正），新的点在哪里？",)
    solution = (f"反过来以后，原来判对的正类变成判错，TPR 变为 1 − {num(tpr)} = {num(key[1])}；原来误报的负类变成判对，"
                f"FPR 变为 1 − {num(fpr)} = {num(key[0])}。点关于中心 (0.5, 0.5) 对称地翻到对角线上方。")
    candidates = (
        Candidate((tpr, fpr), "flip_mirror", f"({num(tpr)}, {num(fpr)}) 是把两个坐标对调，即关于对角线的镜像。反转预测后两个比率都变成 1 "
                  "减原值，点是关于中心 (0.5, 0.5) 对称的；只有 FPR + TPR = 1 时两者才碰巧相同。", required=True),
        Candidate((round(1 - fpr, 10), tpr), "flip_one_class", f"这只把 FPR 换成了 1 − {num(fpr)}，忘了 TPR 也要变成 1 − {num(tpr)}："
                  "反转预测同时影响两类样本。", required=True),
        Candidate((fpr, round(1 - tpr, 10)), "flip_one_class", f"这只把 TPR 换成了 1 − {num(tpr)}，忘了 FPR 也要变成 1 − {num(fpr)}："
                  "反转预测同时影响两类样本。"),
    )
    return Posed(stem, key, solution, candidates, point(2), {"fpr": fpr, "tpr": tpr}, tolerance=0.005, decimals=2)


# ---------------------------------------------------------------------------------- auc-binormal
def _auc_binormal(draw: Draw) -> Posed:
    mu0 = draw.choice([-1.0, 0.0, 0.5, 1.0])
    mu = draw.integer(2, 12) / 4  # the distance between the two means
    sigma = draw.choice([0.5, 0.8, 1.5, 2.0, 2.5])
    r = math.sqrt(2)
    key = auc_of(mu / sigma)
    args = [mu / (sigma * r), mu / r, mu / sigma, mu * r / sigma]
    read = {a: PHI.cdf(a) for a in args}
    stem = (f"负类的得分服从均值为 {num(mu0)}、标准差为 {num(sigma)} 的正态分布，正类的得分服从均值为 {num(mu0 + mu)}、"
            f"标准差同为 {num(sigma)} 的正态分布。这个模型的 AUC 约等于多少？（保留三位小数）",
            f"可能用到的数值：{phi_table(args)}。")
    k = mu / (sigma * r)
    solution = (f"随机一个正类与一个负类的得分之差服从均值为 {num(mu)}、方差为 2 × {num(sigma)}² 的正态分布，"
                f"它大于 0 的概率是 Φ({num(mu)}/({num(sigma)}·√2)) "
                f"= Φ({k:.3f}) ≈ {key:.3f}。")
    candidates = (
        Candidate(read[mu / r], "binormal_sigma_ignored", f"{read[mu / r]:.3f} 是 Φ({num(mu)}/√2)，当成了标准差为 1："
                  f"两类得分的标准差是 {num(sigma)}，均值之差要先除以它。", required=True),
        Candidate(read[mu / sigma], "dprime_no_sqrt2", f"{read[mu / sigma]:.3f} 是 Φ({num(mu)}/{num(sigma)})，漏掉了 √2："
                  "两个独立得分之差的方差是两者方差之和。", required=True),
        Candidate(read[mu * r / sigma], "dprime_sqrt2_inverted", f"{read[mu * r / sigma]:.3f} 是 Φ({num(mu)}·√2/{num(sigma)})："
                  "除以 √2 写成了乘以 √2。"),
    )
    return Posed(stem, key, solution, candidates, fixed(3), {"mu_negative": mu0, "mu_positive": mu0 + mu, "sigma": sigma}, tolerance=0.001)


TEMPLATES = (
    Template("roc-flip", "反转预测后的工作点", "case_study/index", "cs-roc-plane", _roc_flip, forms=("choice",), quiz=22),
    Template("auc-binormal", "双正态得分的 AUC", "case_study/index", "cs-separation", _auc_binormal, quiz=24),
)
