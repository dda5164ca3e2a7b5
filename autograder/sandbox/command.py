"""The bubblewrap command line, the fixed environment and the resource limits of a sandbox."""

from __future__ import annotations

import functools
import os
import resource
import sys
import sysconfig
from pathlib import Path

from ..model import Limits

PAYLOAD_DIR = Path(__file__).resolve().parent / "payload"
PAYLOAD_MOUNT = "/opt/autograder"
# What student code may import: the interpreter's standard library and the course environment's own packages,
# except these, installed there but hidden: scikit-learn's metric functions are what the assignments ask
# students to write; SciPy is outside the allowed standard library + NumPy.
MASKED_PACKAGES = ("sklearn", "scipy")
# Modules a notebook's top-level import cannot get in the sandbox (check.prepare skips such an import with a
# note): the masked packages and the grader itself, which is never bound into the sandbox.
UNAVAILABLE_MODULES = MASKED_PACKAGES + ("autograder",)

SYSTEM_DIRS = ("/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin")  # bound read-only into every sandbox
PACKAGE_FOLDERS = ("site-packages", "dist-packages")
# Where package folders lie below a bound directory: the standard library's own (non-Debian installs), an
# installation prefix's (lib/python3.X/site-packages), Debian's (lib/python3/dist-packages, and /usr/local's)
PACKAGE_FOLDER_PATTERNS = ("{}", "lib*/python*/{}", "local/lib*/python*/{}")


def unavailable(module: str | None) -> bool:
    """Whether importing ``module`` (a dotted name) fails in the sandbox: it is, or is inside, one of
    :data:`UNAVAILABLE_MODULES`."""
    return bool(module) and module.split(".")[0] in UNAVAILABLE_MODULES


def python_paths() -> list[str]:
    """Directories the sandboxed interpreter needs (read-only)."""
    return list(_python_paths())


@functools.lru_cache(maxsize=1)
def _python_paths() -> tuple[str, ...]:
    """:func:`python_paths`, worked out once per process (sysconfig and the interpreter's real path: ~0.6 ms of
    CPU, asked for every run of the student's code)."""
    paths = {sys.prefix, sys.base_prefix, sysconfig.get_paths()["stdlib"]}
    exe = Path(sys.executable)
    paths.add(str(exe.parent))
    real = exe.resolve()
    paths.add(str(real.parent.parent))
    out: list[str] = []
    for p in sorted(paths, key=len):
        if any(p == q or p.startswith(q.rstrip("/") + "/") for q in out):
            continue
        out.append(p)
    return tuple(out)


@functools.lru_cache(maxsize=1)
def _site_packages() -> str:
    return sysconfig.get_paths()["purelib"]


def foreign_package_folders(roots: list[str], own: list[str]) -> list[str]:
    """Every package folder (``site-packages``, ``dist-packages``) below ``roots`` except the environment's ``own``.

    Binding the Python installation binds its prefix whole: the base interpreter's ``site-packages`` (and on a
    Debian system ``/usr/lib/python3/dist-packages`` below ``/usr``) would be importable after a
    ``sys.path.append``, with packages the environment masks or never installed.  Each folder found is given
    as reached below its root (that path exists in the sandbox), once per real folder; a folder that is, or
    holds, one of ``own`` is kept.
    """
    keep = {os.path.realpath(p) for p in own}
    found: dict[str, str] = {}
    for root in roots:
        for pattern in PACKAGE_FOLDER_PATTERNS:
            for name in PACKAGE_FOLDERS:
                for path in sorted(Path(root).glob(pattern.format(name))):
                    real = os.path.realpath(path)
                    if path.is_dir() and not any(k == real or k.startswith(real + "/") for k in keep):
                        found.setdefault(real, str(path))
    return sorted(found.values())


@functools.lru_cache(maxsize=1)
def _masks() -> tuple[str, ...]:
    """The folders a sandbox sees as empty: every package folder but the environment's, and its masked packages
    (worked out once per process)."""
    own = sysconfig.get_paths()
    roots = [d for d in SYSTEM_DIRS if os.path.isdir(d) and not os.path.islink(d)] + python_paths()
    masked = [os.path.join(_site_packages(), name) for name in MASKED_PACKAGES]
    return tuple(foreign_package_folders(roots, [own["purelib"], own["platlib"]])
                 + [p for p in masked if os.path.isdir(p)])


def bwrap_command(limits: Limits) -> list[str]:
    """The bubblewrap command line of a sandbox whose runner becomes the zygote.

    Nothing of a submission is in it (a warm sandbox serves many): each run's child receives its
    notebook through the protocol pipe and writes it into its own fresh /home/student.  /dev is
    read-only (the zygote's children share it; each gets its own /dev/shm).
    """
    cmd = ["bwrap", "--unshare-all", "--die-with-parent", "--new-session",
           "--uid", "65534", "--gid", "65534", "--hostname", "sandbox", "--cap-drop", "ALL",
           # The scratch file systems come first: a later bind of the Python installation or the
           # virtual environment may lie below /tmp (a checkout in /tmp), and must not be hidden.
           "--proc", "/proc", "--dev", "/dev", "--remount-ro", "/dev",
           "--size", str(limits.scratch_bytes), "--tmpfs", "/tmp",
           "--size", str(limits.scratch_bytes), "--tmpfs", "/home/student"]
    for d in SYSTEM_DIRS:
        if os.path.islink(d):
            cmd += ["--symlink", os.readlink(d), d]
        elif os.path.isdir(d):
            cmd += ["--ro-bind", d, d]
    for p in python_paths():
        cmd += ["--ro-bind", p, p]
    for folder in _masks():  # an empty, sealed mask over what student code may not import
        cmd += ["--size", "4096", "--perms", "0555", "--tmpfs", folder, "--remount-ro", folder]
    cmd += ["--ro-bind", str(PAYLOAD_DIR), PAYLOAD_MOUNT]  # the whole payload, nothing else of the grader
    # bubblewrap's own root (/, /opt, /home and the mount points it made) is a tmpfs without a size
    # limit, shared by every run of the zygote: read-only.  (No --disable-userns: the zygote needs a
    # user namespace per child; the child's seccomp filter forbids any further one.)
    cmd += ["--remount-ro", "/"]
    cmd += ["--chdir", "/home/student", "--clearenv"]
    for key, value in environment().items():  # --clearenv keeps only what is set again here
        cmd += ["--setenv", key, value]
    return cmd


