"""Run grading jobs (:func:`jobs.grade_job`, or another work function) in parallel and hand back results as they finish.

* :class:`LocalPool` - a ``ProcessPoolExecutor`` of ``os.cpu_count()`` worker processes on this machine, spawned
  children of the grader (each job still runs the student's code under bubblewrap; each worker process keeps its
  warm sandbox between jobs, :mod:`autograder.sandbox.warm`, and it dies with the worker). A worker that dies (OOM killer, SIGKILL)
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


def _worker_init(sandbox_checked: bool = False, environ: dict[str, str] | None = None) -> None:
    worker_init()
    if environ is not None:
        os.environ.clear()
        os.environ.update(environ)
    if sandbox_checked:
        jobs.sandbox_checked_by_run()


class LocalPool:
    """Process pool on this machine: ``workers`` processes, one job each at a time.

    ``sandbox_checked``: the caller's self-test found this machine's sandbox working, so the workers do not test it
    again (:func:`jobs.sandbox_checked_by_run`).  The workers are spawned interpreters, children of this process:
    their death signal comes from the kernel the moment it ends.
    """

    def __init__(self, workers: int, log: Callable[[str], None], attempts: int = 3, work: Work = grade_job,
                 sandbox_checked: bool = False) -> None:
        self.workers = max(1, workers)
        self.log = log
        self.attempts = attempts
        self.work = work  # a module-level function (it is pickled by name into the spawned workers)
        self.window = 2 * self.workers + 2
        self.sandbox_checked = sandbox_checked

    def describe(self) -> str:
        return f"本机 {self.workers} 个评分工作进程"

    def _pool(self) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(max_workers=self.workers, mp_context=multiprocessing.get_context("spawn"),
                                   initializer=_worker_init,
                                   initargs=(self.sandbox_checked, dict(os.environ)))

    def close(self) -> None:
        """Nothing to release: each :meth:`run` ends its own worker processes (the pools share this method)."""

    def run(self, jobs: Iterable[Job]) -> Iterator[Event]:
        """Grade ``jobs`` (at most :attr:`window` in flight) and yield each ``(job, payload, error)`` as it finishes.

        A job whose worker reported an infrastructure error is tried again (:class:`RetryPolicy`); a worker that dies
        breaks the executor: it is rebuilt and the jobs that were in flight are graded again."""
        source = iter(jobs)
        retry: deque[Job] = deque()
        policy = RetryPolicy(self.attempts)
        inflight: dict = {}
        pool = self._pool()
        try:
            while True:
                broken, idle = self._fill(pool, source, retry, inflight)
                if not inflight and not broken:
                    if idle:
                        continue
                    return
                done, _ = wait(list(inflight), timeout=0 if broken else IDLE_POLL if idle else None,
                               return_when=FIRST_COMPLETED)
                for fut in done:
                    job = inflight.pop(fut)
                    try:
                        payload = fut.result()
                    except BrokenProcessPool:
                        broken = True
                        inflight[fut] = job  # handled with the others below
                        continue
                    except JobError as exc:
                        n = policy.after_error(job)
                        if n is not None:
                            self.log(f"警告：{_name(job)} 评分失败（{exc}），第 {n} 次重试")
                            retry.append(job)
                        else:
                            yield job, None, str(exc)
                        continue
                    except Exception as exc:  # noqa: BLE001 - a grader bug: report it, keep the batch going
                        yield job, None, f"评分程序出错：{type(exc).__name__}: {exc}"
                        continue
                    yield job, payload, None
                if broken:
                    pool.shutdown(wait=False, cancel_futures=True)
                    yield from self._lost(list(inflight.values()), policy, retry)
                    inflight.clear()
                    pool = self._pool()
        finally:
            # all done: wait for the idle workers to leave so that their queues and semaphores are released now (the
            # command may end with os._exit); otherwise do not wait for the jobs still running
            pool.shutdown(wait=not inflight, cancel_futures=True)

    def _fill(self, pool: ProcessPoolExecutor, source: Iterator[Job], retry: deque[Job], inflight: dict) -> tuple[bool, bool]:
        """Submit jobs (retries first) until the window is full; (a worker died meanwhile, the source is idle)."""
        while len(inflight) < self.window:
            job = retry.popleft() if retry else next(source, None)
            if job is None:
                return False, False
            if job is IDLE:
                return False, True
            try:
                inflight[pool.submit(self.work, job.to_json())] = job
            except BrokenProcessPool:  # a worker died after the last wait: the pool is rebuilt
                retry.appendleft(job)
                return True, False
        return False, False

    def _lost(self, lost: list[Job], policy: RetryPolicy, retry: deque[Job]) -> Iterator[Event]:
        """The jobs in flight when a worker died: tried again, or given up after their tries."""
        give_up = []
        for job in lost:
            (retry if policy.after_lost_worker(job) else give_up).append(job)
        self.log(f"警告：一个评分工作进程意外退出；重启进程池，重新评分未完成的 {len(lost)} 份提交："
                 + "，".join(_name(j) for j in lost[:8]) + ("……" if len(lost) > 8 else ""))
        for job in give_up:
            yield job, None, "评分工作进程反复意外退出"


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

    def run(self, jobs: Iterable[Job]) -> Iterator[Event]:
        """As :meth:`LocalPool.run`, on the cluster (Dask reruns the task of a worker it lost)."""
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
