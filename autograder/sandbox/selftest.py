"""Does isolation work on this machine?  A real sandboxed call answers."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from ..model import Limits, SandboxSettings
from .session import SandboxBroken, Session


def _sysctl(name: str) -> str | None:
    try:
        return Path("/proc/sys", *name.split(".")).read_text().strip()
    except OSError:
        return None


def userns_hint() -> str:
    """Why this host refuses user namespaces to an ordinary user, in plain words (empty when no known cause)."""
    if _sysctl("kernel.apparmor_restrict_unprivileged_userns") == "1":
        return ("。原因：这台机器（Ubuntu 23.10 及以后）的 AppArmor 不让普通用户的程序建立用户命名空间，"
                "而沙箱 bubblewrap 需要它。解决：以 root 写入 /etc/apparmor.d/bwrap（内容见 docs/instructors/howto/deploy.md 的 Ubuntu 一节），"
                "再运行 systemctl reload apparmor")
    if _sysctl("kernel.unprivileged_userns_clone") == "0":
        return ("。原因：内核设置 kernel.unprivileged_userns_clone=0 禁止普通用户建立用户命名空间；"
                "以 root 运行 sysctl -w kernel.unprivileged_userns_clone=1")
    if _sysctl("user.max_user_namespaces") == "0":
        return "。原因：内核设置 user.max_user_namespaces=0 禁止建立用户命名空间；以 root 把它设为 10000 以上"
    return ""


def self_test(limits: Limits | None = None, settings: SandboxSettings | None = None) -> str | None:
    """Return None if the sandbox works here, else a reason (Chinese).

    Checks bubblewrap itself, then runs a real sandboxed call (zygote, isolated child, seccomp), so
    that a machine where e.g. nested user namespaces are forbidden is refused before grading starts.
    ``limits`` and ``settings``: those the caller grades with, so that the zygote the test leaves warm
    (:mod:`.warm`) is the one its next session takes (default :class:`Limits`, this machine's defaults).
    """
    exe = shutil.which("bwrap")
    if exe is None:
        return "未找到 bwrap（Debian/Ubuntu：apt-get install bubblewrap）"
    try:
        r = subprocess.run([exe, "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/", "true"],
                           capture_output=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap 无法运行：{exc}"
    if r.returncode != 0:
        return "bwrap 无法创建命名空间：" + r.stderr.decode(errors="replace").strip()[:300] + userns_hint()
    session = Session([(0, "def _sandbox_selftest():\n    return 42\n")], None, sandbox=settings or True, limits=limits)
    try:
        out = session.call("_sandbox_selftest", [])
    except SandboxBroken as exc:
        return f"沙箱无法隔离学生进程（{exc}）；内核需允许在沙箱中再建用户命名空间与挂载命名空间" + userns_hint()
    finally:
        session.close()
    if not out.ok or out.value != 42:
        return f"沙箱自检失败（{out.failure or out.exc}）"
    return None