def environment() -> dict[str, str]:
    return {"PATH": "/usr/bin:/bin", "HOME": "/home/student", "LANG": "C.UTF-8", "PYTHONHASHSEED": "0",
            "PYTHONDONTWRITEBYTECODE": "1", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
            "MKL_NUM_THREADS": "1", "MPLBACKEND": "Agg"}


STAGE = Path("/run/autograder-stage")  # root grader: where the sandbox's first process shows it what it binds


def staged(cmd: list[str]) -> tuple[list[str], list[tuple[str, str]]]:
    """Root grader: rewrite every ``--ro-bind SOURCE DEST`` outside the system directories to a staged source.

    The sandbox account may not reach a source (a Python installation in root's home, mode 0700);
    :func:`preexec` binds each source, opened as root, to ``STAGE/<n>`` in a private mount namespace,
    where the account can reach it.  Returns the new command and the (source, staged path) pairs.
    """
    out, pairs, i = [], [], 0
    while i < len(cmd):
        if cmd[i] == "--ro-bind" and not cmd[i + 1].startswith(SYSTEM_DIRS):
            target = str(STAGE / str(len(pairs)))
            pairs.append((cmd[i + 1], target))
            out += ["--ro-bind", target, cmd[i + 2]]
            i += 3
            continue
        out.append(cmd[i])
        i += 1
    return out, pairs


def _stage(pairs: list[tuple[str, str]], libc) -> None:
    """In the sandbox's first process, as root: a private mount namespace with each source bound below STAGE."""
    import ctypes

    ms_nosuid, ms_nodev, ms_bind, ms_rec, ms_private = 2, 4, 0x1000, 0x4000, 1 << 18
    if libc.unshare(0x20000) != 0:  # CLONE_NEWNS
        raise OSError(ctypes.get_errno(), "unshare(CLONE_NEWNS)")
    if libc.mount(b"none", b"/", None, ms_rec | ms_private, None) != 0:
        raise OSError(ctypes.get_errno(), "mount --make-rprivate /")
    fds = [os.open(src, os.O_PATH | os.O_CLOEXEC) for src, _ in pairs]
    if libc.mount(b"tmpfs", str(STAGE).encode(), b"tmpfs", ms_nosuid | ms_nodev, b"mode=0755,size=64k") != 0:
        raise OSError(ctypes.get_errno(), f"mount tmpfs {STAGE}")
    for (src, target), fd in zip(pairs, fds):
        if os.path.isdir(f"/proc/self/fd/{fd}"):
            os.mkdir(target)
        else:
            os.close(os.open(target, os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC, 0o444))
        if libc.mount(f"/proc/self/fd/{fd}".encode(), target.encode(), None, ms_bind | ms_rec, None) != 0:
            raise OSError(ctypes.get_errno(), f"bind {src}")
        os.close(fd)


def preexec(limits: Limits, procs_files: list[str], pids_limited: bool, account=None,
            stage: list[tuple[str, str]] | None = None):
    """What the sandbox's first process does before ``exec``: join its cgroups, set its rlimits
    (``RLIMIT_NPROC`` when no pids cgroup limits the number of processes) and, when the grader is root,
    stage the binds (:func:`staged`) and become the unprivileged sandbox ``account`` (uid, gid, no groups)."""
    libc = None
    if stage:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        STAGE.mkdir(mode=0o755, exist_ok=True)

    def apply() -> None:
        for procs_file in procs_files:
            with open(procs_file, "w") as fh:
                fh.write("0")
        mem = limits.memory_bytes
        resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
        resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds + 1))
        resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_bytes, limits.file_bytes))
        resource.setrlimit(resource.RLIMIT_NOFILE, (limits.open_files, limits.open_files))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if not pids_limited and (os.geteuid() != 0 or account is not None):
            n = len([p for p in os.listdir("/proc") if p.isdigit()])
            resource.setrlimit(resource.RLIMIT_NPROC, (n + limits.processes, n + limits.processes))
        if stage:
            _stage(stage, libc)
        if account is not None:
            for fd in (0, 1):  # the protocol pipes: the runner reopens them through /proc/self/fd (isolation._fresh_fds)
                os.fchown(fd, account.uid, account.gid)
            os.setgroups([])
            os.setresgid(account.gid, account.gid, account.gid)
            os.setresuid(account.uid, account.uid, account.uid)
            if os.getresuid() != (account.uid,) * 3 or os.getresgid() != (account.gid,) * 3 or os.getgroups():
                raise OSError("could not become the sandbox account")

    return apply
