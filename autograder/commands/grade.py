"""``autograder grade``: grade a class's submissions into the gradebook and the output folder."""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from ..batch import order
from ..batch.collect import Collection, Submission, collect, shown
from ..batch.jobs import STALE_MARGIN, Job, make_job, sweep_scratch
from ..batch.lms import parse_time
from ..batch.progress import Progress
from ..batch.received import received, unusable
from ..batch.version import fingerprint, grader_version
from ..check import all_assignments
from ..model import SubmissionResult
from ..sandbox import enforcement
from ..store.urls import database_url
from .grading import Background, FileStamps, Grading, generate_changed, grading_setup, lock_folder

if TYPE_CHECKING:
    from ..store.outputs import OutputFolder

# the output folder's modules (Jinja2, YAML) are imported with the gradebook's, in a thread (_recording_modules)

PACKAGE = Path(__file__).resolve().parents[1]
AUTOGRADER_OFF = frozenset(os.environ.get("AUTOGRADER_OFF", "").split(","))  # bench/bench_mechanisms.py
REPO = PACKAGE.parent


class CannotGrade(RuntimeError):
    """Grading itself cannot run (missing input, no sandbox, broken gradebook ...)."""


EXIT_OK, EXIT_FAILED, EXIT_NOT_GRADED = 0, 1, 3  # 2: CannotGrade (autograder.cli)
LOCK_FILE = ".autograder-grade.lock"


def _fingerprint(source: Path, notebook: Path | None, version: str, notes: list[str] | None = None) -> str:
    return fingerprint(source.read_bytes(), notebook.read_bytes() if notebook else None, version, notes)


def lock_output(out: Path) -> int:
    """Hold an exclusive lock on the output folder for this process's lifetime (released when it ends).

    A second run on the same folder is refused at once, with a message naming the running one.
    """
    return lock_folder(out, LOCK_FILE, lambda holder: (
        f"另一个 autograder grade（进程 {holder}）正在使用输出目录 {out}；两个评分进程同时写同一个成绩库会互相破坏。"
        "请等它结束后再运行（结束后重新运行只会补评未完成的提交）"), CannotGrade)


def _deadlines(values: list[str] | None, names) -> dict[str, datetime]:
    """``--due [ASSIGNMENT=]YYYY-MM-DD[ HH:MM[:SS]]`` (repeatable) as a deadline per assignment."""
    due: dict[str, datetime] = {}
    for value in values or []:
        name, _, when = value.rpartition("=")
        at = parse_time(when.strip().replace(" ", "T", 1) if " " in when.strip() else when.strip())
        if at is None or (name and name not in names):
            raise CannotGrade(f"--due {value!r} 的格式应为 [作业名=]YYYY-MM-DD[THH:MM[:SS]]（作业名须是 {', '.join(names)} 之一）")
        for n in ([name] if name else names):
            due[n] = at
    return due


def grade(args: argparse.Namespace) -> int:
    """``autograder grade``: see ``autograder grade --help`` and docs/scaling.md.

    Order matters for speed: the local workers get a head start on the first submissions (in the order of
    :func:`autograder.batch.order.start_order`) while this process imports nbgrader and SQLAlchemy (~1.5 s) and opens the gradebook; a
    head-start result is kept only if the gradebook's ledger then says the submission is pending.

    Exit status: 0 all graded; 1 some submissions could not be graded (infrastructure; rerun); 2 grading
    could not run (:class:`CannotGrade`); 3 graded, but some files of the submissions folder were not
    graded (listed at the end and in summary.html).
    """
    t_start = time.monotonic()
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
    log = (lambda *a: None) if args.quiet else (lambda msg: print(msg, file=sys.stderr, flush=True))
    if not args.scheduler:
        from ..batch import pools

        pools.start_local_workers_early()  # the workers' fork server imports the engine meanwhile
    # the sandbox's self-test runs while the submissions are collected and the workers start; no result is
    # recorded before it passed (grading.confirm)
    grading = grading_setup(args, assignments, CannotGrade, lambda msg: print(msg, file=sys.stderr),
                            background=not args.scheduler)
    out.mkdir(parents=True, exist_ok=True)
    lock = lock_output(out)
    try:
        return _grade_locked(args, t_start, grading, out, subs_root, assignments, log)
    finally:
        os.close(lock)


