"""Where the sandboxes' cgroups go: the hierarchy's root (grader is root) or a subtree delegated to the grader.

* cgroup v2 (one unified hierarchy): the parent is ``--cgroup-parent``, else the hierarchy's root when the
  grader is root, else the grader's own cgroup (``/proc/self/cgroup``), which systemd hands to the
  service's user with ``Delegate=yes``.  A delegated cgroup may only pass controllers to children when
  it holds no process itself, so :func:`prepare` first moves the grader's processes into a leaf
  ``grader`` and then enables ``pids``, ``cpu`` and ``memory`` for the subtree.
* cgroup v1 (one hierarchy per controller, as on older hosts): the parent is ``--cgroup-parent``, else
  the root (grader is root), else ``/autograder@USER`` in each of the pids, cpu, cpuacct and memory
  hierarchies, made once by root with ``autograder sandbox setup --user USER`` (:func:`setup`).

A cgroup path (``--cgroup-parent``) is written as in ``/proc/self/cgroup``, e.g. ``/autograder@course``;
it names the same place below every hierarchy's mount point.  The choice travels to the grading
workers in every job (:class:`autograder.model.SandboxSettings`).
"""

from __future__ import annotations

import os
import pwd
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")
V1_CONTROLLERS = ("pids", "cpu", "cpuacct", "memory")
V2_CONTROLLERS = ("pids", "cpu", "memory")
LEAF = "grader"  # v2: the leaf the grader's own processes move into


class DelegationError(RuntimeError):
    """The cgroup parent cannot be used (message in Chinese, naming the path and what to do)."""


def is_v2() -> bool:
    """True on a host with the unified hierarchy mounted at :data:`CGROUP_ROOT`."""
    return (CGROUP_ROOT / "cgroup.controllers").exists()


def delegated_name(user: str) -> str:
    """The v1 subtree :func:`setup` makes for ``user`` (not swept as a stale sandbox cgroup)."""
    return f"autograder@{user}"


def user_name(uid: int | None = None) -> str:
    """This process's (or ``uid``'s) user name; the number when the user has no passwd entry (e.g. in a container)."""
    uid = os.geteuid() if uid is None else uid
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def own_cgroup(controller: str | None = None) -> str:
    """This process's cgroup path in the v2 hierarchy (``controller`` None) or in a v1 controller's."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return "/"
    for line in lines:
        _, names, path = line.split(":", 2)
        if (controller is None and names == "") or (controller is not None and controller in names.split(",")):
            return path
    return "/"


def _under(base: Path, rel: str) -> Path:
    rel = rel.strip()
    if not rel.startswith("/") or any(part in ("..", ".") for part in rel.split("/")):
        raise DelegationError(f"--cgroup-parent {rel!r} 应是 /proc/self/cgroup 中那样的路径，以 / 开头，不含 . 或 ..")
    return base / rel.lstrip("/") if rel.strip("/") else base


def parents(explicit: str | None = None) -> dict[str, Path]:
    """Controller (``"unified"`` on v2, else ``"pids"``, ``"cpu"``, ``"cpuacct"``, ``"memory"``) -> parent directory.

    Only existing directories this process may create cgroups in are returned; an empty result means
    no cgroup limits (the sandbox falls back to per-process limits and wall clock).
    """
    chosen = explicit or None
    root = os.geteuid() == 0
    if is_v2():
        path = _under(CGROUP_ROOT, chosen or ("/" if root else own_cgroup()))
        if not root and path.name == LEAF and (path / "cgroup.procs").exists() and chosen is None:
            path = path.parent  # already moved into the leaf by prepare()
        return {"unified": path} if _usable(path) else {}
    rel = chosen or ("/" if root else "/" + delegated_name(user_name()))
    out = {}
    for controller in V1_CONTROLLERS:
        base = CGROUP_ROOT / controller
        if (base / "cgroup.procs").exists():
            path = _under(base, rel)
            if _usable(path):
                out[controller] = path
    return out


def _usable(path: Path) -> bool:
    return path.is_dir() and os.access(path, os.W_OK | os.X_OK) and os.access(path / "cgroup.procs", os.W_OK)


def prepare(explicit: str | None = None) -> dict[str, Path]:
    """In the grader, before any worker starts: check the parent and, on v2, make it able to delegate.

    Raises :class:`DelegationError` when an explicit parent cannot be used.
    """
    found = parents(explicit)
    if explicit and not found:
        where = _under(CGROUP_ROOT, explicit) if is_v2() else _under(CGROUP_ROOT / "pids", explicit)
        raise DelegationError(f"无法在 --cgroup-parent {explicit}（{where}）下建立 cgroup：目录不存在或当前用户"
                              f"（{user_name()}）不可写；请以 root 运行 autograder sandbox setup --user 用户名")
    if "unified" in found and (os.geteuid() != 0 or explicit):
        _enable_v2(found["unified"])
    return found


def _enable_v2(parent: Path) -> None:
    """Move this cgroup's processes into a leaf (the "no internal processes" rule), enable the controllers below."""
    if parent == CGROUP_ROOT:
        return
    available = _read(parent / "cgroup.controllers").split()
    wanted = [c for c in V2_CONTROLLERS if c in available]
    enabled = _read(parent / "cgroup.subtree_control").split()
    if all(c in enabled for c in wanted):
        return
    procs = [p for p in _read(parent / "cgroup.procs").split() if p.isdigit()]
    if procs:
        leaf = parent / LEAF
        try:
            leaf.mkdir(exist_ok=True)
            for pid in procs:
                try:
                    (leaf / "cgroup.procs").write_text(pid)
                except ProcessLookupError:
                    pass
        except OSError:
            return
    try:
        (parent / "cgroup.subtree_control").write_text(" ".join("+" + c for c in wanted))
    except OSError:
        pass


