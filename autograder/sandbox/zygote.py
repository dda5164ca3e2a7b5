"""One sandbox, seen from the grader: start it, fork a run in it, end the run, destroy it.

* :meth:`Zygote.start` - bubblewrap with the runner as a zygote (Python, NumPy and the wire module loaded, no
  student code, nothing of any submission: ``payload/zygote.py``), in cgroups of its own;
* :meth:`Zygote.fork` - a fresh child of the zygote, moved into the run's own cgroups (pids, CPU, memory,
  CPU-time accounting) before it receives the run's line and the notebook; the child isolates itself
  (``payload/isolation.py``) before any student code runs;
* the run talks over the zygote's pipe (:class:`.channel.Channel`);
* :meth:`Zygote.end_run` - the run is gone and the zygote waits for the next one, or the caller destroys it.

Nothing the sandbox writes is trusted: a zygote serves another run only once the grader has seen from the host
that the sandbox holds exactly its processes from before any student code ran, and has resynchronised the pipe
with a fresh random nonce.
"""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from ..model import Limits, SandboxSettings
from . import command
from .account import sandbox_account
from .cgroup import SandboxCgroups, kill_process, process_tree
from .channel import Channel
from .command import PAYLOAD_MOUNT, environment, preexec

# pids of a zygote's own cgroup: bubblewrap, its init, the zygote, a child not yet moved into its run's cgroups
ZYGOTE_PROCESSES = 6
# the zygote, the forking child and the run's init: processes the student does not own (RLIMIT_NPROC)
NOT_THE_STUDENTS = 3
END_WAIT, END_KILL = 5.0, 0.5  # seconds: a run's processes must be gone within END_WAIT; killed after END_KILL


def key(limits: Limits, settings: SandboxSettings) -> tuple:
    """What a zygote is started with: a warm one (:mod:`.warm`) serves a session only if it was started exactly so."""
    return (tuple(command.bwrap_command(limits)), str(sandbox_account(settings.user)), settings.cgroup_parent,
            limits.memory_bytes, limits.cpu_seconds, limits.file_bytes, limits.open_files, limits.processes,
            limits.cpus, limits.sandbox_memory_bytes)


