"""Implementation of the command-line subcommands."""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from . import report, scheduler
from .collect import DEFAULT_REGEXP, find_submissions
from .engine import SubmissionResult
from .jobs import make_job
from .progress import Progress
from .sandbox import Limits, bwrap_available
from .specs import all_assignments

REPO = Path(__file__).resolve().parents[2]
_GRADER_FILES = sorted((REPO / "autograder").rglob("*.py"))


class CannotGrade(RuntimeError):
    """Grading itself cannot run (missing input, no sandbox, broken gradebook ...)."""


def grader_version() -> str:
    h = hashlib.sha256()
    for f in _GRADER_FILES:
        if f.name != "cli.py":
            h.update(f.read_bytes())
    return h.hexdigest()[:16]


def _fingerprint(source: Path, notebook: Path | None, version: str) -> str:
    h = hashlib.sha256(version.encode())
    h.update(source.read_bytes())
    h.update(notebook.read_bytes() if notebook else b"<none>")
    return h.hexdigest()


def grade(args: argparse.Namespace) -> int:
    """``autograder grade``: see ``autograder grade --help`` and docs/scaling.md.

    Order matters for speed: the local workers get a head start on the first submissions (in cost
    order) while this process imports nbgrader and SQLAlchemy (~1.5 s) and opens the gradebook; a
    head-start result is kept only if the gradebook's ledger then says the submission is pending.
    """
    t_start = time.monotonic()
    solutions = Path(args.solutions or REPO / "solutions").resolve()
    out = Path(args.out).resolve()
    subs_root = Path(args.submissions).resolve()
    if not subs_root.exists():
        raise CannotGrade(f"找不到提交目录 {subs_root}")
    assignments = all_assignments()
    if args.assignment:
        unknown = set(args.assignment) - set(assignments)
        if unknown:
            raise CannotGrade(f"未知作业：{', '.join(sorted(unknown))}")
        assignments = {k: v for k, v in assignments.items() if k in args.assignment}
    sandbox = not args.no_sandbox
    if sandbox:
        why = None if getattr(args, "scheduler", None) else bwrap_available()  # cluster workers check their own
        if why:
            raise CannotGrade(f"{why}。拒绝在没有沙箱的情况下运行学生代码；确需如此请加 --no-sandbox")
    else:
        print("autograder: 警告：--no-sandbox，学生代码不经隔离运行", file=sys.stderr)
    out.mkdir(parents=True, exist_ok=True)
    db_url = _driver(args.db or f"sqlite:///{out / 'gradebook.db'}")
    log = (lambda *a: None) if args.quiet else (lambda msg: print(msg, file=sys.stderr, flush=True))
    limits = Limits(call_timeout=args.call_timeout, memory_bytes=args.memory_mib << 20,
                    submission_timeout=getattr(args, "submission_timeout", 180.0))
    sources = {}
    for name, a in assignments.items():
        sources[name] = solutions / name / f"{a.notebook}.ipynb"
        if not sources[name].is_file():
            raise CannotGrade(f"找不到教师源 {sources[name]}")

    # 1. find submissions and their fingerprints, most expensive first
    subs = find_submissions(subs_root, assignments, out / ".collected",
                            regexp=args.collect_regexp or DEFAULT_REGEXP, warn=lambda m: log(f"警告：{m}"))
    if getattr(args, "student", None):
        subs = [s for s in subs if s.student in set(args.student)]
    version = grader_version()
    entries = [(s, sources[s.assignment], _fingerprint(sources[s.assignment], s.notebook, version)) for s in subs]
    entries.sort(key=lambda e: -_cost(assignments[e[0].assignment]))
    scratch = getattr(args, "scratch", None)

    def job_of(entry) -> dict:
        s, src, fp = entry
        return make_job(s.student, s.assignment, assignments[s.assignment].notebook, s.notebook, src, fp,
                        sandbox=sandbox, limits=limits, scratch=scratch)

    if getattr(args, "scheduler", None):
        pool = scheduler.DaskPool(args.scheduler, log)
    else:
        pool = scheduler.LocalPool(args.jobs or os.cpu_count() or 1, log)
        pool.head_start([job_of(e) for e in entries[:pool.window]])
    try:
        from . import ledger, nbgrader_glue  # nbgrader, SQLAlchemy: imported while the head start runs

        # 2. nbgrader generate_assignment: puts each assignment (notebooks, grade cells) into the gradebook.
        course = out / ".nbgrader-course"
        stamp_file = course / "generated.json"
        stamps = json.loads(stamp_file.read_text()) if stamp_file.exists() else {}
        todo = []
        for name in assignments:
            key = hashlib.sha256(sources[name].read_bytes() + db_url.encode()).hexdigest()
            if stamps.get(name) != key:
                todo.append(name)
                stamps[name] = key
        if todo:
            log(f"nbgrader generate_assignment：{', '.join(todo)}")
            try:
                nbgrader_glue.generate(solutions, todo, course, db_url)
            except nbgrader_glue.GenerationError as exc:
                raise CannotGrade(str(exc)) from None
            course.mkdir(parents=True, exist_ok=True)
            stamp_file.write_text(json.dumps(stamps))

        # 3. the ledger in the gradebook says what is committed
        wait = float(getattr(args, "db_wait", 120.0))
        try:
            gb = ledger.with_retry(lambda: nbgrader_glue.open_gradebook(db_url), wait=wait, log=log, what="打开成绩库")
        except ledger.DatabaseUnavailable as exc:
            raise CannotGrade(str(exc)) from None
        try:
            return _grade_pending(args, gb, assignments, subs, entries, job_of, pool, out, out / "results", log,
                                  wait, t_start)
        except ledger.DatabaseUnavailable as exc:
            raise CannotGrade(str(exc)) from None
        finally:
            try:
                gb.close()
            except Exception:  # noqa: BLE001 - closing a connection to a database that went away
                pass
    finally:
        pool.close()