def _grade_locked(args, t_start, grading: Grading, out, subs_root, assignments, log) -> int:
    db_url = database_url(args.db, out)
    sources, sandbox, limits = grading.sources, grading.sandbox, grading.limits

    due = _deadlines(args.due, list(assignments))
    stale = sweep_scratch(args.scratch, max_age=args.submission_timeout + STALE_MARGIN)
    if stale:
        log(f"已删除 {len(stale)} 个中断的评分留下的临时目录")

    # 1. find submissions and their fingerprints; the order in which they start: batch.order
    try:
        collection = collect(subs_root, all_assignments(), out / ".collected", selected=set(assignments),
                             regexp=args.collect_regexp, due=due)
    except re.error as exc:
        raise CannotGrade(f"--collect-regexp 不是合法的正则表达式：{exc}") from None
    subs = collection.submissions
    if args.student:
        subs = [s for s in subs if s.student in set(args.student)]
    if collection.not_graded:
        log(f"找到 {len(subs)} 份提交；{len(collection.not_graded)} 个文件不评分（列表在最后）")
    version = grader_version()
    entries = [(s, sources[s.assignment], _fingerprint(sources[s.assignment], s.notebook, version, s.notes))
               for s in subs]
    scratch = args.scratch

    def job_of(entry) -> Job:
        s, src, fp = entry
        return make_job(s.student, s.assignment, assignments[s.assignment].notebook, s.notebook, src, fp,
                        sandbox=sandbox, limits=limits, scratch=scratch)

    pool = grading.pool(log)
    estimates = {name: order.estimate(a) for name, a in assignments.items()}
    if "order" not in AUTOGRADER_OFF:
        entries = order.start_order(entries, lambda e: e[0].assignment, estimates, pool.workers)
    head = not args.scheduler and "headstart" not in AUTOGRADER_OFF
    if head:
        pool.head_start(job_of(e) for e in entries)
    jobs_started = time.monotonic() - t_start  # the first jobs are in the workers' hands (run.json "phases")
    try:
        # nbgrader and SQLAlchemy (~1.5 s of CPU) are imported in a thread while this one keeps the workers
        # busy with more head-start jobs; the sandbox's self-test must have passed before anything is recorded
        if head and "bgimport" not in AUTOGRADER_OFF:
            recording = Background(_recording_modules, "import-gradebook")
            if "keepbusy" not in AUTOGRADER_OFF:
                pool.keep_busy(lambda: recording.done.is_set() or grading.check_failed())
            grading.confirm(CannotGrade)
            ledger = recording.result()
        else:
            ledger = _recording_modules()
            grading.confirm(CannotGrade)
        imported = time.monotonic() - t_start

        # 2. nbgrader generate_assignment: puts each assignment (notebooks, grade cells) into the gradebook
        course = out / ".nbgrader-course"
        generate_changed(grading, list(assignments), course, db_url, FileStamps(course / "generated.json", db_url),
                         CannotGrade, log)

        # 3. the ledger in the gradebook says what is committed
        try:
            store = ledger.Store(db_url, wait=args.db_wait, log=log)
        except ledger.DatabaseUnavailable as exc:
            raise CannotGrade(str(exc)) from None
        try:
            from ..store.outputs import OutputFolder

            return _grade_pending(args, store, assignments, collection, subs, entries, job_of, pool, OutputFolder(out),
                                  log, t_start, {"jobs_started": jobs_started, "gradebook_imported": imported,
                                                 "gradebook_open": time.monotonic() - t_start})
        except ledger.DatabaseUnavailable as exc:
            raise CannotGrade(str(exc)) from None
        finally:
            store.close()
    finally:
        pool.close()
        sweep_scratch(args.scratch, max_age=args.submission_timeout + STALE_MARGIN)  # a killed worker's folder


def _recording_modules():
    """What recording results needs (nbgrader's gradebook, SQLAlchemy, the report's templates): the ledger."""
    from ..store import grades, ledger, outputs, report  # noqa: F401 - imported here, off the workers' critical path

    return ledger


