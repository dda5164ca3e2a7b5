"""Load benchmark (not a test): grade N synthetic submissions with plain ``nbgrader autograde`` (serial)
and with ``autograder grade`` on 1 worker and on all cores (warm sandboxes, JOBS extra workers behind the
CPU-bound admission), the same with no extra workers (``AUTOGRADER_EXTRA_WORKERS=0``, one process per core),
and on all cores with ``AUTOGRADER_SANDBOX=cold`` (a new sandbox per submission); print submissions per
minute, the ratios, peak memory, ``uptime`` and where the time goes: per submission inside a worker
(sandbox start + cells, of which the student's own cells by wall clock and by CPU time; calls + checks;
admission), in the command process (phases from run.json), when each submission ran and how many cores were busy
each second of the run (run.json's timeline and /proc/stat sampled every 0.1 s: the tail after the last start,
the time only waiting notebooks were in flight) and, one at a time, by kind of submission.

Usage: ``.venv/bin/python bench/bench_scale.py [--n 30 100] [--seed 0] [--keep DIR] [--quick] [--peer BIN]
[--extra K ...]``;
``--quick`` leaves out the rows without extra workers and with cold sandboxes; ``--peer BIN`` also measures
another checkout's ``autograder`` executable (e.g. main's, for a before/after) on 1 and all cores, in the same
run and on the same submissions; ``--extra K`` also measures K extra workers per slot (the default is 1).
With ``--ab K`` only the instructor solution of each assignment, graded in this process alternately with warm and
cold sandboxes, K times each (medians).

The submissions are a seeded mixture over the five assignments, read as data from the committed sample
corpus (``tests/autograder/corpus/``; nothing of the tests is imported): correct (instructor solution), wrong
(realistic bugs), slow (a correct notebook with a 2 s cell) and hostile notebooks.  Only hostile notebooks that are harmless
WITHOUT a sandbox are used (plain nbgrader runs them unisolated): no fork, memory or output bombs.
Both sides get the assignments generated beforehand, so only grading is timed.  ``autograder`` runs with
the bubblewrap sandbox on.
"""

from __future__ import annotations

import argparse
import csv
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
import nbformat  # noqa: E402
from nbformat.v4 import new_code_cell  # noqa: E402

from autograder.store import gradebook as nbgrader_glue  # noqa: E402
from autograder.check.specs import all_assignments  # noqa: E402

BIN = Path(sys.executable).parent
A = all_assignments()
CORPUS = REPO / "tests" / "autograder" / "corpus"  # the sample corpus, committed: <student>/<assignment>/<notebook>
HOSTILE = ["attack_monkeypatch_builtins", "attack_eq_always_true", "attack_exit_and_kill", "attack_read_hidden_tests_and_gradebook",
           "attack_monkeypatch_numpy_testing", "attack_syntax_error_cell", "attack_deleted_test_cells", "attack_edited_test_cells"]
MIX = [("correct", 0.4), ("wrong", 0.3), ("slow", 0.1), ("hostile", 0.2)]


def corpus_notebook(student: str) -> tuple[str, object]:
    """The assignment and the notebook of one student of the sample corpus."""
    (path,) = (CORPUS / student).glob("*/*.ipynb")
    return path.parent.name, nbformat.read(path, as_version=4)


def synthesize(dest: Path, n: int, seed: int) -> tuple[dict[str, int], dict[Path, str]]:
    """Write ``dest/<student>/<assignment>/<notebook>.ipynb``; return the count of each kind and each file's kind."""
    rng = random.Random(seed)
    wrong = sorted(p.name for p in CORPUS.glob("wrong_*") if any(p.glob("*/*.ipynb")))
    counts = {k: 0 for k, _ in MIX}
    kinds: dict[Path, str] = {}
    for i in range(n):
        kind = rng.choices([k for k, _ in MIX], [w for _, w in MIX])[0]
        if kind == "correct" or kind == "slow":
            name, nb = corpus_notebook(f"instructor_solution_{rng.choice(sorted(A))}")
            if kind == "slow":
                nb.cells.append(new_code_cell("import time\ntime.sleep(2)", id="sleep2s"))
        else:
            name, nb = corpus_notebook(rng.choice(wrong if kind == "wrong" else HOSTILE))
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
        self._page = os.sysconf("SC_PAGE_SIZE")
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()

    def _tree(self) -> int:
        """Resident bytes of the process and its descendants (found from it through /proc/PID/task/TID/children:
        a scan of every process of the machine cost ~2 ms per sample, taken from the runs being measured)."""
        from autograder.sandbox.cgroup import process_tree

        total = 0
        for pid in {self.pid} | {p for p, _ in process_tree(self.pid)}:
            try:
                total += int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * self._page
            except (OSError, IndexError, ValueError):
                continue
        return total

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self._tree())
            time.sleep(0.1)

    def stop(self) -> int:
        self._stop.set()
        self._t.join()
        return self.peak


