"""Runs INSIDE the sandbox: isolate a freshly forked child before any student code runs.

Part of the sandbox payload (standard library only).  :func:`isolate` gives the child its own user,
mount, IPC, network, UTS and PID namespaces, fresh size-limited scratch file systems, read-only
device nodes, a hidden /proc, fresh file descriptions, no capabilities and the seccomp filter of
:mod:`seccomp`.
"""

import os

import seccomp

_CLONE_NEWNS, _CLONE_NEWUTS, _CLONE_NEWIPC, _CLONE_NEWUSER, _CLONE_NEWPID, _CLONE_NEWNET = (
    0x20000, 0x4000000, 0x8000000, 0x10000000, 0x20000000, 0x40000000)
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 1, 2, 4, 8


_SCRATCH = ("/tmp", "/dev/shm", "/home/student")
_MS_BIND, _MS_REC = 0x1000, 0x4000


def isolate(libc, ctypes, notebook, nb_bytes, scratch_bytes, keep):
    """Runs in a freshly forked child, before any student code: private namespaces, fresh scratch, no capabilities.

    ``keep``: read-only mounts of the sandbox (the Python installation, the virtual environment)
    that lie below a scratch directory, e.g. a checkout in /tmp; the fresh tmpfs would hide them,
    so each is held by an ``O_PATH`` descriptor and bound again (recursively, so its read-only
    flag and the scikit-learn mask stay locked) on the same path inside the new tmpfs.

    Returns in the student's process: pid 2 of a new PID namespace whose init (pid 1) only reaps.
    """
    uid, gid = os.getuid(), os.getgid()
    _own_namespaces(libc, ctypes, uid, gid)
    _seal_devices(libc, ctypes)
    _fresh_scratch(libc, ctypes, scratch_bytes, keep, uid, gid)
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
    _lock_down(libc, ctypes)
    _init_then_student()


def _own_namespaces(libc, ctypes, uid, gid):
    """New user (the same ids mapped), mount, IPC, network, UTS and PID namespaces and a new session keyring."""
    if libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNS | _CLONE_NEWIPC | _CLONE_NEWNET | _CLONE_NEWUTS | _CLONE_NEWPID) != 0:
        raise OSError(ctypes.get_errno(), "unshare")
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
        with open(f"/proc/self/{name}", "w") as fh:
            fh.write(text)
    import platform

    keyctl = seccomp.SYSCALLS.get(platform.machine(), (0, {"keyctl": -1}))[1]["keyctl"]
    if libc.syscall(keyctl, 1, None) < 0:  # KEYCTL_JOIN_SESSION_KEYRING: a new anonymous session keyring
        raise OSError(ctypes.get_errno(), "keyctl")


def _fresh_scratch(libc, ctypes, scratch_bytes, keep, uid, gid):
    """Fresh size-limited tmpfs on every scratch directory, with the ``keep`` mounts below them bound again."""
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


def _lock_down(libc, ctypes):
    """No capabilities (bounding, ambient and all three sets, checked), not dumpable, no new privileges, the seccomp
    filter of :mod:`seccomp`."""
    for cap in range(64):  # PR_CAPBSET_DROP; EINVAL past the last capability is fine
        libc.prctl(24, cap, 0, 0, 0)
    libc.prctl(47, 4, 0, 0, 0)  # PR_CAP_AMBIENT_CLEAR_ALL

    class Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class Data(ctypes.Structure):
        _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]

    if libc.capset(ctypes.byref(Header(0x20080522, 0)), (Data * 2)()) != 0:
        raise OSError(ctypes.get_errno(), "capset")
    if libc.prctl(4, 0, 0, 0, 0) != 0:  # PR_SET_DUMPABLE 0: nothing outside may ptrace or read this process's memory
        raise OSError(ctypes.get_errno(), "PR_SET_DUMPABLE")
    seccomp.lockdown(libc, ctypes)  # sets no_new_privs, then the seccomp filter
    check = (Data * 2)()
    if libc.capget(ctypes.byref(Header(0x20080522, 0)), check) != 0 or any(
            d.effective or d.permitted or d.inheritable for d in check):
        raise OSError("capabilities left")


def _init_then_student():
    """Enter the new PID namespace: this process waits for its init and leaves; the init (pid 1) starts the student's
    process, reaps, and exits with it (which kills the rest); returns in the student's process (pid 2)."""
    if os.fork():
        os.waitpid(-1, 0)
        os._exit(0)
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
    into /dev; were the sandbox's uid the owner of those nodes on the host (a grader run as root without a
    sandbox account), through a writable bind student code could chmod or utime the host's own /dev/null
    (break every later sandbox, or pass bits to a later run).
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
