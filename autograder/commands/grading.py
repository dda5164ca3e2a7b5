"""The grading set-up that ``autograder grade`` and ``autograder serve`` share, written once.

* :func:`add_grading_options` - the options of both commands that decide how submissions are graded (where the
  gradebook is, the sandbox, the limits, the pool); a new one (a sandbox option, say) is added here for both;
* :func:`grading_setup` - :class:`Grading` from those options: the instructor's sources, the sandbox checked on
  this machine (a cluster's workers check their own), the limits; :meth:`Grading.pool` the pool;
* :func:`lock_folder` - one process per output or data folder;
* :func:`generate_changed` - ``nbgrader generate_assignment`` for the assignments whose source (or gradebook)
  changed since the last time, remembered by a :class:`Stamps`;
* :func:`autograder.store.urls.database_url` - the gradebook's URL (``--db`` or ``FOLDER/gradebook.db``).
"""

from __future__ import annotations

import argparse
import errno
import fcntl
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Protocol

from ..model import Limits, SandboxSettings

if TYPE_CHECKING:
    from ..batch import pools
    from ..sandbox.enforcement import Enforcement
    from ..check import Assignment

# The command line imports this module at start-up (for its options), and so does every spawned grading worker:
# the grading machinery (pools, sandbox, nbgrader) is imported by the functions that use it.

REPO = Path(__file__).resolve().parents[2]
Log = Callable[[str], None]
REFUSED = "。拒绝在没有沙箱的情况下运行学生代码；确需如此请加 --no-sandbox"


def add_grading_options(parser: argparse.ArgumentParser, *, folder: str) -> None:
    """The options of both commands that decide how submissions are graded (``folder``: where the default
    gradebook lives, as the help names it)."""
    parser.add_argument("--db", help=f"成绩库的 SQLAlchemy URL（默认 sqlite:///{folder}/gradebook.db；"
                                     "多个进程共用时请用 postgresql://...）")
    parser.add_argument("--no-sandbox", action="store_true", help="不用 bubblewrap 隔离学生代码（不安全，只用于调试）")
    parser.add_argument("--jobs", type=int, default=0, help="本机评分工作进程数（默认 CPU 核数）")
    parser.add_argument("--scheduler", metavar="ADDRESS", help="在 Dask distributed 集群上评分（调度器地址，如 tcp://10.0.0.5:8786）")
    parser.add_argument("--scratch", metavar="DIR", help="工作进程存放临时文件的目录（默认系统临时目录）")
    parser.add_argument("--db-wait", type=float, default=120.0, help="成绩库暂时不可用时最多等待的秒数（默认 120）")
    parser.add_argument("--solutions", help="教师源目录（默认仓库中的 solutions/）")
    parser.add_argument("--call-timeout", type=float, default=4.0,
                        help="每次函数调用的 CPU 时间上限（秒，学生进程及其子进程合计；另有墙钟时限兜底）")
    parser.add_argument("--memory-mib", type=int, default=1024, help="学生进程的地址空间上限（MiB）")
    parser.add_argument("--submission-timeout", type=float, default=180.0,
                        help="每份提交的评分总时限（秒，含所有重启与用例；超时后其余用例计 0 分）")
    add_sandbox_options(parser)


def add_sandbox_options(parser: argparse.ArgumentParser) -> None:
    """Where the sandboxes' cgroups go and which account runs them (``grade``, ``serve``, ``sandbox check``)."""
    parser.add_argument("--cgroup-parent", metavar="PATH",
                        help="在这个 cgroup 下为每个沙箱建子 cgroup（路径写法同 /proc/self/cgroup，如 /autograder@course）；"
                             "默认：root 用层级的根，否则 systemd Delegate=yes 委派的本进程 cgroup（v2）或 autograder sandbox setup 建的子树（v1）")
    parser.add_argument("--sandbox-user", metavar="USER",
                        help="评分程序以 root 运行时，沙箱以这个无特权用户启动（默认 nobody）；学生进程从不以主机 root 运行")


@dataclass(frozen=True)
class Grading:
    """How submissions are graded, from the options of :func:`add_grading_options`."""

    solutions: Path
    sources: dict[str, Path]  # assignment -> the instructor's source notebook
    sandbox: SandboxSettings  # carried by every job
    limits: Limits
    scheduler: str | None
    jobs: int
    scratch: str | None
    db_wait: float
    enforcement: Enforcement | None = None  # the limits in force on this machine (None: cluster or no sandbox)

    @property
    def workers(self) -> int:
        """Job slots of a local pool (``--jobs``, default one per core)."""
        return self.jobs or os.cpu_count() or 1

    def pool(self, log: Log, work: Callable[[dict], dict] | None = None) -> pools.LocalPool | pools.DaskPool:
        """The pool that runs ``work`` (default :func:`~autograder.batch.jobs.grade_job`) on each job: the Dask
        cluster of ``--scheduler``, else local processes (:class:`~autograder.batch.pools.LocalPool`), one per job
        slot."""
        from ..batch import pools
        from ..batch.jobs import grade_job

        work = work or grade_job
        if self.scheduler:
            return pools.DaskPool(self.scheduler, log, work=work)
        # this machine's sandbox is checked once for the run (grading_setup): its workers do not test it again
        return pools.LocalPool(self.workers, log, work=work, sandbox_checked=self.enforcement is not None)

    def describe(self) -> str:
        return f"Dask 集群 {self.scheduler}" if self.scheduler else f"本机 {self.workers} 个评分进程"


