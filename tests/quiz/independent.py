"""Each template's key computed again from the variant's drawn numbers, without the reference call the template
makes: a brute-force count with exact fractions (:data:`KEYS`, cheap enough for thousands of seeds), itself
checked against scikit-learn, SciPy and statsmodels (:data:`LIBRARY_KEYS`) by tests/quiz/test_templates.py."""

from __future__ import annotations

import math
from fractions import Fraction
from itertools import product
from typing import Any, Callable

import numpy as np
from scipy.stats import norm
from sklearn.metrics import (
    accuracy_score,
    average_precision_score,
    brier_score_loss,
    confusion_matrix,
    mean_squared_error,
    precision_score,
    recall_score,
    roc_auc_score,
    roc_curve,
)
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.proportion import proportion_confint


def _f(x: float) -> Fraction:
    """A drawn decimal (0.35, 0.1) as the exact fraction it stands for."""
    return Fraction(x).limit_denominator(1000)


def _cells(y: list[int], predicted: list[bool]) -> tuple[int, int, int, int]:
    tn, fp, fn, tp = confusion_matrix(y, predicted, labels=[0, 1]).ravel()
    return int(tp), int(fp), int(fn), int(tn)


def confusion_cells(d: dict[str, Any]) -> float:
    return _cells(d["y_true"], [s >= d["threshold"] for s in d["y_score"]])[1]


def _from_counts(d: dict[str, Any]) -> tuple[list[int], list[int]]:
    y = [1] * d["tp"] + [0] * d["fp"] + [1] * d["fn"] + [0] * d["tn"]
    pred = [1] * (d["tp"] + d["fp"]) + [0] * (d["fn"] + d["tn"])
    return y, pred


def fixed_metrics(d: dict[str, Any]) -> tuple[float, ...]:
    y, pred = _from_counts(d)
    tp, fp, fn, tn = _cells(y, pred)
    return accuracy_score(y, pred), precision_score(y, pred), recall_score(y, pred), fp / (fp + tn)


def fpr_fdr(d: dict[str, Any]) -> float:
    y, pred = _from_counts(d)
    tp, fp, fn, tn = _cells(y, pred)
    return fp / (fp + tn)


def expected_cost(d: dict[str, Any]) -> float:
    """The cost of a population of 2000 samples in these proportions, counted error by error."""
    n = 2000
    pos = _f(d["prior"]) * n
    neg = n - pos
    fn = pos * (1 - _f(d["tpr"]))
    fp = neg * _f(d["fpr"])
    assert fn.denominator == fp.denominator == 1
    return float((d["c_fp"] * fp + d["c_fn"] * fn) / n)


def roc_point(d: dict[str, Any]) -> tuple[float, float]:
    fpr, tpr, thresholds = roc_curve(d["y_true"], d["y_score"], drop_intermediate=False)
    k = int(np.flatnonzero(np.isclose(thresholds, d["threshold"]))[0])
    return float(fpr[k]), float(tpr[k])


def roc_area(d: dict[str, Any]) -> float:
    fpr, tpr, _ = roc_curve(d["y_true"], d["y_score"], drop_intermediate=False)
    assert np.allclose(fpr, d["fpr"]) and np.allclose(tpr, d["tpr"])  # the stem shows scikit-learn's points
    return roc_auc_score(d["y_true"], d["y_score"])


def _pairs(pos: list[float], neg: list[float]) -> float:
    """AUC by comparing every positive with every negative (ties 1/2), exactly."""
    score = sum(Fraction(1) if p > q else Fraction(1, 2) if p == q else Fraction(0) for p, q in product(pos, neg))
    return float(score / (len(pos) * len(neg)))


def auc_pairs(d: dict[str, Any]) -> float:
    return _pairs(d["positive"], d["negative"])


def auc_groups(d: dict[str, Any]) -> float:
    pos = [lv for lv, (p, _) in zip(d["levels"], d["counts"]) for _ in range(p)]
    neg = [lv for lv, (_, q) in zip(d["levels"], d["counts"]) for _ in range(q)]
    return _pairs(pos, neg)


def ap_ranked(d: dict[str, Any]) -> float:
    y = d["y_true"]
    return average_precision_score(y, list(range(len(y), 0, -1)))


