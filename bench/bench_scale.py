"""Load benchmark (not a test): grade N synthetic submissions with plain ``nbgrader autograde`` (serial)
and with ``autograder grade`` on 1 worker and on all cores (warm sandboxes), and on all cores with
``AUTOGRADER_SANDBOX=cold`` (a new sandbox per submission, as before warm sandboxes); print submissions per
minute, the ratios, peak memory, the machine's load average and where the time per submission goes.

Usage: ``.venv/bin/python bench/bench_scale.py [--n 30 100] [--seed 0] [--keep DIR]``; with ``--ab K`` only
the instructor solution of each assignment, graded in this process alternately with warm and cold
sandboxes, K times each (medians).

The submissions are a seeded mixture over the five assignments, built from the test corpus
(``tests/autograder/make_corpus.py``): correct (instructor solution), wrong (realistic bugs), slow (a
correct notebook with a 2 s cell) and hostile notebooks.  Only hostile notebooks that are harmless
WITHOUT a sandbox are used (plain nbgrader runs them unisolated): no fork, memory or output bombs.
Both sides get the assignments generated beforehand, so only grading is timed.  ``autograder`` runs with
the bubblewrap sandbox on.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests" / "autograder"))
import make_corpus  # noqa: E402
import nbformat  # noqa: E402

from autograder.store import gradebook as nbgrader_glue  # noqa: E402
from autograder.check.specs import all_assignments  # noqa: E402

BIN = Path(sys.executable).parent
A = all_assignments()
HOSTILE = ["attack_monkeypatch_builtins", "attack_eq_always_true", "attack_exit_and_kill", "attack_read_hidden_tests_and_gradebook",
           "attack_monkeypatch_numpy_testing", "attack_syntax_error_cell", "attack_deleted_test_cells", "attack_edited_test_cells"]
MIX = [("correct", 0.4), ("wrong", 0.3), ("slow", 0.1), ("hostile", 0.2)]


def synthesize(dest: Path, n: int, seed: int) -> tuple[dict[str, int], dict[Path, str]]:
    """Write ``dest/<student>/<assignment>/<notebook>.ipynb``; return the count of each kind and each file's kind."""
    rng = random.Random(seed)
    built = make_corpus.build()
    wrong = [k for k in built if k.startswith("wrong_") and built[k][1] is not None]
    counts = {k: 0 for k, _ in MIX}
    kinds: dict[Path, str] = {}
    for i in range(n):
        kind = rng.choices([k for k, _ in MIX], [w for _, w in MIX])[0]
        if kind == "correct" or kind == "slow":
            name = rng.choice(sorted(A))
            nb = make_corpus.solution(name)
            if kind == "slow":
                nb = make_corpus.append(nb, "import time\ntime.sleep(2)")
        else:
            name, nb, _ = built[rng.choice(wrong if kind == "wrong" else HOSTILE)]
        counts[kind] += 1
        path = dest / f"s{i:04d}" / name / f"{A[name].notebook}.ipynb"
        path.parent.mkdir(parents=True)
        nbformat.write(nb, path)
        kinds[path] = kind
    return counts, kinds


class PeakRSS:
    """Peak resident memory of a process and all its descendants (sampled every 0.1 s)."""

    def __init__(self, pid: int) -> None:
        self.pid, self.peak, self._stop = pid, 0, threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()

    def _tree(self) -> int:
        parent, rss = {}, {}
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
                pid = int(stat.parent.name)
                parent[pid] = int(fields[1])
                rss[pid] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
            except (OSError, IndexError, ValueError):
                continue
        total = 0
        for pid in rss:
            p = pid
            while p and p != self.pid:
                p = parent.get(p, 0)
            if p == self.pid:
                total += rss[pid]
        return total

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self._tree())
            time.sleep(0.1)

    def stop(self) -> int:
        self._stop.set()
        self._t.join()
        return self.peak


