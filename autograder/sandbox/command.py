"""The bubblewrap command line, the fixed environment and the resource limits of a sandbox."""

from __future__ import annotations

import os
import resource
import sys
import sysconfig
from pathlib import Path

from ..model import Limits

PAYLOAD_DIR = Path(__file__).resolve().parent / "payload"
PAYLOAD_MOUNT = "/opt/autograder"
# Installed in the course environment but hidden from student code: scikit-learn's metric functions are
# what the assignments ask students to write; SciPy is outside the allowed standard library + NumPy.
MASKED_PACKAGES = ("sklearn", "scipy")


def python_paths() -> list[str]:
    """Directories the sandboxed interpreter needs (read-only)."""
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
    return out


def _site_packages() -> str:
    return sysconfig.get_paths()["purelib"]


def bwrap_command(notebook: Path | None, limits: Limits) -> list[str]:
    """The bubblewrap command line that runs the runner on ``notebook``.

    /dev is read-only (the zygote's children share it; each gets its own /dev/shm).
    """
    cmd = ["bwrap", "--unshare-all", "--die-with-parent", "--new-session",
           "--uid", "65534", "--gid", "65534", "--hostname", "sandbox", "--cap-drop", "ALL",
           # The scratch file systems come first: a later bind of the Python installation or the
           # virtual environment may lie below /tmp (a checkout in /tmp), and must not be hidden.
           "--proc", "/proc", "--dev", "/dev", "--remount-ro", "/dev",
           "--size", str(limits.scratch_bytes), "--tmpfs", "/tmp",
           "--size", str(limits.scratch_bytes), "--tmpfs", "/home/student"]
    for d in ("/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin"):
        if os.path.islink(d):
            cmd += ["--symlink", os.readlink(d), d]
        elif os.path.isdir(d):
            cmd += ["--ro-bind", d, d]
    for p in python_paths():
        cmd += ["--ro-bind", p, p]
    for name in MASKED_PACKAGES:
        package = os.path.join(_site_packages(), name)
        if os.path.isdir(package):
            # not available to answers (the rules allow the standard library and NumPy): an empty, sealed mask
            cmd += ["--size", "4096", "--perms", "0555", "--tmpfs", package, "--remount-ro", package]
    cmd += ["--ro-bind", str(PAYLOAD_DIR), PAYLOAD_MOUNT]  # the whole payload, nothing else of the grader
    if notebook is not None:
        cmd += ["--ro-bind", str(notebook), f"/home/student/{notebook.name}"]
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


def preexec(limits: Limits, procs_files: list[str], pids_limited: bool):
    """What the sandbox's first process does before ``exec``: join its cgroups, set its rlimits
    (``RLIMIT_NPROC`` when no pids cgroup limits the number of processes)."""
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
        if not pids_limited and os.geteuid() != 0:
            n = len([p for p in os.listdir("/proc") if p.isdigit()])
            resource.setrlimit(resource.RLIMIT_NPROC, (n + limits.processes, n + limits.processes))

    return apply
