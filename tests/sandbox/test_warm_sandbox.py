"""Warm sandboxes: one zygote serves many students' runs, and no run leaves anything for the next.

Every test drives the real sandbox (bubblewrap, the zygote, namespaces, seccomp, cgroups) through
:class:`Session` and :mod:`autograder.sandbox.warm`, the way a grading worker does: a session is
closed, its zygote goes back to the process, and the next student's session takes the same zygote.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pytest

from autograder.model import Limits, SandboxSettings
from autograder.sandbox import Session, warm
from autograder.sandbox.cgroup import process_tree

pytestmark = pytest.mark.slow  # real sandboxes

STATE = r'''
import builtins, os, resource, signal, socket, sys, threading
import numpy as np

MARK = "ag-warm-mark"
RLIMITS = sorted(n for n in dir(resource) if n.startswith("RLIMIT_"))
SIGNALS = ("SIGTERM", "SIGINT", "SIGHUP", "SIGUSR1", "SIGUSR2", "SIGALRM", "SIGPROF", "SIGCHLD", "SIGPIPE", "SIGSEGV")

def _exists(pid):
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True

def state():
    """Everything of this process that an earlier run could have changed or left behind."""
    files = []
    for d in ("/tmp", "/dev/shm", "/home/student"):
        files += [f"{d}/{n}" for n in sorted(os.listdir(d))]
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect("\0" + MARK)
        sock = True
    except OSError:
        sock = False
    finally:
        s.close()
    mask = os.umask(0)
    os.umask(mask)
    return {
        "files": files, "env": dict(os.environ), "cwd": os.getcwd(), "umask": mask,
        "signals": {n: repr(signal.getsignal(getattr(signal, n))) for n in SIGNALS},
        "sigmask": sorted(int(x) for x in signal.pthread_sigmask(signal.SIG_BLOCK, [])),
        "itimer": list(signal.getitimer(signal.ITIMER_REAL)),
        "rlimits": {n: list(resource.getrlimit(getattr(resource, n))) for n in RLIMITS},
        "numpy": [repr(np.sum), float(np.sum(np.arange(4.0))), hasattr(np, "ag_mark"), float(np.pi),
                  np.geterr()["divide"], np.get_printoptions()["precision"]],
        "modules": sorted(m for m in sys.modules if m.startswith("ag_")), "builtins": hasattr(builtins, "ag_mark"),
        "path": list(sys.path), "socket": sock, "threads": threading.active_count(),
        "others": [p for p in range(1, 300) if p != os.getpid() and _exists(p)],  # pid 1: this run's init
        "mark_in_memory": _mark_in_memory(),
    }

def _mark_in_memory():
    """Is the other student's secret in memory this process never wrote (fresh heap blocks, live objects)?"""
    import gc
    secret = ("AG-SECRET-" + "OF-THE-OTHER-STUDENT").encode()
    for size in (64, 1000, 5000, 70000, 300000, 2 << 20):
        for _ in range(8):
            if secret in np.empty(size, dtype=np.uint8).tobytes():
                return True
    return any(isinstance(o, (str, bytes)) and secret.decode() in str(o) for o in gc.get_objects())
'''

POLLUTE = STATE + r'''
import time, types

SECRET = "AG-SECRET-" + "OF-THE-OTHER-STUDENT"

