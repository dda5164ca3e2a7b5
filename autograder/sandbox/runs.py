"""Where a session's runs of the student's code take place: each a fresh fork of a zygote sandbox, or (``--no-sandbox``,
debugging only) a plain process.  Both offer the same steps to :class:`~.session.Session`: ``start`` a run, talk to it
through ``channel``, read its ``cpu`` time, ``end`` it (or ``discard`` everything) and ``close``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from ..model import Limits, SandboxSettings
from . import warm, zygote
from .cgroup import SandboxCgroups, kill_process
from .channel import Channel
from .command import PAYLOAD_DIR, environment, preexec
from .zygote import Zygote


class ZygoteRuns:
    """Runs as forked, isolated children of one zygote sandbox, taken from the zygotes this process keeps warm
    (:mod:`.warm`) or started; a healthy zygote goes back there when the session closes."""

    def __init__(self, limits: Limits, settings: SandboxSettings) -> None:
        self.limits, self.settings = limits, settings
        self.zygote: Zygote | None = None
        self.run_cgroup: SandboxCgroups | None = None  # the cgroups of the current run
        self.in_run = False  # a run's child is there
        self.idle = False  # the zygote is alive and waits for "fork"
        self.zygotes_started = 0  # sandboxes used; more than one means a run ended its sandbox
        self._notebook: bytes | None = None

    @property
    def proc(self) -> subprocess.Popen | None:
        return self.zygote.proc if self.zygote is not None else None

    @property
    def channel(self) -> Channel | None:
        return self.zygote.channel if self.zygote is not None else None

    def cpu(self) -> float | None:
        return self.run_cgroup.cpu_seconds() if self.run_cgroup is not None else None

    def running(self) -> bool:
        return self.in_run and self.zygote is not None and self.zygote.alive()

    def start(self, notebook: Path | None, keep: list[str], deadline: float) -> bool:
        """A fresh run: a fork of this session's idle zygote, else of one kept warm, else of a new one."""
        self.in_run = False
        warm_taken = False
        if not (self.idle and self.zygote is not None and self.zygote.alive()):
            self.discard()
            self.zygote = warm.take(zygote.key(self.limits, self.settings))
            warm_taken = self.zygote is not None
            self.zygote = self.zygote or Zygote.start(self.limits, self.settings, deadline)
            if self.zygote is None:
                return False
            self.zygotes_started += 1
        self.idle = False
        if self._notebook is None:
            self._notebook = notebook.read_bytes() if notebook is not None else b""
        run = {"op": "run", "notebook": notebook.name if notebook is not None else "", "size": len(self._notebook),
               "scratch_bytes": self.limits.scratch_bytes, "keep": keep}
        self.run_cgroup = self.zygote.fork(self.limits, self.settings, run, self._notebook, deadline)
        if self.run_cgroup is None and warm_taken:
            # no student code ran: a warm zygote that could not fork (e.g. it died meanwhile) is replaced
            self.discard()
            self.zygote = Zygote.start(self.limits, self.settings, deadline)
            if self.zygote is not None:
                self.run_cgroup = self.zygote.fork(self.limits, self.settings, run, self._notebook, deadline)
        if self.run_cgroup is None:
            self.discard()
            return False
        self.in_run = True
        return True

    def end(self, *, force: bool) -> None:
        """End the current run (forced: killed at once); the zygote waits for the next one or is destroyed."""
        if self.run_cgroup is None and not self.in_run:
            if not self.idle:
                self.discard()
            return
        cgroup, self.run_cgroup, self.in_run = self.run_cgroup, None, False
        self.idle = self.zygote is not None and self.zygote.end_run(cgroup, force=force)
        if not self.idle:
            self.discard()

    def discard(self) -> None:
        """Destroy the sandbox (the zygote and every process of it) and the run's cgroups."""
        self.in_run = self.idle = False
        if self.run_cgroup is not None:
            self.run_cgroup.kill()
            self.run_cgroup.remove()
            self.run_cgroup = None
        if self.zygote is not None:
            self.zygote.destroy()
            self.zygote = None

    def close(self) -> None:
        """End the session: a healthy zygote goes back to :mod:`.warm` for the next session of this process (unless
        the settings say cold)."""
        if self.run_cgroup is not None or self.in_run:
            self.end(force=False)
        z, idle = self.zygote, self.idle
        self.zygote, self.idle = None, False
        if z is not None:
            warm.give(z) if idle and self.settings.warm else z.destroy()


class PlainRuns:
    """``--no-sandbox`` (debugging only): each run a plain process in the notebook's folder, with the rlimits only."""

    zygotes_started = 0
    run_cgroup = None
    zygote = None

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.proc: subprocess.Popen | None = None
        self.channel: Channel | None = None

    def cpu(self) -> float | None:
        return None

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self, notebook: Path | None, keep: list[str], deadline: float) -> bool:
        self.discard()
        self.proc = subprocess.Popen([sys.executable, "-I", str(PAYLOAD_DIR / "runner.py")], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=environment(),
                                     cwd=str(notebook.parent) if notebook else None, start_new_session=True,
                                     preexec_fn=preexec(self.limits, [], False), close_fds=True)
        self.channel = Channel(self.proc)
        return True

    def end(self, *, force: bool) -> None:
        self.discard()

    def discard(self) -> None:
        if self.proc is not None:
            kill_process(self.proc)
        self.proc = self.channel = None

    close = discard


def runs_for(limits: Limits, settings: SandboxSettings) -> ZygoteRuns | PlainRuns:
    """The runs of a session: in a zygote sandbox, or plain processes without one (``--no-sandbox``)."""
    return ZygoteRuns(limits, settings) if settings.enabled else PlainRuns(limits)