@dataclass(eq=False)
class Zygote:
    """One started sandbox whose zygote waits for ``fork``.

    ``baseline`` is its process tree (pid, start time) seen from the host before any run: bubblewrap's init and
    the zygote.  A zygote dies with the thread that started it (bubblewrap's ``--die-with-parent`` follows the
    thread), so one whose thread has ended is not alive.
    """

    proc: subprocess.Popen
    channel: Channel
    cgroup: SandboxCgroups | None
    key: tuple
    baseline: set = field(default_factory=set)
    runs: int = 0
    rss0: int = 0
    thread: threading.Thread = field(default_factory=threading.current_thread)

    @classmethod
    def start(cls, limits: Limits, settings: SandboxSettings, deadline: float) -> Zygote | None:
        """Start a sandbox whose runner becomes the zygote; None if it did not say ``zygote_ready`` in time."""
        cg = SandboxCgroups(processes=ZYGOTE_PROCESSES, cpus=limits.cpus, memory_bytes=limits.sandbox_memory_bytes,
                            parent=settings.cgroup_parent)
        rlimits = dataclasses.replace(limits, processes=limits.processes + NOT_THE_STUDENTS)
        user = sandbox_account(settings.user)  # a root grader starts the sandbox as this unprivileged account
        cmd = command.bwrap_command(limits) + [sys.executable, "-I", f"{PAYLOAD_MOUNT}/runner.py"]
        cmd, stage = command.staged(cmd) if user is not None else (cmd, [])
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                env=environment(), start_new_session=True, cwd="/",
                                preexec_fn=preexec(rlimits, cg.procs_files(), cg.limits_processes(), user, stage),
                                close_fds=True)
        z = cls(proc, Channel(proc), cg, key(limits, settings))
        msg = z.channel.recv(min(time.monotonic() + limits.setup_timeout, deadline)) \
            if z.channel.send({"op": "zygote"}) else "crash"
        if not isinstance(msg, dict) or msg.get("op") != "zygote_ready":
            z.destroy()
            return None
        z.baseline = process_tree(proc.pid)  # no student code has run yet: init + zygote
        z.rss0 = z.rss()
        return z

    def fork(self, limits: Limits, settings: SandboxSettings, run: dict, notebook: bytes,
             deadline: float) -> SandboxCgroups | None:
        """A fresh child for one run, in new cgroups of its own (returned), given ``run`` (its line) and the notebook.

        The child answers ``forked`` before it does anything else; the grader moves it (seen from the host: the one
        new process below the sandbox) into the run's cgroups and only then sends it the run's line and the
        notebook.  Nothing of the student has run yet, so both answers can be trusted.  None if any step failed
        (the caller destroys the zygote).
        """
        cgroup = SandboxCgroups(processes=limits.processes + 2, cpus=limits.cpus,
                                memory_bytes=limits.sandbox_memory_bytes, own_cpu_hierarchy=False,
                                parent=settings.cgroup_parent)
        msg = self.channel.recv(min(time.monotonic() + limits.setup_timeout, deadline)) \
            if self.channel.send({"op": "fork"}) else "crash"
        new = process_tree(self.proc.pid) - self.baseline if isinstance(msg, dict) and msg.get("op") == "forked" else set()
        if len(new) == 1 and cgroup.adopt(next(iter(new))[0]) and self.channel.send(run) and self.channel.write(notebook):
            self.runs += 1
            return cgroup
        cgroup.kill()
        cgroup.remove()
        return None

    def end_run(self, cgroup: SandboxCgroups | None, *, force: bool) -> bool:
        """End the current run (``cgroup``: its cgroups); True when the zygote waits for the next one, False when the
        caller must destroy it.

        The zygote is kept only when (1) seen from outside, the sandbox's processes are again exactly those present
        before any student code ran (``end`` asks the child to exit, which ends its PID namespace; the run's cgroups
        are killed when it does not within :data:`END_KILL` seconds or when the end is ``force``\\d; without cgroups a
        forced end gives the zygote up), and (2) the zygote echoes a fresh random nonce: every line before the echo
        (e.g. messages forged by the dead child) is dropped, and half a line left on the pipe makes the echo
        unreadable.
        """
        ok = self.alive()
        cgroups = cgroup is not None and bool(cgroup.paths)
        asked = ok and not force and self.channel.send({"op": "end"})  # the child exits; its PID namespace with it
        if ok and not asked and cgroups:
            cgroup.kill()
        ok = ok and (asked or cgroups)
        deadline, kill_at = time.monotonic() + END_WAIT, time.monotonic() + END_KILL
        while ok and process_tree(self.proc.pid) != self.baseline:
            if cgroups and asked and time.monotonic() > kill_at:  # it did not end when asked: kill the run
                cgroup.kill()
                asked = False
            if time.monotonic() > deadline or not self.alive():
                ok = False
            time.sleep(0.001)
        if cgroup is not None:
            cgroup.remove()
        nonce = uuid.uuid4().hex
        ok = ok and self.channel.send({"op": "sync", "nonce": nonce})
        while ok:
            msg = self.channel.recv(deadline)
            if isinstance(msg, str):
                ok = False
            elif msg.get("op") == "synced" and msg.get("nonce") == nonce:
                break
        return ok and self.channel.restore_pipe_size()

    def alive(self) -> bool:
        return self.thread.is_alive() and self.proc.poll() is None

    def rss(self) -> int:
        """Resident memory (bytes) of the sandbox's processes, from the host's /proc."""
        total = 0
        for pid, _ in self.baseline:
            try:
                for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1]) << 10
            except (OSError, ValueError, IndexError):
                pass
        return total

    def destroy(self) -> None:
        """Kill every process of the sandbox and remove its cgroups."""
        kill_process(self.proc)
        if self.cgroup is not None:
            self.cgroup.kill()
            self.cgroup.remove()
            self.cgroup = None