def setup(user: str) -> list[str]:
    """As root, once per boot: hand a cgroup subtree to ``user`` for the sandboxes it starts (v1), or say that
    systemd's ``Delegate=yes`` does it (v2).  Returns what was done, one line each (Chinese).

    v1: ``/autograder@USER`` in the pids, cpu, cpuacct and memory hierarchies, the directory and its
    ``cgroup.procs`` and ``tasks`` owned by the user: it may then make a child cgroup per sandbox, set
    its limits and move its own processes in.  The directories vanish at reboot (cgroupfs lives in
    memory): the service unit runs this command before every start (``ExecStartPre=+``).
    """
    if os.geteuid() != 0:
        raise DelegationError("autograder sandbox setup 需要以 root 运行（例如 sudo）")
    try:
        account = pwd.getpwnam(user)
    except KeyError:
        raise DelegationError(f"没有用户 {user}") from None
    if is_v2():
        return [f"cgroup v2：无需准备。systemd 单元中的 Delegate=yes 把服务的 cgroup 交给 {user}（deploy/systemd/course-submit.service）；"
                f"在 shell 中评分时用 systemd-run --uid={user} --gid={account.pw_gid} -p Delegate=yes --wait --pty "
                "--working-directory=$PWD .venv/bin/autograder grade ...，或用 --cgroup-parent 指定已委派给它的 cgroup"]
    name = delegated_name(user)
    bases = [CGROUP_ROOT / c for c in V1_CONTROLLERS if (CGROUP_ROOT / c / "cgroup.procs").exists()]
    if not bases:
        raise DelegationError(f"{CGROUP_ROOT} 下没有可用的 cgroup 层级（pids、cpu、cpuacct、memory）")
    done, seen = [], set()
    for base in bases:
        real = base.resolve()
        if real in seen:  # cpu and cpuacct mounted together ("cpu,cpuacct")
            continue
        seen.add(real)
        path = base / name
        path.mkdir(exist_ok=True)
        for f in (path, path / "cgroup.procs", path / "tasks"):
            os.chown(f, account.pw_uid, account.pw_gid)
        done.append(f"{path}：交给 {user}")
    return done


def _read(p: Path) -> str:
    try:
        return p.read_text()
    except OSError:
        return ""
