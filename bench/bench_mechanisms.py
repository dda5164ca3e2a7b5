"""Each speed mechanism of ``autograder grade`` on against off, paired, in one run (not a test); writes the table.

For every size N the same seeded submissions (:func:`bench_scale.synthesize`) are graded with ``autograder grade
--jobs JOBS`` with everything on and with one mechanism switched off (its variable in :data:`MECHANISMS`), the
two runs of a pair back to back in alternating order, ``--reps`` pairs per mechanism.  The machine is shared and
loaded: absolute seconds move with the other sessions' work by more than most mechanisms are worth, so the figure
is the median of the paired ratios (off / on; > 1: the mechanism saves time), never a comparison of seconds from
different minutes.  Every run's grades.csv must equal the first's.  As root on cgroup v1 each run also gets a
cgroup of its own (its sandboxes' cgroups below it), whose CPU seconds are printed beside the wall clock.

``--service K`` also measures warm sandboxes on the service's single upload -> graded: ``bench_service.py --single
K`` (warm, then cold sandboxes, K uploads each) ``--service-reps`` times; a pair is one call's cold / warm median.

A mechanism keeps its place only with at least 15 % (median ratio >= :data:`KEEP`) on a figure it exists for.
The result is written as a Markdown table (``--table``, by default ``docs/_generated/mechanisms.md``, included by
``docs/scaling.md``) with the mechanisms measured and removed earlier (:data:`EARLIER`), and as JSON (``--json``,
by default beside the table); ``--table-from FILE ...`` writes the table again from such JSON files without measuring (the pairs of several
runs pooled: a figure's median is then over all its pairs).

Usage: ``.venv/bin/python bench/bench_mechanisms.py [--n 30 100] [--reps 3] [--only NAME ...] [--service K]
[--table FILE]``.
"""

from __future__ import annotations

import argparse
import ast
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
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_scale import BIN, REPO, synthesize, timed  # noqa: E402

KEEP = 1.15  # the least median off / on ratio on one of its figures that keeps a mechanism
TABLE = REPO / "docs" / "_generated" / "mechanisms.md"  # and mechanisms.json beside it: the pairs it is made from
SERVICE = "service: one upload -> graded"


@dataclass(frozen=True)
class Mechanism:
    """A speed mechanism measured here: what switches it off and where its code is (for the line count)."""

    what: str
    off: dict[str, str]
    code: tuple[tuple[str, tuple[str, ...]], ...]  # (module, its top-level names; () = the whole module)


MECHANISMS = {
    "warm": Mechanism("warm zygotes reused across submissions", {"AUTOGRADER_SANDBOX": "cold"},
                      (("autograder/sandbox/warm.py", ()), ("autograder/sandbox/zygote.py", ("key",)))),
}


@dataclass(frozen=True)
class Earlier:
    """A mechanism measured with this script and removed: its figures as the removal commit records them (a run's
    JSON, ``--table-from``, may hold its measured pairs instead)."""

    name: str
    what: str
    removed_in: str  # the commit that removed it (its message has the figures)
    modules: tuple[str, ...]  # its modules in that commit (): the commit's other changes of autograder/ are its lines
    figures: tuple[tuple[str, str, int], ...]  # (figure, median off / on (range), pairs)


# measured with this script as of commit 30b065d (the figures as each removal commit's message gives them)
EARLIER = (
    Earlier("extra", "extra worker processes", "ead4dd9", (), (("N = 30", "1.07 (0.80-1.74)", 4), ("N = 100", "0.71", 1))),
    Earlier("gate", "CPU-bound admission gate", "ead4dd9", ("autograder/batch/admission.py",),
            (("N = 30", "0.72 (0.58-0.99)", 4),)),
    Earlier("order", "start order", "e7bc06d", (), (("N = 30", "1.08 (0.82-2.60)", 4), ("N = 100", "0.80 (0.75-1.49)", 3))),
    Earlier("headstart", "head start of the workers", "6eead43", (), (("N = 30", "0.99 (0.63-1.59)", 4),)),
    Earlier("keepbusy", "keep_busy", "6eead43", (), (("N = 30", "1.12 (0.68-1.48)", 4), ("N = 100", "0.75", 1))),
    Earlier("bgimport", "gradebook imported in a thread", "6eead43", (), (("N = 30", "0.80 (0.72-1.00)", 4),)),
    # measured as of commit 7042139 (docs/_generated/mechanisms.json has the pairs)
    Earlier("stub", "the nbgrader import stub", "6c70da9", (), (("N = 30", "0.78 (0.68-0.84)", 3),
                                                                ("N = 100", "0.77 (0.73-1.00)", 3))),
    Earlier("prearm", "the cgroup pre-arm thread", "e536605", (), (("N = 30", "0.98 (0.88-1.44)", 7),
                                                                   ("N = 100", "0.87 (0.79-0.88)", 3))),
    Earlier("forkserver", "workers forked from a fork server", "6feda12", (), (("N = 30", "0.78 (0.59-1.04)", 3),
                                                                              ("N = 100", "1.05 (0.97-1.43)", 7))),
)


