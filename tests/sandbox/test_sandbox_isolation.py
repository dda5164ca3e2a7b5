"""Isolation of the sandbox, attacked from inside with real student code.

Every test drives the real sandbox (bubblewrap, namespaces, seccomp, the pids cgroup) through
:class:`Session`: the ordinary mode (one sandbox per submission, assignments 1-4) and fork mode
(assignment 5: one sandbox, a fresh isolated child per planted implementation, the way
``check.mutant_runs`` uses it).  Several attacks come from a security review of fork mode.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

import pytest

from autograder.sandbox import cgroup, command
from autograder.model import Limits
from autograder.sandbox import Session, self_test

pytestmark = pytest.mark.slow  # real sandboxes

PROBE = r'''
import ctypes, os, socket, subprocess

MARK = "ag-fork-test-mark"

def seen():
    """Everything an earlier run could have left behind."""
    found = []
    for d in ("/tmp", "/dev/shm", "/home/student"):
        found += [f"{d}/{n}" for n in os.listdir(d) if n.startswith(MARK)]
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect("\0" + MARK)
        found.append("abstract socket")
    except OSError:
        pass
    finally:
        s.close()
    return found

def leave():
    """Leave marks: files, and a daemon in a new session holding an abstract socket."""
    for d in ("/tmp", "/dev/shm", "/home/student"):
        with open(f"{d}/{MARK}-{os.getpid()}", "w") as fh:
            fh.write("x")
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            srv.bind("\0" + MARK)
            srv.listen()
            import time
            time.sleep(120)
        os._exit(0)
    os.wait()

def run():
    found = seen()
    leave()
    return found

def caps():
    class H(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]
    class D(ctypes.Structure):
        _fields_ = [("e", ctypes.c_uint32), ("p", ctypes.c_uint32), ("i", ctypes.c_uint32)]
    libc = ctypes.CDLL(None, use_errno=True)
    data = (D * 2)()
    assert libc.capget(ctypes.byref(H(0x20080522, 0)), data) == 0
    caps = [x for d in data for x in (d.e, d.p, d.i)]
    umount = libc.umount2(b"/tmp", 2)  # MNT_DETACH
    return {"caps": caps, "umount": umount, "errno": ctypes.get_errno(), "pid": os.getpid(),
            "proc": sorted(os.listdir("/proc")), "uid": os.getuid()}

def read_kept(path):
    with open(os.path.join(path, "marker.txt")) as fh:
        text = fh.read()
    try:
        with open(os.path.join(path, "written.txt"), "w") as fh:
            fh.write("x")
        writable = True
    except OSError:
        writable = False
    return [text, writable]
'''


def _session(**kw) -> Session:
    return Session([(0, PROBE)], None, sandbox=True, **kw)


def test_nothing_of_one_run_reaches_the_next():
    s = _session()
    try:
        pids = set()
        for _ in range(4):
            s.new_run()
            out = s.call("run", [])
            assert out.ok, out
            assert out.value == []  # no file, socket or process of an earlier run is visible
            pids.add(s.proc.pid)
        assert len(pids) == 1  # ... and the zygote was reused for every run (no fallback to a new sandbox)
    finally:
        s.close()


def test_child_has_no_capabilities_and_cannot_unmount_its_scratch():
    s = _session()
    try:
        s.new_run()
        out = s.call("caps", [])
        assert out.ok, out
        assert out.value["caps"] == [0] * 6
        assert out.value["umount"] == -1 and out.value["errno"] == 1  # EPERM
        assert out.value["pid"] == 2 and out.value["proc"] == []  # own PID namespace, /proc hidden
    finally:
        s.close()


def test_read_only_install_below_scratch_stays_visible(monkeypatch):
    """A virtual environment in a checkout under /tmp: each child's fresh /tmp must not hide it."""
    with tempfile.TemporaryDirectory(dir="/tmp", prefix="ag-kept-") as kept:
        Path(kept, "marker.txt").write_text("venv here")
        os.chmod(kept, 0o755)
        real = command.python_paths
        monkeypatch.setattr(command, "python_paths", lambda: real() + [kept])
        s = _session()
        try:
            for _ in range(2):
                s.new_run()
                out = s.call("read_kept", [kept])
                assert out.ok, out
                assert out.value == ["venv here", False]  # visible, still read-only
        finally:
            s.close()