def _driver(url: str) -> str:
    """``postgresql://`` with the installed driver (SQLAlchemy 2.1 defaults to psycopg 3; we ship psycopg2)."""
    if url.startswith(("postgresql://", "postgres://")):
        import importlib.util

        if importlib.util.find_spec("psycopg") is None and importlib.util.find_spec("psycopg2") is not None:
            return "postgresql+psycopg2://" + url.split("://", 1)[1]
    return url


def _cost(a) -> int:
    """Rough relative cost of grading one submission (assignment 5 starts a sandbox per planted bug)."""
    return sum(20 if c.kind == "mutant" else 1 for c in a.cases)


def _write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def _write_outputs(out: Path, results_dir: Path, a, data: dict) -> None:
    """results/<student>/<assignment>.json and the feedback page (derived from the gradebook's ledger)."""
    _write_atomic(results_dir / data["student"] / f"{data['assignment']}.json", json.dumps(data, ensure_ascii=False, indent=1))
    _write_atomic(out / "feedback" / data["student"] / data["assignment"] / f"{a.notebook}.html", report.feedback_html(a, data))


def _grade_pending(args, gb, assignments, subs, entries, job_of, pool, out, results_dir, log, wait, t_start) -> int:
    from . import ledger, nbgrader_glue

    engine = gb.engine
    reset = gb.db.rollback
    retry = lambda fn, what: ledger.with_retry(fn, wait=wait, log=log, what=what, reset=reset)  # noqa: E731
    retry(lambda: ledger.ensure_table(engine), "建立评分记录表")
    committed = retry(lambda: ledger.fingerprints(engine, list(assignments)), "读取评分记录")
    pending = [e for e in entries if args.force or committed.get((e[0].student, e[0].assignment)) != e[2]]
    log(f"共 {len(subs)} 份提交，需要评分 {len(pending)} 份（其余已在成绩库中且未变化）")

    # results/ and feedback/ are derived from the ledger: repair what a crash left behind
    wanted = {(s.student, s.assignment) for s in subs}
    stored = [d for d in retry(lambda: ledger.results(engine, list(assignments)), "读取评分记录")]
    for data in stored:
        if (data["student"], data["assignment"]) not in wanted:
            continue
        f = results_dir / data["student"] / f"{data['assignment']}.json"
        try:
            same = json.loads(f.read_text(encoding="utf-8")).get("fingerprint") == data.get("fingerprint")
        except (OSError, ValueError):
            same = False
        if not same:
            _write_outputs(out, results_dir, assignments[data["assignment"]], data)

    # 4. grade in parallel (workers never touch the gradebook); this process records each result
    #    together with its ledger row in one transaction, as it completes
    jobs_iter = (job_of(e) for e in pending)
    progress = Progress(len(pending), log, start=t_start)
    if pending:
        log(f"评分：{pool.describe()}")
    failed: list[str] = []
    totals = {"process_start_and_cells": 0.0, "calls_and_checks": 0.0, "setup": 0.0, "grade": 0.0, "db": 0.0}
    wanted_keys = {(e[0].student, e[0].assignment, e[2]) for e in pending}
    for job, payload, error in pool.run(jobs_iter, wanted=wanted_keys):
        name = f"{job['student']}/{job['assignment']}"
        if error is not None:
            failed.append(name)
            progress.tick(f"{name}：未能评分（{error}）")
            continue
        data = payload["result"]
        a = assignments[job["assignment"]]
        result = SubmissionResult(**data)
        td = time.monotonic()
        retry(lambda: ledger.record(gb, a, result, report.comment_text(data)), f"写入 {name} 的成绩")
        totals["db"] += time.monotonic() - td
        for k, v in payload.get("timing", {}).items():
            totals[k] = totals.get(k, 0.0) + v
        _write_outputs(out, results_dir, a, data)
        note = f"；{result.notes[0][:80]}" if result.notes else ""
        timeouts = [e["cell"] for e in result.cell_errors if e.get("type") == "_CellTimeout"]
        if timeouts:
            note += f"；第 {', '.join(map(str, timeouts))} 个单元执行超时，已中断"
        progress.tick(f"{name}：{result.score:g}/{result.max_score:g} 分（{result.seconds:.1f} 秒{note}）")
    wall = time.monotonic() - t_start

    # 5. nbgrader CSV export and the instructor summary over all committed results
    retry(lambda: nbgrader_glue.export_csv(gb, out / "grades.csv"), "导出 grades.csv")
    all_results = retry(lambda: ledger.results(engine, list(assignments)), "读取评分记录")
    report.write_summary(out, assignments, all_results)
    graded = len(pending) - len(failed)
    stats = {"graded": graded, "failed": failed, "wall_seconds": round(wall, 3), "workers": pool.workers,
             "per_submission_seconds": {k: round(v / graded, 4) for k, v in totals.items()} if graded else {},
             "submissions_per_minute": round(60.0 * graded / wall, 2) if wall > 0 and graded else 0.0}
    _write_atomic(out / "run.json", json.dumps(stats, ensure_ascii=False, indent=1))
    if graded:
        ps = stats["per_submission_seconds"]
        log(f"本次评分 {graded} 份，用时 {wall:.1f} 秒（{stats['submissions_per_minute']:.1f} 份/分钟，{pool.workers} 个工作进程）；"
            f"每份平均：启动沙箱与执行单元 {ps['process_start_and_cells']:.2f} 秒，调用与检查 {ps['calls_and_checks']:.2f} 秒，"
            f"写成绩库 {ps['db']:.3f} 秒")
    if failed:
        log(f"错误：{len(failed)} 份提交未能评分（原因见上方日志），成绩库中没有它们的新成绩；"
            f"问题解决后重新运行同一命令即可只补评这些提交：{'，'.join(failed[:20])}")
        return 1
    log(f"完成：{out / 'grades.csv'}，{out / 'summary.html'}，反馈在 {out / 'feedback'}")
    return 0


def _dirs(args: argparse.Namespace) -> tuple[Path, Path]:
    return Path(args.solutions or REPO / "solutions"), Path(args.exercises or REPO / "exercises")


def generate(args: argparse.Namespace) -> int:
    solutions, exercises = _dirs(args)
    from . import nbgrader_glue

    names = args.names or sorted(all_assignments())
    nbgrader_glue.generate_exercises(solutions, exercises, names)
    print(f"已生成 {', '.join(names)} 到 {exercises}")
    return 0


def stale_exercises(solutions: Path, exercises: Path, names: list[str]) -> list[str]:
    """Assignments whose student version differs from a fresh ``nbgrader generate_assignment`` output."""
    from . import nbgrader_glue

    stale = []
    with tempfile.TemporaryDirectory(prefix="autograder-check-") as tmp:
        fresh = Path(tmp) / "exercises"
        nbgrader_glue.generate_exercises(solutions, fresh, names)
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