def ap_ties(d: dict[str, Any]) -> float:
    return average_precision_score(d["y_true"], d["y_score"])


def brier(d: dict[str, Any]) -> float:
    return brier_score_loss(d["y_true"], d["y_prob"])


def calibration_point(d: dict[str, Any]) -> str:
    over = d["mean_predicted"] > d["fraction_positive"]  # x: mean prediction, y: share of positives
    side, said = ("下方", "高") if over else ("上方", "低")
    return f"点是 ({d['mean_predicted']:g}, {d['fraction_positive']:g})，在对角线{side}，这一档的概率报{said}了"


def pr_baseline(d: dict[str, Any]) -> tuple[float, float]:
    """A score that says nothing (the same for every sample) on 1000 samples in these proportions, by scikit-learn."""
    n_pos = round(1000 * d["prior"])
    y = [1] * n_pos + [0] * (1000 - n_pos)
    return roc_auc_score(y, [0.0] * 1000), precision_score(y, [1] * 1000)


def brier_compare(d: dict[str, Any]) -> str:
    a = brier_score_loss([d["label"]], [d["p_a"]])
    b = brier_score_loss([d["label"]], [d["p_b"]])
    return "模型甲" if a < b else "模型乙"


def dprime(d: dict[str, Any]) -> float:
    return math.sqrt(2) * norm.ppf(d["auc"])


def auc_from_dprime(d: dict[str, Any]) -> float:
    return norm.cdf(d["d_prime"] / math.sqrt(2))


def auc_binormal(d: dict[str, Any]) -> float:
    # P(S+ - S- > 0) with S+ - S- ~ N(mu+ - mu-, 2 sigma^2)
    return norm.sf(0, loc=d["mu_positive"] - d["mu_negative"], scale=d["sigma"] * math.sqrt(2))


def ce_population(d: dict[str, Any]) -> float:
    return float(sum(_f(w) * abs(_f(eta) - _f(s)) for s, w, eta in zip(d["reports"], d["shares"], d["rates"])))


def ece_samples(d: dict[str, Any]) -> float:
    """Right-closed bins (0 in the first) assigned with exact fractions."""
    k = d["n_bins"]
    bins: dict[int, list[tuple[Fraction, int]]] = {}
    for p, y in zip(d["y_prob"], d["y_true"]):
        p = _f(p)
        j = max(0, math.ceil(p * k) - 1)
        bins.setdefault(j, []).append((p, y))
    n = len(d["y_true"])
    return float(sum(Fraction(len(b), n) * abs(Fraction(sum(y for _, y in b), len(b)) - sum(p for p, _ in b) / len(b))
                     for b in bins.values()))


def mean_matching(d: dict[str, Any]) -> float:
    n = sum(d["counts"])
    mean_p = sum(_f(r) * m for r, m in zip(d["reports"], d["counts"])) / n
    return float(mean_p - Fraction(sum(d["positives"]), n))


def ece_bins(d: dict[str, Any]) -> float:
    n = sum(d["counts"])
    return float(sum(Fraction(m, n) * abs(Fraction(q, m) - _f(r)) for r, m, q in zip(d["reports"], d["counts"], d["positives"])))


def nested_cv(d: dict[str, Any]) -> int:
    fits = 0
    for _outer in range(d["outer"]):
        for _config in range(d["configs"]):
            for _inner in range(d["inner"]):
                fits += 1
        fits += 1  # the chosen configuration, trained on the outer training part
    return fits


def e632(d: dict[str, Any]) -> float:
    return float(Fraction(368, 1000) * _f(d["apparent"]) + Fraction(632, 1000) * _f(d["loo_bootstrap"]))


def wilson(d: dict[str, Any]) -> tuple[float, float]:
    low, high = proportion_confint(d["k"], d["n"], alpha=0.05, method="wilson")
    return float(low), float(high)


def mcnemar_statistic(d: dict[str, Any]) -> float:
    return float(mcnemar([[d["n00"], d["n01"]], [d["n10"], d["n11"]]], exact=False, correction=True).statistic)