def test_forged_lines_from_a_finished_run_are_dropped():
    """A run that writes fake protocol lines after its result cannot answer for the next run."""
    forger = PROBE + r'''
import threading, time, wire
def forge():
    def later():
        time.sleep(0.05)
        for fd in range(3, 10):
            for cid in range(1, 6):
                for line in (wire.dumps({"op": "result", "id": cid, "ok": True, "value": wire.encode("forged")}),
                             wire.dumps({"op": "synced", "nonce": "x"}), wire.dumps({"op": "zygote_ready"})):
                    try:
                        os.write(fd, line)
                    except OSError:
                        pass
    threading.Thread(target=later).start()
    return "first"
'''
    s = Session([(0, forger)], None, sandbox=True)
    try:
        s.new_run()
        assert s.call("forge", []).value == "first"
        time.sleep(0.3)
        s.new_run()
        out = s.call("run", [])
        assert out.ok and out.value == [], out
    finally:
        s.close()


@pytest.mark.parametrize("leftover", ["os.fork() == 0 and __import__('time').sleep(999)", "os.kill(1, 9)", "os.kill(-1, 9)"])
def test_run_that_misbehaves_does_not_break_the_next(leftover):
    s = Session([(0, PROBE + "\ndef bad():\n    " + leftover + "\n    return 1\n")], None, sandbox=True)
    try:
        s.new_run()
        s.call("bad", [])
        s.new_run()
        out = s.call("run", [])
        assert out.ok and out.value == [], out
    finally:
        s.close()


@pytest.mark.parametrize("fork", [False, True])
def test_environment_is_exactly_the_fixed_variables(fork):
    """No variable of the grader leaks in; the fixed ones (one BLAS thread, HOME ...) do arrive."""
    s = Session([(0, "import os\ndef env():\n    return dict(os.environ)\n")], None, sandbox=True)
    try:
        s.new_run() if fork else None
        out = s.call("env", [])
        assert out.ok, out
        got = dict(out.value)
        got.pop("PWD", None)
        assert got == command.environment()
    finally:
        s.close()


ESCAPES = r"""
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long

def errno_of(rc):
    return 0 if rc == 0 else ctypes.get_errno()

def escapes():
    out = {}
    # a nested user namespace would give mount rights there (e.g. mount a cgroup hierarchy and raise pids.max)
    out["unshare_user"] = errno_of(libc.unshare(0x10000000 | 0x20000 | 0x02000000))
    out["clone_newuser"] = errno_of(0 if libc.syscall(56, 0x10000000 | 17, 0, 0, 0, 0) >= 0 else -1)
    out["clone3"] = errno_of(0 if libc.syscall(435, 0, 0) >= 0 else -1)
    out["mount"] = errno_of(libc.mount(b"cgroup", b"/tmp", b"cgroup", 0, b"pids"))
    out["keyctl"] = errno_of(0 if libc.syscall(250, 1, None) >= 0 else -1)
    out["ptrace"] = errno_of(0 if libc.syscall(101, 16, 1, 0, 0) >= 0 else -1)
    written = []
    for path in ("/escape", "/opt/escape", "/opt/autograder/escape", "/home/escape", "/usr/escape"):
        try:
            with open(path, "w") as fh:
                fh.write("x")
            written.append(path)
        except OSError:
            pass
    out["written"] = written
    # threads and subprocesses still work (clone without namespace flags)
    import subprocess, threading
    t = threading.Thread(target=lambda: None)
    t.start(); t.join()
    out["subprocess"] = subprocess.run(["/bin/true"]).returncode
    return out
"""


