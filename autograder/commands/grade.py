"""``autograder grade``: grade a class's submissions into the gradebook and the output folder.

The path of the submissions, top to bottom in :func:`grade`:

1. set-up: the assignments asked for, the sandbox tested on this machine (:func:`.grading.grading_setup`), the
   output folder locked for this run;
2. :func:`~autograder.batch.collect.collect` finds each student's latest notebook for each assignment in the
   submissions folder (an LMS download, a zip or folders), and every file it does not grade, with the reason;
3. each submission's fingerprint (grader version, assignment source, submitted bytes); nbgrader's
   ``generate_assignment`` puts new or changed assignments into the gradebook; the gradebook's ledger says which
   fingerprints are committed: the others are pending (``--force``: all);
4. the pool grades the pending ones in the collection's order (by student): each a
   :class:`~autograder.batch.jobs.Job`, graded by :func:`~autograder.batch.jobs.grade_job` in a worker process
   (student code only in the sandbox);
5. each result as it arrives is taken in (:func:`~autograder.batch.received.take_in`) and recorded with its ledger
   row in one transaction (:meth:`~autograder.store.ledger.Store.record`), then written as result and feedback files;
6. grades.csv (this run's submissions), nbgrader's export, the instructor summary and run.json.

Exit status: 0 all graded; 1 some submissions could not be graded (infrastructure; a rerun grades only those);
2 grading could not run (:class:`CannotGrade`); 3 graded, but some files of the submissions folder were not graded
(listed at the end and in summary.html).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Callable

from ..batch.collect import Collection, Submission, collect, shown
from ..batch.jobs import STALE_MARGIN, Job, make_job, sweep_scratch
from ..batch.lms import parse_time
from ..batch.progress import Progress
from ..batch.received import take_in
from ..batch.version import fingerprint, grader_version
from ..check import Assignment, all_assignments
from ..model import SubmissionResult
from ..sandbox import enforcement
from ..store.urls import database_url
from .grading import FileStamps, Grading, generate_changed, grading_setup, lock_folder

EXIT_OK, EXIT_FAILED, EXIT_NOT_GRADED = 0, 1, 3  # 2: CannotGrade (autograder.cli)
LOCK_FILE = ".autograder-grade.lock"
Log = Callable[[str], None]


class CannotGrade(RuntimeError):
    """Grading itself cannot run (missing input, no sandbox, broken gradebook ...)."""


@dataclass(frozen=True)
class Entry:
    """One submission of this run, the instructor's source of its assignment and the fingerprint of what decides its
    grade (grader version, source, submitted bytes, collection notes)."""

    submission: Submission
    source: Path
    fingerprint: str

    @property
    def key(self) -> tuple[str, str]:
        return self.submission.student, self.submission.assignment


def grade(args: argparse.Namespace) -> int:
    """``autograder grade``: see the module docstring, ``autograder grade --help`` and docs/scaling.md."""
    started = time.monotonic()
    log: Log = (lambda msg: None) if args.quiet else (lambda msg: print(msg, file=sys.stderr, flush=True))
    out, root = Path(args.out).resolve(), Path(args.submissions).resolve()
    if not root.exists():
        raise CannotGrade(f"找不到提交目录 {root}")
    assignments = _assignments(args.assignment)
    grading = grading_setup(args, assignments, CannotGrade, lambda msg: print(msg, file=sys.stderr))
    out.mkdir(parents=True, exist_ok=True)
    lock = lock_output(out)
    try:
        stale = sweep_scratch(args.scratch, max_age=args.submission_timeout + STALE_MARGIN)
        if stale:
            log(f"已删除 {len(stale)} 个中断的评分留下的临时目录")
        collection = _collect(args, root, out, assignments, log)
        entries = _entries(collection.submissions, grading)
        return _grade_entries(args, grading, assignments, collection, entries, out, log, started)
    finally:
        sweep_scratch(args.scratch, max_age=args.submission_timeout + STALE_MARGIN)  # a killed worker's folder
        os.close(lock)


def lock_output(out: Path) -> int:
    """Hold an exclusive lock on the output folder for this process's lifetime (released when it ends): a second run
    on the same folder is refused at once, with a message naming the running one."""
    return lock_folder(out, LOCK_FILE, lambda holder: (
        f"另一个 autograder grade（进程 {holder}）正在使用输出目录 {out}；两个评分进程同时写同一个成绩库会互相破坏。"
        "请等它结束后再运行（结束后重新运行只会补评未完成的提交）"), CannotGrade)


def _assignments(names: list[str] | None) -> dict[str, Assignment]:
    """The assignments asked for (``--assignment``; default all)."""
    known = all_assignments()
    unknown = set(names or []) - set(known)
    if unknown:
        raise CannotGrade(f"未知作业：{', '.join(sorted(unknown))}")
    return {k: v for k, v in known.items() if not names or k in names}


def _collect(args: argparse.Namespace, root: Path, out: Path, assignments: dict[str, Assignment], log: Log) -> Collection:
    """Step 2: the submissions (``--student``: only theirs) and the files not graded."""
    due = _deadlines(args.due, list(assignments))
    try:
        collection = collect(root, all_assignments(), out / ".collected", selected=set(assignments),
                             regexp=args.collect_regexp, due=due)
    except re.error as exc:
        raise CannotGrade(f"--collect-regexp 不是合法的正则表达式：{exc}") from None
    if args.student:
        collection.submissions = [s for s in collection.submissions if s.student in set(args.student)]
    if collection.not_graded:
        log(f"找到 {len(collection.submissions)} 份提交；{len(collection.not_graded)} 个文件不评分（列表在最后）")
    return collection


def _deadlines(values: list[str] | None, names: list[str]) -> dict[str, datetime]:
    """``--due [ASSIGNMENT=]YYYY-MM-DD[ HH:MM[:SS]]`` (repeatable) as a deadline per assignment."""
    due: dict[str, datetime] = {}
    for value in values or []:
        name, _, when = value.rpartition("=")
        when = when.strip()
        at = parse_time(when.replace(" ", "T", 1))
        if at is None or (name and name not in names):
            raise CannotGrade(f"--due {value!r} 的格式应为 [作业名=]YYYY-MM-DD[THH:MM[:SS]]（作业名须是 {', '.join(names)} 之一）")
        for n in ([name] if name else names):
            due[n] = at
    return due


def _entries(submissions: list[Submission], grading: Grading) -> list[Entry]:
    """Step 3, first half: each submission's fingerprint."""
    version = grader_version()
    entries = []
    for s in submissions:
        source = grading.sources[s.assignment]
        submitted = s.notebook.read_bytes() if s.notebook else None
        entries.append(Entry(s, source, fingerprint(source.read_bytes(), submitted, version, s.notes)))
    return entries