def grading_setup(args: argparse.Namespace, assignments: dict[str, Assignment], error: type[Exception],
                  log: Log) -> Grading:
    """:class:`Grading` for ``assignments`` from ``args``; ``error`` (with a Chinese message) when it cannot grade:
    a missing source, or no working sandbox on this machine without ``--no-sandbox`` (the self-test, a real
    sandboxed call, runs here)."""
    from ..sandbox import enforcement, self_test, warm

    solutions = Path(args.solutions or REPO / "solutions").resolve()
    sources = {n: solutions / n / f"{a.notebook}.ipynb" for n, a in assignments.items()}
    for src in sources.values():
        if not src.is_file():
            raise error(f"找不到教师源 {src}")
    # a cluster's workers find their own cgroup parent and account, and check their own sandbox
    local = not args.scheduler
    sandbox = SandboxSettings(not args.no_sandbox, args.cgroup_parent if local else None,
                              args.sandbox_user if local else None, warm=not warm.asked_cold(os.environ))
    held = None
    if sandbox.enabled and local:
        try:  # which limits hold here, and how
            held = enforcement.prepare(sandbox.cgroup_parent, sandbox.user)
        except enforcement.SetupError as exc:
            raise error(str(exc)) from None
        log(f"autograder: {held.describe(Limits(memory_bytes=args.memory_mib << 20))}")
        why = self_test(settings=sandbox)
        if why:
            raise error(f"{why}{REFUSED}")
    elif not sandbox.enabled:
        log("autograder: 警告：--no-sandbox，学生代码不经隔离运行")
    limits = Limits(call_timeout=args.call_timeout, memory_bytes=args.memory_mib << 20,
                    submission_timeout=args.submission_timeout)
    return Grading(solutions, sources, sandbox, limits, args.scheduler, args.jobs, args.scratch, args.db_wait, held)


def lock_folder(folder: Path, name: str, busy: Callable[[str], str], error: type[Exception]) -> int:
    """Hold an exclusive lock on ``folder`` (file ``name``) for this process's lifetime (released when it ends).

    A second process is refused at once with ``error(busy(holder))``, ``holder`` the running one's process id.
    """
    fd = os.open(folder / name, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        holder = os.pread(fd, 64, 0).decode(errors="replace").strip()
        os.close(fd)
        if exc.errno not in (errno.EWOULDBLOCK, errno.EACCES):
            raise error(f"无法锁定目录 {folder}：{exc}") from None
        raise error(busy(holder or "?")) from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, str(os.getpid()).encode(), 0)
    return fd


class Stamps(Protocol):
    """Where :func:`generate_changed` remembers what it generated: assignment -> key."""

    def get(self, name: str) -> str | None: ...

    def put(self, done: dict[str, str]) -> None: ...


class FileStamps:
    """Stamps in a JSON file beside the output (``autograder grade``); empty when the SQLite gradebook is gone."""

    def __init__(self, path: Path, db_url: str) -> None:
        self.path = path
        self.data = read_stamps(path, db_url)

    def get(self, name: str) -> str | None:
        return self.data.get(name)

    def put(self, done: dict[str, str]) -> None:
        from ..store.outputs import write_atomic

        self.data.update(done)
        write_atomic(self.path, json.dumps(self.data))


def read_stamps(stamp_file: Path, db_url: str) -> dict:
    """What generate_assignment already put into this gradebook (empty if unreadable or the SQLite file is gone)."""
    if db_url.startswith("sqlite:///") and not Path(db_url[len("sqlite:///"):]).exists():
        return {}
    try:
        stamps = json.loads(stamp_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return stamps if isinstance(stamps, dict) else {}


def generate_changed(grading: Grading, names: list[str], course: Path, db_url: str, stamps: Stamps,
                     error: type[Exception], log: Log) -> list[str]:
    """``nbgrader generate_assignment`` for each of ``names`` whose source or gradebook changed (the key is the
    SHA-256 of the source and the URL); the stamps are written only after it succeeded, so a process killed
    during it generates again.  The names generated."""
    from ..store import gradebook  # nbgrader: imported only when needed (~1.5 s)

    keys = {n: hashlib.sha256(grading.sources[n].read_bytes() + db_url.encode()).hexdigest() for n in names}
    todo = [n for n in names if stamps.get(n) != keys[n]]
    if not todo:
        return []
    log(f"nbgrader generate_assignment：{', '.join(todo)}")
    try:
        gradebook.generate(grading.solutions, todo, course, db_url)
    except gradebook.GenerationError as exc:
        raise error(str(exc)) from None
    except Exception as exc:  # noqa: BLE001 - nbgrader's own errors (e.g. a database it cannot use)
        raise error(f"nbgrader generate_assignment 失败（{type(exc).__name__}: {str(exc)[:500]}）；"
                    "问题解决后重新运行同一命令即可") from None
    stamps.put({n: keys[n] for n in todo})
    return todo