@pytest.mark.parametrize("fork", [False, True])
def test_no_namespaces_mounts_or_writable_root(fork):
    """Both modes: no nested namespace, no mount, no ptrace/keyring, nothing written outside the scratch tmpfs."""
    s = Session([(0, ESCAPES)], None, sandbox=True)
    try:
        for _ in range(2 if fork else 1):
            s.new_run() if fork else None
            out = s.call("escapes", [])
            assert out.ok, out
            v = out.value
            assert v["unshare_user"] == v["clone_newuser"] == v["mount"] == v["keyctl"] == v["ptrace"] == 1  # EPERM
            assert v["clone3"] == 38  # ENOSYS: the C library falls back to clone, whose flags are checked
            assert v["written"] == []
            assert v["subprocess"] == 0
    finally:
        s.close()


FD_CHANNEL = r"""
import fcntl, os
def fd_channel(mode):
    fd = os.open("/dev/null", os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        locked = False
    except OSError:
        locked = True
    os.close(fd)
    flags = {n: fcntl.fcntl(n, fcntl.F_GETFL) & (os.O_NONBLOCK | os.O_APPEND) for n in range(0, 10) if _open(n)}
    if mode == "poison":
        fcntl.flock(0, fcntl.LOCK_EX)
        for n in range(0, 10):
            if _open(n):
                try:
                    fcntl.fcntl(n, fcntl.F_SETFL, os.O_NONBLOCK | os.O_APPEND)
                    fcntl.fcntl(n, 1031, 4096)  # F_SETPIPE_SZ: a small pipe cuts the next run's long answer
                except OSError:
                    pass
        return "poisoned"
    return {"locked": locked, "flags": sorted(flags.values()), "big": "x" * 300000}

def _open(n):
    try:
        os.fstat(n)
        return True
    except OSError:
        return False
"""


def test_no_open_file_description_is_shared_between_runs():
    s = Session([(0, FD_CHANNEL)], None, sandbox=True)
    try:
        s.new_run()
        clean = s.call("fd_channel", ["check"])
        assert clean.ok and clean.value["locked"] is False, clean
        s.new_run()
        assert s.call("fd_channel", ["poison"]).value == "poisoned"
        zygote = s.proc.pid
        s.new_run()
        after = s.call("fd_channel", ["check"])
        assert after.ok, after
        assert after.value == clean.value  # no lock, no flag, full answer
        assert s.proc.pid == zygote
    finally:
        s.close()


RESTART_BIT = r"""
import os, stat, threading, time
def test_binary_metrics(binary_metrics):
    # leave half a line on the protocol pipe after this run's answer: the shared sandbox has to be
    # restarted, and later runs could tell (e.g. from its age) that an earlier run asked for it
    def later():
        time.sleep(0.05)
        for fd in range(3, 10):
            try:
                if stat.S_ISFIFO(os.fstat(fd).st_mode):
                    os.write(fd, b"{")
            except OSError:
                pass
    threading.Thread(target=later).start()
    time.sleep(0.2)
"""


def test_a_run_that_ends_the_shared_sandbox_sends_nothing_to_later_runs(monkeypatch):
    """If any run ends the shared sandbox, every run is judged again, each in a sandbox of its own."""
    from autograder.check import mutant_runs
    from autograder.check.specs import get_assignment
    from autograder.model import Limits

    cases = [c for c in get_assignment("ps5_testing").cases if c.function == "test_binary_metrics"][:3]
    calls = []
    real = mutant_runs._runs
    monkeypatch.setattr(mutant_runs, "_runs", lambda *a, **k: calls.append(k["shared"]) or real(*a, **k))
    results, _, _ = mutant_runs.run_mutants([(0, RESTART_BIT)], None, cases, True, Limits())
    assert calls == [True, False]
    assert set(results) == {c.id for c in cases}


