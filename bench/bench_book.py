"""The book's cold build with and without its two execution mechanisms, paired, in one run (not a test).

Every build starts from an empty execution cache in a fresh export of the committed tree (``git archive HEAD``),
so every page's notebook runs.  Three configurations, in rotating order within each repetition:

* ``both``: the parallel executor (``book/_ext/parallel_execution.py``) with forked kernels (``kernel_forks.py``);
* ``spawned``: the parallel executor with kernels started as jupyter_client starts them
  (``course_execution_fork: false``);
* ``serial``: neither (the extension left out: myst-nb executes each page while it reads it).

The machine is shared and loaded, so the figures are the medians of the ratios within a repetition:
``spawned / both`` is what forking the kernels saves, ``serial / spawned`` what running notebooks side by side saves.

Usage: ``.venv/bin/python bench/bench_book.py [--reps 3]``
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
MATHJAX = REPO / "book" / "_ext" / "mathjax_node" / "node_modules"


def export(dest: Path, config: str) -> None:
    """The committed tree at ``dest`` with ``_config.yml`` set to ``config``."""
    dest.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(REPO), "archive", "HEAD"], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    (dest / "book" / "_ext" / "mathjax_node" / "node_modules").symlink_to(MATHJAX)
    text = (dest / "_config.yml").read_text(encoding="utf-8")
    if config == "spawned":
        text = text.replace("  config:\n", "  config:\n    course_execution_fork: false\n", 1)
    elif config == "serial":
        text = re.sub(r"\n    parallel_execution: book/_ext[^\n]*", "", text)
    (dest / "_config.yml").write_text(text, encoding="utf-8")


def build(work: Path, config: str) -> float:
    """Seconds of one cold ``jupyter-book build`` (as ``make book``) of a fresh export."""
    folder = work / config
    shutil.rmtree(folder, ignore_errors=True)
    export(folder, config)
    t0 = time.perf_counter()
    proc = subprocess.run([str(BIN / "jupyter-book"), "build", ".", "--warningiserror", "--nitpick", "--keep-going"],
                          cwd=folder, capture_output=True, text=True,
                          env={**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"})
    seconds = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"the {config} build failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    shutil.rmtree(folder, ignore_errors=True)
    return seconds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    configs = ["both", "spawned", "serial"]
    work = Path(tempfile.mkdtemp(prefix="bench-book-"))
    seconds: dict[str, list[float]] = {c: [] for c in configs}
    try:
        for rep in range(args.reps):
            for config in configs[rep % 3:] + configs[:rep % 3]:
                seconds[config].append(build(work, config))
                print(f"  rep {rep + 1}/{args.reps} {config:8s} {seconds[config][-1]:6.1f} s  load "
                      f"{os.getloadavg()[0]:.1f}", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    forks = [s / b for s, b in zip(seconds["spawned"], seconds["both"])]
    parallel = [s / p for s, p in zip(seconds["serial"], seconds["spawned"])]
    print(f"cold book build, {args.reps} repetitions; median seconds: "
          + ", ".join(f"{c} {statistics.median(seconds[c]):.1f}" for c in configs))
    print("| mechanism | without / with, median (min-max) |")
    print("|---|---:|")
    print(f"| kernel forks (spawned / both) | {statistics.median(forks):.3f} ({min(forks):.2f}-{max(forks):.2f}) |")
    print(f"| parallel executor (serial / spawned) | {statistics.median(parallel):.3f} "
          f"({min(parallel):.2f}-{max(parallel):.2f}) |")


if __name__ == "__main__":
    main()
