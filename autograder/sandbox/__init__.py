"""Isolation only: run a student's notebook cells and calls inside a bubblewrap sandbox.

* :mod:`.command` - the bubblewrap command line, the fixed environment, rlimits;
* :mod:`.cgroup` - the pids cgroup and the host's view of the sandbox's process tree;
* :mod:`.session` - :class:`Session`, the trusted client that starts the sandbox and talks to it;
* :mod:`.selftest` - :func:`self_test`, which says why this machine cannot isolate (or None);
* ``payload/`` - everything that runs INSIDE the sandbox (runner, zygote, isolation, seccomp filter,
  wire format), bind-mounted whole and read-only; it imports only the standard library and NumPy.

This layer knows nothing of assignments, grades or gradebooks.
"""

from .selftest import self_test
from .session import SandboxBroken, Session

__all__ = ["Session", "SandboxBroken", "self_test"]
