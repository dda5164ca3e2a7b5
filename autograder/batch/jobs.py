"""One grading job: a pure function from (submission bytes, assignment) to a result as JSON data.

A job is a :class:`Job` (no paths that only exist on the grader's machine); it crosses to a worker as the
explicit JSON of :meth:`Job.to_json` (the notebooks' bytes in base64), so it runs unchanged in a local worker
process or on a Dask worker on another machine, and a pool runs whatever work function it is given on it.

:func:`grade_job` reads the job back (:meth:`Job.from_json`), writes the two notebooks into a private scratch folder, grades them with
:func:`autograder.check.grade_with_timing` (student code still runs only inside the bubblewrap sandbox), removes the
scratch folder and returns ``{"result": <SubmissionResult JSON>, "timing": {...}, "worker": ...}``.
It never touches the gradebook: the trusted parent is its only writer.

Scratch folders (``autograder-job-*`` in ``--scratch`` or the system temporary directory) hold the instructor's
solution: they are created mode 0700, and each holds an exclusive ``flock`` on its ``.lock`` file for as long as
its job runs.  A folder whose lock is free belonged to a process that is gone (a killed worker):
:func:`sweep_scratch` removes those (the command calls it at start-up and at the end of a run, and every worker
before its first job), and those without a lock file whose creating process (named in the folder) is gone.
"""

from __future__ import annotations

import base64
import ctypes
import errno
import fcntl
import multiprocessing
import os
import shutil
import signal
import socket
import stat
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from multiprocessing import util
from typing import TYPE_CHECKING, Any

from ..model import Limits, SandboxSettings
from ..sandbox import SandboxBroken, self_test, warm

if TYPE_CHECKING:
    from ..check.specs import Assignment


class JobError(RuntimeError):
    """Grading infrastructure failed for this job (not the student's fault); the job may be retried."""


# This worker's machine and its sandbox: tested yet (before the first job, or by the grading run that started this
# worker), and why it cannot isolate (None: it can)
_SANDBOX_TESTED = False
_SANDBOX_REFUSAL: str | None = None
_SWEPT = False
JOB_PREFIX = "autograder-job-"
LOCK_NAME = ".lock"
STALE_MARGIN = 120.0  # seconds on top of the submission timeout before a folder without a lock file is stale


def worker_init() -> None:
    """Local pool initializer: die with the grader (SIGKILL of the parent must not leave orphans).

    The death signal follows the process that started this one, the grader.  A worker starts for a while
    before it gets here; if the grader died in that time the signal would never come (its parent is gone
    already), so it leaves.  Idle warm sandboxes are destroyed when the worker ends normally (also
    when it ends through ``os._exit``, which skips ``atexit``).
    """
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except OSError:
        pass
    parent = multiprocessing.parent_process()  # the grader that started this worker
    if parent is not None and not parent.is_alive():
        os._exit(0)
    util.Finalize(None, warm.discard_all, exitpriority=10)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def sandbox_checked_by_run() -> None:
    """In a local worker: the grading run that started this process tests the sandbox on this machine itself,
    once, and records no result before that test passed; the worker does not repeat it before its first job.
    (A Dask worker, possibly on another machine, tests its own: :func:`grade_job`.)"""
    global _SANDBOX_TESTED
    _SANDBOX_TESTED = True


