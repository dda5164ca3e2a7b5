"""Isolation only: run a student's notebook cells and calls inside a bubblewrap sandbox.

* :mod:`.command` - the bubblewrap command line, the fixed environment, rlimits;
* :mod:`.cgroup` - the sandbox's cgroups (pids, CPU, memory) and the host's view of its process tree;
* :mod:`.delegation` - where those cgroups go: the hierarchy's root, or a subtree delegated to an unprivileged
  grader (``autograder sandbox setup``, systemd ``Delegate=yes``, ``--cgroup-parent``);
* :mod:`.account` - the host account a root grader starts its sandboxes as (never root);
* :mod:`.enforcement` - which limits hold here and how (printed at start, recorded in run.json);
* :mod:`.session` - :class:`Session`, one submission's cells and calls, run by run;
* :mod:`.runs` - where a session's runs take place: forks of a zygote sandbox (or plain processes, ``--no-sandbox``);
* :mod:`.zygote` - one sandbox seen from the grader: start it, fork a run, end the run, destroy it;
* :mod:`.channel` - the protocol pipe, read with bounds;
* :mod:`.warm` - the idle zygote sandboxes a process keeps between submissions (none when the settings say
  cold, :attr:`~autograder.model.SandboxSettings.warm`);
* :mod:`.selftest` - :func:`self_test`, which says why this machine cannot isolate (or None);
* ``payload/`` - everything that runs INSIDE the sandbox (runner, zygote, isolation, seccomp filter,
  wire format), bind-mounted whole and read-only; it imports only the standard library and NumPy.

This layer knows nothing of assignments, grades or gradebooks.
"""

from .selftest import self_test
from .session import SandboxBroken, Session

__all__ = ["Session", "SandboxBroken", "self_test"]
