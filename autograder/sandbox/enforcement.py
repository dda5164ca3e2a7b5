"""Which limits hold for the sandboxes of this grader, and how: said at start, recorded in run.json.

:func:`prepare` (called once by ``autograder grade`` and ``autograder serve`` before any worker starts)
applies ``--cgroup-parent`` and ``--sandbox-user``, then makes one real sandbox cgroup to see what the
machine gives:

* CPU time: ``"cgroup"`` (CPU time of every process of a sandbox, accounted by the cgroup: a busy
  machine does not change a grade) or ``"wall clock"`` (the fallback: grades then depend on load);
* memory: ``"per sandbox"`` (a cgroup memory limit for all its processes together) or ``"per process"``
  (only the address-space rlimit of each process);
* processes: ``"per sandbox"`` (a pids cgroup) or ``"per user"`` (``RLIMIT_NPROC`` of the host account).
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field

from ..model import Limits
from . import account as accounts
from . import delegation
from .cgroup import SandboxCgroups


class SetupError(RuntimeError):
    """The requested cgroup parent or sandbox account cannot be used (message in Chinese)."""


@dataclass(frozen=True)
class Enforcement:
    cpu_time: str
    memory: str
    processes: str
    cgroup_parent: dict[str, str] = field(default_factory=dict)
    grader_user: str = ""
    sandbox_user: str = ""
    sandbox_uid: int = -1

    def weak(self) -> list[str]:
        """What is not per sandbox (Chinese names), empty when every limit holds per sandbox."""
        return ([] if self.cpu_time == "cgroup" else ["CPU 时间不按 cgroup 计（退回墙钟）"]) + \
            ([] if self.memory == "per sandbox" else ["内存上限不是每个沙箱的（只有每个进程的地址空间上限）"]) + \
            ([] if self.processes == "per sandbox" else ["进程数上限不是每个沙箱的（只有每个用户的 RLIMIT_NPROC）"])

    def refusal(self) -> str:
        """Why a service with these limits does not start, and what to do (Chinese)."""
        return ("拒绝启动：" + "；".join(self.weak()) + "。这样一名学生的程序能改变其他学生的成绩。"
                "请先以 root 运行 autograder sandbox setup --user 评分用户（见 docs/instructors/howto/deploy.md），或用 --cgroup-parent 指定"
                "委派给本用户的 cgroup；确需如此请加 --allow-weak-limits（成绩此时取决于机器负载）")

    def describe(self, limits: Limits | None = None) -> str:
        """One line for the log (Chinese, with the English key words also recorded in run.json)."""
        limits = limits or Limits()
        cpu = ("cgroup（每个沙箱全部进程的 CPU 时间，机器繁忙不影响成绩）" if self.cpu_time == "cgroup"
               else "wall clock 墙钟（没有 cgroup CPU 记账：机器繁忙时成绩可能改变）")
        mem = (f"per sandbox 每个沙箱合计 {limits.sandbox_memory_bytes >> 20} MiB（cgroup）" if self.memory == "per sandbox"
               else f"per process 只限每个进程 {limits.memory_bytes >> 20} MiB 地址空间")
        procs = (f"per sandbox 每个沙箱 {limits.processes} 个（cgroup）" if self.processes == "per sandbox"
                 else "per user 只按主机用户限制（RLIMIT_NPROC）")
        where = "、".join(sorted({str(p) for p in self.cgroup_parent.values()})) or "无"
        return (f"沙箱限制：CPU 时间 = {cpu}；内存 = {mem}；进程数 = {procs}；"
                f"学生进程的主机用户 = {self.sandbox_user}（uid {self.sandbox_uid}）；cgroup 位置 = {where}")

    def to_json(self) -> dict:
        return asdict(self)


_CURRENT: Enforcement | None = None


def prepare(cgroup_parent: str | None = None, sandbox_user: str | None = None) -> Enforcement:
    """Apply the options, find out which limits hold here, remember it (:func:`current`) and return it."""
    global _CURRENT
    try:
        account = accounts.sandbox_account(sandbox_user)
        delegation.prepare(cgroup_parent)
    except (accounts.AccountError, delegation.DelegationError) as exc:
        raise SetupError(str(exc)) from None
    probe = SandboxCgroups(processes=8, cpus=1.0, memory_bytes=256 << 20, parent=cgroup_parent)
    try:
        cpu = probe.cpu_seconds() is not None
        mem_path = probe.paths.get("unified") or probe.paths.get("memory")
        memory = mem_path is not None and any((mem_path / f).exists() for f in ("memory.max", "memory.limit_in_bytes"))
        processes = probe.limits_processes()
        parents = {k: str(v.parent) for k, v in probe.paths.items()}
    finally:
        probe.remove()
    me = delegation.user_name()
    _CURRENT = Enforcement("cgroup" if cpu else "wall clock", "per sandbox" if memory else "per process",
                           "per sandbox" if processes else "per user", parents, me,
                           account.name if account else me, account.uid if account else os.geteuid())
    return _CURRENT


def current() -> dict | None:
    """What :func:`prepare` found in this process (for run.json), or None if it was not called."""
    return None if _CURRENT is None else _CURRENT.to_json()