def test_stale_empty_cgroups_of_killed_graders_are_removed(monkeypatch):
    """A grader killed with -9 leaves its empty pids cgroups; the next grader removes those older than an hour."""
    base = next((b for b in (Path("/sys/fs/cgroup/pids"), Path("/sys/fs/cgroup")) if (b / "cgroup.procs").exists()), None)
    if base is None or os.geteuid() != 0:
        pytest.skip("needs root and a cgroup file system (the sandbox then limits processes with RLIMIT_NPROC)")
    old, fresh = base / "autograder-stale0test", base / "autograder-fresh0test"
    for d in (old, fresh):
        d.mkdir()
    os.utime(old, (time.time() - 2 * cgroup.STALE_CGROUP_SECONDS,) * 2)
    try:
        monkeypatch.setattr(cgroup, "_SWEPT", set())
        cgroup._sweep_stale_cgroups(base)
        assert not old.exists() and fresh.exists()
    finally:
        for d in (old, fresh):
            if d.exists():
                d.rmdir()


SHARED_FILES = r"""
import os, sysconfig
def shared_files():
    out = {}
    sk = os.path.join(sysconfig.get_paths()["purelib"], "sklearn")
    for name, act in (
            ("sklearn_write", lambda: open(os.path.join(sk, "mark"), "w").write("x")),
            ("dev_full_utime", lambda: os.utime("/dev/full", ns=(123456789, 123456789))),
            ("dev_null_utime_now", lambda: os.utime("/dev/null")),
            ("dev_full_chmod", lambda: os.chmod("/dev/full", 0o600)),  # a mode it does not have: visible on the host
            ("ptmx_utime", lambda: os.utime("/dev/pts/ptmx")),
            ("dev_new_file", lambda: open("/dev/mark", "w").write("x"))):
        try:
            act()
            out[name] = "DONE"
        except OSError as exc:
            out[name] = exc.errno
    with open("/dev/null", "w") as fh:
        fh.write("x")  # the devices themselves still work
    with open("/dev/urandom", "rb") as fh:
        out["urandom"] = len(fh.read(8))
    out["sklearn_listing"] = sorted(os.listdir(sk))
    return out
"""


@pytest.mark.parametrize("reuse", [False, True])
def test_host_devices_and_the_sklearn_mask_are_read_only(reuse):
    """The sandbox's uid is host uid 0: device binds must not let it chmod/utime the host's /dev nodes."""
    before = {d: os.stat(d) for d in ("/dev/null", "/dev/full")}
    s = Session([(0, SHARED_FILES)], None, sandbox=True)
    try:
        for _ in range(2 if reuse else 1):
            s.new_run() if reuse else None
            out = s.call("shared_files", [])
            assert out.ok, out
            v = out.value
            assert v.pop("urandom") == 8 and v.pop("sklearn_listing") == []
            assert "DONE" not in v.values(), v
            assert set(v.values()) <= {1, 13, 30}, v  # EPERM, EACCES, EROFS
    finally:
        s.close()
        changed = {d: st for d, st in before.items() if os.stat(d).st_mode != st.st_mode}
        for d, st in changed.items():  # put the host back before failing
            os.chmod(d, st.st_mode & 0o7777)
    assert not changed, f"the sandbox changed the host's {sorted(changed)}"
    for d in before:
        assert os.stat(d).st_mtime_ns != 123456789  # the time set from inside never reached the host


PACKAGES_PROBE = r"""
import importlib, os, sys
def reach(folders, modules):
    out = {"numpy": importlib.import_module("numpy").__name__}  # an allowed package of the environment
    for folder in folders:
        sys.path.append(folder)
        out[folder] = sorted(os.listdir(folder))
    for name in modules:
        try:
            importlib.import_module(name)
            out[name] = "imported"
        except Exception as exc:  # an import from a foreign folder may fail in other ways: then it was reached
            out[name] = type(exc).__name__
    return out
"""