@dataclass(frozen=True)
class Job:
    """One submission to grade, with everything a worker needs.

    ``tag`` is the caller's own reference (the service's submission id); workers never read it.  ``sandbox`` given as
    a bool stands for this machine's defaults (:meth:`SandboxSettings.of <autograder.model.SandboxSettings.of>`).
    """

    student: str
    assignment: str
    fingerprint: str
    notebook: str = ""  # the notebook's name in the assignment
    submission: bytes | None = None  # None: nothing was submitted (graded 0 with a reason)
    source: bytes = b""  # the instructor's source notebook
    sandbox: SandboxSettings = field(default_factory=SandboxSettings)
    limits: Limits = field(default_factory=Limits)
    scratch: str | None = None
    tag: str = ""
    visible_only: bool = False  # a check before an attempt: only the visible cases run (:func:`visible_part`)

    def __post_init__(self) -> None:
        object.__setattr__(self, "sandbox", SandboxSettings.of(self.sandbox))

    @property
    def key(self) -> tuple[str, str, str]:
        """What identifies the job's result: student, assignment and the fingerprint of the graded bytes."""
        return self.student, self.assignment, self.fingerprint

    @property
    def name(self) -> str:
        return f"{self.student}/{self.assignment}"

    def to_json(self) -> dict[str, Any]:
        """The job as JSON data (bytes in base64): what crosses to a worker."""
        b64 = lambda b: None if b is None else base64.b64encode(b).decode("ascii")  # noqa: E731
        return {"student": self.student, "assignment": self.assignment, "fingerprint": self.fingerprint,
                "notebook": self.notebook, "submission": b64(self.submission), "source": b64(self.source),
                "sandbox": self.sandbox.to_json(), "limits": self.limits.to_json(), "scratch": self.scratch,
                "tag": self.tag, "visible_only": self.visible_only}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Job":
        unb64 = lambda t: None if t is None else base64.b64decode(t)  # noqa: E731
        return cls(data["student"], data["assignment"], data["fingerprint"], data["notebook"], unb64(data["submission"]),
                   unb64(data["source"]) or b"", SandboxSettings.from_json(data["sandbox"]), Limits.from_json(data["limits"]),
                   data["scratch"], data.get("tag", ""), bool(data.get("visible_only", False)))


def make_job(student: str, assignment: str, notebook_name: str, submission: Path | None, source: Path,
             fingerprint: str, *, sandbox: SandboxSettings | bool, limits: Limits, scratch: str | None = None,
             tag: str = "", visible_only: bool = False) -> Job:
    """Read the files once, in the trusted parent, and pack everything a worker needs."""
    return Job(student, assignment, fingerprint, notebook_name, submission.read_bytes() if submission is not None else None,
               source.read_bytes(), sandbox, limits, scratch, tag, visible_only)


def visible_part(assignment: "Assignment") -> "Assignment":
    """``assignment`` with its visible cases only (those of the ``*_visible`` grade cells, the ones the notebook
    shows): what a check before an attempt runs, so that no hidden input ever reaches the sandbox."""
    return replace(assignment, cases=[c for c in assignment.cases if c.cell.endswith("_visible")])


