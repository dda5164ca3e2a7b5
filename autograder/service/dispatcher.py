"""The grading loop of one service process: claim queued submissions, grade them in the pool, record results.

Every course of the site has a queue in its own database (a :class:`Lane`); one pool grades them all, claiming
from the courses in turn, so a busy course cannot starve another and the machine's cores are shared, not
multiplied by the number of courses.  One thread feeds :meth:`autograder.batch.pools.LocalPool.run` (or the Dask pool's) from the queue: it claims
a submission when the pool has room, yields :data:`~autograder.batch.pools.IDLE` while jobs are in flight and
nothing is queued, and sleeps on an event (set by an upload in this process, or after ``poll`` seconds for
uploads to other processes) when there is nothing at all.  Results are recorded as they come: the submission
row with the counting attempt and its grade passback in one transaction (:meth:`.queue.Queue.graded`), then the
gradebook's copy (:func:`.counting.write_gradebook`).  At start, pairs left unsettled (the process ended before
the copy) are settled again (:func:`.counting.settle`); while it runs, the loop copies the pairs it finds unsettled
(an exception granted to a student restated their attempts: :mod:`.overrides`) at once when asked
(:meth:`Dispatcher.settle_soon`) and every :data:`SWEEP_SECONDS` (another process's grant, or a copy that failed).
A second thread renews the leases of the claims.

Nothing here touches the sandbox: jobs are the batch layer's (:func:`autograder.batch.jobs.make_job`), run
by its pools with the same isolation and retry policy as ``autograder grade``.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator, NamedTuple

from ..batch.jobs import Job, make_job
from ..batch.pools import IDLE
from ..batch.received import take_in
from ..batch.version import fingerprint
from ..check import all_assignments
from ..model import Limits
from . import checks, counting
from .checks import CHECK_TAG, CheckQueue
from .failures import Failure
from .queue import Queue


SWEEP_SECONDS = 15.0  # how often the running loop looks for pairs whose gradebook copy is not written


class LaneAssignment(NamedTuple):
    """What the grading loop needs of one open assignment of a course."""

    notebook: str  # the notebook's file name, as the gradebook names it
    source: Path  # the instructor's source notebook
    counts: str  # which attempt counts: best | last (course.yml)


@dataclass
class Lane:
    """One course's queue in the grading loop: its queue, gradebook writer, data folder and open assignments
    (``assignments``: name -> :class:`LaneAssignment`, or its fields as a plain tuple); with ``resettle`` every
    (student, assignment) is settled again at start (the policy changed), then ``on_settled`` is called.  ``checks``: the course's queue of
    checks before an attempt (:mod:`.checks`), graded on the visible cases only, and only when no attempt waits."""

    course: str
    queue: Queue
    store_factory: Callable[[], object]
    data_root: Path
    assignments: dict[str, LaneAssignment]
    resettle: bool = False
    on_settled: Callable[[], None] = lambda: None
    checks: CheckQueue | None = None
    sources: dict[str, bytes] = field(init=False)

    def __post_init__(self) -> None:
        self.assignments = {name: LaneAssignment(*a) for name, a in self.assignments.items()}
        self.sources = {name: a.source.read_bytes() for name, a in self.assignments.items()}

    @property
    def db(self):
        return self.queue.db


class Dispatcher:
    """Grades the queues of ``lanes`` with ``pool`` (created lazily by ``make_pool`` in the dispatcher thread)."""

    def __init__(self, lanes: list[Lane], make_pool: Callable[[], object], *, sandbox: bool, limits: Limits,
                 scratch: str | None, log: Callable[[str], None], poll: float = 1.0) -> None:
        self.lanes = {lane.course: lane for lane in lanes}
        self.make_pool = make_pool
        self.sandbox, self.limits, self.scratch = sandbox, limits, scratch
        self.log, self.poll = log, poll
        self.outstanding = 0
        self._turn = 0
        self._wake = threading.Event()
        self._sweep = threading.Event()
        self._swept = 0.0
        self._stores: dict[str, object] = {}
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self.ready = threading.Event()

    def start(self) -> None:
        for target, name in ((self._main, "autograder-dispatcher"), (self._renew, "autograder-lease")):
            t = threading.Thread(target=target, name=name, daemon=True)
            t.start()
            self._threads.append(t)

    def wake(self) -> None:
        self._wake.set()

    def settle_soon(self) -> None:
        """Copy the pairs left unsettled into their gradebooks at the loop's next turn (within a second or so)."""
        self._sweep.set()
        self._wake.set()

    def _queues(self) -> list[tuple[str, Queue]]:
        """Every queue this loop claims from: each course's attempts and checks."""
        return [(lane.course, q) for lane in self.lanes.values() for q in (lane.queue, lane.checks) if q is not None]

    def _release(self) -> int:
        return sum(q.release() for _, q in self._queues())

    def stop(self) -> None:
        """Stop claiming and give this process's claims back (they are graded by the next start or another process)."""
        self._stop.set()
        self._wake.set()
        try:
            n = self._release()
            if n:
                self.log(f"已将正在评分的 {n} 份提交放回队列")
        except Exception as exc:  # noqa: BLE001 - the database is gone: the leases run out instead
            self.log(f"警告：未能把正在评分的提交放回队列（{exc}）；租约到期后会重新评分")

    # ---- the threads

    def _renew(self) -> None:
        lease = min(lane.queue.lease for lane in self.lanes.values())
        while not self._stop.wait(max(lease / 4, 0.2)):
            for course, queue in self._queues():
                try:
                    queue.renew()
                except Exception as exc:  # noqa: BLE001 - try again at the next tick
                    self.log(f"警告：课程 {course} 续租失败（{exc}）")

    def _main(self) -> None:
        delay = 1.0
        while not self._stop.is_set():
            try:
                self._run()
                return
            except Exception:  # noqa: BLE001 - keep serving: log, wait, start again (claims are re-taken after their lease)
                self.log("评分循环出错，稍后重试：\n" + traceback.format_exc(limit=5))
                self.outstanding = 0
                try:  # the jobs of the abandoned pool: claimable again at once (not the students' fault)
                    self._release()
                except Exception:  # noqa: BLE001 - still down: their leases run out instead (renewal skips them)
                    pass
                if self._stop.wait(delay):
                    return
                delay = min(delay * 2, 30.0)

    def _run(self) -> None:
        stores = self._stores = {course: lane.store_factory() for course, lane in self.lanes.items()}
        try:
            for course, lane in self.lanes.items():
                pairs = counting.unsettled_pairs(lane.db, everything=lane.resettle)
                for student, assignment in pairs:
                    if assignment in lane.assignments:
                        self._settle(lane, stores[course], student, assignment)
                if pairs:
                    self.log(f"课程 {course}：成绩库已与 {len(pairs)} 个（学生，作业）的计分提交同步")
                lane.resettle = False
                lane.on_settled()
            self._swept = time.monotonic()
            pool = self.make_pool()
            self.ready.set()
            try:
                for job, payload, error in pool.run(self._source()):
                    self.outstanding -= 1
                    self._record(stores[job.tag.partition("/")[0]], job, payload, error)
            finally:
                pool.close()
        finally:
            for store in stores.values():
                store.close()

    def _source(self) -> Iterator[Job]:
        while not self._stop.is_set():
            self._sweep_if_due()
            job = self._claim()
            if job is not None:
                self.outstanding += 1
                yield job
            elif self.outstanding > 0:
                yield IDLE
            else:
                self._wake.wait(self.poll)
                self._wake.clear()

    def _sweep_if_due(self) -> None:
        """Write the gradebook copy of every pair left unsettled (:func:`.counting.write_gradebook`), when asked or
        every :data:`SWEEP_SECONDS`; in the loop's thread, which owns the gradebook stores.  A failure is logged and
        left for the next sweep: grading goes on."""
        if not self._sweep.is_set() and time.monotonic() - self._swept < SWEEP_SECONDS:
            return
        self._sweep.clear()
        self._swept = time.monotonic()
        for course, lane in self.lanes.items():
            try:
                pairs = [(student, assignment) for student, assignment in counting.unsettled_pairs(lane.db)
                         if assignment in lane.assignments]
                for student, assignment in pairs:
                    counting.write_gradebook(lane.db, self._stores[course], lane.assignments[assignment].notebook, student, assignment)
            except Exception as exc:  # noqa: BLE001 - the gradebook is a copy: the next sweep writes it
                self.log(f"警告：课程 {course} 的成绩库同步失败，稍后重试（{exc}）")
                continue
            if pairs:
                self.log(f"课程 {course}：成绩库已与 {len(pairs)} 个（学生，作业）的计分提交同步")

    def _claim(self) -> Job | None:
        """A job from the next course in turn that has one (round robin over the courses): an attempt if any course
        has one waiting, else a check (a check never delays an attempt)."""
        lanes = list(self.lanes.values())
        for check in (False, True):
            for i in range(len(lanes)):
                lane = lanes[(self._turn + i) % len(lanes)]
                job = self._claim_from(lane, check)
                if job is not None:
                    self._turn = (self._turn + i + 1) % len(lanes)
                    return job
        return None

    def _claim_from(self, lane: Lane, check: bool = False) -> Job | None:
        queue = lane.checks if check else lane.queue
        if queue is None:
            return None
        while True:
            claim = queue.claim()
            if claim is None:
                return None
            if claim.assignment not in lane.assignments:
                queue.failed(claim.id, Failure.NOT_CONFIGURED, claim.assignment)
                continue
            open_assignment = lane.assignments[claim.assignment]
            path = lane.data_root / claim.path
            try:
                data = path.read_bytes()
            except OSError:
                data = None
            if data is None or hashlib.sha256(data).hexdigest() != claim.sha256:
                queue.failed(claim.id, Failure.FILE_LOST)
                continue
            notes = [checks.NOTE] if check else None  # a check's job never shares an attempt's key
            return make_job(claim.student_id, claim.assignment, open_assignment.notebook, path, open_assignment.source,
                            fingerprint(lane.sources[claim.assignment], data, notes=notes), sandbox=self.sandbox,
                            limits=self.limits, scratch=self.scratch,
                            tag=f"{lane.course}/{CHECK_TAG if check else ''}{claim.id}", visible_only=check)

    def _record(self, store, job: Job, payload: dict | None, error: str | None) -> None:
        """Record a job's outcome in its course (``job.tag``: ``<course>/<submission id>``, or ``<course>/check:<id>``
        for a check) and ``store``, its gradebook."""
        course, _, sid = job.tag.partition("/")
        lane = self.lanes[course]
        if sid.startswith(CHECK_TAG):
            self._record_check(lane, job, sid[len(CHECK_TAG):], payload, error)
            return
        if error is not None:
            lane.queue.failed(sid, Failure.SYSTEM, error)  # the pool's error: for instructors only (queue.error_for)
            self.log(f"{lane.course}/{job.name} ({sid[:6]})：未能评分（{error}）")
            return
        intake = take_in(job, payload, all_assignments()[job.assignment])
        if intake.refused is not None:
            self.log(f"{lane.course}/{job.name} ({sid[:6]})：{intake.refused}")
        result, text = intake.result, json.dumps(intake.result.to_json(), ensure_ascii=False)
        if lane.queue.graded(sid, score=result.score, max_score=result.max_score, fingerprint=result.fingerprint,
                             result_json=text, counts=lane.assignments[job.assignment].counts):
            counting.write_gradebook(lane.db, store, lane.assignments[job.assignment].notebook, job.student, job.assignment)

    def _record_check(self, lane: Lane, job: Job, check_id: str, payload: dict | None, error: str | None) -> None:
        """Record a check's outcome (its visible cases; nothing counts) and remove its notebook."""
        assert lane.checks is not None and job.visible_only
        if error is not None:
            lane.checks.failed(check_id, Failure.SYSTEM, error)
        else:
            intake = take_in(job, payload, checks.visible_assignment(job.assignment))
            lane.checks.done(check_id, json.dumps(intake.result.to_json(), ensure_ascii=False))
        checks.discard(lane.data_root, job.assignment, job.student, check_id)

    def _settle(self, lane: Lane, store, student: str, assignment: str) -> None:
        counting.settle(lane.db, store, lambda a: lane.assignments[a].counts, lambda a: lane.assignments[a].notebook, student,
                        assignment)