def removed_lines(e: Earlier) -> int:
    """Lines of ``autograder/`` the removal commit took out, net (deleted - added): of the mechanism's own modules,
    or of the commit's other files when it names none (beside another mechanism's modules in the same commit)."""
    out = subprocess.run(["git", "-C", str(REPO), "show", "--numstat", "--format=", e.removed_in, "--", "autograder"],
                         capture_output=True, text=True, check=True).stdout
    others = {m for x in EARLIER if x.removed_in == e.removed_in for m in x.modules}
    total = 0
    for line in out.splitlines():
        added, deleted, path = line.split("\t")
        if (path in e.modules) if e.modules else (path not in others):
            total += int(deleted) - int(added)
    return total


def code_lines(mechanism: Mechanism, root: Path = REPO) -> int:
    """Lines of the mechanism's code in the tree at ``root``: whole modules, or the spans of top-level names."""
    total = 0
    for module, names in mechanism.code:
        text = (root / module).read_text(encoding="utf-8")
        if not names:
            total += len(text.splitlines())
            continue
        for node in ast.parse(text).body:
            targets = [node.name] if isinstance(node, (ast.FunctionDef, ast.ClassDef)) else [
                t.id for t in getattr(node, "targets", [getattr(node, "target", None)]) if isinstance(t, ast.Name)]
            if set(targets) & set(names):
                start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
                total += node.end_lineno - start + 1
    return total


def _grades(out: Path) -> list[tuple[str, str, str]]:
    with (out / "grades.csv").open(encoding="utf-8") as f:
        return sorted((r["student_id"], r["assignment"], r["score"]) for r in csv.DictReader(f))


CGROUPS = Path("/sys/fs/cgroup")
HIERARCHIES = ("pids", "cpu", "cpuacct", "memory")  # cgroup v1


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


def bench(n: int, seed: int, work: Path, jobs: int, reps: int, names: list[str], exe: Path, loads: list[float]) -> dict:
    """Every mechanism of ``names`` at size ``n``: {name: [a pair's on, off, on_cpu, off_cpu]}."""
    subs = work / "submissions"
    counts, _ = synthesize(subs, n, seed)
    template = work / "generated"
    empty = work / "empty"
    empty.mkdir()
    timed([str(exe), "grade", str(empty), "--out", str(template), "--quiet"])  # generate_assignment only, untimed
    base = {"AUTOGRADER_SANDBOX": ""}
    run(subs, template, work / "warm-up", jobs, base, exe)
    expected = _grades(work / "warm-up")
    pairs: dict[str, list[dict]] = {name: [] for name in names}
    for rep in range(reps):
        order = list(names)
        random.Random(rep).shuffle(order)
        for name in order:
            off_env = {**base, **MECHANISMS[name].off}
            got = {}
            for label in (("on", "off") if rep % 2 == 0 else ("off", "on")):
                out = work / f"{name}-{label}"
                got[label] = run(subs, template, out, jobs, base if label == "on" else off_env, exe)
                if _grades(out) != expected:
                    raise SystemExit(f"grades differ with {name} {label}")
            (on, on_cpu), (off, off_cpu) = got["on"], got["off"]
            pairs[name].append({"on": on, "off": off, "on_cpu": on_cpu, "off_cpu": off_cpu})
            loads.append(os.getloadavg()[0])
            cpu = f"  CPU {on_cpu:6.2f} / {off_cpu:6.2f} s" if on_cpu is not None else ""
            print(f"  N={n} rep {rep + 1}/{reps} {name:10s} on {on:6.2f} s  off {off:6.2f} s  off/on {off / on:.3f}{cpu}  "
                  f"load {loads[-1]:.1f}", flush=True)
    print(f"N = {n} (seed {seed}: " + ", ".join(f"{k} {v}" for k, v in counts.items()) + f"), --jobs {jobs}", flush=True)
    return pairs