def timed(cmd: list[str], cwd: Path | None = None, ok=(0,), env: dict[str, str] | None = None) -> tuple[float, int, str]:
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PATH": str(BIN) + os.pathsep + os.environ["PATH"], **(env or {})})
    mem = PeakRSS(proc.pid)
    out, err = proc.communicate()
    seconds = time.perf_counter() - t0
    peak = mem.stop()
    if proc.returncode not in ok:
        raise SystemExit(f"{cmd[:3]} failed ({proc.returncode}):\n{err[-3000:]}")
    return seconds, peak, err


def plain_nbgrader(subs: Path, root: Path) -> tuple[float, int]:
    """``nbgrader autograde`` of every assignment, one after another, in a course directory."""
    db = f"sqlite:///{root / 'gradebook.db'}"
    names = sorted({p.name for p in subs.glob("*/*")})
    nbgrader_glue.generate(REPO / "solutions", names, root, db)
    (root / "nbgrader_config.py").write_text(f"c = get_config()\nc.CourseDirectory.root = {str(root)!r}\n"
                                             f"c.CourseDirectory.db_url = {db!r}\n")
    shutil.copytree(subs, root / "submitted")
    total, peak = 0.0, 0
    for name in names:
        # exit 1 = some notebook could not be processed (a hostile one killed its kernel); the rest is graded
        s, p, _ = timed([str(BIN / "nbgrader"), "autograde", name, "--create", "--force"], cwd=root, ok=(0, 1))
        total += s
        peak = max(peak, p)
    return total, peak


def ours(subs: Path, out: Path, jobs: int, cold: bool = False) -> tuple[float, int, dict]:
    empty = out.parent / f"empty-{out.name}"
    empty.mkdir()
    timed([str(BIN / "autograder"), "grade", str(empty), "--out", str(out), "--quiet"])  # generate_assignment only
    env = {"AUTOGRADER_SANDBOX": "cold"} if cold else {}
    s, peak, _ = timed([str(BIN / "autograder"), "grade", str(subs), "--out", str(out), "--jobs", str(jobs), "--quiet"],
                       env=env)
    return s, peak, json.loads((out / "run.json").read_text(encoding="utf-8"))


def profile(kinds: dict[Path, str]) -> dict[str, list[tuple[float, float]]]:
    """Grade every submission once more in this process, one after another, with a warm sandbox: the seconds of
    (sandbox start + cells, calls + checks) of each, by kind."""
    from autograder.check import grade_with_timing

    by_kind: dict[str, list[tuple[float, float]]] = {}
    for path, kind in sorted(kinds.items()):
        name = path.parent.name
        t0 = time.monotonic()
        _, start = grade_with_timing(A[name], REPO / "solutions" / name / f"{A[name].notebook}.ipynb", path, "s")
        by_kind.setdefault(kind, []).append((start, time.monotonic() - t0 - start))
    return by_kind


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs) if xs else 0.0


