"""Does isolation work on this machine?  A real sandboxed call answers."""

from __future__ import annotations

import shutil
import subprocess

from .session import SandboxBroken, Session


def self_test() -> str | None:
    """Return None if the sandbox works here, else a reason (Chinese).

    Checks bubblewrap itself, then runs a real sandboxed call (zygote, isolated child, seccomp), so
    that a machine where e.g. nested user namespaces are forbidden is refused before grading starts.
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
        return "bwrap 无法创建命名空间：" + r.stderr.decode(errors="replace").strip()[:300]
    session = Session([(0, "def _sandbox_selftest():\n    return 42\n")], None, sandbox=True)
    try:
        out = session.call("_sandbox_selftest", [])
    except SandboxBroken as exc:
        return f"沙箱无法隔离学生进程（{exc}）；内核需允许在沙箱中再建用户命名空间与挂载命名空间"
    finally:
        session.close()
    if not out.ok or out.value != 42:
        return f"沙箱自检失败（{out.failure or out.exc}）"
    return None
