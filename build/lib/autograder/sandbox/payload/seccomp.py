"""Runs INSIDE the sandbox: the seccomp filter installed before any student code runs.

Part of the sandbox payload (standard library only).
"""

# Syscalls student code never needs and that open ways out of the sandbox: new namespaces (a nested
# user namespace grants mount rights there, e.g. of a cgroup hierarchy), mounts, moving the root,
# process accounting, ptrace and cross-process memory access, BPF, perf, userfaultfd, io_uring,
# kernel keyrings.  Numbers per architecture; "clone" is checked for namespace flags.
SYSCALLS = {
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


def lockdown(libc, ctypes):
    """Install a seccomp filter (irreversible, inherited by every child) before any student code runs.

    Denied calls fail with EPERM; ``clone3`` fails with ENOSYS so that the C library falls back to
    ``clone``, whose flags a classic BPF filter can inspect; any other architecture ABI (x32, i386) is
    killed.  Refuses to continue (raises) on a machine it has no syscall table for.
    """
    import platform

    machine = platform.machine()
    if machine not in SYSCALLS:
        raise OSError(f"no seccomp table for {machine}")
    arch, nrs, x32 = SYSCALLS[machine]
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
