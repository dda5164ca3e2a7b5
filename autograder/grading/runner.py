"""Runs INSIDE the sandbox: executes a student's code cells, then serves calls as JSON lines.

Started as ``python -I runner.py``; it imports only the standard library, NumPy
and :mod:`wire` (mounted next to it).  Protocol (one JSON object per line):

* trusted -> runner, first line: ``{"op": "setup", "cells": [{"index", "source"}], "cell_timeout"}``;
  the runner answers ``cell_start``/``cell_done`` for each cell, then ``ready``.
* ``{"op": "call", "id", "fn", "args", "kwargs"}`` -> ``{"op": "result", "id", "ok", "value" | "exc"}``.
* ``{"op": "run_test", "id", "fn", "impls"}`` calls the student's test function with
  proxy functions; every proxy call is forwarded as ``impl_call`` and answered by
  ``impl_result`` from the trusted side, which runs the implementation under test.
* Assignment 5 (zygote mode): the first line is ``{"op": "zygote", "notebook", "scratch_bytes"}``.
  The runner answers ``zygote_ready`` BEFORE any student code has run, then for every
  ``{"op": "fork"}`` forks a child that gets new user, mount, IPC, network and UTS namespaces,
  a new session keyring, fresh tmpfs on /tmp, /dev/shm and /home/student (with a copy of the
  notebook) and no capabilities, and then behaves exactly like a fresh runner (``setup``, calls,
  ``{"op": "end"}`` ends it).  The zygote waits for the child, kills every other process of the
  sandbox and answers ``child_exit``.  Student code never runs in the zygote, so nothing of one
  run (memory, files, IPC objects, keys, processes) reaches the next one.

Nothing this process sends is trusted: the grader only accepts plain data and
compares it outside.  Student output goes nowhere (fds 1 and 2 point to /dev/null).
"""

import builtins
import os
import re
import signal
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import wire  # noqa: E402

_MAGIC = re.compile(r"^(\s*)([%!].*)$")
_MAX_TB = 4000


def _open_protocol():
    out = os.fdopen(os.dup(1), "wb", buffering=0)
    inp = os.fdopen(os.dup(0), "rb", buffering=0)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)
    return inp, out


class _Sink:
    """Stand-in for sys.stdout/stderr: discards everything."""

    def write(self, s):
        return len(s) if isinstance(s, str) else 0

    def flush(self):
        pass

    def isatty(self):
        return False


def _strip_magics(source):
    lines = []
    for line in source.split("\n"):
        m = _MAGIC.match(line)
        lines.append(f"{m.group(1)}pass  # IPython magic ignored" if m else line)
    return "\n".join(lines)


def _exc_info(exc):
    tb_lines = []
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename.startswith("<")]
    if frames:
        tb_lines = traceback.format_list(frames[-6:])
    try:
        msg = str(exc)[:1000]
    except BaseException:  # noqa: BLE001
        msg = "<无法显示的异常信息>"
    text = "".join(tb_lines) + f"{type(exc).__name__}: {msg}"
    return {"type": type(exc).__name__[:100], "mro": [c.__name__ for c in type(exc).__mro__][:20],
            "msg": msg, "tb": text[-_MAX_TB:]}


class _CellTimeout(BaseException):
    pass


def _alarm(signum, frame):
    raise _CellTimeout("单元执行超时")


_CLONE_NEWNS, _CLONE_NEWUTS, _CLONE_NEWIPC, _CLONE_NEWUSER, _CLONE_NEWPID, _CLONE_NEWNET = (
    0x20000, 0x4000000, 0x8000000, 0x10000000, 0x20000000, 0x40000000)
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 1, 2, 4, 8


