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
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_scale import BIN, synthesize, timed  # noqa: E402

# mechanism -> the environment that switches it off
MECHANISMS = {
    "warm": {"AUTOGRADER_SANDBOX": "cold"},  # warm zygotes reused across submissions
    "stub": {"AUTOGRADER_OFF": "stub"},  # the nbgrader import stub
    "prearm": {"AUTOGRADER_OFF": "prearm"},  # the cgroup pre-arm thread
    "forkserver": {"AUTOGRADER_OFF": "forkserver"},  # workers forked from a fork server
}


def _grades(out: Path) -> list[tuple[str, str, str]]:
    with (out / "grades.csv").open(encoding="utf-8") as f:
        return sorted((r["student_id"], r["assignment"], r["score"]) for r in csv.DictReader(f))


CGROUPS = Path("/sys/fs/cgroup")
HIERARCHIES = ("pids", "cpu", "cpuacct", "memory")  # cgroup v1, as on this machine


def _cgroup_run(cmd: list[str], env: dict[str, str]) -> tuple[float, float | None]:
    """Wall seconds and CPU seconds of ``cmd`` (``autograder grade``) with everything it starts, its sandboxes
    included: as root on cgroup v1 the command runs in a fresh cgroup of its own and is given it as
    ``--cgroup-parent`` (its sandboxes' cgroups go below it, with every limit as usual); else CPU is None."""
    name = f"bench-{uuid.uuid4().hex[:8]}"
    dirs = [CGROUPS / h / name for h in HIERARCHIES]
    if os.geteuid() != 0 or not all((CGROUPS / h / "cgroup.procs").exists() for h in HIERARCHIES):
        return timed(cmd, env=env)[0], None
    for d in dirs:
        d.mkdir()
    try:
        procs = [str(d / "cgroup.procs") for d in dirs]

        def join() -> None:
            for f in procs:
                with open(f, "w") as fh:
                    fh.write("0")

        t0 = time.perf_counter()
        proc = subprocess.run(cmd + ["--cgroup-parent", f"/{name}"], env={**os.environ, **env}, preexec_fn=join,
                              capture_output=True, text=True)
        seconds = time.perf_counter() - t0
        if proc.returncode != 0:
            raise SystemExit(f"{cmd[:3]} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
        cpu = int((CGROUPS / "cpuacct" / name / "cpuacct.usage").read_text()) / 1e9
        return seconds, cpu
    finally:
        for d in dirs:
            for _ in range(200):  # the fork server and the last sandboxes leave a moment after the command
                try:
                    for pid in (d / "cgroup.procs").read_text().split():
                        os.kill(int(pid), signal.SIGKILL)
                    d.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.05)


def run(subs: Path, template: Path, out: Path, jobs: int, env: dict[str, str], exe: Path) -> tuple[float, float | None]:
    """Wall and CPU seconds of one ``autograder grade`` into a fresh copy of the generated output folder ``template``."""
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(template, out)
    return _cgroup_run([str(exe), "grade", str(subs), "--out", str(out), "--jobs", str(jobs), "--quiet"],
                       {"PATH": str(BIN) + os.pathsep + os.environ["PATH"], **env})


def bench(n: int, seed: int, work: Path, jobs: int, reps: int, names: list[str], exe: Path) -> dict:
    subs = work / "submissions"
    counts, _ = synthesize(subs, n, seed)
    template = work / "generated"
    empty = work / "empty"
    empty.mkdir()
    timed([str(exe), "grade", str(empty), "--out", str(template), "--quiet"])  # generate_assignment only, untimed
    base = {"AUTOGRADER_OFF": "", "AUTOGRADER_SANDBOX": ""}
    run(subs, template, work / "warm-up", jobs, base, exe)
    expected = _grades(work / "warm-up")
    pairs: dict[str, list[dict]] = {name: [] for name in names}
    for rep in range(reps):
        order = list(names)
        random.Random(rep).shuffle(order)
        for name in order:
            off_env = {**base, **MECHANISMS[name]}
            got = {}
            for label in (("on", "off") if rep % 2 == 0 else ("off", "on")):
                out = work / f"{name}-{label}"
                got[label] = run(subs, template, out, jobs, base if label == "on" else off_env, exe)
                if _grades(out) != expected:
                    raise SystemExit(f"grades differ with {name} {label}")
            (on, on_cpu), (off, off_cpu) = got["on"], got["off"]
            pairs[name].append({"on": on, "off": off, "on_cpu": on_cpu, "off_cpu": off_cpu})
            cpu = f"  CPU {on_cpu:6.2f} / {off_cpu:6.2f} s" if on_cpu is not None else ""
            print(f"  N={n} rep {rep + 1}/{reps} {name:10s} on {on:6.2f} s  off {off:6.2f} s  off/on {off / on:.3f}{cpu}  "
                  f"load {os.getloadavg()[0]:.1f}", flush=True)
    print(f"N = {n} (seed {seed}: " + ", ".join(f"{k} {v}" for k, v in counts.items()) + f"), --jobs {jobs}, "
          f"{reps} pairs each; medians of paired off/on ratios (> 1.15: the mechanism saves at least 15 %)")
    print("| mechanism | on, median s | off, median s | wall off / on, median (min-max) | CPU off / on, median (min-max) |")
    print("|---|---:|---:|---:|---:|")
    for name, xs in pairs.items():
        ratios = [x["off"] / x["on"] for x in xs]
        cpus = [x["off_cpu"] / x["on_cpu"] for x in xs if x["on_cpu"]]
        cpu = f"{statistics.median(cpus):.3f} ({min(cpus):.2f}-{max(cpus):.2f})" if cpus else "-"
        print(f"| {name} | {statistics.median(x['on'] for x in xs):.2f} | {statistics.median(x['off'] for x in xs):.2f} | "
              f"{statistics.median(ratios):.3f} ({min(ratios):.2f}-{max(ratios):.2f}) | {cpu} |")
    return pairs


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
