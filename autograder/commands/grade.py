"""``autograder grade``: grade a class's submissions into the gradebook and the output folder."""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from pathlib import Path

from ..batch import pools
from ..batch.collect import DEFAULT_REGEXP, find_submissions
from ..batch.jobs import make_job
from ..batch.progress import Progress
from ..check import all_assignments
from ..model import Limits, SubmissionResult
from ..sandbox import self_test
from ..store import report
from ..store.outputs import OutputFolder

PACKAGE = Path(__file__).resolve().parents[1]
REPO = PACKAGE.parent


class CannotGrade(RuntimeError):
    """Grading itself cannot run (missing input, no sandbox, broken gradebook ...)."""


def grade_deciding_files() -> list[Path]:
    """The code that decides a grade: the reference, the trusted checks (not how values are rendered as
    text) and the sandbox.  Feedback pages, the store, scheduling and the command line are left out, so
    that rewording a page does not regrade a class."""
    files = [f for d in ("reference", "check", "sandbox") for f in (PACKAGE / d).rglob("*.py")]
    return sorted(f for f in files if f != PACKAGE / "check" / "render.py")


def grader_version() -> str:
    """Hash of :func:`grade_deciding_files` (paths and contents): part of every submission's fingerprint."""
    h = hashlib.sha256()
    for f in grade_deciding_files():
        h.update(f.relative_to(PACKAGE).as_posix().encode() + b"\0" + f.read_bytes())
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
        why = None if args.scheduler else self_test()  # cluster workers check their own
        if why:
            raise CannotGrade(f"{why}。拒绝在没有沙箱的情况下运行学生代码；确需如此请加 --no-sandbox")
    else:
        print("autograder: 警告：--no-sandbox，学生代码不经隔离运行", file=sys.stderr)
    out.mkdir(parents=True, exist_ok=True)
    db_url = _driver(args.db or f"sqlite:///{out / 'gradebook.db'}")
    log = (lambda *a: None) if args.quiet else (lambda msg: print(msg, file=sys.stderr, flush=True))
    limits = Limits(call_timeout=args.call_timeout, memory_bytes=args.memory_mib << 20,
                    submission_timeout=args.submission_timeout)
    sources = {}
    for name, a in assignments.items():
        sources[name] = solutions / name / f"{a.notebook}.ipynb"
        if not sources[name].is_file():
            raise CannotGrade(f"找不到教师源 {sources[name]}")

    # 1. find submissions and their fingerprints, most expensive first
    subs = find_submissions(subs_root, assignments, out / ".collected",
                            regexp=args.collect_regexp or DEFAULT_REGEXP, warn=lambda m: log(f"警告：{m}"))
    if args.student:
        subs = [s for s in subs if s.student in set(args.student)]
    version = grader_version()
    entries = [(s, sources[s.assignment], _fingerprint(sources[s.assignment], s.notebook, version)) for s in subs]
    entries.sort(key=lambda e: -_cost(assignments[e[0].assignment]))
    scratch = args.scratch

    def job_of(entry) -> dict:
        s, src, fp = entry
        return make_job(s.student, s.assignment, assignments[s.assignment].notebook, s.notebook, src, fp,
                        sandbox=sandbox, limits=limits, scratch=scratch)

    if args.scheduler:
        pool = pools.DaskPool(args.scheduler, log)
    else:
        pool = pools.LocalPool(args.jobs or os.cpu_count() or 1, log)
        pool.head_start([job_of(e) for e in entries[:pool.window]])
    try:
        from ..store import gradebook, ledger  # nbgrader, SQLAlchemy: imported while the head start runs

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
                gradebook.generate(solutions, todo, course, db_url)
            except gradebook.GenerationError as exc:
                raise CannotGrade(str(exc)) from None
            course.mkdir(parents=True, exist_ok=True)
            stamp_file.write_text(json.dumps(stamps))

        # 3. the ledger in the gradebook says what is committed
        try:
            store = ledger.Store(db_url, wait=args.db_wait, log=log)
        except ledger.DatabaseUnavailable as exc:
            raise CannotGrade(str(exc)) from None
        try:
            return _grade_pending(args, store, assignments, subs, entries, job_of, pool, OutputFolder(out), log, t_start)
        except ledger.DatabaseUnavailable as exc:
            raise CannotGrade(str(exc)) from None
        finally:
            store.close()
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