def service(k: int, reps: int, work: Path, loads: list[float]) -> list[dict]:
    """Warm against cold sandboxes on the idle service's single upload -> graded: per call of ``bench_service.py
    --single K``, the median seconds seen by the client with warm (on) and cold (off) sandboxes."""
    pairs = []
    for rep in range(reps):
        out = work / f"service-{rep}.json"
        subprocess.run([sys.executable, str(Path(__file__).with_name("bench_service.py")), "--single", str(k),
                        "--json", str(out)], check=True, stdout=subprocess.DEVNULL)
        got = json.loads(out.read_text(encoding="utf-8"))
        on, off = statistics.median(got["warm"]["client"]), statistics.median(got["cold"]["client"])
        pairs.append({"on": on, "off": off, "on_cpu": None, "off_cpu": None})
        loads.append(os.getloadavg()[0])
        print(f"  service rep {rep + 1}/{reps}: upload -> graded median warm {on:.3f} s, cold {off:.3f} s, "
              f"cold/warm {off / on:.3f}  load {loads[-1]:.1f}", flush=True)
    return pairs


def _ratios(pairs: list[dict], key: str = "") -> list[float]:
    return [p[f"off{key}"] / p[f"on{key}"] for p in pairs if p[f"on{key}"]]


def _spread(xs: list[float]) -> str:
    return f"{statistics.median(xs):.2f} ({min(xs):.2f}-{max(xs):.2f})" if len(xs) > 1 else f"{xs[0]:.2f}"


def kept(figures: dict[str, list[dict]]) -> bool:
    """The rule: at least 15 % (median off / on >= :data:`KEEP`) on one of the figures the mechanism exists for."""
    return any(statistics.median(_ratios(pairs)) >= KEEP for pairs in figures.values() if pairs)


def table(results: dict) -> str:
    """The Markdown table of a run's results (as :func:`main` writes them to JSON) and of :data:`EARLIER`."""
    loads = results["loads"]
    runs = "; ".join(f"`{c}`" for c in results["command"].split("; "))
    lines = ["<!-- written by bench/bench_mechanisms.py (do not edit): run it, or --table-from its JSON files -->", "",
             f"Measured {results['date']} on commit {results['commit']} by {runs}: {results['cores']} cores, 1-minute load "
             f"average {min(loads):.1f}-{max(loads):.1f} while measuring (a machine shared with other work), "
             f"`autograder grade --jobs {results['jobs']}`, seed {results['seed']}. A pair is one run with the "
             f"mechanism and one without, back to back in alternating order; the ratio is off / on (above 1: the "
             f"mechanism saves time), median of the pairs (range). A mechanism stays with a median of at least "
             f"{KEEP:.2f} on a figure it exists for. Lines: what its removal took out of `autograder/` (net, "
             f"`git show --numstat`), for a mechanism still there the lines of its modules and definitions. CPU: "
             f"the seconds of the run's own cgroup, its sandboxes included.", "",
             "| mechanism | lines | figure | off / on, median (range) | CPU off / on | pairs | verdict |",
             "|---|---:|---|---:|---:|---:|---|"]
    removed = {e.name: e for e in EARLIER}
    for name, m in results["mechanisms"].items():
        e = removed.get(name)
        verdict = "kept" if kept(m["figures"]) else f"removed in {e.removed_in}" if e else "to remove"
        count = removed_lines(e) if e else m["lines"]  # a removal's own count, else the code as measured
        for k, (figure, pairs) in enumerate(m["figures"].items()):
            cpus = _ratios(pairs, "_cpu")
            head = f"**{name}**: {m['what']} | {count}" if k == 0 else " | "  # the mechanism on its first row only
            lines.append(f"| {head} | {figure} | {_spread(_ratios(pairs))} | {_spread(cpus) if cpus else '-'} | "
                         f"{len(pairs)} | {verdict if k == 0 else ''} |")
    for e in (e for e in EARLIER if e.name not in results["mechanisms"]):
        shared = [x.name for x in EARLIER if x.removed_in == e.removed_in and x is not e and not x.modules]
        count = f"{removed_lines(e)}" + (f" (with {', '.join(shared)})" if shared and not e.modules else "")
        for k, (figure, ratio, n) in enumerate(e.figures):
            head = f"**{e.name}**: {e.what} | {count}" if k == 0 else " | "
            lines.append(f"| {head} | {figure} | {ratio} | - | {n} | "
                         f"{f'removed, measured in commit {e.removed_in}' if k == 0 else ''} |")
    if any(not e.modules and sum(x.removed_in == e.removed_in for x in EARLIER) > 2 for e in EARLIER):
        lines += ["", "The lines of a row removed *with* others are those of the one commit that removed them together "
                      "(6eead43 also rewrote `autograder grade` around them)."]
    if "service_warm_median" in results:
        lines += ["", f"The service's single upload -> graded with warm sandboxes: median "
                      f"{results['service_warm_median']:.2f} s over the pairs' medians (target at most 0.3 s)."]
    return "\n".join(lines) + "\n"


