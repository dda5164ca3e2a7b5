"""Batch throughput of ``autograder grade`` (not a test): N seeded submissions graded on every core, against plain
``nbgrader autograde`` and, paired in the same run, against another checkout's ``autograder`` (``--peer``).

The machine the course is developed on is shared and loaded: seconds measured minutes apart differ by more than
most changes are worth, so the comparison with the peer is the median of paired ratios (the two runs of a pair back
to back, in alternating order), never seconds of different runs.  Serial nbgrader (``--nbgrader``) is measured once.
Every run's grades.csv must equal the first's.  The table is printed as Markdown (``docs/scaling.md`` holds it).

Usage: ``.venv/bin/python bench/bench_scale.py [--n 30 100] [--reps 3] [--peer CHECKOUT/.venv/bin/autograder]
[--nbgrader] [--seed 0]``; run it from a folder outside both checkouts (a fork server's ``sys.path`` begins with the
working directory).

The submissions are a seeded mixture over the five assignments, read as data from the committed sample corpus
(``tests/autograder/corpus/``; nothing of the tests is imported): correct (instructor solution), wrong (realistic
bugs), slow (a correct notebook with a 2 s cell) and hostile notebooks, only those harmless WITHOUT a sandbox
(plain nbgrader runs them unisolated).  Both sides get the assignments generated beforehand, so only grading is
timed.  ``autograder`` runs with the bubblewrap sandbox on.
"""

from __future__ import annotations

import argparse
import csv
import os
import random
import shutil
import statistics
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


def timed(cmd: list[str], cwd: Path | None = None, ok=(0,), env: dict[str, str] | None = None) -> tuple[float, int, str]:
    """Seconds, peak resident memory of the process tree and stderr of one command (raises if it failed)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PATH": str(BIN) + os.pathsep + os.environ["PATH"], **(env or {})})
    mem = PeakRSS(proc.pid)
    _, err = proc.communicate()
    seconds = time.perf_counter() - t0
    peak = mem.stop()
    if proc.returncode not in ok:
        raise SystemExit(f"{cmd[:3]} failed ({proc.returncode}):\n{err[-3000:]}")
    return seconds, peak, err


def plain_nbgrader(subs: Path, root: Path) -> float:
    """Seconds of ``nbgrader autograde`` of every assignment, one after another, in a course directory."""
    from autograder.store import gradebook as nbgrader_glue

    db = f"sqlite:///{root / 'gradebook.db'}"
    names = sorted({p.name for p in subs.glob("*/*")})
    nbgrader_glue.generate(REPO / "solutions", names, root, db)
    (root / "nbgrader_config.py").write_text(f"c = get_config()\nc.CourseDirectory.root = {str(root)!r}\n"
                                             f"c.CourseDirectory.db_url = {db!r}\n")
    shutil.copytree(subs, root / "submitted")
    # exit 1 = some notebook could not be processed (a hostile one killed its kernel); the rest is graded
    return sum(timed([str(BIN / "nbgrader"), "autograde", name, "--create", "--force"], cwd=root, ok=(0, 1))[0]
               for name in names)


def grades(out: Path) -> list[tuple[str, str, str]]:
    with (out / "grades.csv").open(encoding="utf-8") as f:
        return sorted((r["student_id"], r["assignment"], r["score"]) for r in csv.DictReader(f))


def ours(exe: Path, subs: Path, template: Path, out: Path, jobs: int) -> tuple[float, list]:
    """Seconds and grades of ``exe grade --jobs JOBS`` into a fresh copy of the generated output folder ``template``."""
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(template, out)
    seconds = timed([str(exe), "grade", str(subs), "--out", str(out), "--jobs", str(jobs), "--quiet"])[0]
    return seconds, grades(out)


def generated(exe: Path, work: Path) -> Path:
    """An output folder with every assignment generated into its gradebook (untimed), for copies."""
    empty, template = work / "empty", work / f"generated-{exe.parents[2].name}"
    empty.mkdir(exist_ok=True)
    timed([str(exe), "grade", str(empty), "--out", str(template), "--quiet"])
    return template


def bench(n: int, seed: int, work: Path, cores: int, reps: int, peer: Path | None, nbgrader: bool) -> str:
    """One size: the table row, in Markdown."""
    subs = work / "submissions"
    counts, _ = synthesize(subs, n, seed)
    mix = "/".join(str(counts[k]) for k, _ in MIX)
    exe = BIN / "autograder"
    this, other = generated(exe, work), generated(peer, work) if peer else None
    one, expected = ours(exe, subs, this, work / "one", 1)
    mine, theirs = [], []
    for rep in range(reps):
        for side in (("this", "peer") if rep % 2 == 0 else ("peer", "this")):
            if side == "peer" and not peer:
                continue
            seconds, got = ours(exe if side == "this" else peer, subs, this if side == "this" else other,
                                work / side, cores)
            if got != expected:
                raise SystemExit(f"grades of {side} differ from the first run's")
            (mine if side == "this" else theirs).append(seconds)
        print(f"  N={n} rep {rep + 1}/{reps}: this {mine[-1]:.2f} s" + (f", peer {theirs[-1]:.2f} s" if peer else "")
              + f"; load {os.getloadavg()[0]:.1f}", flush=True)
    serial = plain_nbgrader(subs, work / "nbgrader") if nbgrader else None
    t = statistics.median(mine)
    cells = [str(n), mix, f"{one:.1f}", f"{t:.1f} ({60 * n / t:.0f}/min)", f"{one / t:.2f}x"]
    cells.append(f"{serial:.1f} ({serial / t:.1f}x)" if serial else "-")
    if peer:
        ratios = [b / a for a, b in zip(mine, theirs)]
        cells += [f"{statistics.median(theirs):.1f}", f"{statistics.median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f})"]
    return "| " + " | ".join(cells) + " |"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="+", default=[30, 100])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--peer", type=Path, help="another checkout's autograder executable, paired with this one")
    ap.add_argument("--nbgrader", action="store_true", help="also grade with serial nbgrader autograde (slow)")
    args = ap.parse_args()
    cores = os.cpu_count() or 1
    work = Path(tempfile.mkdtemp(prefix="bench-scale-"))
    head = ["N", "correct/wrong/slow/hostile", "--jobs 1 s", f"--jobs {cores} s, median", "1 -> {cores}",
            "serial nbgrader s"] + (["peer --jobs 2 s, median", "peer / this, median of pairs (range)"] if args.peer else [])
    rows = []
    try:
        for n in args.n:
            rows.append(bench(n, args.seed, work / f"n{n}", cores, args.reps, args.peer, args.nbgrader))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    load = os.getloadavg()
    print(f"\n{time.strftime('%Y-%m-%d %H:%M')}, {cores} cores, load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}, "
          f"{args.reps} pairs, seed {args.seed}" + (f", peer {args.peer}" if args.peer else ""))
    print("| " + " | ".join(h.format(cores=cores) for h in head) + " |")
    print("|" + "---|" * 2 + "---:|" * (len(head) - 2))
    print("\n".join(rows))


if __name__ == "__main__":
    main()