def machine_cpu() -> float:
    """CPU seconds the whole machine has been busy since boot (``/proc/stat``: user, nice, system, irq, softirq).

    On an idle machine the difference over a run is the run's own CPU time, sandboxes and reaped processes
    included (which no per-process sum sees)."""
    fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    user, nice, system, _idle, _iowait, irq, softirq = (int(x) for x in fields[:7])
    return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")


CPU: dict[int, float] = {}  # id of a run's result -> machine CPU seconds during it (see machine_cpu)
GRADES: dict[int, list[tuple[str, str, str]]] = {}  # id of a run's result -> its grades.csv (student, assignment, score)
TRACE: dict[int, list[tuple[float, float]]] = {}  # id of a run's result -> (seconds since its start, machine CPU)


class CpuTrace:
    """Machine CPU seconds (:func:`machine_cpu`) every 0.1 s from now on: how many cores were busy when."""

    def __init__(self) -> None:
        self.t0, self.points, self._stop = time.monotonic(), [(0.0, machine_cpu())], threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()

    def _run(self) -> None:
        while not self._stop.wait(0.1):
            self.points.append((time.monotonic() - self.t0, machine_cpu()))

    def stop(self) -> list[tuple[float, float]]:
        self._stop.set()
        self._t.join()
        self.points.append((time.monotonic() - self.t0, machine_cpu()))
        return self.points


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
    total, peak, cpu = 0.0, 0, 0.0
    for name in names:
        # exit 1 = some notebook could not be processed (a hostile one killed its kernel); the rest is graded
        c0 = machine_cpu()
        s, p, _ = timed([str(BIN / "nbgrader"), "autograde", name, "--create", "--force"], cwd=root, ok=(0, 1))
        cpu += machine_cpu() - c0
        total += s
        peak = max(peak, p)
    return total, peak, cpu


def ours(subs: Path, out: Path, jobs: int, *, cold: bool = False, extra: int | None = None,
         exe: Path = BIN / "autograder") -> tuple[float, int, dict]:
    """``autograder grade --jobs JOBS``; ``extra``: ``AUTOGRADER_EXTRA_WORKERS`` (None: the default, JOBS).

    The assignments are generated into the output folder first (untimed)."""
    empty = out.parent / "empty"
    empty.mkdir(exist_ok=True)
    timed([str(exe), "grade", str(empty), "--out", str(out), "--quiet"])  # generate_assignment only
    env = {"AUTOGRADER_SANDBOX": "cold"} if cold else {}
    if extra is not None:
        env["AUTOGRADER_EXTRA_WORKERS"] = str(extra)
    c0, trace = machine_cpu(), CpuTrace()
    s, peak, _ = timed([str(exe), "grade", str(subs), "--out", str(out), "--jobs", str(jobs), "--quiet"], env=env)
    stats = json.loads((out / "run.json").read_text(encoding="utf-8"))
    CPU[id(stats)], TRACE[id(stats)] = machine_cpu() - c0, trace.stop()
    with (out / "grades.csv").open(encoding="utf-8") as f:
        GRADES[id(stats)] = sorted((r["student_id"], r["assignment"], r["score"]) for r in csv.DictReader(f))
    return s, peak, stats