def macro_recall(d: dict[str, Any]) -> float:
    m = d["matrix"]
    true = [i for i in range(3) for j in range(3) for _ in range(m[i][j])]
    pred = [j for i in range(3) for j in range(3) for _ in range(m[i][j])]
    return recall_score(true, pred, average="macro")


def rmse(d: dict[str, Any]) -> float:
    return math.sqrt(mean_squared_error(d["y_true"], d["y_pred"]))


def bootstrap_miss(d: dict[str, Any]) -> float:
    n = d["n"]
    return float(Fraction(n - 1, n) ** n)


def roc_flip(d: dict[str, Any]) -> tuple[float, float]:
    """Twenty samples of each class at this working point (rates in steps of 0.05), every prediction inverted,
    counted again."""
    y = [1] * 20 + [0] * 20
    hits, false_alarms = round(20 * d["tpr"]), round(20 * d["fpr"])
    pred = [1] * hits + [0] * (20 - hits) + [1] * false_alarms + [0] * (20 - false_alarms)
    tp, fp, fn, tn = _cells(y, [1 - p for p in pred])
    return fp / (fp + tn), tp / (tp + fn)


KEYS: dict[str, Callable[[dict[str, Any]], Any]] = {
    "confusion-cells": confusion_cells, "fixed-metrics": fixed_metrics, "fpr-fdr": fpr_fdr, "expected-cost": expected_cost,
    "roc-point": roc_point, "roc-area": roc_area, "auc-pairs": auc_pairs, "ap-ranking": ap_ranked, "brier": brier,
    "calibration-point": calibration_point, "pr-baseline": pr_baseline, "brier-compare": brier_compare,
    "ap-points": ap_ranked, "auc-groups": auc_groups, "ap-ties": ap_ties,
    "dprime": dprime, "auc-from-dprime": auc_from_dprime, "auc-binormal": auc_binormal, "ce-population": ce_population,
    "ece-samples": ece_samples, "mean-matching": mean_matching, "ece-bins": ece_bins, "nested-cv": nested_cv, "e632": e632,
    "wilson": wilson, "wilson-zero": wilson, "mcnemar": mcnemar_statistic, "macro-recall": macro_recall, "rmse": rmse,
    "bootstrap-miss": bootstrap_miss, "roc-flip": roc_flip,
}


# ------------------------------------------------------------------------------- brute force, exact
def _count_cells(y: list[int], predicted: list[bool]) -> tuple[int, int, int, int]:
    tp = sum(1 for t, p in zip(y, predicted) if t == 1 and p)
    fp = sum(1 for t, p in zip(y, predicted) if t == 0 and p)
    fn = sum(1 for t, p in zip(y, predicted) if t == 1 and not p)
    return tp, fp, fn, len(y) - tp - fp - fn


def bf_confusion_cells(d: dict[str, Any]) -> float:
    return _count_cells(d["y_true"], [s >= d["threshold"] for s in d["y_score"]])[1]


def bf_fixed_metrics(d: dict[str, Any]) -> tuple[float, ...]:
    tp, fp, fn, tn = _count_cells(*_from_counts(d))
    n = tp + fp + fn + tn
    return (tp + tn) / n, tp / (tp + fp), tp / (tp + fn), fp / (fp + tn)


def bf_fpr_fdr(d: dict[str, Any]) -> float:
    tp, fp, fn, tn = _count_cells(*_from_counts(d))
    return fp / (fp + tn)


def _roc_points(y: list[int], s: list[float]) -> list[tuple[Fraction, Fraction]]:
    """(FPR, TPR) at +inf and at every distinct score, from the highest down, by counting."""
    P, N = sum(y), len(y) - sum(y)
    points = [(Fraction(0), Fraction(0))]
    for t in sorted(set(s), reverse=True):
        tp, fp, _, _ = _count_cells(y, [x >= t for x in s])
        points.append((Fraction(fp, N), Fraction(tp, P)))
    return points


def bf_roc_point(d: dict[str, Any]) -> tuple[float, float]:
    tp, fp, fn, tn = _count_cells(d["y_true"], [s >= d["threshold"] for s in d["y_score"]])
    return fp / (fp + tn), tp / (tp + fn)


