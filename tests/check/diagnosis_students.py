"""Student-style answers with one known mistake each, written unlike the catalogue's implementations.

Each entry: catalogue id -> (assignment, code appended to the instructor's solution as a new cell).  The code
redefines only the functions the mistake concerns, in a student's style (loops, other names, other sorts),
and keeps the solution's own input checks (``_validated``, ``_check_labels`` ...), so the mistake comes
with correct validation.  Also honest alternatives (full marks, no diagnosis), a mistake outside the
catalogue, and two mistakes in two functions.  Used in process (tests/check/test_diagnose.py) and, for a
few of them, as real notebooks through ``autograder grade`` (tests/check/test_diagnosis_e2e.py).
"""

from __future__ import annotations

A1, A2, A3, A4 = "ps1_threshold_metrics", "ps2_roc_auc", "ps3_pr_ap", "ps4_calibration"

_A1_METRICS = '''
def binary_metrics(y_true, y_score, threshold, *, zero_division="nan"):
    policy = _check_zero_division(zero_division)
    truth = _check_labels(y_true, "y_true")
    score = _check_scores(y_score, "y_score")
    if len(truth) != len(score):
        raise ValueError("长度不一致")
    t = _check_threshold(threshold)
    TP = FP = TN = FN = 0
    for is_pos, sc in zip(truth, score):
        says_pos = {predict}
        if says_pos and is_pos:
            TP += 1
        elif says_pos:
            FP += 1
        elif is_pos:
            FN += 1
        else:
            TN += 1
{swap}    total = TP + FP + TN + FN
    prec = {prec}
    rec = {rec}
    return BinaryMetrics(TP, FP, TN, FN, (TP + TN) / total, {fields}, fpr={fpr},
                         specificity=_divide(TN, TN + FP, policy, "specificity"), f1={f1})
'''
_A1_DEFAULT = dict(predict="sc >= t", swap="", prec='_divide(TP, TP + FP, policy, "precision")',
                   rec='_divide(TP, TP + FN, policy, "recall")', fields="precision=prec, recall=rec",
                   fpr='_divide(FP, FP + TN, policy, "fpr")', f1='_divide(2 * TP, 2 * TP + FP + FN, policy, "f1")')


def _a1(**changes: str) -> str:
    return _A1_METRICS.format(**{**_A1_DEFAULT, **changes})


_A1_ZERO = '''
def _divide(num, den, policy, metric):
    return num / den if den else 0.0      # 分母为 0 时一律给 0
'''
_A1_FP_FN = '''
def confusion_counts(y_true, y_pred):
    a = _check_labels(y_true, "y_true")
    b = _check_labels(y_pred, "y_pred")
    if a.shape != b.shape:
        raise ValueError("长度不一致")
    tp = sum(1 for x, y in zip(a, b) if x and y)
    fn = sum(1 for x, y in zip(a, b) if not x and y)   # 把“真实为负、预测为正”记成了 FN
    fp = sum(1 for x, y in zip(a, b) if x and not y)
    tn = len(a) - tp - fp - fn
    return ConfusionCounts(tp, fp, tn, fn)
''' + _a1(swap="    FP, FN = FN, FP\n")

_ROC_LOOP = '''
def roc_curve(y_true, y_score):
    pos, s = _validated(y_true, y_score)
    idx = sorted(range(len(s)), key=lambda i: -s[i])
    P, N = int(pos.sum()), int(len(pos) - pos.sum())
    xs, ys, ts = [0.0], [0.0], [float("inf")]
    tp = fp = 0
    for i in idx:
        if pos[i]:
            tp += 1
        else:
            fp += 1
        xs.append(fp / N)
        ys.append(tp / P)
        ts.append(float(s[i]))
    return RocCurve(np.array(xs), np.array(ys), np.array(ts))
'''
_AUC_FROM_LOOP = '''
def roc_auc(y_true, y_score):
    c = roc_curve(y_true, y_score)
    area = 0.0
    for k in range(1, len(c.fpr)):
        area += (c.fpr[k] - c.fpr[k - 1]) * (c.tpr[k] + c.tpr[k - 1]) / 2
    return area
'''
_PAIRS = '''
def {name}(y_true, y_score):
    pos, s = _validated(y_true, y_score)
    good = 0.0
    P = [v for v, p in zip(s, pos) if p]
    N = [v for v, p in zip(s, pos) if not p]
    for a in P:
        for b in N:
            if a > b:
                good += 1
            elif a == b:
                good += {tie}
    return good / (len(P) * len(N))
'''
_AP_LOOP = '''
def average_precision(y_true, y_score):
    pos, s = _validated(y_true, y_score)
    levels = sorted(set(s.tolist()), reverse=True)
    total_pos = int(pos.sum())
    tp = seen = 0
    recalls, precisions = [], []
    for level in levels:
        members = [p for v, p in zip(s, pos) if v == level]
        tp += sum(members)
        seen += len(members)
        recalls.append(tp / total_pos)
        precisions.append(tp / seen)
{body}
'''
_CAL_LOOP = '''
def calibration_curve(y_true, y_prob, n_bins=10, strategy="uniform"):
    pos, p = _labels_probs(y_true, y_prob)
    if isinstance(n_bins, (bool, np.bool_)) or not isinstance(n_bins, (int, np.integer)) or n_bins < 1:
        raise ValueError("n_bins 必须是正整数")
    if strategy == "uniform":
        edges = np.linspace(0.0, 1.0, n_bins + 1)
    elif strategy == "quantile":
        edges = np.percentile(p, np.linspace(0.0, 1.0, n_bins + 1) * 100)
    else:
        raise ValueError("未知的 strategy")
    counts = [0] * n_bins
    sums = [0.0] * n_bins
    hits = [0.0] * n_bins
    for label, prob in zip(pos, p):
        k = 0
        while k < n_bins - 1 and {goes_right}:
            k += 1
        counts[k] += 1
        sums[k] += prob
        hits[k] += float(label)
    rows = [k for k in range(n_bins) if {keep}]
    frac = [hits[k] / counts[k] if counts[k] else {fill} for k in rows]
    mean = [sums[k] / counts[k] if counts[k] else {fill} for k in rows]
    return CalibrationCurve(np.array(frac), np.array(mean), np.array([counts[k] for k in rows], dtype=np.int64),
                            np.array([[edges[k], edges[k + 1]] for k in rows]).reshape(-1, 2))
'''