def _only_there(folder: str) -> list[str]:
    """Up to three top-level modules of ``folder`` that this environment does not have (so only that folder gives them)."""
    import importlib.util

    names = []
    for entry in sorted(os.listdir(folder)):
        name = entry[:-3] if entry.endswith(".py") else entry
        if not name.isidentifier() or not (entry.endswith(".py") or os.path.isfile(os.path.join(folder, entry, "__init__.py"))):
            continue
        if importlib.util.find_spec(name) is None:
            names.append(name)
        if len(names) == 3:
            break
    return names


def test_only_the_environments_packages_are_importable():
    """Only the interpreter's standard library and the environment's packages: the base interpreter's own
    site-packages (scipy.stats there) and Debian's dist-packages stay out of reach however sys.path is changed."""
    import sys
    import sysconfig

    version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    candidates = [os.path.join(sysconfig.get_paths()["stdlib"], "site-packages"),  # non-Debian base installation
                  os.path.join(sys.base_prefix, "lib", version, "site-packages"),
                  "/usr/lib/python3/dist-packages",  # Debian's
                  f"/usr/local/lib/{version}/dist-packages", f"/usr/lib/{version}/site-packages"]
    folders = sorted({f for f in candidates if os.path.isdir(f) and os.listdir(f)})
    assert folders, "no base interpreter package folder to try on this machine"
    modules = ["scipy.stats", "sklearn.metrics"] + [m for f in folders for m in _only_there(f)]
    s = Session([(0, PACKAGES_PROBE)], None, sandbox=True)
    try:
        out = s.call("reach", [folders, modules])
    finally:
        s.close()
    assert out.ok, out
    assert out.value.pop("numpy") == "numpy"
    assert all(out.value[f] == [] for f in folders), out.value
    assert all(out.value[m] in ("ModuleNotFoundError", "ImportError") for m in modules), out.value


def test_a_child_that_cannot_isolate_itself_stops_grading(monkeypatch, tmp_path):
    """If isolation fails (here: a kept path that is not there), nothing runs and grading stops loudly."""
    from autograder.batch import jobs
    from autograder.sandbox import SandboxBroken

    monkeypatch.setattr(Session, "_kept_paths", lambda self: command.python_paths() + ["/tmp/ag-missing-kept-path/x"])
    s = Session([(0, "open('/tmp/ran', 'w')\ndef f():\n    return 1\n")], None, sandbox=True)
    with pytest.raises(SandboxBroken, match="FileNotFoundError"):
        s.call("f", [])
    s.close()
    # the self-test of a grading command or worker refuses such a machine with the reason ...
    assert "沙箱无法隔离学生进程" in (self_test() or "")
    # ... and a job that meets it is an infrastructure failure (retried, never recorded), not a zero
    a = "ps1_threshold_metrics"
    src = Path(__file__).resolve().parents[2] / "solutions" / a / "threshold_metrics.ipynb"
    job = jobs.make_job("s", a, "threshold_metrics", src, src, "fp", sandbox=True, limits=Limits())
    monkeypatch.setattr(jobs, "_SANDBOX_TESTED", True)
    with pytest.raises(jobs.JobError, match="无法隔离"):
        jobs.grade_job(job.to_json())


def test_ordinary_notebook_habits_keep_working():
    """What an honest notebook may do: a process pool over a function defined in a cell, threads, numpy."""
    cells = [(0, "import multiprocessing, numpy as np\n\ndef square(x):\n    return x * x\n"),
             (1, "def pool_map():\n    with multiprocessing.get_context('fork').Pool(2) as pool:\n"
                 "        return pool.map(square, range(5)) + [int(np.arange(4).sum())]\n")]
    s = Session(cells, None, sandbox=True)
    try:
        out = s.call("pool_map", [])
        assert out.ok and out.value == [0, 1, 4, 9, 16, 6], out
    finally:
        s.close()
