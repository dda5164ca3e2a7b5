"""Run grading jobs (:func:`jobs.grade_job`, or another work function) in parallel and hand back results as they finish.

* :class:`LocalPool` - a ``ProcessPoolExecutor`` of ``os.cpu_count()`` worker processes on this machine, forked
  from a fork server that has imported the grading engine (:func:`local_context`)
  (each job still runs the student's code under bubblewrap; each worker process keeps its warm sandbox
  between jobs, :mod:`autograder.sandbox.warm`, and it dies with the worker). A worker that dies (OOM killer, SIGKILL)
  breaks the pool: the pool is rebuilt and only the submissions that were in flight are graded again.
* :class:`DaskPool` - the same jobs on an existing Dask distributed cluster (``--scheduler ADDRESS``);
  Dask reschedules the task of a lost worker on another one.

Both submit a bounded window of jobs (memory stays flat for thousands of submissions) and yield
``(job, payload, error)``: ``payload`` is ``grade_job``'s return value, ``error`` a message when the job
failed for infrastructure reasons even after its tries (:class:`RetryPolicy`, shared by both).  Neither
ever touches the gradebook.

The source of jobs may be endless (the grading service's queue): it yields :data:`IDLE` when it has no job
right now but may have one later.  The pool then hands back the jobs that finish in the next
:data:`IDLE_POLL` seconds and asks again; a source that has nothing and knows nothing is in flight should
block (briefly) itself rather than yield :data:`IDLE` at once.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.context
import os
import time
from collections import deque
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Callable, Iterable, Iterator

from . import jobs
from .jobs import Job, JobError, grade_job, worker_init

Event = tuple[Job, "dict | None", "str | None"]
Work = Callable[[dict], dict]  # called with Job.to_json(); returns JSON data
IDLE = Job("", "", "")  # yielded by an endless source: nothing to grade now, ask again soon (compared by identity)
AUTOGRADER_OFF = frozenset(os.environ.get("AUTOGRADER_OFF", "").split(","))  # bench/bench_mechanisms.py: mechanisms switched off
IDLE_POLL = 0.2  # seconds a pool waits for finished jobs before it asks an idle source again


def _name(job: Job) -> str:
    return job.name


def job_key(job: Job) -> tuple[str, str, str]:
    """What identifies a job's result: student, assignment and the fingerprint of the graded bytes."""
    return job.key


class RetryPolicy:
    """How often a job is tried, counted per job key (never per object: a new Job may reuse a freed id).

    A job whose worker reported an infrastructure error (:class:`JobError`) is tried ``attempts`` times;
    a job that was in flight when a worker died gets two more tries (it may be the innocent neighbour
    of the job that killed the worker).
    """

    def __init__(self, attempts: int = 3) -> None:
        self.attempts = attempts
        self._tries: dict[tuple[str, str, str], int] = {}

    def _count(self, job: Job) -> int:
        key = job_key(job)
        self._tries[key] = self._tries.get(key, 0) + 1
        return self._tries[key]

    def after_error(self, job: Job) -> int | None:
        """The job failed with :class:`JobError`: the number of its next try, or None to give up."""
        n = self._count(job)
        return n + 1 if n < self.attempts else None

    def after_lost_worker(self, job: Job) -> bool:
        """The job was in flight when a worker died: True to try it again."""
        return self._count(job) < self.attempts + 2


# Local workers are forked from a "fork server" (multiprocessing's forkserver): a process started once per
# grading process that imports the grading engine (NumPy included) before any worker exists, never grades and
# holds no sandbox, student data or thread of the grader; each worker is a fork of it (~10 ms instead of a new
# interpreter importing the engine, 0.3 s of CPU per worker).  A worker gets its grader's environment as it
# was when the pool was made (initializer), as a spawned one would.  IPython's input transformer, which the
# first notebook with a "%", "!" or "?" needs (check.prepare), is imported there too (~40 ms of CPU once, not in
# every worker).
PRELOAD = ["autograder.batch.pools", "autograder.check", "IPython.core.inputtransformer2"]


def local_context() -> multiprocessing.context.BaseContext:
    """The context of local worker processes: the fork server, preloading :data:`PRELOAD`."""
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(PRELOAD)
    return ctx


def start_local_workers_early() -> None:
    """Start the fork server now (it imports the engine, ~0.35 s) while the caller prepares the first jobs."""
    if "forkserver" in AUTOGRADER_OFF:
        return
    local_context()
    from multiprocessing import forkserver

    forkserver.ensure_running()