STUDENTS: dict[str, tuple[str, str]] = {
    "threshold_strict": (A1, _a1(predict="sc > t")),
    "zero_division_zero": (A1, _A1_ZERO),
    "fpr_as_fdr": (A1, _a1(fpr='_divide(FP, FP + TP, policy, "fpr")')),
    "precision_recall_swapped": (A1, _a1(fields="precision=rec, recall=prec")),
    "f1_arithmetic_mean": (A1, _a1(f1="(prec + rec) / 2")),
    "fp_fn_swapped": (A1, _A1_FP_FN),
    "roc_ties_split": (A2, _ROC_LOOP + _AUC_FROM_LOOP),
    "roc_no_origin": (A2, '''
def roc_curve(y_true, y_score):
    pos, s = _validated(y_true, y_score)
    thr, tps, fps = _scan(pos, s)
    return RocCurve(fps / fps[-1], tps / tps[-1], thr)   # 忘了阈值 +inf 处的 (0, 0)
'''),
    "roc_axes_swapped": (A2, '''
def roc_curve(y_true, y_score):
    pos, s = _validated(y_true, y_score)
    thr, tps, fps = _scan(pos, s)
    x = np.concatenate([[0.0], tps / tps[-1]])
    y = np.concatenate([[0.0], fps / fps[-1]])
    return RocCurve(fpr=x, tpr=y, thresholds=np.concatenate([[np.inf], thr]))
'''),
    "roc_thresholds_ascending": (A2, '''
def roc_curve(y_true, y_score):
    pos, s = _validated(y_true, y_score)
    values = np.unique(s)                      # 升序
    P, N = pos.sum(), (~pos).sum()
    fpr = [float(((s >= v) & ~pos).sum() / N) for v in values] + [0.0]
    tpr = [float(((s >= v) & pos).sum() / P) for v in values] + [0.0]
    return RocCurve(np.array(fpr), np.array(tpr), np.append(values, np.inf))
'''),
    "auc_ties_zero": (A2, _PAIRS.format(name="pairwise_auc", tie="0") + '''
def roc_auc(y_true, y_score):
    c = roc_curve(y_true, y_score)
    return float(sum(c.tpr[k - 1] * (c.fpr[k] - c.fpr[k - 1]) for k in range(1, len(c.fpr))))   # 阶梯面积
'''),
    "auc_ties_one": (A2, _PAIRS.format(name="pairwise_auc", tie="1") + _PAIRS.format(name="roc_auc", tie="1")),
    "ap_trapezoid": (A3, _AP_LOOP.format(body='''    area, r0, p0 = 0.0, 0.0, 1.0
    for r, p in zip(recalls, precisions):
        area += (r - r0) * (p + p0) / 2
        r0, p0 = r, p
    return area''')),
    "ap_interpolated": (A3, _AP_LOOP.format(body='''    total, r0 = 0.0, 0.0
    for k, r in enumerate(recalls):
        total += (r - r0) * max(precisions[k:])
        r0 = r
    return total''')),
    "ap_ties_split": (A3, '''
def average_precision(y_true, y_score):
    pos, s = _validated(y_true, y_score)
    ranked = sorted(zip(s.tolist(), pos.tolist()), key=lambda t: t[0], reverse=True)
    hits, acc = 0, 0.0
    for rank, (_, is_pos) in enumerate(ranked, start=1):
        if is_pos:
            hits += 1
            acc += hits / rank
    return acc / hits
'''),
    "ap_mean_precision": (A3, _AP_LOOP.format(body="    return sum(precisions) / len(precisions)")),
    "pr_extra_point": (A3, '''
def pr_curve(y_true, y_score):
    pos, s = _validated(y_true, y_score)
    thr, tps, fps = _scan(pos, s)
    precision = np.concatenate(([1.0], tps / (tps + fps)))
    recall = np.concatenate(([0.0], tps / pos.sum()))
    return PrCurve(precision, recall, np.concatenate(([np.inf], thr)))
'''),
    "brier_sum": (A4, '''
def brier_score(y_true, y_prob):
    pos, p = _labels_probs(y_true, y_prob)
    total = 0.0
    for label, prob in zip(pos, p):
        total += (prob - label) ** 2
    return float(total)
'''),
    "brier_thresholded": (A4, '''
def brier_score(y_true, y_prob):
    pos, p = _labels_probs(y_true, y_prob)
    hard = np.where(p >= 0.5, 1.0, 0.0)
    return float(np.mean((hard - pos) ** 2))
'''),
    "brier_baseline_half": (A4, '''
def brier_baseline(y_true):
    pos, _ = _labels_probs(y_true)
    return float(np.mean((0.5 - pos) ** 2))
'''),
    "calibration_left_closed": (A4, _CAL_LOOP.format(goes_right="prob >= edges[k + 1]", keep="counts[k] > 0", fill="0.0")),
    "calibration_empty_bins_kept": (A4, _CAL_LOOP.format(goes_right="prob > edges[k + 1]", keep="True", fill="float('nan')")),
    "ece_unweighted": (A4, '''
def expected_calibration_error(y_true, y_prob, n_bins=10, strategy="uniform"):
    c = calibration_curve(y_true, y_prob, n_bins=n_bins, strategy=strategy)
    gaps = [abs(a - b) for a, b in zip(c.fraction_positive, c.mean_predicted)]
    return float(sum(gaps) / len(gaps))
'''),
}

