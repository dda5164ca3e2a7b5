"""One grading job: a pure function from (submission bytes, assignment) to a result as JSON data.

A job is a plain dict (picklable, no paths that only exist on the grader's machine), so it runs
unchanged in a local worker process or on a Dask worker on another machine:

``{"student", "assignment", "notebook": name, "submission": bytes | None, "source": bytes,
"fingerprint", "sandbox": bool, "limits": {...}, "scratch": dir | None}``

:func:`grade_job` writes the two notebooks into a private scratch directory, grades them with
:func:`autograder.check.grade_with_timing` (student code still runs only inside the bubblewrap sandbox), removes the
scratch directory and returns ``{"result": <SubmissionResult JSON>, "timing": {...}, "worker": ...}``.
It never touches the gradebook: the trusted parent is its only writer.
"""

from __future__ import annotations

import ctypes
import errno
import os
import shutil
import signal
import socket
import tempfile
import time
from pathlib import Path

from ..model import Limits
from ..sandbox import SandboxBroken, self_test


class JobError(RuntimeError):
    """Grading infrastructure failed for this job (not the student's fault); the job may be retried."""


_SANDBOX_CHECKED: str | None | bool = False


def worker_init() -> None:
    """Local pool initializer: die with the grader (SIGKILL of the parent must not leave orphans)."""
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except OSError:
        pass
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def make_job(student: str, assignment: str, notebook_name: str, submission: Path | None, source: Path,
             fingerprint: str, *, sandbox: bool, limits: Limits, scratch: str | None = None) -> dict:
    """Read the files once, in the trusted parent, and pack everything a worker needs."""
    return {"student": student, "assignment": assignment, "notebook": notebook_name,
            "submission": submission.read_bytes() if submission is not None else None,
            "source": source.read_bytes(), "fingerprint": fingerprint, "sandbox": sandbox,
            "limits": limits.to_json(), "scratch": scratch}


def grade_job(job: dict) -> dict:
    """Grade one job; raises :class:`JobError` only when the infrastructure (not the student) failed."""
    global _SANDBOX_CHECKED
    from ..check import all_assignments, grade_with_timing  # here: a fresh worker pays for the import once, in the job

    t_begin = time.monotonic()
    if job["sandbox"]:
        if _SANDBOX_CHECKED is False:
            _SANDBOX_CHECKED = self_test()
        if _SANDBOX_CHECKED:
            raise JobError(f"工作节点 {socket.gethostname()} 无法使用沙箱：{_SANDBOX_CHECKED}")
    assignment = all_assignments()[job["assignment"]]
    limits = Limits.from_json(job["limits"])
    try:
        work = Path(tempfile.mkdtemp(prefix="autograder-job-", dir=job.get("scratch") or None))
    except OSError as exc:
        raise JobError(_io_reason(exc, job.get("scratch"))) from None
    try:
        try:
            source = work / "source.ipynb"
            source.write_bytes(job["source"])
            submission = None
            if job["submission"] is not None:
                submission = work / "submitted" / f"{job['notebook']}.ipynb"
                submission.parent.mkdir()
                submission.write_bytes(job["submission"])
            os.chmod(work, 0o755)
        except OSError as exc:
            raise JobError(_io_reason(exc, str(work.parent))) from None
        t0 = time.monotonic()
        try:
            result, start = grade_with_timing(assignment, source, submission, job["student"], sandbox=job["sandbox"],
                                              limits=limits)
        except SandboxBroken as exc:  # never a grade: the machine, not the student, failed
            raise JobError(f"工作节点 {socket.gethostname()} 的沙箱无法隔离学生进程：{exc}") from None
        total = time.monotonic() - t0
    finally:
        shutil.rmtree(work, ignore_errors=True)
    result.fingerprint = job["fingerprint"]
    return {"result": result.to_json(),
            "timing": {"setup": round(t0 - t_begin, 4), "process_start_and_cells": round(start, 4),
                       "calls_and_checks": round(max(total - start, 0.0), 4), "grade": round(total, 4)},
            "worker": f"{socket.gethostname()}:{os.getpid()}"}


def _io_reason(exc: OSError, where: str | None) -> str:
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return f"评分临时目录已满（{where or tempfile.gettempdir()}）：{exc.strerror}"
    return f"无法写入评分临时目录（{where or tempfile.gettempdir()}）：{exc}"
