"""Each speed mechanism of ``autograder grade`` on against off, paired, in one run (not a test).

For every size N the same seeded submissions (:func:`bench_scale.synthesize`) are graded with ``autograder grade
--jobs JOBS`` with everything on and with one mechanism switched off (``AUTOGRADER_OFF=<name>``, or the
mechanism's own variable), the two runs of a pair back to back in alternating order, ``--reps`` pairs per
mechanism.  The machine is shared and loaded: absolute seconds move with the other sessions' work by more than
most mechanisms are worth, so the figure is the median of the paired ratios (off / on; > 1: the mechanism saves
time), never a comparison of seconds from different minutes.  Every run's grades.csv must equal the first's.

Usage: ``.venv/bin/python bench/bench_mechanisms.py [--n 30 100] [--reps 5] [--only NAME ...] [--json FILE]``
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_scale import BIN, synthesize, timed  # noqa: E402

# mechanism -> the environment that switches it off
MECHANISMS = {
    "warm": {"AUTOGRADER_SANDBOX": "cold"},  # warm zygotes reused across submissions
    "extra": {"AUTOGRADER_EXTRA_WORKERS": "0"},  # extra workers (and with them the admission gate)
    "gate": {"AUTOGRADER_OFF": "gate"},  # the admission gate (extra workers start every job at once)
    "order": {"AUTOGRADER_OFF": "order"},  # start order (batch.order) instead of the collection's order
    "headstart": {"AUTOGRADER_OFF": "headstart"},  # head start, keep_busy and the background import
    "keepbusy": {"AUTOGRADER_OFF": "keepbusy"},  # keep_busy (the head start stays one window)
    "bgimport": {"AUTOGRADER_OFF": "bgimport"},  # the gradebook imported in a thread beside the head start
    "stub": {"AUTOGRADER_OFF": "stub"},  # the nbgrader import stub
    "prearm": {"AUTOGRADER_OFF": "prearm"},  # the cgroup pre-arm thread
    "forkserver": {"AUTOGRADER_OFF": "forkserver"},  # workers forked from a fork server
}


def _grades(out: Path) -> list[tuple[str, str, str]]:
    with (out / "grades.csv").open(encoding="utf-8") as f:
        return sorted((r["student_id"], r["assignment"], r["score"]) for r in csv.DictReader(f))


def run(subs: Path, template: Path, out: Path, jobs: int, env: dict[str, str], exe: Path) -> float:
    """Seconds of one ``autograder grade`` into a fresh copy of the generated output folder ``template``."""
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(template, out)
    seconds, _, _ = timed([str(exe), "grade", str(subs), "--out", str(out), "--jobs", str(jobs), "--quiet"], env=env)
    return seconds


def bench(n: int, seed: int, work: Path, jobs: int, reps: int, names: list[str], exe: Path) -> dict:
    subs = work / "submissions"
    counts, _ = synthesize(subs, n, seed)
    template = work / "generated"
    empty = work / "empty"
    empty.mkdir()
    timed([str(exe), "grade", str(empty), "--out", str(template), "--quiet"])  # generate_assignment only, untimed
    base = {"AUTOGRADER_OFF": "", "AUTOGRADER_SANDBOX": "", "AUTOGRADER_EXTRA_WORKERS": ""}
    run(subs, template, work / "warm-up", jobs, base, exe)
    expected = _grades(work / "warm-up")
    pairs: dict[str, list[tuple[float, float]]] = {name: [] for name in names}
    for rep in range(reps):
        order = list(names)
        random.Random(rep).shuffle(order)
        for name in order:
            off_env = {**base, **MECHANISMS[name]}
            times = {}
            for label in (("on", "off") if rep % 2 == 0 else ("off", "on")):
                out = work / f"{name}-{label}"
                times[label] = run(subs, template, out, jobs, base if label == "on" else off_env, exe)
                if _grades(out) != expected:
                    raise SystemExit(f"grades differ with {name} {label}")
            pairs[name].append((times["on"], times["off"]))
            print(f"  N={n} rep {rep + 1}/{reps} {name:10s} on {times['on']:6.2f} s  off {times['off']:6.2f} s  "
                  f"off/on {times['off'] / times['on']:.3f}  load {os.getloadavg()[0]:.1f}", flush=True)
    print(f"N = {n} (seed {seed}: " + ", ".join(f"{k} {v}" for k, v in counts.items()) + f"), --jobs {jobs}, "
          f"{reps} pairs each; median of paired off/on ratios (> 1.15: the mechanism saves at least 15 %)")
    print("| mechanism | on, median s | off, median s | off / on, median (min-max) |")
    print("|---|---:|---:|---:|")
    for name, xs in pairs.items():
        ratios = [off / on for on, off in xs]
        print(f"| {name} | {statistics.median(on for on, _ in xs):.2f} | {statistics.median(off for _, off in xs):.2f} | "
              f"{statistics.median(ratios):.3f} ({min(ratios):.2f}-{max(ratios):.2f}) |")
    return {name: xs for name, xs in pairs.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="+", default=[30, 100])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--only", nargs="+", choices=sorted(MECHANISMS), default=list(MECHANISMS))
    ap.add_argument("--exe", type=Path, default=BIN / "autograder")
    ap.add_argument("--json", type=Path, help="write every pair's seconds here")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-mechanisms-"))
    results = {}
    try:
        for n in args.n:
            results[n] = bench(n, args.seed, work / f"n{n}", args.jobs, args.reps, args.only, args.exe)
            print(flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        if args.json:
            args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