# honest alternatives: full marks, no diagnosis
HONEST: dict[str, tuple[str, str]] = {
    "pairwise_auc_quadratic": (A2, _PAIRS.format(name="pairwise_auc", tie="0.5") + _PAIRS.format(name="roc_auc", tie="0.5")),
    "roc_other_sort": (A2, '''
def roc_curve(y_true, y_score):
    pos, s = _validated(y_true, y_score)
    order = np.lexsort((pos, -s))              # 另一种排序：并列组内顺序任意
    s2, p2 = s[order], pos[order]
    ends = np.flatnonzero(np.append(np.diff(s2) != 0, True))
    tp = np.cumsum(p2)[ends]
    fp = (ends + 1) - tp
    return RocCurve(np.r_[0.0, fp / fp[-1]], np.r_[0.0, tp / tp[-1]], np.r_[np.inf, s2[ends]])
'''),
    "threshold_loop": (A2, '''
def roc_curve(y_true, y_score):
    pos, s = _validated(y_true, y_score)
    fpr, tpr, thr = [0.0], [0.0], [np.inf]
    for t in sorted(set(s.tolist()), reverse=True):   # 显式地逐个阈值循环
        predicted = s >= t
        tpr.append(float((predicted & pos).sum() / pos.sum()))
        fpr.append(float((predicted & ~pos).sum() / (~pos).sum()))
        thr.append(t)
    return RocCurve(np.array(fpr), np.array(tpr), np.array(thr))
'''),
}

# a mistake the catalogue does not know: AUC off by a constant
OUTSIDE: tuple[str, str] = (A2, '''
def pairwise_auc(y_true, y_score):
    pos, s = _validated(y_true, y_score)
    p, n = s[pos], s[~pos]
    wins = (p[:, None] > n[None, :]).sum() + 0.5 * (p[:, None] == n[None, :]).sum()
    return float(wins / (p.size * n.size + 1))    # 分母多了 1
''')

# two mistakes in two functions of one notebook
TWO: tuple[str, str, dict[str, str]] = (
    A2, STUDENTS["roc_no_origin"][1] + _PAIRS.format(name="pairwise_auc", tie="1"),
    {"roc_curve": "roc_no_origin", "pairwise_auc": "auc_ties_one"})

# the student: a roc_auc that walks one sample at a time and ignores ties (roc_curve correct)
WALKER = _ROC_LOOP.replace("def roc_curve", "def _my_curve") + '''
def roc_auc(y_true, y_score):
    c = _my_curve(y_true, y_score)
    return float(sum((c.fpr[k] - c.fpr[k - 1]) * (c.tpr[k] + c.tpr[k - 1]) / 2 for k in range(1, len(c.fpr))))
'''