def pooled(runs: list[dict]) -> dict:
    """Several runs' results as one: every figure's pairs together, the loads of all, each run's command and commit."""
    out = {**runs[0], "loads": [], "mechanisms": {}}
    for key in ("command", "commit", "date"):
        out[key] = "; ".join(dict.fromkeys(r[key] for r in runs))
    for r in runs:
        out["loads"] += r["loads"]
        for name, m in r["mechanisms"].items():
            mine = out["mechanisms"].setdefault(name, {**m, "figures": {}})
            for figure, pairs in m["figures"].items():
                mine["figures"].setdefault(figure, []).extend(pairs)
        if "service_warm_median" in r:
            out["service_warm_median"] = r["service_warm_median"]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="*", default=[30, 100])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--only", nargs="+", choices=sorted(MECHANISMS), default=list(MECHANISMS))
    ap.add_argument("--exe", type=Path, default=BIN / "autograder")
    ap.add_argument("--service", type=int, default=0, metavar="K", help="warm on the service's single upload, K uploads")
    ap.add_argument("--service-reps", type=int, default=3)
    ap.add_argument("--json", type=Path, help="write every pair's seconds here (with --table-from: pooled; default: "
                                              "beside the table, .json)")
    ap.add_argument("--table", type=Path, default=TABLE, help="write the Markdown table here")
    ap.add_argument("--table-from", type=Path, nargs="+", help="only write the table, from these --json files")
    args = ap.parse_args()
    if args.table_from:
        results = pooled([json.loads(f.read_text(encoding="utf-8")) for f in args.table_from])
    else:
        results = measure(args)
    args.json = args.json or args.table.with_suffix(".json")
    if args.json not in (args.table_from or []):
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=1), encoding="utf-8")
    args.table.parent.mkdir(parents=True, exist_ok=True)
    args.table.write_text(table(results), encoding="utf-8")
    print(table(results))


def measure(args: argparse.Namespace) -> dict:
    """Every figure of every mechanism of ``--only``: the results as :func:`table` reads them."""
    commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    shown = [f"--n {' '.join(map(str, args.n))}", f"--reps {args.reps}", f"--only {' '.join(args.only)}"]
    shown += [f"--service {args.service}", f"--service-reps {args.service_reps}"] if args.service else []
    results = {"command": " ".join(["bench/bench_mechanisms.py", *shown]), "date": time.strftime("%Y-%m-%d"),
               "commit": commit, "cores": os.cpu_count(), "jobs": args.jobs, "seed": args.seed, "loads": [],
               "mechanisms": {name: {"what": MECHANISMS[name].what, "lines": code_lines(MECHANISMS[name]), "figures": {}}
                              for name in args.only}}
    work = Path(tempfile.mkdtemp(prefix="bench-mechanisms-"))
    try:
        for n in args.n:
            pairs = bench(n, args.seed, work / f"n{n}", args.jobs, args.reps, args.only, args.exe, results["loads"])
            for name, xs in pairs.items():
                results["mechanisms"][name]["figures"][f"N = {n}"] = xs
        if args.service and "warm" in args.only:
            pairs = service(args.service, args.service_reps, work, results["loads"])
            results["mechanisms"]["warm"]["figures"][SERVICE] = pairs
            results["service_warm_median"] = statistics.median(p["on"] for p in pairs)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return results


if __name__ == "__main__":
    main()