def bench(n: int, seed: int, work: Path, cores: int) -> None:
    """One size: every row measured here, in this order, on the same submissions."""
    subs = work / "submissions"
    counts, kinds = synthesize(subs, n, seed)
    load0 = os.getloadavg()
    print(f"{n} submissions (seed {seed}): " + ", ".join(f"{k} {v}" for k, v in counts.items())
          + f"; {cores} cores; isolation on (bubblewrap); load average at start {load0[0]:.1f} {load0[1]:.1f} {load0[2]:.1f}")
    rows = []
    t_nb, m_nb = plain_nbgrader(subs, work / "nbgrader")
    rows.append(("nbgrader autograde, serial", t_nb, m_nb, None))
    for jobs in sorted({1, cores}):
        t, m, stats = ours(subs, work / f"ours-{jobs}", jobs)
        rows.append((f"autograder grade --jobs {jobs}", t, m, stats))
    t, m, stats = ours(subs, work / "ours-cold", cores, cold=True)
    rows.append((f"  same, cold sandboxes, --jobs {cores}", t, m, stats))
    print(f"{'run':36s} {'seconds':>8s} {'subs/min':>9s} {'vs nbgrader':>12s} {'peak RSS MiB':>13s}")
    for label, t, m, _ in rows:
        print(f"{label:36s} {t:8.1f} {60 * n / t:9.1f} {t_nb / t:11.2f}x {m / 2**20:13.0f}")
    warm_best, one = rows[-2], rows[1]
    ps = warm_best[3]["per_submission_seconds"]
    print(f"time per submission inside a worker (--jobs {cores}, mean): sandbox start + notebook cells "
          f"{ps['process_start_and_cells']:.3f} s, calls + checks (student functions and hidden tests) "
          f"{ps['calls_and_checks']:.3f} s, job set-up {ps['setup']:.3f} s; gradebook write in the parent {ps['db']:.3f} s")
    cold_ps = rows[-1][3]["per_submission_seconds"]
    print(f"  cold sandboxes: sandbox start + notebook cells {cold_ps['process_start_and_cells']:.3f} s, "
          f"calls + checks {cold_ps['calls_and_checks']:.3f} s")
    by_kind = profile(kinds)
    print("where the time goes (each submission again, one at a time in this process, warm sandbox; mean seconds):")
    for kind, xs in sorted(by_kind.items()):
        print(f"  {kind:8s} {len(xs):4d} submissions: sandbox start + cells {_mean([a for a, _ in xs]):.3f} s, "
              f"calls + checks {_mean([b for _, b in xs]):.3f} s")
    every = [a for xs in by_kind.values() for a, _ in xs]
    not_slow = [a for k, xs in by_kind.items() if k != "slow" for a, _ in xs]
    load1 = os.getloadavg()
    ratio = t_nb / warm_best[1]
    print(f"targets: {ratio:.2f}x serial nbgrader (>= 10x: {'met' if ratio >= 10 else 'NOT met'}); "
          f"1 -> {cores} workers {one[1] / warm_best[1]:.2f}x (>= 1.8x: {'met' if one[1] / warm_best[1] >= 1.8 else 'NOT met'}); "
          f"sandbox start + cells {_mean(every):.3f} s mean, {_mean(not_slow):.3f} s without the {counts['slow']} notebooks "
          f"that sleep 2 s (<= 0.10 s: {'met' if _mean(every) <= 0.10 else 'NOT met'}); "
          f"warm vs cold sandboxes {rows[-1][1] / warm_best[1]:.2f}x; load average at end {load1[0]:.1f} {load1[1]:.1f} {load1[2]:.1f}")


def warm_cold(k: int) -> None:
    """Each assignment's instructor solution graded in this process, alternately warm and cold, ``k`` times each."""
    import statistics

    from autograder.check import grade_with_timing
    from autograder.sandbox import warm

    seconds: dict[tuple[str, str], list[tuple[float, float]]] = {}
    first = sorted(A)[0]
    first_src = REPO / "solutions" / first / f"{A[first].notebook}.ipynb"
    for rep in range(k + 1):  # the first round warms up
        for mode in ("cold", "warm"):
            os.environ[warm.ENV_COLD] = mode
            if mode == "cold":
                warm.discard_all()
            else:  # the cold round kept no zygote: start the warm one, untimed
                grade_with_timing(A[first], first_src, first_src, "s")
            for name in sorted(A):
                src = REPO / "solutions" / name / f"{A[name].notebook}.ipynb"
                t0 = time.monotonic()
                _, start = grade_with_timing(A[name], src, src, "s")
                if rep:
                    seconds.setdefault((name, mode), []).append((start, time.monotonic() - t0))
    load = os.getloadavg()
    print(f"instructor solutions, median of {k} (load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}): "
          "sandbox start + cells / whole grading")
    for name in sorted(A):
        cells = [f"{mode} {statistics.median(a for a, _ in seconds[name, mode]):.3f} / "
                 f"{statistics.median(b for _, b in seconds[name, mode]):.3f} s" for mode in ("warm", "cold")]
        print(f"  {name:24s} " + "   ".join(cells))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="+", default=[30, 100])
    ap.add_argument("--ab", type=int, default=0, help="only the warm/cold comparison of the instructor solutions, K times")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--keep", help="keep the work directory here")
    args = ap.parse_args()
    if args.ab:
        warm_cold(args.ab)
        return
    cores = os.cpu_count() or 1
    work = Path(args.keep or tempfile.mkdtemp(prefix="bench-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    for n in args.n:
        bench(n, args.seed, work / f"n{n}", cores)
        print(flush=True)
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
