"""Runs INSIDE the sandbox: executes a student's code cells, then serves calls as JSON lines.

Started as ``python -I runner.py``; it imports only the standard library, NumPy
and :mod:`wire` (mounted next to it).  Protocol (one JSON object per line):

* trusted -> runner, first line: ``{"op": "setup", "cells": [{"index", "source"}], "cell_timeout"}``;
  the runner answers ``cell_start``/``cell_done`` for each cell, then ``ready``.
* ``{"op": "call", "id", "fn", "args", "kwargs"}`` -> ``{"op": "result", "id", "ok", "value" | "exc"}``.
* ``{"op": "run_test", "id", "fn", "impls"}`` calls the student's test function with
  proxy functions; every proxy call is forwarded as ``impl_call`` and answered by
  ``impl_result`` from the trusted side, which runs the implementation under test.
* Assignment 5 (zygote mode): the first line is ``{"op": "zygote", "notebook", "scratch_bytes", "keep"}``.
  The runner answers ``zygote_ready`` BEFORE any student code has run, then for every
  ``{"op": "fork"}`` forks a child that gets new user, mount, IPC, network and UTS namespaces,
  a new session keyring, fresh tmpfs on /tmp, /dev/shm and /home/student (with a copy of the
  notebook) and no capabilities, and then behaves exactly like a fresh runner (``setup``, calls,
  ``{"op": "end"}`` ends it); a child that cannot isolate itself answers ``isolate_error`` and exits
  without running anything.  The zygote waits for the child, kills every other process of the
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
import types

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


_SCRATCH = ("/tmp", "/dev/shm", "/home/student")
_MS_BIND, _MS_REC = 0x1000, 0x4000


def _isolate(libc, ctypes, notebook, nb_bytes, scratch_bytes, keep):
    """Runs in a freshly forked child, before any student code: private namespaces, fresh scratch, no capabilities.

    ``keep``: read-only mounts of the sandbox (the Python installation, the virtual environment)
    that lie below a scratch directory, e.g. a checkout in /tmp; the fresh tmpfs would hide them,
    so each is held by an ``O_PATH`` descriptor and bound again (recursively, so its read-only
    flag and the scikit-learn mask stay locked) on the same path inside the new tmpfs.

    Returns in the student's process: pid 2 of a new PID namespace whose init (pid 1) only reaps.
    """
    uid, gid = os.getuid(), os.getgid()
    if libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNS | _CLONE_NEWIPC | _CLONE_NEWNET | _CLONE_NEWUTS | _CLONE_NEWPID) != 0:
        raise OSError(ctypes.get_errno(), "unshare")
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
        with open(f"/proc/self/{name}", "w") as fh:
            fh.write(text)
    import platform

    keyctl = _SYSCALLS.get(platform.machine(), (0, {"keyctl": -1}))[1]["keyctl"]
    if libc.syscall(keyctl, 1, None) < 0:  # KEYCTL_JOIN_SESSION_KEYRING: a new anonymous session keyring
        raise OSError(ctypes.get_errno(), "keyctl")
    _seal_devices(libc, ctypes)
    held = []
    for path in keep:
        path = os.path.normpath(str(path))
        if path.startswith("/") and any(path.startswith(d + "/") for d in _SCRATCH):
            held.append((path, os.open(path, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)))
    opts = f"size={int(scratch_bytes)},mode=0755,uid={uid},gid={gid}".encode()
    for target in _SCRATCH:
        if libc.mount(b"tmpfs", target.encode(), b"tmpfs", _MS_NOSUID | _MS_NODEV, opts) != 0:
            raise OSError(ctypes.get_errno(), "mount " + target)
    for path, fd in held:
        os.makedirs(path, exist_ok=True)
        if libc.mount(f"/proc/self/fd/{fd}".encode(), path.encode(), None, _MS_BIND | _MS_REC, None) != 0:
            raise OSError(ctypes.get_errno(), "bind " + path)
        os.close(fd)
    os.chdir("/home/student")
    _fresh_fds()
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
    _lockdown(libc, ctypes)  # sets no_new_privs, then the seccomp filter
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


# statvfs f_flag bit -> mount flag that a remount must repeat (locked flags cannot be dropped)
_KEEP_FLAGS = ((2, 2), (4, 4), (8, 8), (1024, 1024), (2048, 2048), (4096, 1 << 21))  # nosuid nodev noexec noatime nodiratime relatime


def _seal_devices(libc, ctypes):
    """Remount every mount below /dev read-only (except /dev/shm, replaced by a fresh tmpfs).

    bubblewrap binds the host's device nodes (null, zero, full, random, urandom, tty) and a devpts
    into /dev; the sandbox's uid maps to host uid 0, so through a writable bind student code could
    chmod or utime the host's own /dev/null (break every later sandbox, or pass bits to a later run).
    A read-only mount refuses both (EROFS) while reads and writes of the devices keep working.
    """
    with open("/proc/self/mountinfo", "rb") as fh:
        points = [line.split(b" ")[4].decode("unicode_escape") for line in fh]
    for point in sorted(set(points)):
        if not point.startswith("/dev/") or point == "/dev/shm" or point.startswith("/dev/shm/"):
            continue
        flags = os.statvfs(point).f_flag
        keep = sum(ms for st, ms in _KEEP_FLAGS if flags & st)
        if libc.mount(None, point.encode(), None, 0x20 | 0x1000 | _MS_RDONLY | keep, None) != 0:  # MS_REMOUNT | MS_BIND
            raise OSError(ctypes.get_errno(), "remount read-only " + point)
        if not os.statvfs(point).f_flag & 1:  # ST_RDONLY
            raise OSError("still writable: " + point)


def _fresh_fds():
    """Forked child: share no open file description with the zygote.

    Flags (``O_NONBLOCK``, ``O_APPEND``), ``F_SETSIG``/``F_SETOWN`` and ``flock`` locks live in the
    open file description, which a plain fork shares: one run could leave them for the next.  The
    protocol pipes are opened again through ``/proc/self/fd`` (a new description of the same pipe),
    fds 0-2 get a new /dev/null, every other descriptor is closed.  (The pipes' buffer size belongs
    to the pipe itself: the trusted side sets it back before every run.)
    """
    import fcntl
    import stat

    for fd in range(_nofile_limit()):
        try:
            mode = os.fstat(fd).st_mode
        except OSError:
            continue
        if stat.S_ISFIFO(mode):
            access = os.O_WRONLY if fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE == os.O_WRONLY else os.O_RDONLY
            new = os.open(f"/proc/self/fd/{fd}", access | os.O_CLOEXEC)
        elif fd <= 2:
            new = os.open(os.devnull, os.O_RDWR | os.O_CLOEXEC)
        else:
            os.close(fd)
            continue
        os.dup2(new, fd, inheritable=fd <= 2)
        os.close(new)


def _nofile_limit():
    """Highest descriptor number to look at (the soft RLIMIT_NOFILE, bounded)."""
    import resource

    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    return 1024 if soft == resource.RLIM_INFINITY else min(int(soft), 1 << 16)


# Syscalls student code never needs and that open ways out of the sandbox: new namespaces (a nested
# user namespace grants mount rights there, e.g. of a cgroup hierarchy), mounts, moving the root,
# process accounting, ptrace and cross-process memory access, BPF, perf, userfaultfd, io_uring,
# kernel keyrings.  Numbers per architecture; "clone" is checked for namespace flags.
_SYSCALLS = {
    # machine: (AUDIT_ARCH, {name: nr}, x32 bit)
    "x86_64": (0xC000003E, {"unshare": 272, "setns": 308, "mount": 165, "umount2": 166, "pivot_root": 155,
                            "chroot": 161, "acct": 163, "ptrace": 101, "process_vm_readv": 310,
                            "process_vm_writev": 311, "bpf": 321, "perf_event_open": 298, "userfaultfd": 323,
                            "io_uring_setup": 425, "open_tree": 428, "move_mount": 429, "fsopen": 430,
                            "fsconfig": 431, "fsmount": 432, "fspick": 433, "mount_setattr": 442, "open_tree_attr": 467,
                            "add_key": 248, "request_key": 249, "keyctl": 250, "clone": 56, "clone3": 435},
               0x40000000),
    "aarch64": (0xC00000B7, {"unshare": 97, "setns": 268, "mount": 40, "umount2": 39, "pivot_root": 41,
                             "chroot": 51, "acct": 89, "ptrace": 117, "process_vm_readv": 270,
                             "process_vm_writev": 271, "bpf": 280, "perf_event_open": 241, "userfaultfd": 282,
                             "io_uring_setup": 425, "open_tree": 428, "move_mount": 429, "fsopen": 430,
                             "fsconfig": 431, "fsmount": 432, "fspick": 433, "mount_setattr": 442, "open_tree_attr": 467,
                             "add_key": 217, "request_key": 218, "keyctl": 219, "clone": 220, "clone3": 435},
                None),
}
_CLONE_NS_FLAGS = 0x10000000 | 0x20000 | 0x20000000 | 0x40000000 | 0x08000000 | 0x04000000 | 0x02000000 | 0x80


def _lockdown(libc, ctypes):
    """Install a seccomp filter (irreversible, inherited by every child) before any student code runs.

    Denied calls fail with EPERM; ``clone3`` fails with ENOSYS so that the C library falls back to
    ``clone``, whose flags a classic BPF filter can inspect; any other architecture ABI (x32, i386) is
    killed.  Refuses to continue (raises) on a machine it has no syscall table for.
    """
    import platform

    machine = platform.machine()
    if machine not in _SYSCALLS:
        raise OSError(f"no seccomp table for {machine}")
    arch, nrs, x32 = _SYSCALLS[machine]
    ld_nr, ld_arch, ld_arg0 = (0x20, 0, 0, 0), (0x20, 0, 0, 4), (0x20, 0, 0, 16)
    allow, kill, eperm, enosys = 0x7FFF0000, 0x80000000, 0x00050000 | 1, 0x00050000 | 38
    ret = lambda value: (0x06, 0, 0, value)  # noqa: E731
    prog = [ld_arch, (0x15, 1, 0, arch), ret(kill), ld_nr]
    if x32 is not None:
        prog += [(0x35, 0, 1, x32), ret(kill)]  # JGE
    for name, nr in nrs.items():
        if name in ("clone", "clone3"):
            continue
        prog += [(0x15, 0, 1, nr), ret(eperm)]
    prog += [(0x15, 0, 1, nrs["clone3"]), ret(enosys),
             (0x15, 0, 3, nrs["clone"]), ld_arg0, (0x45, 0, 1, _CLONE_NS_FLAGS), ret(eperm),  # JSET
             ret(allow)]

    class Filter(ctypes.Structure):
        _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint32)]

    class Program(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(Filter))]

    code = (Filter * len(prog))(*[Filter(*ins) for ins in prog])
    if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS (required for an unprivileged filter)
        raise OSError(ctypes.get_errno(), "no_new_privs")
    if libc.prctl(22, 2, ctypes.byref(Program(len(prog), code)), 0, 0) != 0:  # PR_SET_SECCOMP, MODE_FILTER
        raise OSError(ctypes.get_errno(), "seccomp")


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
                _isolate(libc, ctypes, notebook, nb_bytes, first.get("scratch_bytes", 32 << 20), keep)
            except BaseException as exc:  # noqa: BLE001 - never run student code half-isolated
                try:  # say why: the grader must stop rather than grade everything 0 (e.g. no nested user namespaces)
                    send({"op": "isolate_error", "why": f"{type(exc).__name__}: {exc}"[:300]})
                finally:
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
    if setup.get("op") == "zygote":  # the sandbox; without it (--no-sandbox) the first line is "setup"
        _zygote(setup, send, recv)  # returns in a fresh child only, isolated and locked down by _isolate
        setup = recv()
    # the cells run in a fresh module registered as __main__, as in a Jupyter kernel: functions they
    # define can be pickled by reference (multiprocessing.Pool.map with a notebook function works)
    main_module = types.ModuleType("__main__")
    main_module.__dict__["__builtins__"] = builtins
    sys.modules["__main__"] = main_module
    ns = main_module.__dict__
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