_begun_flags = None  # in a local worker: one flag per head-start job, set when a worker begins it (LocalPool._begun)


def _worker_init(sandbox_checked: bool = False, environ: dict[str, str] | None = None, begun=None) -> None:
    global _begun_flags
    worker_init()
    if environ is not None:
        os.environ.clear()
        os.environ.update(environ)
    if sandbox_checked:
        jobs.sandbox_checked_by_run()
    _begun_flags = begun


def _announced(work: Work, data: dict, slot: int) -> dict:
    """In a local worker: a head-start job (:meth:`LocalPool.head_start`) sets its flag ``slot`` (a worker has begun
    it: the executor marks as running the jobs merely queued for its workers too), then runs as any other."""
    if _begun_flags is not None:
        _begun_flags[slot] = 1
    return work(data)


class LocalPool:
    """Process pool on this machine: ``workers`` processes, one job each at a time.

    ``sandbox_checked``: the caller's self-test found this machine's sandbox working (and it records no
    result before that test passed, :meth:`Grading.confirm <autograder.commands.grading.Grading.confirm>`),
    so the workers do not test it again (:func:`jobs.sandbox_checked_by_run`).  ``fork_server=False``: the
    workers are spawned interpreters, children of this process (the long-running service: it starts them
    once, and their death signal comes from the kernel the moment the service ends).
    """

    def __init__(self, workers: int, log: Callable[[str], None], attempts: int = 3, work: Work = grade_job,
                 sandbox_checked: bool = False, fork_server: bool = True) -> None:
        self.workers = max(1, workers)
        self.log = log
        self.attempts = attempts
        self.work = work  # a module-level function (it is pickled by name into the spawned workers)
        self.window = 2 * self.workers + 2
        self.sandbox_checked = sandbox_checked
        self.fork_server = fork_server

    def describe(self) -> str:
        return f"本机 {self.workers} 个评分工作进程"

    def _pool(self) -> ProcessPoolExecutor:
        ctx = local_context() if self.fork_server and "forkserver" not in AUTOGRADER_OFF else multiprocessing.get_context("spawn")
        self._begun = ctx.Array("b", 2 * self.window, lock=False)  # one flag per head-start job (at most 2 x window)
        return ProcessPoolExecutor(max_workers=self.workers, mp_context=ctx, initializer=_worker_init,
                                   initargs=(self.sandbox_checked, dict(os.environ), self._begun))

    def _submit(self, pool: ProcessPoolExecutor, job: Job, slot: int | None = None):
        if slot is not None:  # a head-start job: it sets its flag when a worker begins it
            return pool.submit(_announced, self.work, job.to_json(), slot)
        return pool.submit(self.work, job.to_json())

    def head_start(self, jobs: Iterable[Job]) -> None:
        """Start the first window of ``jobs`` now, before :meth:`run` knows which jobs are wanted.

        :meth:`run` takes over a started job when the same job (:func:`job_key`) comes from its
        source, and drops those it is not asked for: cancelled if no worker has begun them; else never
        awaited: the workers are ended as soon as only such jobs run in them (at once when the run starts
        and no wanted job is running yet, else when the run's own jobs are done), not after grading them to the end.
        :meth:`keep_busy` starts more of ``jobs`` as these finish.
        """
        self._executor = self._pool()
        self._early = {}
        self._head = iter(jobs)
        self._top_up()

    def _top_up(self) -> None:
        """Start head-start jobs until ``window`` of them are unfinished, at most ``2 x window`` in all (what is
        graded before the caller can record it is bounded: lost when the caller is killed, wasted when the
        ledger says it was committed already)."""
        running = sum(not fut.done() for fut, _, _ in self._early.values())
        while running < self.window and len(self._early) < 2 * self.window:
            job = next(self._head, None)
            if job is None:
                return
            try:
                slot = len(self._early)
                self._early[job_key(job)] = (self._submit(self._executor, job, slot), job, slot)
            except BrokenProcessPool:  # a worker died: run() rebuilds the pool and grades this job from its source
                self._head = iter(())
                return
            running += 1

    def keep_busy(self, until: Callable[[], bool]) -> None:
        """Until ``until()`` is true (the caller's other work is done, e.g. importing the gradebook in a thread),
        start more head-start jobs as started ones finish (up to ``2 x window`` in all), so the workers do not
        wait for it.  Their results are kept for :meth:`run`."""
        while not until():
            running = [fut for fut, _, _ in self._early.values() if not fut.done()]
            if len(running) >= self.window:
                wait(running, timeout=0.05, return_when=FIRST_COMPLETED)
            else:
                time.sleep(0.05)  # nothing more to start: look again soon
            self._top_up()

    def close(self) -> None:
        """Stop a head start that :meth:`run` never took over (e.g. the gradebook could not open).

        Its results would never be read: the workers are ended at once (each one's sandbox dies with it)
        rather than left to grade every queued job (``shutdown(cancel_futures=True)`` cannot cancel jobs
        already handed to the worker processes' queue).
        """
        executor, self._executor, self._early, self._head = getattr(self, "_executor", None), None, {}, iter(())
        if executor is not None:
            _end_now(executor)

    def run(self, jobs: Iterable[Job], wanted: set[tuple[str, str, str]] | None = None) -> Iterator[Event]:
        source = iter(jobs)
        retry: deque[Job] = deque()
        policy = RetryPolicy(self.attempts)
        inflight: dict = {}
        pool, early = getattr(self, "_executor", None) or self._pool(), getattr(self, "_early", {})
        self._executor, self._early, self._head = None, {}, iter(())
        unread = []  # head-start jobs nobody wants that the workers have begun: never awaited (_end_now)
        for key in [k for k in early if wanted is not None and k not in wanted]:
            fut = early.pop(key)[0]
            if not fut.cancel() and not fut.done():  # already handed to a worker: it grades on unless ended
                unread.append(fut)
        if unread and not self._wanted_begun(early):
            # only jobs nobody wants are being graded: end them now rather than grade them to the end (the wanted
            # ones not begun are graded afresh when the source yields them; finished ones keep their results)
            for key in [k for k, (fut, _, _) in early.items() if not fut.done()]:
                del early[key]
            _end_now(pool)
            unread, pool = [], self._pool()
        try:
            while True:
                submit_broken = idle = False
                while len(inflight) < self.window:
                    job = retry.popleft() if retry else next(source, None)
                    if job is None:
                        break
                    if job is IDLE:
                        idle = True
                        break
                    started = early.pop(job_key(job), None)
                    if started is not None:
                        inflight[started[0]] = started[1]
                        continue
                    try:
                        inflight[self._submit(pool, job)] = job
                    except BrokenProcessPool:  # a worker died after the last wait: restart the pool below
                        retry.appendleft(job)
                        submit_broken = True
                        break
                if not inflight and not submit_broken:
                    if idle:
                        continue
                    return
                timeout = 0 if submit_broken else IDLE_POLL if idle else None
                done, _ = wait(list(inflight), timeout=timeout, return_when=FIRST_COMPLETED)
                broken = submit_broken
                for fut in done:
                    job = inflight.pop(fut)
                    try:
                        payload = fut.result()
                    except BrokenProcessPool:
                        broken = True
                        inflight[fut] = job  # handled with the others below
                    except JobError as exc:
                        n = policy.after_error(job)
                        if n is not None:
                            self.log(f"警告：{_name(job)} 评分失败（{exc}），第 {n} 次重试")
                            retry.append(job)
                        else:
                            yield job, None, str(exc)
                    except Exception as exc:  # noqa: BLE001 - a grader bug: report it, keep the batch going
                        yield job, None, f"评分程序出错：{type(exc).__name__}: {exc}"
                    else:
                        yield job, payload, None
                if broken:
                    lost = list(inflight.values())
                    inflight.clear()
                    pool.shutdown(wait=False, cancel_futures=True)
                    give_up = []
                    for job in lost:
                        (retry if policy.after_lost_worker(job) else give_up).append(job)
                    self.log(f"警告：一个评分工作进程意外退出；重启进程池，重新评分未完成的 {len(lost)} 份提交："
                             + "，".join(_name(j) for j in lost[:8]) + ("……" if len(lost) > 8 else ""))
                    for job in give_up:
                        yield job, None, "评分工作进程反复意外退出"
                    pool = self._pool()
        finally:
            # all done: wait for the idle workers to leave so their queues and semaphores are released
            # now (the command may end with os._exit); otherwise do not wait for jobs still running, and
            # end the workers still grading head-start jobs nobody wants rather than wait for them
            if not inflight and any(not fut.done() for fut in unread):
                _end_now(pool)
            else:
                pool.shutdown(wait=not inflight, cancel_futures=True)

    def _wanted_begun(self, early: dict) -> bool:
        """Whether a worker is grading one of the wanted head-start jobs (``early``) now."""
        return any(self._begun[slot] and not fut.done() for fut, _, slot in early.values())