def _grade_entries(args: argparse.Namespace, grading: Grading, assignments: dict[str, Assignment],
                   collection: Collection, entries: list[Entry], out: Path, log: Log, started: float) -> int:
    """Steps 3 to 6 with the gradebook open."""
    from ..store import ledger
    from ..store.outputs import OutputFolder

    db_url = database_url(args.db, out)
    course = out / ".nbgrader-course"
    generate_changed(grading, list(assignments), course, db_url, FileStamps(course / "generated.json", db_url),
                     CannotGrade, log)
    try:
        store = ledger.Store(db_url, wait=args.db_wait, log=log)
    except ledger.DatabaseUnavailable as exc:
        raise CannotGrade(str(exc)) from None
    try:
        outputs = OutputFolder(out)
        pending = _pending(args.force, store, assignments, entries, log)
        _repair_outputs(store, assignments, entries, outputs, args.feedback)
        pool = grading.pool(log)
        try:
            stats = _grade_pending(args, grading, assignments, pending, pool, store, outputs, log, started)
        finally:
            pool.close()
        results = store.results(list(assignments))
        _write_grades(outputs.root / "grades.csv", entries, results)
        store.export_csv(outputs.root / "gradebook-export.csv")
        not_graded = [n.to_json() for n in collection.not_graded]
        outputs.write_summary({n: a.title for n, a in assignments.items()}, results, not_graded)
        outputs.write_run({**stats, "not_graded": not_graded})
    except ledger.DatabaseUnavailable as exc:
        raise CannotGrade(str(exc)) from None
    finally:
        store.close()
    return _finish(stats["failed"], collection, outputs.root, log)


def _pending(force: bool, store, assignments: dict[str, Assignment], entries: list[Entry], log: Log) -> list[Entry]:
    """Step 3, second half: the entries whose fingerprint the ledger does not hold (``--force``: all)."""
    committed = store.fingerprints(list(assignments))
    pending = [e for e in entries if force or committed.get(e.key) != e.fingerprint]
    log(f"共 {len(entries)} 份提交，需要评分 {len(pending)} 份（其余已在成绩库中且未变化）")
    return pending


def _repair_outputs(store, assignments: dict[str, Assignment], entries: list[Entry], outputs, policy: str) -> None:
    """results/ and feedback/ are derived from the ledger: write what a crash left out, and every feedback page again
    (the feedback policy or the page's wording may have changed since)."""
    wanted = {e.key for e in entries}
    for result in store.results(list(assignments)):
        if (result.student, result.assignment) in wanted:
            a = assignments[result.assignment]
            write = outputs.write_feedback if outputs.has_current(result) else outputs.write_result
            write(result, title=a.title, notebook=a.notebook, policy=policy)


