"""The book's kernels forked from one process that has already imported the libraries the pages use.

Every page's notebook runs in a kernel of its own.  Started the usual way (``python -m ipykernel_launcher``),
each kernel spends about 4-5 s of CPU importing IPython, NumPy, SciPy, pandas, scikit-learn, matplotlib and
myst-nb's ``glue``
before the page's first cell does anything.  Measured (27 pages, machine idle, bytecode compiled by
``make setup``): the cold build's CPU 121 s with spawned kernels, 67 s with forked ones.
A :class:`KernelForks` server imports them once (:data:`PRELOAD`), and each kernel is a fork of it
(:class:`ForkKernelManager`): a new process, in its own session, in the page's folder, with the environment
jupyter_client gives a kernel, running ``ipykernel_launcher`` exactly as ``python -m`` would; only the
modules are already in memory.

What a page computes is unchanged: no cell has run in the server, no random generator of the libraries has
been drawn from (Python's ``random`` is re-seeded by every fork; NumPy's legacy global generator is never
seeded by the pages, which use ``default_rng(seed)``), matplotlib is imported with the backend ipykernel
selects (``MPLBACKEND``, as ipykernel sets it) and with no ``matplotlibrc`` in the server's empty folder,
the inline backend (which hooks into the running IPython shell when it is imported) and ipykernel's
application (whose class reads ``JPY_PARENT_PID`` when it is defined) are imported only in the kernel.  ``tests/book/test_parallel_execution.py``
compares a forked kernel's outputs with a spawned one's.

Only a kernel started with this interpreter's ``-m ipykernel_launcher`` is forked; any other kernel
command is launched as jupyter_client does.  The server ends when the build closes its pipe (or exits);
a kernel ends when the server is gone (ipykernel's parent poller watches ``JPY_PARENT_PID``).
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
import uuid
from pathlib import Path
from typing import Any

#: The modules the server imports before it forks kernels (the pages' common imports).
PRELOAD = ("numpy", "scipy.stats", "scipy.optimize", "scipy.special", "pandas", "sklearn.base", "sklearn.metrics",
           "sklearn.model_selection", "sklearn.linear_model", "sklearn.neighbors", "sklearn.pipeline",
           "sklearn.preprocessing", "sklearn.datasets", "sklearn.discriminant_analysis", "sklearn.ensemble",
           "myst_nb.ext.glue", "matplotlib", "matplotlib.pyplot", "ipykernel.ipkernel", "ipykernel.zmqshell",
           "ipykernel.iostream", "ipykernel.heartbeat", "ipykernel.parentpoller")
# Not ipykernel.kernelapp: its class reads JPY_PARENT_PID when it is defined, and each kernel has its own.
#: ipykernel's own default backend (``IPKernelApp.init_gui_pylab``), set before matplotlib is imported.
INLINE_BACKEND = "module://matplotlib_inline.backend_inline"


class ForkServerError(RuntimeError):
    """The fork server could not start a kernel (it died, or answered with an error)."""


# --- The server (a separate process: ``python -c "...; kernel_forks.serve(FD)"``) ----------------------------

def serve(reply_fd: int) -> None:
    """Read spawn requests (one JSON line each: ``argv``, ``env``, ``cwd``) on stdin, fork a kernel for each
    and answer its pid (or ``error: ...``) on ``reply_fd``; return at the end of stdin."""
    import importlib

    os.environ.setdefault("MPLBACKEND", INLINE_BACKEND)  # what ipykernel sets before the kernel imports matplotlib
    for name in PRELOAD:
        importlib.import_module(name)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the kernels are reaped by the system
    replies = os.fdopen(reply_fd, "w", buffering=1)
    replies.write("ready\n")
    for line in sys.stdin:
        request = json.loads(line)
        try:
            pid = os.fork()
        except OSError as err:
            replies.write(f"error: {err}\n")
            continue
        if pid == 0:
            _become_kernel(request["argv"], request["env"], request["cwd"], reply_fd)
        replies.write(f"{pid}\n")


def _become_kernel(argv: list[str], env: dict[str, str], cwd: str | None, reply_fd: int) -> None:
    """In the forked child: become ``python -m ipykernel_launcher ARGS`` started by jupyter_client; never returns."""
    import runpy

    code = 1
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        os.setsid()  # as launch_kernel's start_new_session: an interrupt goes to the kernel's group only
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        os.close(reply_fd)
        sys.stdin = open(0, closefd=False)  # noqa: SIM115 - the process's own stdin, for its whole life
        if cwd is not None:
            os.chdir(cwd)
        os.environ.clear()
        os.environ.update(env)
        os.environ.setdefault("MPLBACKEND", INLINE_BACKEND)
        os.environ["JPY_PARENT_PID"] = str(os.getppid())  # the server: the kernel ends when it is gone
        sys.argv = [argv[0], *argv[3:]]
        sys.path[0] = ""  # as for python -m: ipykernel_launcher removes it, IPython adds the folder back
        runpy.run_module("ipykernel_launcher", run_name="__main__", alter_sys=True)
        code = 0
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else 1
    except BaseException:  # noqa: BLE001 - report, then leave the child without running the server's code
        import traceback

        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


# --- The build's side ---------------------------------------------------------------------------------------

class KernelForks:
    """A running fork server; :meth:`spawn` forks one kernel (thread-safe); :meth:`close` ends the server.

    ``with KernelForks() as forks: ...`` starts it in an empty temporary folder and ends it.
    """

    def __init__(self, python: str = sys.executable) -> None:
        self.python = python
        self._lock = threading.Lock()
        self._folder = tempfile.TemporaryDirectory(prefix="kernel-forks-")
        read_fd, write_fd = os.pipe()
        here = str(Path(__file__).resolve().parent)
        code = (f"import sys; sys.path.insert(1, {here!r}); import kernel_forks; sys.path.remove({here!r}); "
                f"kernel_forks.serve({write_fd})")
        self._proc = subprocess.Popen([python, "-c", code], stdin=subprocess.PIPE, cwd=self._folder.name,
                                      pass_fds=(write_fd,), start_new_session=True, text=True)
        os.close(write_fd)
        self._replies = os.fdopen(read_fd, "r")
        if self._replies.readline().strip() != "ready":
            self.close()
            raise ForkServerError("the kernel fork server did not start (its error is above)")

    def handles(self, argv: list[str]) -> bool:
        """Whether ``argv`` is a kernel this server can fork (this interpreter's ``-m ipykernel_launcher``)."""
        return (len(argv) >= 3 and argv[1:3] == ["-m", "ipykernel_launcher"]
                and os.path.realpath(argv[0]) == os.path.realpath(self.python))

    def spawn(self, argv: list[str], env: dict[str, str], cwd: str | None) -> int:
        """Fork a kernel running ``argv`` (see :meth:`handles`) with ``env`` in ``cwd``; its pid."""
        request = json.dumps({"argv": list(argv), "env": dict(env), "cwd": None if cwd is None else str(cwd)})
        with self._lock:
            if self._proc.poll() is not None:
                raise ForkServerError(f"the kernel fork server has ended (exit status {self._proc.returncode})")
            self._proc.stdin.write(request + "\n")
            self._proc.stdin.flush()
            answer = self._replies.readline().strip()
        if not answer.isdigit():
            raise ForkServerError(f"the kernel fork server could not start a kernel: {answer or 'no answer'}")
        return int(answer)

    def close(self) -> None:
        """End the server (the kernels it forked run on until their clients shut them down)."""
        if self._proc.stdin and not self._proc.stdin.closed:
            self._proc.stdin.close()
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        self._replies.close()
        self._folder.cleanup()

    def __enter__(self) -> KernelForks:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class ForkedKernel:
    """The part of :class:`subprocess.Popen` jupyter_client uses, for a kernel that is not our child (a pidfd)."""

    stdin = stdout = stderr = None

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None
        self._pidfd = os.pidfd_open(pid)
        self._signal: int | None = None

    def _ended(self, timeout: float | None) -> bool:
        if self.returncode is None and select.select([self._pidfd], [], [], timeout)[0]:
            # its exit status went to the server (which lets the system reap it): known only if we killed it
            self.returncode = -self._signal if self._signal else 0
            os.close(self._pidfd)
        return self.returncode is not None

    def poll(self) -> int | None:
        self._ended(0)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int | None:
        if not self._ended(timeout):
            raise subprocess.TimeoutExpired(["kernel"], timeout or 0)
        return self.returncode

    def send_signal(self, signum: int) -> None:
        if self.returncode is None:
            signal.pidfd_send_signal(self._pidfd, signum)
            if signum in (signal.SIGKILL, signal.SIGTERM):
                self._signal = signum

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


def kernel_manager_class(forks: KernelForks) -> type:
    """An ``AsyncKernelManager`` whose kernels ``forks`` starts (for nbclient's ``kernel_manager_class``)."""
    from jupyter_client.manager import AsyncKernelManager
    from jupyter_client.provisioning import LocalProvisioner
    from jupyter_core.paths import jupyter_runtime_dir
    from jupyter_core.utils import ensure_dir_exists

    class ForkProvisioner(LocalProvisioner):
        async def launch_kernel(self, cmd: list[str], **kwargs: Any):
            if not forks.handles(cmd):
                return await super().launch_kernel(cmd, **kwargs)
            env = dict(kwargs.get("env") or os.environ)
            cwd = kwargs.get("cwd")
            self.process = ForkedKernel(forks.spawn(cmd, env, cwd))
            self.pid = self.pgid = self.process.pid  # the kernel leads its own session and group
            self.cwd = cwd or Path.cwd()
            return self.connection_info

    class ForkKernelManager(AsyncKernelManager):
        async def _async_pre_start_kernel(self, **kw: Any):
            self.kernel_id = self.kernel_id or kw.pop("kernel_id", str(uuid.uuid4()))
            # Unix sockets instead of TCP ports: no other user of the machine can reach the kernel (over TCP ipykernel
            # warns, once per page, that anyone could), and no port can be taken between choosing and binding it.
            # An absolute path: the kernel runs in the page's empty folder, the client elsewhere.
            if self.transport == "tcp" and not self.connection_file:
                ensure_dir_exists(jupyter_runtime_dir(), 0o700)  # the sockets in a folder only this user may enter
                self.transport = "ipc"
                self.ip = str(Path(jupyter_runtime_dir()) / f"kernel-{self.kernel_id}")
            if self.provisioner is None:
                self.provisioner = ForkProvisioner(kernel_id=self.kernel_id, kernel_spec=self.kernel_spec, parent=self)
            return await super()._async_pre_start_kernel(**kw)

    return ForkKernelManager