def bf_roc_area(d: dict[str, Any]) -> float:
    points = _roc_points(d["y_true"], d["y_score"])
    shown = list(zip(d["fpr"], d["tpr"]))  # the points the stem lists
    assert len(shown) == len(points) and all(abs(x - a) < 1e-9 and abs(t - b) < 1e-9 for (x, t), (a, b) in zip(points, shown))
    area = sum((x1 - x0) * (t0 + t1) / 2 for (x0, t0), (x1, t1) in zip(points, points[1:]))
    y, s = d["y_true"], d["y_score"]
    assert area == Fraction(_pairs([a for a, b in zip(s, y) if b], [a for a, b in zip(s, y) if not b])).limit_denominator(10**6)
    return float(area)


def _ap_groups(y: list[int], s: list[float]) -> float:
    """AP with each group of equal scores entering whole: sum over groups of (new positives / P) x precision."""
    P = sum(y)
    total, seen, hits = Fraction(0), 0, 0
    for t in sorted(set(s), reverse=True):
        group = [b for a, b in zip(s, y) if a == t]
        seen += len(group)
        new = sum(group)
        hits += new
        total += Fraction(new, P) * Fraction(hits, seen)
    return float(total)


def bf_ap_ranked(d: dict[str, Any]) -> float:
    y = d["y_true"]
    return _ap_groups(y, list(range(len(y), 0, -1)))


def bf_ap_ties(d: dict[str, Any]) -> float:
    return _ap_groups(d["y_true"], d["y_score"])


def bf_brier(d: dict[str, Any]) -> float:
    return float(sum((_f(p) - y) ** 2 for p, y in zip(d["y_prob"], d["y_true"])) / len(d["y_true"]))


def bf_macro_recall(d: dict[str, Any]) -> float:
    m = d["matrix"]
    return float(sum(Fraction(m[i][i], sum(m[i])) for i in range(3)) / 3)


def bf_rmse(d: dict[str, Any]) -> float:
    return math.sqrt(Fraction(sum((a - b) ** 2 for a, b in zip(d["y_true"], d["y_pred"])), len(d["y_true"])))


def bf_roc_flip(d: dict[str, Any]) -> tuple[float, float]:
    return float(1 - _f(d["fpr"])), float(1 - _f(d["tpr"]))


def bf_wilson(d: dict[str, Any]) -> tuple[float, float]:
    """Wilson's interval as the book writes it: centre (k + z^2/2)/(n + z^2), half-width z sqrt(n p(1-p) + z^2/4)/(n + z^2)."""
    k, n, z = d["k"], d["n"], norm.ppf(0.975)
    p = k / n
    centre = (k + z * z / 2) / (n + z * z)
    half = z * math.sqrt(n * p * (1 - p) + z * z / 4) / (n + z * z)
    return max(0.0, centre - half), min(1.0, centre + half)


def bf_pr_baseline(d: dict[str, Any]) -> tuple[float, float]:
    """Every order of a small data set with these proportions is equally likely: the mean AUC over the two orders
    of each positive-negative pair is 1/2, and the expected share of positives among any k selected is the prior."""
    return 0.5, float(_f(d["prior"]))


def bf_brier_compare(d: dict[str, Any]) -> str:
    y = d["label"]
    return "模型甲" if (_f(d["p_a"]) - y) ** 2 < (_f(d["p_b"]) - y) ** 2 else "模型乙"


def bf_mcnemar(d: dict[str, Any]) -> float:
    return float(Fraction((abs(d["n01"] - d["n10"]) - 1) ** 2, d["n01"] + d["n10"]))


LIBRARY_KEYS = KEYS
KEYS = {**LIBRARY_KEYS, "confusion-cells": bf_confusion_cells, "fixed-metrics": bf_fixed_metrics, "fpr-fdr": bf_fpr_fdr,
        "roc-point": bf_roc_point, "roc-area": bf_roc_area, "ap-ranking": bf_ap_ranked, "ap-points": bf_ap_ranked,
        "ap-ties": bf_ap_ties, "brier": bf_brier, "macro-recall": bf_macro_recall, "rmse": bf_rmse, "roc-flip": bf_roc_flip,
        "wilson": bf_wilson, "wilson-zero": bf_wilson, "mcnemar": bf_mcnemar, "pr-baseline": bf_pr_baseline,
        "brier-compare": bf_brier_compare}