def _grade_pending(args, store, assignments, collection: Collection, subs: list[Submission], entries, job_of, pool,
                   outputs: OutputFolder, log, t_start, started: dict[str, float] | None = None) -> int:
    from ..store import ledger, report  # already imported by grade() (nbgrader): no cost here

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
    by_key = {(s.student, s.assignment): s for s in subs}
    first = last = None  # when the first and the last result arrived (seconds since start)
    # each graded submission's [name, start, end, the student's cells wall and CPU seconds, admitted beyond the
    # cores] (seconds since start; local workers share this process's monotonic clock): run.json "timeline"
    timeline: list[list] | None = None if args.scheduler else []
    for job, payload, error in pool.run(jobs_iter, wanted=wanted_keys):
        last = time.monotonic() - t_start
        first = last if first is None else first
        name = job.name
        if error is not None:
            failed.append(name)
            progress.tick(f"{name}：未能评分（{error}）")
            continue
        a = assignments[job.assignment]
        td = time.monotonic()
        try:
            result = received(job, payload)
            result.notes += by_key[(result.student, result.assignment)].notes  # what collection found (e.g. the file name)
            store.record(result, a.notebook, report.comment_text(result))
        except ledger.DatabaseUnavailable:
            raise
        except Exception as exc:  # noqa: BLE001 - this submission's outcome, recorded; never the batch's end
            result = unusable(job, a, exc)
            log(f"警告：{name}：{result.notes[0]}")
            try:
                store.record(result, a.notebook, report.comment_text(result))
            except ledger.DatabaseUnavailable:
                raise
            except Exception as again:  # noqa: BLE001 - nothing recorded: report it like an infrastructure failure
                failed.append(name)
                progress.tick(f"{name}：未能记录（{type(again).__name__}）")
                continue
        totals["db"] += time.monotonic() - td
        for k, v in payload.get("timing", {}).items():
            totals[k] = totals.get(k, 0.0) + v
        span = payload.get("span")
        if timeline is not None and isinstance(span, list) and len(span) == 2:
            timing = payload.get("timing", {})
            timeline.append([name, round(span[0] - t_start, 3), round(span[1] - t_start, 3),
                             timing.get("student_cells_wall", 0.0), timing.get("student_cells_cpu", 0.0),
                             timing.get("admitted_extra", 0)])
        tw = time.monotonic()
        outputs.write_result(result, title=a.title, notebook=a.notebook, policy=policy)
        totals["files"] = totals.get("files", 0.0) + time.monotonic() - tw
        note = f"；{result.notes[0][:80]}" if result.notes else ""
        timeouts = [e.cell + 1 for e in result.cell_errors if e.type == "_CellTimeout" and e.cell >= 0]
        if timeouts:
            note += f"；第 {', '.join(map(str, timeouts))} 个单元执行超时，已中断"
        progress.tick(f"{name}：{result.score:g}/{result.max_score:g} 分（{result.seconds:.1f} 秒{note}）")
    wall = time.monotonic() - t_start

    # 5. grades.csv (this run's submissions), nbgrader's own export, the instructor summary
    committed_results = store.results(names)
    _write_grades(outputs.root / "grades.csv", entries, committed_results)
    store.export_csv(outputs.root / "gradebook-export.csv")
    not_graded = [n.to_json() for n in collection.not_graded]
    outputs.write_summary({n: a.title for n, a in assignments.items()}, committed_results, not_graded)
    graded = len(pending) - len(failed)
    # where the command's wall time went: start-up until the first jobs were handed out, the first and the last
    # result, the end of the loop (the last record), the summary files written (seconds since start)
    phases = {**(started or {}), "first_result": first, "last_result": last, "loop_end": wall,
              "summary_written": time.monotonic() - t_start}
    stats = {"graded": graded, "failed": failed, "not_graded": not_graded, "wall_seconds": round(wall, 3),
             "workers": pool.workers, "extra_workers": getattr(pool, "extra", 0), "limits": enforcement.current(),
             "phases": {k: None if v is None else round(v, 3) for k, v in phases.items()},
             "per_submission_seconds": {k: round(v / graded, 4) for k, v in totals.items()} if graded else {},
             "submissions_per_minute": round(60.0 * graded / wall, 2) if wall > 0 and graded else 0.0}
    if timeline is not None:
        stats["timeline"] = timeline
    outputs.write_run(stats)
    if graded:
        ps = stats["per_submission_seconds"]
        log(f"本次评分 {graded} 份，用时 {wall:.1f} 秒（{stats['submissions_per_minute']:.1f} 份/分钟，{pool.workers} 个工作进程）；"
            f"每份平均：启动沙箱与执行单元 {ps['process_start_and_cells']:.2f} 秒，调用与检查 {ps['calls_and_checks']:.2f} 秒，"
            f"写成绩库 {ps['db']:.3f} 秒")
    problems = _report_not_graded(collection)
    if failed:
        log(f"错误：{len(failed)} 份提交未能评分（原因见上方日志），成绩库中没有它们的新成绩；"
            f"问题解决后重新运行同一命令即可只补评这些提交：{'，'.join(failed[:20])}")
        return EXIT_FAILED
    log(f"完成：{outputs.root / 'grades.csv'}，{outputs.root / 'summary.html'}，反馈在 {outputs.root / 'feedback'}")
    if problems:
        print(f"autograder: 未评分：{problems} 个文件没有评分（列表见上方和 summary.html），退出状态 {EXIT_NOT_GRADED}",
              file=sys.stderr, flush=True)
        return EXIT_NOT_GRADED
    return EXIT_OK


def _write_grades(path: Path, entries, results: list[SubmissionResult]) -> None:
    """grades.csv: the committed result of each submission of this run whose fingerprint is current."""
    from ..store.grades import GradeRow, write_grades_csv

    by_key = {(r.student, r.assignment): r for r in results}
    rows = []
    for s, _, fp in entries:
        r = by_key.get((s.student, s.assignment))
        if r is not None and r.fingerprint == fp:
            rows.append(GradeRow(s.student, s.display_name, s.assignment, r.score, r.max_score,
                                 s.submitted_at if s.notebook else None, s.time_source if s.notebook else "",
                                 s.late, s.file))
    write_grades_csv(path, rows)


def _report_not_graded(collection: Collection) -> int:
    """Print every file that was not graded, with its reason (names escaped); return how many need attention."""
    problems = collection.problems
    aside = [n for n in collection.not_graded if not n.problem]
    if problems:
        print(f"未评分的文件（{len(problems)} 个，需要处理）：", file=sys.stderr)
        for n in problems:
            print(f"  {shown(n.file)}：{n.reason}", file=sys.stderr)
    if aside:
        print(f"已略过的文件（{len(aside)} 个，无需处理）：", file=sys.stderr)
        for n in aside:
            print(f"  {shown(n.file)}：{n.reason}", file=sys.stderr)
    sys.stderr.flush()
    return len(problems)