def profile(kinds: dict[Path, str]) -> dict[str, list[tuple[float, float, float, float]]]:
    """Grade every submission once more in this process, one after another, with a warm sandbox: the seconds of
    (sandbox start + cells, calls + checks, the student's cells wall, their CPU time) of each, by kind."""
    from autograder.check import grade_with_timing
    from autograder.sandbox import cell_time

    by_kind: dict[str, list[tuple[float, float, float, float]]] = {}
    first = min(kinds)  # untimed: start this process's warm zygote, as every grading worker has one after its first job
    grade_with_timing(A[first.parent.name], REPO / "solutions" / first.parent.name / f"{A[first.parent.name].notebook}.ipynb",
                      first, "s")
    for path, kind in sorted(kinds.items()):
        name = path.parent.name
        t0 = time.monotonic()
        cells0 = cell_time()
        _, start = grade_with_timing(A[name], REPO / "solutions" / name / f"{A[name].notebook}.ipynb", path, "s")
        wall, cpu = (a - b for a, b in zip(cell_time(), cells0))
        by_kind.setdefault(kind, []).append((start, time.monotonic() - t0 - start, wall, cpu))
    return by_kind


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs) if xs else 0.0


def _bytecode() -> str:
    """Whether the modules both sides import have their .pyc files (``make setup`` compiles them; without them and
    with PYTHONDONTWRITEBYTECODE=1 every process compiles each module it imports, nbgrader's kernels included)."""
    import importlib.util

    import numpy
    import nbgrader

    mods = {"autograder": REPO / "autograder" / "check" / "grade.py", "nbgrader": Path(nbgrader.__file__),
            "NumPy": Path(numpy.__file__)}
    have = [k for k, f in mods.items() if Path(importlib.util.cache_from_source(str(f))).exists()]
    env = os.environ.get("PYTHONDONTWRITEBYTECODE")
    return (f"bytecode compiled for {', '.join(have) or 'none'} of {', '.join(mods)}"
            f"{'' if env is None else f'; PYTHONDONTWRITEBYTECODE={env}'}")


def _uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def _split(ps: dict) -> str:
    """One worker's mean seconds per submission, from run.json's per_submission_seconds."""
    start, cw, cc = ps["process_start_and_cells"], ps.get("student_cells_wall", 0.0), ps.get("student_cells_cpu", 0.0)
    return (f"sandbox start + cells {start:.3f} s (of which the student's cells {cw:.3f} s wall, {cc:.3f} s CPU; "
            f"sandbox alone {start - cw:.3f} s; with the cells' CPU instead of their wall {start - cw + cc:.3f} s), "
            f"calls + checks {ps['calls_and_checks']:.3f} s, job set-up {ps['setup']:.3f} s, "
            f"waiting for admission {ps.get('admission_wait', 0.0):.3f} s, admitted beyond the cores "
            f"{100 * ps.get('admitted_extra', 0.0):.0f} % (on a leaving extra job's place, unmeasured: "
            f"{100 * ps.get('admitted_handed_on', 0.0):.0f} %); in the command: gradebook write {ps['db']:.3f} s, "
            f"result files {ps.get('files', 0.0):.3f} s")


def _phases(label: str, t: float, stats: dict) -> str:
    """Where a run's wall time went, from the command's run.json."""
    ph = stats.get("phases") or {}
    if not ph or ph.get("last_result") is None:
        return f"  {label}: no phases recorded"
    interp = t - ph["summary_written"]
    opened = ""
    if ph.get("gradebook_open") is not None:  # since the gradebook is imported beside the head start
        opened = (f" (meanwhile gradebook imported at {ph['gradebook_imported']:.2f} s and opened at "
                  f"{ph['gradebook_open']:.2f} s)")
    return (f"  {label}: {t:.2f} s = interpreter start and imports until main {interp:.2f} s + until the first jobs "
            f"are in the workers' hands {ph['jobs_started']:.2f} s + first result after {ph['first_result'] - ph['jobs_started']:.2f} s"
            f"{opened} + the other results {ph['last_result'] - ph['first_result']:.2f} s + recording the last "
            f"{ph['loop_end'] - ph['last_result']:.2f} s + grades.csv, export and summary "
            f"{ph['summary_written'] - ph['loop_end']:.2f} s")