def _grade_pending(args, store, assignments, subs, entries, job_of, pool, outputs: OutputFolder, log, t_start) -> int:
    names = list(assignments)
    committed = store.fingerprints(names)
    pending = [e for e in entries if args.force or committed.get((e[0].student, e[0].assignment)) != e[2]]
    log(f"共 {len(subs)} 份提交，需要评分 {len(pending)} 份（其余已在成绩库中且未变化）")

    # results/ and feedback/ are derived from the ledger: repair what a crash left behind, and render every
    # feedback page again (the feedback policy or the page's wording may have changed since)
    wanted = {(s.student, s.assignment) for s in subs}
    policy = args.feedback
    for result in store.results(names):
        if (result.student, result.assignment) in wanted:
            a = assignments[result.assignment]
            if outputs.has_current(result):
                outputs.write_feedback(result, title=a.title, notebook=a.notebook, policy=policy)
            else:
                outputs.write_result(result, title=a.title, notebook=a.notebook, policy=policy)

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
        a = assignments[job["assignment"]]
        result = SubmissionResult.from_json(payload["result"])
        td = time.monotonic()
        store.record(result, a.notebook, report.comment_text(result))
        totals["db"] += time.monotonic() - td
        for k, v in payload.get("timing", {}).items():
            totals[k] = totals.get(k, 0.0) + v
        outputs.write_result(result, title=a.title, notebook=a.notebook, policy=policy)
        note = f"；{result.notes[0][:80]}" if result.notes else ""
        timeouts = [e.cell + 1 for e in result.cell_errors if e.type == "_CellTimeout" and e.cell >= 0]
        if timeouts:
            note += f"；第 {', '.join(map(str, timeouts))} 个单元执行超时，已中断"
        progress.tick(f"{name}：{result.score:g}/{result.max_score:g} 分（{result.seconds:.1f} 秒{note}）")
    wall = time.monotonic() - t_start

    # 5. nbgrader CSV export and the instructor summary over all committed results
    store.export_csv(outputs.root / "grades.csv")
    outputs.write_summary({n: a.title for n, a in assignments.items()}, store.results(names))
    graded = len(pending) - len(failed)
    stats = {"graded": graded, "failed": failed, "wall_seconds": round(wall, 3), "workers": pool.workers,
             "per_submission_seconds": {k: round(v / graded, 4) for k, v in totals.items()} if graded else {},
             "submissions_per_minute": round(60.0 * graded / wall, 2) if wall > 0 and graded else 0.0}
    outputs.write_run(stats)
    if graded:
        ps = stats["per_submission_seconds"]
        log(f"本次评分 {graded} 份，用时 {wall:.1f} 秒（{stats['submissions_per_minute']:.1f} 份/分钟，{pool.workers} 个工作进程）；"
            f"每份平均：启动沙箱与执行单元 {ps['process_start_and_cells']:.2f} 秒，调用与检查 {ps['calls_and_checks']:.2f} 秒，"
            f"写成绩库 {ps['db']:.3f} 秒")
    if failed:
        log(f"错误：{len(failed)} 份提交未能评分（原因见上方日志），成绩库中没有它们的新成绩；"
            f"问题解决后重新运行同一命令即可只补评这些提交：{'，'.join(failed[:20])}")
        return 1
    log(f"完成：{outputs.root / 'grades.csv'}，{outputs.root / 'summary.html'}，反馈在 {outputs.root / 'feedback'}")
    return 0