def pollute():
    """Change or leave behind everything :func:`state` looks at."""
    for d in ("/tmp", "/dev/shm", "/home/student"):
        with open(f"{d}/{MARK}", "w") as fh:
            fh.write(SECRET)
    os.environ["AG_MARK"] = SECRET
    os.putenv("AG_PUT", "1")
    os.chdir("/tmp")
    os.umask(0o077)
    for n in SIGNALS:
        signal.signal(getattr(signal, n), signal.SIG_IGN if n == "SIGCHLD" else (lambda *a: None))
    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR2, signal.SIGTERM])
    signal.setitimer(signal.ITIMER_REAL, 500.0)
    np.sum = lambda *a, **k: 42.0
    np.ag_mark = SECRET
    np.pi = 3.0
    np.seterr(divide="ignore")
    np.set_printoptions(precision=2)
    builtins.ag_mark = SECRET
    sys.modules["ag_evil"] = types.ModuleType("ag_evil")
    sys.path.insert(0, "/tmp/ag-evil")
    blocks = [np.frombuffer((SECRET * (size // len(SECRET) + 1)).encode()[:size], dtype=np.uint8).copy()
              for size in (64, 1000, 5000, 70000, 300000, 2 << 20) for _ in range(8)]
    del blocks  # freed, as the next run's heap would find it if it shared this one
    threading.Thread(target=time.sleep, args=(300,), daemon=True).start()
    if os.fork() == 0:  # a daemon in a new session holding an abstract socket
        os.setsid()
        if os.fork() == 0:
            srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            srv.bind("\0" + MARK)
            srv.listen()
            time.sleep(300)
        os._exit(0)
    try:
        os.wait()
    except ChildProcessError:  # SIGCHLD ignored above: reaped already
        pass
    for _ in range(1000):  # the grandchild binds on its own time: return once it listens (a busy machine was slower)
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            probe.connect("\0" + MARK)
            break
        except OSError:
            time.sleep(0.01)
        finally:
            probe.close()
    for n in RLIMITS:
        soft, hard = resource.getrlimit(getattr(resource, n))
        low = 3 if hard == resource.RLIM_INFINITY else max(0, hard // 2)
        try:
            resource.setrlimit(getattr(resource, n), (low, low))
        except (ValueError, OSError):
            pass
    return "polluted"
'''


@pytest.fixture(autouse=True)
def _no_idle_zygotes():
    warm.discard_all()
    yield
    warm.discard_all()


def _notebook(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_a_student_leaves_nothing_for_the_next_in_the_same_warm_sandbox(tmp_path):
    """Files (scratch, /tmp, /dev/shm), environment, cwd, umask, module changes (numpy monkeypatched), signal
    handlers and mask, timers, rlimits, threads, processes, sockets and freed memory of one student: none reach
    the next student's run in the same zygote, whose state equals that of a run before the polluter."""
    other = _notebook(tmp_path, "b.ipynb", '{"student": "b"}')
    first = Session([(0, STATE)], other)
    clean = first.call("state", [])
    assert clean.ok, clean
    zygote = first.proc.pid
    first.close()
    assert warm.idle_count() == 1

    polluter = Session([(0, POLLUTE)], _notebook(tmp_path, "a.ipynb", '{"secret": "AG-SECRET-OF-THE-OTHER-STUDENT"}'))
    assert polluter.call("pollute", []).value == "polluted"
    assert polluter.proc.pid == zygote  # the same warm sandbox served the second student
    polluted = polluter.call("state", [])
    assert polluted.ok and polluted.value["files"] and polluted.value["socket"], polluted  # the pollution is real
    z = polluter._zygote
    polluter.close()
    assert process_tree(z.proc.pid) == z.baseline  # the daemon, the thread, every process of the run: gone

    after = Session([(0, STATE)], other)
    again = after.call("state", [])
    try:
        assert after.proc.pid == zygote
        assert again.ok, again
        assert again.value == clean.value
        assert again.value["others"] == [1] and not again.value["mark_in_memory"]
    finally:
        after.close()


SIGNALLER = r'''
import os, signal, time

def visible():
    """The pids this run can see or signal (its PID namespace only), after trying to kill everything."""
    seen = []
    for pid in range(1, 5000):
        try:
            os.kill(pid, 0)
            seen.append(pid)
        except ProcessLookupError:
            pass
        except PermissionError:
            seen.append(pid)
    for pid in range(3, 5000):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    try:
        os.kill(-1, signal.SIGKILL)
    except OSError:
        pass
    return seen

def wait(seconds):
    time.sleep(seconds)
    return os.getpid()
'''


def test_a_student_cannot_see_or_signal_another_students_child():
    """Two workers' warm sandboxes at once: a run sees only its own PID namespace, and its kills reach nobody else."""
    victim, attacker = Session([(0, SIGNALLER)], None), Session([(0, SIGNALLER)], None)
    try:
        assert victim.ensure_started() and attacker.ensure_started()
        assert victim.proc.pid != attacker.proc.pid  # two zygotes: one is in use, so the other is a new one
        victim_before = process_tree(victim.proc.pid)
        out: dict = {}
        t = threading.Thread(target=lambda: out.update(v=victim.call("wait", [3.0], timeout=4.0)))
        t.start()
        time.sleep(0.5)
        seen = attacker.call("visible", [], timeout=4.0)
        t.join()
        assert seen.ok, seen
        assert seen.value == [1, 2]  # its own init and itself: nothing of the other sandbox
        assert out["v"].ok and out["v"].value == 2, out  # the victim's run lived through it
        assert process_tree(victim.proc.pid) == victim_before
    finally:
        victim.close()
        attacker.close()


HANG = "import os, time\ndef spin():\n    while True:\n        pass\ndef crash():\n    os.kill(os.getpid(), 9)\n" \
       "def sleep():\n    time.sleep(60)\ndef ok():\n    return os.getpid()\n"


@pytest.mark.parametrize("fn", ["spin", "crash", "sleep"])
def test_a_child_that_hangs_or_crashes_is_killed_alone(fn):
    """A run that spins, sleeps or dies is ended without the zygote: the next run starts in the same sandbox."""
    s = Session([(0, HANG)], None, limits=Limits(call_timeout=0.5, wall_factor=2.0))
    try:
        assert s.call("ok", []).ok
        zygote = s.proc.pid
        out = s.call(fn, [])
        assert out.failure == ("crash" if fn == "crash" else "timeout"), out
        assert s.proc is not None and s.proc.pid == zygote and s.zygotes_started == 1
        assert s.call("ok", []).ok
        assert s.proc.pid == zygote and s.report.restarts == 1
    finally:
        s.close()
    assert warm.idle_count() == 1  # ... and kept for the next submission


def test_each_run_has_its_own_cpu_accounting_and_notebook(tmp_path):
    """The CPU time a run is judged by starts at zero in every run; each run sees only its own notebook."""
    burn = "import os, time\ndef burn():\n    t = time.process_time()\n    while time.process_time() - t < 1.0:\n" \
           "        pass\ndef listing():\n    return sorted(os.listdir('/home/student'))\n"
    a = Session([(0, burn)], _notebook(tmp_path, "a_nb.ipynb", "{}"))
    try:
        assert a.call("burn", []).ok
        assert a._cpu() >= 0.9
        assert a.call("listing", []).value == ["a_nb.ipynb"]
    finally:
        a.close()
    b = Session([(0, burn)], _notebook(tmp_path, "b_nb.ipynb", "{}"))
    try:
        assert b.ensure_started()
        assert b._cpu() < 0.5  # a fresh cgroup: the earlier student's second of CPU is not counted here
        assert b.call("listing", []).value == ["b_nb.ipynb"]
    finally:
        b.close()


def test_a_zygote_that_died_is_replaced():
    s = Session([(0, HANG)], None)
    assert s.call("ok", []).ok
    dead = s.proc.pid
    s.close()
    os.killpg(dead, signal.SIGKILL)
    time.sleep(0.2)
    s = Session([(0, HANG)], None)
    try:
        assert s.call("ok", []).ok and s.proc.pid != dead and s.zygotes_started == 1
    finally:
        s.close()


def test_a_zygote_started_in_a_thread_that_ended_is_not_reused():
    """bubblewrap dies with the thread that started it: such a zygote is never handed out."""
    pids = []

    def grade():
        s = Session([(0, HANG)], None)
        assert s.call("ok", []).ok
        pids.append(s.proc.pid)
        s.close()

    t = threading.Thread(target=grade)
    t.start()
    t.join()
    s = Session([(0, HANG)], None)
    try:
        assert s.call("ok", []).ok and s.proc.pid != pids[0]
    finally:
        s.close()


@pytest.mark.parametrize("how", ["kept", "runs", "memory", "cold"])
def test_zygotes_are_kept_or_recycled(monkeypatch, how):
    """A zygote is kept for the next session; after MAX_RUNS runs, when its memory grew, or with settings that say
    cold (SandboxSettings.warm False), the next session gets a new one."""
    settings = SandboxSettings(warm=how != "cold")
    if how == "runs":
        monkeypatch.setattr(warm, "MAX_RUNS", 3)
    elif how == "memory":
        monkeypatch.setattr(warm, "MAX_GROWTH", -1)
    s = Session([(0, HANG)], None, sandbox=settings)
    for _ in range(3):
        s.new_run()
        assert s.call("ok", []).ok
    first = s.proc.pid
    s.close()
    assert warm.idle_count() == (1 if how == "kept" else 0)
    s = Session([(0, HANG)], None, sandbox=settings)
    try:
        assert s.call("ok", []).ok and (s.proc.pid == first) == (how == "kept")
    finally:
        s.close()