def _start_order(kinds: dict[Path, str], cores: int) -> str:
    """Which group of submissions ``autograder grade --jobs CORES`` starts first (autograder.batch.order), and where
    the notebooks that sleep are in that order."""
    from autograder.batch import order

    estimates = {name: order.estimate(a) for name, a in A.items()}
    items = sorted((p.parts[-3], p.parts[-2], kind) for p, kind in kinds.items())
    seq = order.start_order(items, lambda i: i[1], estimates, cores)
    groups = []
    for item in seq:
        runs = estimates[item[1]].runs
        if not groups or groups[-1][0] != runs:
            groups.append((runs, set()))
        groups[-1][1].add(item[1].split("_")[0])
    slow = [k + 1 for k, item in enumerate(seq) if item[2] == "slow"]
    return (f"start order on {cores} slots: " + ", then ".join(f"{'/'.join(sorted(names))} ({runs} run{'s' * (runs > 1)} "
                                                               f"each)" for runs, names in groups)
            + f"; the notebooks that sleep 2 s start {', '.join(map(str, slow)) or '-'} of {len(seq)}")


WAITS = 0.5  # a submission whose student cells took this much more wall clock than CPU time "waits" (sleeps)


def _tail(label: str, t: float, stats: dict, cores: int) -> str:
    """Where the grading part of a run went, from run.json's timeline (when each submission ran in a worker) and
    the machine's CPU sampled during the run: the last start, the time only waiting notebooks were in flight,
    and how many cores were busy, per second of the run."""
    rows = stats.get("timeline")
    if not rows:
        return f"  {label}: no timeline recorded"
    waits = [r for r in rows if r[3] - r[4] > WAITS]
    first, last_start, end = min(r[1] for r in rows), max(r[1] for r in rows), max(r[2] for r in rows)
    # sweep: seconds during which only waiting submissions ran, and fewer computing ones than cores
    events = sorted([(r[1], 1, r in waits) for r in rows] + [(r[2], -1, r in waits) for r in rows])
    only_waiting = fewer = 0.0
    computing = waiting = 0
    prev = first
    for at, step, is_wait in events:
        if computing == 0 and waiting:
            only_waiting += at - prev
        if computing < cores:
            fewer += at - prev
        prev = at
        if is_wait:
            waiting += step
        else:
            computing += step
    tail_waits = [r for r in waits if r[2] > last_start]
    trace = TRACE.get(id(stats), [])
    per_second = []
    for k in range(int(trace[-1][0]) + 1 if trace else 0):
        inside = [(a, c) for a, c in trace if k <= a <= k + 1]
        if len(inside) >= 2:
            per_second.append((inside[-1][1] - inside[0][1]) / (inside[-1][0] - inside[0][0]))
    busy = " ".join(f"{b:.1f}" for b in per_second)
    return (f"  {label}: submissions graded from {first:.2f} s to {end:.2f} s after the command's start, the last one "
            f"started at {last_start:.2f} s ({end - last_start:.2f} s before the end; {len(tail_waits)} of the "
            f"{len(waits)} notebooks that wait (student cells' wall - CPU > {WAITS} s) still running then); only "
            f"waiting notebooks in flight for {only_waiting:.2f} s, fewer computing submissions than cores for "
            f"{fewer:.2f} s of {end - first:.2f} s; cores busy (machine) per second of the run: {busy}")


