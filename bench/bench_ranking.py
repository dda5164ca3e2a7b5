"""Benchmark of the ranking kernel against scikit-learn and the floor (one bare ``np.sort``).

Run with ``make bench`` or ``python bench/bench_ranking.py [--sizes 1e5 1e6 1e7]``.

For each size and score kind (continuous; heavily tied = rounded to 2 decimals) it times,
on the same data in the same run (median of repeats, after one warm-up call):

* ``np.sort(scores)``                          -- the floor: no exact AUC avoids ordering
* ``roc_auc``            vs ``sklearn.metrics.roc_auc_score``
* ``average_precision``  vs ``sklearn.metrics.average_precision_score``
* ``roc_curve``          vs ``sklearn.metrics.roc_curve(drop_intermediate=False)``

and prints the ratios (ours / scikit-learn, ours / np.sort), the peak extra memory of each
call as a multiple of the score array's size (tracemalloc, which NumPy reports to), and
whether the results agree with scikit-learn to 1e-12.  Targets: AUC and AP
<= 0.2x scikit-learn and <= 6x np.sort; roc_curve <= 0.5x scikit-learn; memory <= 5x.

A second table times the naive algorithm of 综合练习 10 (rescan all samples for every
distinct threshold, O(n * m)) against the sort-and-scan kernel at small n.
"""

from __future__ import annotations

import argparse
import statistics
import time
import tracemalloc
from typing import Callable

import numpy as np
from sklearn import metrics as skm

import autograder.reference as ref

TARGETS = {"roc_auc": (0.2, 6.0), "average_precision": (0.2, 6.0), "roc_curve": (0.5, None)}


def timed(func: Callable[[], object], repeats: int) -> float:
    func()  # warm-up
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        func()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def peak_memory(func: Callable[[], object]) -> int:
    tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    func()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak - base


def make_data(n: int, kind: str, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.3).astype(np.int64)
    s = rng.normal(size=n) + 1.2 * y
    s = 1.0 / (1.0 + np.exp(-s))
    if kind == "tied":
        s = np.round(s, 2)
    return y, s


def naive_roc(y: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rescan every sample for each distinct threshold: O(n * m)."""
    positive = y == 1
    n_pos = positive.sum()
    n_neg = len(y) - n_pos
    thresholds = np.unique(s)[::-1]
    fpr = [0.0]
    tpr = [0.0]
    for t in thresholds:
        predicted = s >= t
        tpr.append(np.count_nonzero(predicted & positive) / n_pos)
        fpr.append(np.count_nonzero(predicted & ~positive) / n_neg)
    return np.array(fpr), np.array(tpr)


def bench_size(n: int, kind: str, repeats: int) -> list[dict]:
    y, s = make_data(n, kind)
    floor = timed(lambda: np.sort(s), repeats)
    pairs = {
        "roc_auc": (lambda: ref.roc_auc(y, s), lambda: skm.roc_auc_score(y, s)),
        "average_precision": (lambda: ref.average_precision(y, s), lambda: skm.average_precision_score(y, s)),
        "roc_curve": (lambda: ref.roc_curve(y, s), lambda: skm.roc_curve(y, s, drop_intermediate=False)),
    }
    rows = []
    for name, (ours, theirs) in pairs.items():
        t_ours = timed(ours, repeats)
        t_sk = timed(theirs, repeats)
        mem = peak_memory(ours) / s.nbytes
        a, b = ours(), theirs()
        if name == "roc_curve":
            agree = max(np.max(np.abs(a.fpr - b[0])), np.max(np.abs(a.tpr - b[1]))) <= 1e-12
        else:
            agree = abs(a - b) <= 1e-12
        sk_limit, sort_limit = TARGETS[name]
        ok = t_ours / t_sk <= sk_limit and (sort_limit is None or t_ours / floor <= sort_limit) and mem <= 5 and agree
        rows.append(
            dict(n=n, kind=kind, func=name, ours_ms=t_ours * 1e3, sk_ms=t_sk * 1e3, sort_ms=floor * 1e3,
                 vs_sk=t_ours / t_sk, vs_sort=t_ours / floor, mem=mem, agree=agree, ok=ok)
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", type=float, default=[1e5, 1e6, 1e7])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)

    header = f"{'n':>9} {'scores':>10} {'function':>18} {'ours ms':>9} {'sklearn ms':>11} {'sort ms':>8} " \
             f"{'ours/sk':>8} {'ours/sort':>9} {'mem xS':>7} {'=sk':>4} {'target':>6}"
    print(header)
    print("-" * len(header))
    all_ok = True
    for n in (int(v) for v in args.sizes):
        repeats = max(2, args.repeats if n <= 10**6 else 3)
        for kind in ("continuous", "tied"):
            for r in bench_size(n, kind, repeats):
                all_ok &= r["ok"] or r["n"] < 10**6  # targets apply at 1e6 and 1e7
                print(f"{r['n']:>9.0e} {r['kind']:>10} {r['func']:>18} {r['ours_ms']:>9.1f} {r['sk_ms']:>11.1f} "
                      f"{r['sort_ms']:>8.1f} {r['vs_sk']:>8.3f} {r['vs_sort']:>9.2f} {r['mem']:>7.2f} "
                      f"{'yes' if r['agree'] else 'NO':>4} {'met' if r['ok'] else 'MISS':>6}")

    print("\n综合练习 10: naive rescan per threshold vs sort-and-scan (continuous scores)")
    print(f"{'n':>7} {'naive ms':>10} {'sort-scan ms':>13} {'ratio':>8} {'max |Δ|':>9}")
    for n in (500, 1000, 2000, 4000, 8000):
        y, s = make_data(n, "continuous", seed=1)
        t_naive = timed(lambda: naive_roc(y, s), 2)
        t_fast = timed(lambda: ref.roc_curve(y, s), 5)
        f_n, t_n = naive_roc(y, s)
        r = ref.roc_curve(y, s)
        diff = max(np.max(np.abs(f_n - r.fpr)), np.max(np.abs(t_n - r.tpr)))
        print(f"{n:>7} {t_naive * 1e3:>10.1f} {t_fast * 1e3:>13.3f} {t_naive / t_fast:>8.0f} {diff:>9.1e}")
    print("\nnaive time grows ~4x per doubling of n (O(n^2) for distinct scores); sort-and-scan ~2x (O(n log n)).")
    print("\nALL TARGETS MET" if all_ok else "\nSOME TARGETS MISSED (see MISS rows)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
