"""Runs INSIDE the sandbox: the zygote, which runs no student code and forks an isolated child per run.

Part of the sandbox payload (standard library only).  See :func:`serve`.
"""

import os
import signal
import time

import isolation


def _others_alive(me):
    """Processes of the sandbox other than pid 1 (bubblewrap's init) and the zygote, zombies excluded."""
    left = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) in (1, me):
            continue
        try:
            with open(f"/proc/{name}/stat") as fh:
                state = fh.read().rpartition(")")[2].split()[0]
        except (OSError, IndexError):
            continue
        if state not in ("Z", "X"):
            left.append(int(name))
    return left


def _reap_all(pid):
    """Wait for the child, then kill every other process of the sandbox (the child's leftovers)."""
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass
    me = os.getpid()
    for _ in range(10_000):
        try:
            os.kill(-1, signal.SIGKILL)  # everything we may signal except ourselves and pid 1
        except ProcessLookupError:
            pass
        try:
            while os.waitpid(-1, os.WNOHANG)[0] > 0:
                pass
        except ChildProcessError:
            pass
        if not _others_alive(me):
            return True
        time.sleep(0.001)
    return False


def serve(first, send, recv):
    """Serve ``fork`` requests; returns only in a forked, isolated child."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    libc.prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0: a child cannot ptrace or read/write the zygote's memory
    notebook = os.path.basename(str(first.get("notebook") or ""))
    nb_bytes = b""
    if notebook:
        with open(notebook, "rb") as fh:
            nb_bytes = fh.read()
    keep = [str(p) for p in first.get("keep") or []]
    send({"op": "zygote_ready"})
    while True:
        msg = recv()
        if msg.get("op") == "sync":  # the trusted side drops every line before this answer
            send({"op": "synced", "nonce": str(msg.get("nonce"))})
            continue
        if msg.get("op") != "fork":
            continue
        pid = os.fork()
        if pid == 0:
            try:
                # dumpable again (inherited from the zygote): else /proc/self belongs to root and an unprivileged
                # grader's child may not write its own uid_map; isolate() makes it non-dumpable once more
                if libc.prctl(4, 1, 0, 0, 0) != 0:
                    raise OSError(ctypes.get_errno(), "PR_SET_DUMPABLE")
                isolation.isolate(libc, ctypes, notebook, nb_bytes, first.get("scratch_bytes", 32 << 20), keep)
            except BaseException as exc:  # noqa: BLE001 - never run student code half-isolated
                try:  # say why: the grader must stop rather than grade everything 0 (e.g. no nested user namespaces)
                    send({"op": "isolate_error", "why": f"{type(exc).__name__}: {exc}"[:300]})
                finally:
                    os._exit(70)
            return
        if not _reap_all(pid):
            os._exit(1)
        send({"op": "child_exit"})