def bench(n: int, seed: int, work: Path, cores: int, quick: bool = False, peer: Path | None = None,
          extra: list[int] | None = None) -> None:
    """One size: every row measured here, in this order, on the same submissions."""
    subs = work / "submissions"
    counts, kinds = synthesize(subs, n, seed)
    print(f"{n} submissions (seed {seed}): " + ", ".join(f"{k} {v}" for k, v in counts.items())
          + f"; {cores} cores; isolation on (bubblewrap); {_bytecode()}; {_uptime()}")
    print(_start_order(kinds, cores))
    rows = []
    t_nb, m_nb, cpu_nb = plain_nbgrader(subs, work / "nbgrader")
    rows.append(("nbgrader autograde, serial", t_nb, m_nb, None))
    runs = {}
    for jobs in sorted({1, cores}):  # the default: JOBS extra workers behind the CPU-bound admission
        runs[jobs] = ours(subs, work / f"ours-{jobs}", jobs)
        rows.append((f"autograder grade --jobs {jobs}", *runs[jobs]))
    peers = {}
    for jobs in sorted({1, cores}) if peer else []:  # another checkout (main, say), same submissions
        peers[jobs] = ours(subs, work / f"peer-{jobs}", jobs, exe=peer)
        rows.append((f"  peer {peer.parents[2].name} --jobs {jobs}", *peers[jobs]))
    for k in extra or []:  # other counts of extra workers: k per slot
        for jobs in sorted({1, cores}):
            rows.append((f"  same, {k} extra per slot, --jobs {jobs}", *ours(subs, work / f"ours-{jobs}-x{k}", jobs, extra=k * jobs)))
    plain, cold = {}, None
    for jobs in sorted({1, cores}) if not quick else []:  # one process per core, no extra workers
        plain[jobs] = ours(subs, work / f"ours-{jobs}-plain", jobs, extra=0)
        rows.append((f"  same, no extra workers, --jobs {jobs}", *plain[jobs]))
    if not quick:
        cold = ours(subs, work / "ours-cold", cores, cold=True)
        rows.append((f"  same as --jobs {cores}, cold sandboxes", *cold))
    print(f"{'run':40s} {'workers':>8s} {'seconds':>8s} {'subs/min':>9s} {'vs nbgrader':>12s} {'peak RSS MiB':>13s} "
          f"{'machine CPU s':>14s} {'cores busy':>11s}")
    for label, t, m, stats in rows:
        procs = "1" if stats is None else f"{stats['workers']}+{stats.get('extra_workers', 0)}"
        cpu = cpu_nb if stats is None else CPU[id(stats)]
        print(f"{label:40s} {procs:>8s} {t:8.1f} {60 * n / t:9.1f} {t_nb / t:11.2f}x {m / 2**20:13.0f} {cpu:14.1f} "
              f"{cpu / t:11.2f}")
    grades = {label.strip(): GRADES[id(stats)] for label, _, _, stats in rows[1:]}
    differ = [label for label, g in grades.items() if g != grades[rows[1][0]]]
    print(f"grades.csv of every row the same as --jobs 1's ({len(grades[rows[1][0]])} grades): "
          + ("yes" if not differ else f"NO, different in: {', '.join(differ)}"))
    c1, c2 = CPU[id(runs[1][2])], CPU[id(runs[cores][2])]
    print(f"1 -> {cores} workers and the CPU (machine-wide /proc/stat; valid on an otherwise idle machine): the one-slot "
          f"run used {c1:.1f} s of CPU in {runs[1][0]:.1f} s ({c1 / runs[1][0]:.2f} of {cores} cores busy on average), the "
          f"{cores}-slot run {c2:.1f} s; on {cores} cores it cannot take less than {c2 / cores:.1f} s, so 1 -> {cores} is at "
          f"most {runs[1][0] / (c2 / cores):.2f}x (measured {runs[1][0] / runs[cores][0]:.2f}x); with the one-slot run's "
          f"CPU ({c1:.1f} s) at most {runs[1][0] / (c1 / cores):.2f}x")
    best = runs[cores]
    print(f"time per submission inside a worker (--jobs {cores}, mean): {_split(best[2]['per_submission_seconds'])}")
    if plain:
        print(f"  no extra workers: {_split(plain[cores][2]['per_submission_seconds'])}")
    if cold:
        print(f"  cold sandboxes: {_split(cold[2]['per_submission_seconds'])}")
    print("where each run's wall time went (command process):")
    for label, t, _, stats in rows[1:]:
        print(_phases(label.strip(), t, stats))
    print("the grading itself (run.json timeline: when each submission ran in a worker):")
    for label, t, _, stats in rows[1:]:
        print(_tail(label.strip(), t, stats, cores))
    by_kind = profile(kinds)
    print("each submission again, one at a time in this process, warm sandbox (mean seconds):")
    for kind, xs in sorted(by_kind.items()):
        print(f"  {kind:8s} {len(xs):4d} submissions: sandbox start + cells {_mean([x[0] for x in xs]):.3f} s "
              f"(the student's cells {_mean([x[2] for x in xs]):.3f} s wall, {_mean([x[3] for x in xs]):.3f} s CPU), "
              f"calls + checks {_mean([x[1] for x in xs]):.3f} s")
    every = [x for xs in by_kind.values() for x in xs]
    with_wall = _mean([x[0] for x in every])  # the target is wall clock, sleeping included
    with_cpu = _mean([x[0] - x[2] + x[3] for x in every])  # the student's cells counted by their CPU time
    not_slow = _mean([x[0] for k, xs in by_kind.items() if k != "slow" for x in xs])
    ratio, one_two = t_nb / best[0], runs[1][0] / best[0]
    met = lambda ok: "met" if ok else "NOT met"  # noqa: E731
    without = ""
    if plain:
        one_two_plain = plain[1][0] / plain[cores][0]
        without = f"{one_two_plain:.2f}x with no extra workers, {met(one_two_plain >= 1.8)}; "
    before = ""
    if peers:
        before = (f"; peer: {t_nb / peers[cores][0]:.2f}x serial nbgrader, 1 -> {cores} workers "
                  f"{peers[1][0] / peers[cores][0]:.2f}x, this tree {peers[cores][0] / best[0]:.2f}x faster on {cores} "
                  f"workers and {peers[1][0] / runs[1][0]:.2f}x on 1")
    print(f"targets: {ratio:.2f}x serial nbgrader (>= 10x: {met(ratio >= 10)}); 1 -> {cores} workers {one_two:.2f}x "
          f"(>= 1.8x: {met(one_two >= 1.8)}; {without}) sandbox start + cells (one at a time) {with_wall:.3f} s mean with "
          f"the student's cells by wall clock, their sleeping included (<= 0.10 s: {met(with_wall <= 0.10)}; "
          f"{not_slow:.3f} s without the {counts['slow']} notebooks that sleep 2 s), {with_cpu:.3f} s with the "
          f"student's cells by their CPU time (<= 0.10 s: {met(with_cpu <= 0.10)})"
          + (f"; warm vs cold sandboxes {cold[0] / best[0]:.2f}x" if cold else "") + f"{before}; {_uptime()}")


