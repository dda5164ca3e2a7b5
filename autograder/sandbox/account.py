"""Which host account runs the sandboxes: never root.

An unprivileged grader starts its sandboxes as itself (their processes are its uid on the host, 65534
inside).  A grader running as root starts each sandbox as a configured unprivileged account
(``--sandbox-user``, default ``nobody``) and keeps the cgroups for itself: the sandbox's first process
joins its cgroups and sets its limits as root, then drops to that account before ``exec bwrap``.
"""

from __future__ import annotations

import os
import pwd
from dataclasses import dataclass

DEFAULT_USER = "nobody"


class AccountError(RuntimeError):
    """The configured sandbox account cannot be used (message in Chinese)."""


@dataclass(frozen=True)
class Account:
    name: str
    uid: int
    gid: int


def sandbox_account(name: str | None = None) -> Account | None:
    """The account sandboxes start as when this process is root (``name``, default :data:`DEFAULT_USER`; None: not
    root, sandboxes run as this user)."""
    if os.geteuid() != 0:
        return None
    name = name or DEFAULT_USER
    try:
        pw = pwd.getpwnam(name)
    except KeyError:
        raise AccountError(f"没有用户 {name}（--sandbox-user）：评分程序以 root 运行时，沙箱以这个无特权用户启动") from None
    if pw.pw_uid == 0 or pw.pw_gid == 0:
        raise AccountError(f"--sandbox-user {name} 是 root：学生进程不得以主机 root 运行")
    return Account(name, pw.pw_uid, pw.pw_gid)