def _grade_pending(args: argparse.Namespace, grading: Grading, assignments: dict[str, Assignment],
                   pending: list[Entry], pool, store, outputs, log: Log, started: float) -> dict:
    """Steps 4 and 5: grade ``pending`` in ``pool`` and record each result as it arrives; run.json's statistics."""
    from ..store import ledger, report

    def job_of(e: Entry) -> Job:
        s = e.submission
        return make_job(s.student, s.assignment, assignments[s.assignment].notebook, s.notebook, e.source, e.fingerprint,
                        sandbox=grading.sandbox, limits=grading.limits, scratch=args.scratch)

    collected = {e.key: e.submission for e in pending}
    progress = Progress(len(pending), log, start=started)
    failed: list[str] = []
    seconds = {"process_start_and_cells": 0.0, "calls_and_checks": 0.0, "record": 0.0}
    if pending:
        log(f"评分：{pool.describe()}")
    for job, payload, error in pool.run(job_of(e) for e in pending):
        if error is not None:
            failed.append(job.name)
            progress.tick(f"{job.name}：未能评分（{error}）")
            continue
        t0 = time.monotonic()
        a = assignments[job.assignment]
        intake = take_in(job, payload, a)
        result = intake.result
        if intake.refused:
            log(f"警告：{job.name}：{intake.refused}")
        result.notes += collected[(job.student, job.assignment)].notes  # what collection found (e.g. the file name)
        try:
            store.record(result, a.notebook, report.comment_text(result))
        except ledger.DatabaseUnavailable:
            raise
        except Exception as exc:  # noqa: BLE001 - nothing recorded: like an infrastructure failure, a rerun grades it
            failed.append(job.name)
            progress.tick(f"{job.name}：未能记录（{type(exc).__name__}）")
            continue
        outputs.write_result(result, title=a.title, notebook=a.notebook, policy=args.feedback)
        seconds["record"] += time.monotonic() - t0
        for k in ("process_start_and_cells", "calls_and_checks"):
            seconds[k] += payload.get("timing", {}).get(k, 0.0)
        progress.tick(_progress_line(job.name, result))
    wall = time.monotonic() - started
    graded = len(pending) - len(failed)
    if graded:
        per = {k: v / graded for k, v in seconds.items()}
        log(f"本次评分 {graded} 份，用时 {wall:.1f} 秒（{60 * graded / wall:.1f} 份/分钟，{pool.workers} 个工作进程）；"
            f"每份平均：启动沙箱与执行单元 {per['process_start_and_cells']:.2f} 秒，调用与检查 {per['calls_and_checks']:.2f} 秒，"
            f"记录 {per['record']:.3f} 秒")
    return {"graded": graded, "failed": failed, "wall_seconds": round(wall, 3), "workers": pool.workers,
            "limits": enforcement.current(),
            "per_submission_seconds": {k: round(v / graded, 4) for k, v in seconds.items()} if graded else {},
            "submissions_per_minute": round(60.0 * graded / wall, 2) if wall > 0 and graded else 0.0}


def _progress_line(name: str, result: SubmissionResult) -> str:
    """A submission's progress line: its score, seconds, first note and the cells stopped by their time limit."""
    note = f"；{result.notes[0][:80]}" if result.notes else ""
    timeouts = [e.cell + 1 for e in result.cell_errors if e.type == "_CellTimeout" and e.cell >= 0]
    if timeouts:
        note += f"；第 {', '.join(map(str, timeouts))} 个单元执行超时，已中断"
    return f"{name}：{result.score:g}/{result.max_score:g} 分（{result.seconds:.1f} 秒{note}）"


def _write_grades(path: Path, entries: list[Entry], results: list[SubmissionResult]) -> None:
    """grades.csv: the committed result of each submission of this run whose fingerprint is current."""
    from ..store.grades import GradeRow, write_grades_csv

    by_key = {(r.student, r.assignment): r for r in results}
    rows = []
    for e in entries:
        s, r = e.submission, by_key.get(e.key)
        if r is not None and r.fingerprint == e.fingerprint:
            rows.append(GradeRow(s.student, s.display_name, s.assignment, r.score, r.max_score,
                                 s.submitted_at if s.notebook else None, s.time_source if s.notebook else "",
                                 s.late, s.file))
    write_grades_csv(path, rows)


def _finish(failed: list[str], collection: Collection, root: Path, log: Log) -> int:
    """The last lines: what failed (rerun), where the outputs are, the files not graded; the exit status."""
    problems = _report_not_graded(collection)
    if failed:
        log(f"错误：{len(failed)} 份提交未能评分（原因见上方日志），成绩库中没有它们的新成绩；"
            f"问题解决后重新运行同一命令即可只补评这些提交：{'，'.join(failed[:20])}")
        return EXIT_FAILED
    log(f"完成：{root / 'grades.csv'}，{root / 'summary.html'}，反馈在 {root / 'feedback'}")
    if problems:
        print(f"autograder: 未评分：{problems} 个文件没有评分（列表见上方和 summary.html），退出状态 {EXIT_NOT_GRADED}",
              file=sys.stderr, flush=True)
        return EXIT_NOT_GRADED
    return EXIT_OK


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