def _isolate(libc, ctypes, notebook, nb_bytes, scratch_bytes):
    """Runs in a freshly forked child, before any student code: private namespaces, fresh scratch, no capabilities.

    Returns in the student's process: pid 2 of a new PID namespace whose init (pid 1) only reaps.
    """
    uid, gid = os.getuid(), os.getgid()
    if libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNS | _CLONE_NEWIPC | _CLONE_NEWNET | _CLONE_NEWUTS | _CLONE_NEWPID) != 0:
        raise OSError(ctypes.get_errno(), "unshare")
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
        with open(f"/proc/self/{name}", "w") as fh:
            fh.write(text)
    if libc.syscall(250, 1, None) < 0:  # KEYCTL_JOIN_SESSION_KEYRING: a new anonymous session keyring
        raise OSError(ctypes.get_errno(), "keyctl")
    opts = f"size={int(scratch_bytes)},mode=0755,uid={uid},gid={gid}".encode()
    for target in (b"/tmp", b"/dev/shm", b"/home/student"):
        if libc.mount(b"tmpfs", target, b"tmpfs", _MS_NOSUID | _MS_NODEV, opts) != 0:
            raise OSError(ctypes.get_errno(), "mount " + target.decode())
    os.chdir("/home/student")
    if notebook:
        with open(notebook, "wb") as fh:
            fh.write(nb_bytes)
        os.chmod(notebook, 0o444)
    # The sandbox's /proc shows the zygote's PID namespace (pid numbers would count earlier runs' processes)
    # and a new proc cannot be mounted under bubblewrap's overmounts: hide it.
    if libc.mount(b"tmpfs", b"/proc", b"tmpfs", _MS_RDONLY | _MS_NOSUID | _MS_NODEV | _MS_NOEXEC, b"size=4k,mode=0555") != 0:
        raise OSError(ctypes.get_errno(), "mount /proc")
    for cap in range(64):  # PR_CAPBSET_DROP; EINVAL past the last capability is fine
        libc.prctl(24, cap, 0, 0, 0)
    libc.prctl(47, 4, 0, 0, 0)  # PR_CAP_AMBIENT_CLEAR_ALL

    class Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class Data(ctypes.Structure):
        _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]

    if libc.capset(ctypes.byref(Header(0x20080522, 0)), (Data * 2)()) != 0:
        raise OSError(ctypes.get_errno(), "capset")
    if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
        raise OSError(ctypes.get_errno(), "no_new_privs")
    check = (Data * 2)()
    if libc.capget(ctypes.byref(Header(0x20080522, 0)), check) != 0 or any(
            d.effective or d.permitted or d.inheritable for d in check):
        raise OSError("capabilities left")
    if os.fork():  # this process: wait for the namespace's init, then leave
        os.waitpid(-1, 0)
        os._exit(0)
    # pid 1 of the new PID namespace: start the student's process, reap, exit with it (which kills the rest)
    student = os.fork()
    if student == 0:
        return
    while True:
        try:
            pid, _ = os.waitpid(-1, 0)
        except ChildProcessError:
            os._exit(0)
        if pid == student:
            os._exit(0)


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


def _zygote(first, send, recv):
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
                _isolate(libc, ctypes, notebook, nb_bytes, first.get("scratch_bytes", 32 << 20))
            except BaseException:  # noqa: BLE001 - never run student code half-isolated
                os._exit(70)
            return
        if not _reap_all(pid):
            os._exit(1)
        send({"op": "child_exit"})


class UndefinedMetricError(ValueError, ZeroDivisionError):
    """Raised by a proxy when the implementation under test raised it."""


def main():
    inp, out = _open_protocol()
    sys.stdout = sys.stderr = _Sink()
    sys.stdin = None

    def send(msg):
        out.write(wire.dumps(msg))

    def recv():
        line = inp.readline()
        if not line:
            os._exit(0)
        return wire.loads(line)

    signal.signal(signal.SIGALRM, _alarm)
    setup = recv()
    if setup.get("op") == "zygote":
        _zygote(setup, send, recv)  # returns in a fresh child only
        setup = recv()
    ns = {"__name__": "__main__", "__builtins__": builtins}
    for cell in setup["cells"]:
        send({"op": "cell_start", "index": cell["index"]})
        error = None
        try:
            signal.setitimer(signal.ITIMER_REAL, float(setup["cell_timeout"]))
            code = compile(_strip_magics(cell["source"]), f"<单元 {cell['index']}>", "exec")
            exec(code, ns)  # noqa: S102 - this is the sandbox
        except BaseException as exc:  # noqa: BLE001 - SystemExit, KeyboardInterrupt, timeouts ...
            error = _exc_info(exc)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        send({"op": "cell_done", "index": cell["index"], "error": error})
    send({"op": "ready", "defined": sorted(k for k, v in ns.items() if callable(v) and isinstance(k, str))[:500]})

    def make_proxy(name, call_id):
        def proxy(*args, **kwargs):
            send({"op": "impl_call", "id": call_id, "fn": name,
                  "args": [wire.encode(a) for a in args], "kwargs": {str(k): wire.encode(v) for k, v in kwargs.items()}})
            reply = recv()
            if reply.get("ok"):
                return wire.decode(reply["value"], wire.namedtuple_factory)
            exc_type = UndefinedMetricError if reply.get("exc_type") == "UndefinedMetricError" else ValueError
            raise exc_type(reply.get("msg", ""))

        proxy.__name__ = name
        return proxy

    while True:
        msg = recv()
        op = msg.get("op")
        call_id = msg.get("id")
        try:
            if op == "call":
                fn = ns.get(msg["fn"])
                if not callable(fn):
                    raise NameError(f"没有定义函数 {msg['fn']}")
                args = [wire.decode(a, wire.namedtuple_factory) for a in msg["args"]]
                kwargs = {k: wire.decode(v, wire.namedtuple_factory) for k, v in msg["kwargs"].items()}
                value = fn(*args, **kwargs)
            elif op == "run_test":
                fn = ns.get(msg["fn"])
                if not callable(fn):
                    raise NameError(f"没有定义测试函数 {msg['fn']}")
                value = fn(*[make_proxy(name, call_id) for name in msg["impls"]])
                value = None
            elif op == "end":
                os._exit(0)
            else:
                continue
            try:
                encoded = wire.encode(value)
            except BaseException as exc:  # noqa: BLE001
                encoded = {"t": "other", "type": "编码失败", "repr": str(exc)[:200]}
            send({"op": "result", "id": call_id, "ok": True, "value": encoded})
        except BaseException as exc:  # noqa: BLE001
            send({"op": "result", "id": call_id, "ok": False, "exc": _exc_info(exc)})


if __name__ == "__main__":
    main()