def grade_job(data: dict) -> dict:
    """Grade one job (:meth:`Job.to_json`); raises :class:`JobError` only when the infrastructure (not the student)
    failed."""
    global _SANDBOX_TESTED, _SANDBOX_REFUSAL, _SWEPT
    from ..check import all_assignments, grade_with_timing  # here: a fresh worker pays for the import once, in the job

    t_begin = time.monotonic()
    job = Job.from_json(data)
    if job.sandbox.enabled:
        if not _SANDBOX_TESTED:  # its zygote, started with this job's limits and settings, grades the job
            _SANDBOX_TESTED, _SANDBOX_REFUSAL = True, self_test(job.limits, job.sandbox)
        if _SANDBOX_REFUSAL:
            raise JobError(f"工作节点 {socket.gethostname()} 无法使用沙箱：{_SANDBOX_REFUSAL}")
    assignment = all_assignments()[job.assignment]
    if job.visible_only:
        assignment = visible_part(assignment)
    limits = job.limits
    if not _SWEPT:
        _SWEPT = True
        sweep_scratch(job.scratch, max_age=limits.submission_timeout + STALE_MARGIN)
    work = None
    try:
        work = Path(tempfile.mkdtemp(prefix=f"{JOB_PREFIX}{os.getpid()}-", dir=job.scratch or None))  # 0700
        lock = _hold(work)
    except OSError as exc:
        if work is not None:
            shutil.rmtree(work, ignore_errors=True)
        raise JobError(_io_reason(exc, job.scratch)) from None
    try:
        try:
            source = work / "source.ipynb"
            source.write_bytes(job.source)
            submission = None
            if job.submission is not None:
                submission = work / "submitted" / f"{job.notebook}.ipynb"
                submission.parent.mkdir()
                submission.write_bytes(job.submission)
        except OSError as exc:
            raise JobError(_io_reason(exc, str(work.parent))) from None
        t0 = time.monotonic()
        try:
            result, start = grade_with_timing(assignment, source, submission, job.student, sandbox=job.sandbox,
                                              limits=limits)
        except SandboxBroken as exc:  # never a grade: the machine, not the student, failed
            raise JobError(f"工作节点 {socket.gethostname()} 的沙箱无法隔离学生进程：{exc}") from None
        except SystemError as exc:  # the interpreter's own failure (e.g. a CPython ast bug in a worker thread)
            raise JobError(f"工作节点 {socket.gethostname()} 的 Python 解释器出错：{str(exc)[:200]}") from None
        total = time.monotonic() - t0
    finally:
        shutil.rmtree(work, ignore_errors=True)
        os.close(lock)
    result.fingerprint = job.fingerprint
    return {"result": result.to_json(),
            "timing": {"setup": round(t0 - t_begin, 4), "process_start_and_cells": round(start, 4),
                       "calls_and_checks": round(max(total - start, 0.0), 4), "grade": round(total, 4)},
            "worker": f"{socket.gethostname()}:{os.getpid()}",
            # when the job ran on this machine's monotonic clock (the command's clock too, for a local worker)
            "span": [round(t_begin, 4), round(time.monotonic(), 4)]}


def _io_reason(exc: OSError, where: str | None) -> str:
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return f"评分临时目录已满（{where or tempfile.gettempdir()}）：{exc.strerror}"
    return f"无法写入评分临时目录（{where or tempfile.gettempdir()}）：{exc}"


def _hold(work: Path) -> int:
    """Lock ``work`` for this process: the lock file appears under its final name only once it is locked."""
    tmp = work / f"{LOCK_NAME}.{os.getpid()}"
    fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.rename(tmp, work / LOCK_NAME)
    except OSError:
        os.close(fd)
        raise
    return fd


def sweep_scratch(scratch: str | None, *, max_age: float) -> list[str]:
    """Remove the job folders under ``scratch`` (default: the system temporary directory) left by dead processes.

    A folder is left alone while its lock is held (its job is running, here or in another grading run).
    A folder without a lock file is removed when the process named in it (``autograder-job-<pid>-...``) is
    gone (it was killed while creating the folder), or, for a folder whose name holds no pid, when it
    was last modified more than ``max_age`` seconds ago.  Returns the names of the removed folders.
    """
    base = Path(scratch or tempfile.gettempdir())
    removed = []
    try:
        candidates = [p for p in base.iterdir() if p.name.startswith(JOB_PREFIX)]
    except OSError:
        return removed
    now = time.time()
    for folder in candidates:
        try:
            st = folder.lstat()
        except OSError:
            continue
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid():
            continue
        try:
            fd = os.open(folder / LOCK_NAME, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC)
        except FileNotFoundError:  # being created (its process is alive), or its process died before locking it
            if not _creator_alive(folder.name) or now - st.st_mtime > max_age:
                shutil.rmtree(folder, ignore_errors=True)
                removed.append(folder.name)
            continue
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue  # held: a live job
        try:
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder.name)
        finally:
            os.close(fd)
    return removed


def _creator_alive(name: str) -> bool:
    """Is the process that created job folder ``name`` (``autograder-job-<pid>-...``) still running?"""
    pid = name[len(JOB_PREFIX):].split("-", 1)[0]
    if not pid.isdigit():
        return True  # no pid in its name: only its age tells
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True
