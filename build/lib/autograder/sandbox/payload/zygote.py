"""Runs INSIDE the sandbox: the zygote, which runs no student code and forks an isolated child per run.

Part of the sandbox payload (standard library only).  See :func:`serve`.
"""

import os

import isolation


def serve(first, send, recv, read):
    """Serve ``fork`` requests; returns only in a forked, isolated child.

    The zygote itself never reads anything of a submission: after ``fork``, the CHILD answers
    ``forked`` (the grader then moves it into the run's own cgroups) and reads the run's
    ``{"op": "run", "notebook", "size", "scratch_bytes", "keep"}`` line and the notebook's ``size``
    bytes; so a later child, which inherits the zygote's memory, finds nothing of an earlier one.
    The zygote only waits for its child (whose exit status is its own: 0, or SIGKILL from the grader)
    and answers ``child_exit``; every other process of the run lives in the run's PID namespace and
    dies with its init.  ``first`` (the ``zygote`` line) carries nothing of a submission either.
    """
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    libc.prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0: a child cannot ptrace or read/write the zygote's memory
    # what the zygote loaded is never collected in a child: its garbage collector then walks (and writes, so
    # copies) none of those objects' pages (each run is a fork: copy on write)
    import gc

    gc.collect()
    gc.freeze()
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
                send({"op": "forked"})
                run = recv()
                if run.get("op") != "run":
                    raise ValueError("expected the run's line")
                size = int(run.get("size") or 0)
                nb_bytes = read(size) if size > 0 else b""
                keep = [str(p) for p in run.get("keep") or []]
                notebook = os.path.basename(str(run.get("notebook") or ""))
                isolation.isolate(libc, ctypes, notebook, nb_bytes, int(run.get("scratch_bytes") or 32 << 20), keep)
            except BaseException as exc:  # noqa: BLE001 - never run student code half-isolated
                try:  # say why: the grader must stop rather than grade everything 0 (e.g. no nested user namespaces)
                    send({"op": "isolate_error", "why": f"{type(exc).__name__}: {exc}"[:300]})
                finally:
                    os._exit(70)
            return
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass
        send({"op": "child_exit"})
