"""``autograder generate`` and ``autograder check-exercises``: the student versions in ``exercises/``."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from ..check import all_assignments

REPO = Path(__file__).resolve().parents[2]


def _dirs(args: argparse.Namespace) -> tuple[Path, Path]:
    return Path(args.solutions or REPO / "solutions"), Path(args.exercises or REPO / "exercises")


def generate(args: argparse.Namespace) -> int:
    solutions, exercises = _dirs(args)
    from ..store import gradebook

    names = args.names or sorted(all_assignments())
    gradebook.generate_exercises(solutions, exercises, names)
    print(f"已生成 {', '.join(names)} 到 {exercises}")
    return 0


def stale_exercises(solutions: Path, exercises: Path, names: list[str]) -> list[str]:
    """Assignments whose student version differs from a fresh ``nbgrader generate_assignment`` output."""
    from ..store import gradebook

    stale = []
    with tempfile.TemporaryDirectory(prefix="autograder-check-") as tmp:
        fresh = Path(tmp) / "exercises"
        gradebook.generate_exercises(solutions, fresh, names)
        for name in names:
            a_files = sorted(p.relative_to(fresh / name) for p in (fresh / name).rglob("*") if p.is_file())
            b_dir = exercises / name
            b_files = sorted(p.relative_to(b_dir) for p in b_dir.rglob("*") if p.is_file()) if b_dir.exists() else []
            if a_files != b_files:
                stale.append(name)
                continue
            for rel in a_files:
                if rel.suffix == ".ipynb":
                    import nbformat

                    same = nbformat.read(fresh / name / rel, as_version=4) == nbformat.read(b_dir / rel, as_version=4)
                else:
                    same = (fresh / name / rel).read_bytes() == (b_dir / rel).read_bytes()
                if not same:
                    stale.append(name)
                    break
    return stale


def check_exercises(args: argparse.Namespace) -> int:
    solutions, exercises = _dirs(args)
    stale = stale_exercises(solutions, exercises, sorted(all_assignments()))
    if stale:
        print("exercises/ 已过期（请运行 autograder generate）：" + ", ".join(stale), file=sys.stderr)
        return 1
    print("exercises/ 与 solutions/ 一致")
    return 0