def warm_cold(k: int) -> None:
    """Each assignment's instructor solution graded in this process, alternately warm and cold, ``k`` times each."""
    import statistics

    from autograder.check import grade_with_timing
    from autograder.model import SandboxSettings
    from autograder.sandbox import warm

    seconds: dict[tuple[str, str], list[tuple[float, float]]] = {}
    first = sorted(A)[0]
    first_src = REPO / "solutions" / first / f"{A[first].notebook}.ipynb"
    for rep in range(k + 1):  # the first round warms up
        for mode in ("cold", "warm"):
            sandbox = SandboxSettings(warm=mode == "warm")
            if mode == "cold":
                warm.discard_all()
            else:  # the cold round kept no zygote: start the warm one, untimed
                grade_with_timing(A[first], first_src, first_src, "s", sandbox=sandbox)
            for name in sorted(A):
                src = REPO / "solutions" / name / f"{A[name].notebook}.ipynb"
                t0 = time.monotonic()
                _, start = grade_with_timing(A[name], src, src, "s", sandbox=sandbox)
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
    ap.add_argument("--quick", action="store_true", help="leave out the rows without extra workers and with cold sandboxes")
    ap.add_argument("--peer", type=Path, help="another checkout's autograder executable, measured too (before/after)")
    ap.add_argument("--extra", type=int, nargs="*", default=[], help="also measure K extra workers per slot (each K)")
    args = ap.parse_args()
    if args.ab:
        warm_cold(args.ab)
        return
    cores = os.cpu_count() or 1
    work = Path(args.keep or tempfile.mkdtemp(prefix="bench-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    for n in args.n:
        bench(n, args.seed, work / f"n{n}", cores, args.quick, args.peer, args.extra)
        print(flush=True)
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