def _end_now(executor: ProcessPoolExecutor) -> None:
    """Stop ``executor`` without waiting for the jobs its workers are running: the workers are terminated (each
    one's sandbox dies with it: bubblewrap's ``--die-with-parent``; its job folder is swept when its lock is free)."""
    processes = list((getattr(executor, "_processes", None) or {}).values())
    executor.shutdown(wait=False, cancel_futures=True)
    for p in processes:
        p.terminate()
    manager = getattr(executor, "_executor_manager_thread", None)
    if manager is not None:  # it reaps the workers (joining them here too would race with it)
        manager.join(timeout=10)


class DaskPool:
    """An existing Dask distributed cluster (``distributed.Client(address)``)."""

    def __init__(self, address: str, log: Callable[[str], None], attempts: int = 3, work: Work | None = None) -> None:
        from distributed import Client

        self.log = log
        self.attempts = attempts
        self.work = work  # a module-level function (the workers import it by name); None: grade_job
        self.client = Client(address, timeout="30s", set_as_default=False)
        self.workers = max(1, sum(self.client.nthreads().values()))
        self.window = 2 * self.workers + 2

    def describe(self) -> str:
        return f"Dask 集群 {self.client.scheduler.address}：{self.workers} 个评分线程"

    def close(self) -> None:
        self.client.close()

    def _workers(self) -> set[str]:
        try:
            return set(self.client.run_on_scheduler(lambda dask_scheduler: list(dask_scheduler.workers)))
        except Exception:  # noqa: BLE001 - the scheduler is busy or gone: no news this time
            return set()

    def _announce_lost_workers(self, known: set[str]) -> set[str]:
        """Log the workers that left the cluster since the last look (Dask reruns their tasks itself)."""
        now = self._workers()
        if not now:
            return known
        lost = sorted(known - now)
        if lost:
            self.log(f"警告：Dask 工作进程 {'，'.join(lost)} 已断开；Dask 会在其他工作进程上重新运行它们未完成的评分任务"
                     f"（当前 {len(now)} 个工作进程）")
        return now

    def run(self, jobs: Iterable[Job], wanted: set[tuple[str, str, str]] | None = None) -> Iterator[Event]:
        from distributed import as_completed

        source = iter(jobs)
        policy = RetryPolicy(self.attempts)
        inflight: dict = {}
        ac = as_completed(loop=self.client.loop)

        def submit(job: Job) -> None:
            fut = self.client.submit(self.work or grade_job, job.to_json(), pure=False, key=f"grade-{_name(job)}-{os.urandom(4).hex()}")
            inflight[fut.key] = job
            ac.add(fut)

        known = self._workers()
        ended = False
        try:
            while True:
                idle = False
                while not ended and len(inflight) < self.window:
                    job = next(source, None)
                    if job is None:
                        ended = True
                    elif job is IDLE:
                        idle = True
                        break
                    else:
                        submit(job)
                if not inflight:
                    if ended:
                        return
                    continue
                if idle:  # hand back what is finished, at most IDLE_POLL seconds from now, then ask the source again
                    waited = time.monotonic() + IDLE_POLL
                    while not ac.has_ready() and time.monotonic() < waited:
                        time.sleep(0.02)
                    done = ac.next_batch(block=False) if ac.has_ready() else []
                else:
                    done = [next(ac)]
                for fut in done:
                    known = self._announce_lost_workers(known)
                    job = inflight.pop(fut.key)
                    try:
                        payload = fut.result()
                    except JobError as exc:
                        n = policy.after_error(job)
                        if n is not None:
                            self.log(f"警告：{_name(job)} 评分失败（{exc}），第 {n} 次重试")
                            submit(job)
                            continue
                        yield job, None, str(exc)
                    except Exception as exc:  # noqa: BLE001 - KilledWorker after repeated worker deaths, grader bugs
                        yield job, None, f"Dask 任务失败：{type(exc).__name__}: {str(exc)[:300]}"
                    else:
                        yield job, payload, None
                    finally:
                        fut.release()
        finally:
            self.client.close()
