"""Grading as the server runs it: an unprivileged grader with a delegated cgroup, and no student process as host root.

The module makes a throwaway system user, hands it a cgroup subtree with the documented command
(``autograder sandbox setup --user NAME``, as root) and runs the real commands as that user, from a
virtual environment made with Debian's ``/usr/bin/python3.11`` (the default ``python3`` of these
machines lives in root's home, mode 0700, which another user cannot run; the environment is kept in
/var/tmp, its packages hard links to those of the checkout's ``.venv``: :func:`_environment`).  While a
batch runs, a watcher reads the host uid of every process in a sandbox cgroup from ``/proc/PID/status``.

Hostile students (each next to honest ones, ``--jobs 2``): a fork hog (25 spinning processes in
sessions of their own), a CPU spinner (the corpus's infinite loop), a memory bomb spread over three
processes (each below the per-process limit, together above the sandbox's cgroup limit) and a student
who signals everything it can and tries to ptrace.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import pwd
import re
import secrets
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import httpx
import pytest

import make_corpus
from make_corpus import A1, A2, A3, append, replace_in_answer, solution

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]
SYSTEM_PYTHON = "/usr/bin/python3.11"
CGROUP_V1 = not Path("/sys/fs/cgroup/cgroup.controllers").exists()

if os.geteuid() != 0:
    pytest.skip("makes a throwaway user and hands it a cgroup subtree: needs root", allow_module_level=True)
if not Path(SYSTEM_PYTHON).exists():
    pytest.skip(f"needs Debian's {SYSTEM_PYTHON} (apt-get install python3.11-venv) for the unprivileged user", allow_module_level=True)

# The fork hog: on the calls with threshold 5.0 (HOG_CASES) binary_metrics forks 25 spinners in sessions of their own
# and never returns; every other call gets the right answer (hogging all 46 calls of binary_metrics, each a 4 CPU-second
# timeout, would make the batch last until the submission's 180-s deadline and show nothing more).
HOG = ("    if isinstance(threshold, float) and threshold == 5.0:\n        import os, time\n        for _ in range(25):\n"
       "            if os.fork() == 0:\n                os.setsid()\n                while True:\n                    pass\n"
       "        while True:\n            time.sleep(1)\n")
HOG_CASES = {"zero.nan_precision", "zero.zero_precision", "zero.raise_precision", "zero.float_zero_ok"}
# the same fork hog on one call only (zero.nan_precision): for a run that needs its spinners seen, not its four stops
ONE_HOG = HOG.replace("threshold == 5.0:", 'threshold == 5.0 and zero_division == "nan":', 1)
BINARY_METRICS = 'def binary_metrics(y_true, y_score, threshold, *, zero_division="nan"):\n'
MEMORY = ("    if list(y_true) == [0, 0, 1, 0]:\n        import os, time\n        for _ in range(3):\n"
          "            if os.fork() == 0:\n                block = bytearray(700 << 20)\n                time.sleep(60)\n"
          "        time.sleep(60)\n")
# signal every process it can see (kill(-1)), every pid number up to 4096, and try to ptrace them
SIGNALLER = ("import ctypes, os, signal\nlibc = ctypes.CDLL(None, use_errno=True)\nseen = []\n"
             "for pid in range(1, 4097):\n    if pid == os.getpid():\n        continue\n    try:\n        os.kill(pid, 0)\n"
             "        seen.append(pid)\n    except OSError:\n        continue\n    libc.ptrace(16, pid, None, None)\n"
             "    os.kill(pid, signal.SIGKILL)\ntry:\n    os.kill(-1, signal.SIGKILL)\nexcept OSError:\n    pass\n"
             "def seen_pids():\n    return seen\n")


def _environment() -> Path:
    """A virtual environment of Debian's python3.11 holding the packages of requirements.txt, shared by the runs
    (cached in /var/tmp).

    Its packages are hard links to those ``make setup`` installed into this checkout's ``.venv`` for Python 3.11
    (the same files, in the environment's own site-packages, where the sandbox binds and masks them as in a
    deployment); installing them all again took about four minutes on a machine without the cached environment.
    Debian 12's python3.11 is 3.11.2: soupsieve 4 (needs 3.11.5) is used by the book's build only, never here."""
    site = REPO / ".venv" / "lib" / "python3.11" / "site-packages"
    if not site.is_dir():
        pytest.fail(f"找不到 {site}（make setup 会创建）")
    reqs = (REPO / "requirements.txt").read_text(encoding="utf-8")
    key = hashlib.sha256(f"{site}\n{reqs}".encode()).hexdigest()[:12]
    venv = Path(f"/var/tmp/autograder-test-py311-{key}")
    with open("/var/tmp/autograder-test-py311.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (venv / ".complete").exists():
            shutil.rmtree(venv, ignore_errors=True)
            subprocess.run([SYSTEM_PYTHON, "-m", "venv", "--without-pip", str(venv)], check=True)
            target = venv / "lib" / "python3.11" / "site-packages"
            linked = subprocess.run(["cp", "-al", f"{site}/.", str(target)], capture_output=True, text=True)
            if linked.returncode != 0:  # another file system: a copy
                shutil.rmtree(target)
                shutil.copytree(site, target, symlinks=True)
            ours = f"#!{REPO / '.venv' / 'bin' / 'python'}"
            for script in (REPO / ".venv" / "bin").iterdir():  # the console scripts, as pip writes them
                if script.is_file() and not script.is_symlink() and not (venv / "bin" / script.name).exists():
                    head, _, rest = script.read_bytes().partition(b"\n")
                    if head.decode(errors="replace").startswith(ours):
                        (venv / "bin" / script.name).write_bytes(f"#!{venv / 'bin' / 'python'}".encode() + b"\n" + rest)
                        (venv / "bin" / script.name).chmod(0o755)
            (venv / ".complete").touch()
    return venv


class User:
    """A throwaway system user; :meth:`popen` runs the autograder of this checkout as that user."""

    def __init__(self, *, delegated: bool) -> None:
        self.name = f"ag{secrets.token_hex(3)}"
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", self.name], check=True)
        pw = pwd.getpwnam(self.name)
        self.uid, self.gid = pw.pw_uid, pw.pw_gid
        self.home = Path(tempfile.mkdtemp(prefix=f"{self.name}-", dir="/var/tmp"))
        os.chmod(self.home, 0o755)
        self.python = _environment() / "bin" / "python"
        if delegated:  # the documented command, as root
            proc = subprocess.run([str(REPO / ".venv" / "bin" / "autograder"), "sandbox", "setup", "--user", self.name],
                                  capture_output=True, text=True)
            assert proc.returncode == 0, proc.stderr

    def give(self, path: Path) -> None:
        for p in [path, *path.rglob("*")]:
            os.chown(p, self.uid, self.gid)

    def popen(self, *args: str, script: str | None = None, **kw) -> subprocess.Popen:
        """``autograder ARGS`` as this user (or ``python SCRIPT ARGS``)."""
        env = {"PATH": "/usr/bin:/bin", "HOME": str(self.home), "LANG": "C.UTF-8", "PYTHONPATH": str(REPO)}
        argv = [str(self.python), *([script] if script else ["-m", "autograder.cli"]), *args]
        if not CGROUP_V1:  # cgroup v2: the grader's own cgroup, delegated as by the service unit's Delegate=yes
            argv = ["systemd-run", "--quiet", "--wait", "--pipe", "--collect", f"--uid={self.uid}", f"--gid={self.gid}",
                    "-p", "Delegate=yes", f"--working-directory={self.home}", *[f"--setenv={k}={v}" for k, v in env.items()], *argv]
            return subprocess.Popen(argv, **kw)
        return subprocess.Popen(argv, user=self.uid, group=self.gid, extra_groups=[], env=env, cwd=self.home, **kw)

    def remove(self) -> None:
        for controller in ("pids", "cpu", "cpuacct", "memory"):
            base = Path("/sys/fs/cgroup") / controller / f"autograder@{self.name}"
            for child in sorted(base.glob("*/"), reverse=True) if base.is_dir() else []:
                if child.is_dir():
                    child.rmdir()
            if base.is_dir():
                base.rmdir()
        shutil.rmtree(self.home, ignore_errors=True)
        subprocess.run(["userdel", self.name], check=False)


@pytest.fixture(scope="module")
def grader():
    user = User(delegated=True)
    yield user
    user.remove()


class UidWatcher(threading.Thread):
    """Reads the host uid of every process in a sandbox cgroup (``autograder-*``) below process ``root`` until stopped.

    Only descendants of ``root`` (the grader) count: other graders may run on the same machine."""

    def __init__(self, root: int) -> None:
        super().__init__(daemon=True)
        self.root = root
        self.uids: dict[int, set[int]] = {}  # uid -> pids seen with it
        self._halt = threading.Event()

    def _descendants(self) -> set[int]:
        children: dict[int, list[int]] = {}
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                ppid = int(stat.read_text().rpartition(")")[2].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(stat.parent.name))
        out, todo = set(), [self.root]
        while todo:
            for kid in children.get(todo.pop(), []):
                if kid not in out:
                    out.add(kid)
                    todo.append(kid)
        return out

    @staticmethod
    def _before_exec(pid: int, text: str) -> bool:
        """The grader's own fork between joining the sandbox's cgroups and ``exec`` of bwrap (it drops to the sandbox
        account just before: :func:`autograder.sandbox.command.preexec`): its parent is outside every sandbox cgroup
        and it still runs the parent's program.  A process started inside a sandbox has a parent in the sandbox."""
        ppid = int(re.search(r"(?m)^PPid:\s+(\d+)", text).group(1))
        try:
            if "/autograder-" in Path(f"/proc/{ppid}/cgroup").read_text():
                return False
            return os.readlink(f"/proc/{pid}/exe") == os.readlink(f"/proc/{ppid}/exe")
        except OSError:
            return False

    def run(self) -> None:
        while not self._halt.is_set():
            for pid in self._descendants():
                try:
                    cgroups = Path(f"/proc/{pid}/cgroup").read_text()
                    text = Path(f"/proc/{pid}/status").read_text()
                except OSError:
                    continue
                if "/autograder-" in cgroups and not self._before_exec(pid, text):
                    uid = int(re.search(r"(?m)^Uid:\s+(\d+)", text).group(1))
                    self.uids.setdefault(uid, set()).add(pid)
            time.sleep(0.05)

    def stop(self) -> dict[int, set[int]]:
        self._halt.set()
        self.join()
        return self.uids


def _batch(root: Path, students: dict[str, tuple[str, object]]) -> Path:
    import nbformat

    from autograder.check.specs import all_assignments

    for student, (assignment, nb) in students.items():
        path = root / "subs" / student / assignment / f"{all_assignments()[assignment].notebook}.ipynb"
        path.parent.mkdir(parents=True)
        nbformat.write(nb, str(path))
    return root / "subs"


def _results(out: Path) -> dict[str, dict]:
    results = [json.loads(f.read_text(encoding="utf-8")) for f in (out / "results").glob("*/*.json")]
    return {f"{r['student']}/{r['assignment']}": r for r in results}


def _failed_cases(result: dict) -> set[str]:
    return {c["id"] for c in result["cases"] if not c["passed"]}


def test_an_unprivileged_grader_grades_a_hostile_batch_with_cgroup_limits(grader):
    students = {"honest1": (A1, solution(A1)), "honest2": (A2, solution(A2)), "honest3": (A3, solution(A3)),
                "hog": (A1, replace_in_answer(A1, BINARY_METRICS, BINARY_METRICS + HOG)),
                "spinner": (A2, make_corpus.build()["attack_infinite_loop"][1]),
                "bomb": (A3, replace_in_answer(A3, "def average_precision(y_true, y_score):\n",
                                               "def average_precision(y_true, y_score):\n" + MEMORY)),
                "signaller": (A1, append(solution(A1), SIGNALLER))}
    subs = _batch(grader.home / "batch", students)
    out = grader.home / "batch" / "out"
    grader.give(grader.home / "batch")
    t0 = time.monotonic()
    # --call-timeout 1: every hostile call is stopped by a limit, the honest ones need milliseconds; the hog's four
    # calls then cost 4 CPU seconds instead of 16 and the bomb's sleeping call 7 s of wall clock (5 x 1 + 2) instead of 22
    proc = grader.popen("grade", str(subs), "--out", str(out), "--jobs", "2", "--call-timeout", "1",
                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    watcher = UidWatcher(proc.pid)
    watcher.start()
    stdout, stderr = proc.communicate(timeout=900)
    uids = watcher.stop()
    assert proc.returncode == 0, stderr[-3000:]
    assert "CPU 时间 = cgroup" in stderr and "内存 = per sandbox" in stderr and "进程数 = per sandbox" in stderr, stderr[:2000]
    limits = json.loads((out / "run.json").read_text(encoding="utf-8"))["limits"]
    assert (limits["cpu_time"], limits["memory"], limits["processes"]) == ("cgroup", "per sandbox", "per sandbox"), limits
    assert all(f"autograder@{grader.name}" in p for p in limits["cgroup_parent"].values()) and limits["cgroup_parent"], limits
    assert (limits["sandbox_user"], limits["sandbox_uid"]) == (grader.name, grader.uid), limits

    results = _results(out)
    for student in ("honest1", "honest2", "honest3"):
        r = next(v for k, v in results.items() if k.startswith(student + "/"))
        assert r["score"] == r["max_score"], (student, r["notes"], _failed_cases(r))
    hog = next(v for k, v in results.items() if k.startswith("hog/"))
    # its hogging calls fail with a reason; its other calls (some right after a stopped hogging one) are unharmed
    assert _failed_cases(hog) == HOG_CASES, (_failed_cases(hog), hog["notes"])
    assert all(c["reason"] for c in hog["cases"] if not c["passed"]), hog["cases"][:3]
    spinner = next(v for k, v in results.items() if k.startswith("spinner/"))
    assert _failed_cases(spinner) == {"edge.auc_two_samples"}, ([c["reason"] for c in spinner["cases"] if not c["passed"]][:5],
                                                                spinner["notes"], spinner["seconds"])
    assert any(e["type"] == "_CellTimeout" for e in spinner["cell_errors"]), spinner["cell_errors"]
    bomb = next(v for k, v in results.items() if k.startswith("bomb/"))
    assert _failed_cases(bomb) == {"edge.ap_single_positive"}, _failed_cases(bomb)
    signaller = next(v for k, v in results.items() if k.startswith("signaller/"))
    assert signaller["score"] == signaller["max_score"], _failed_cases(signaller)  # it only hurt its own sandbox

    assert uids, "no sandbox process was seen"
    assert set(uids) == {grader.uid}, {u: sorted(p)[:5] for u, p in uids.items()}
    print(f"\nunprivileged batch of {len(students)}: {time.monotonic() - t0:.1f} s ("
          + ", ".join(f"{k}: {v['seconds']:.0f} s" for k, v in sorted(results.items())) + f")\n{stderr.splitlines()[0]}")


def test_a_root_grader_runs_every_sandbox_as_an_unprivileged_account(tmp_path):
    subs = _batch(tmp_path, {"honest": (A1, solution(A1)), "hog": (A1, replace_in_answer(A1, BINARY_METRICS, BINARY_METRICS + ONE_HOG))})
    # --call-timeout 1: the hog's one hogging call is stopped after 1 CPU second (its 25 spinners live long enough for
    # the watcher; the honest one takes ~1 s; the four stops of HOG are the batch test's)
    proc = subprocess.Popen([str(REPO / ".venv" / "bin" / "autograder"), "grade", str(subs), "--out", str(tmp_path / "out"),
                             "--jobs", "2", "--call-timeout", "1"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    watcher = UidWatcher(proc.pid)
    watcher.start()
    _, stderr = proc.communicate(timeout=600)
    uids = watcher.stop()
    assert proc.returncode == 0, stderr[-3000:]
    nobody = pwd.getpwnam("nobody").pw_uid
    assert uids and set(uids) == {nobody}, {u: sorted(p)[:5] for u, p in uids.items()}
    limits = json.loads((tmp_path / "out" / "run.json").read_text(encoding="utf-8"))["limits"]
    assert (limits["sandbox_user"], limits["sandbox_uid"], limits["grader_user"]) == ("nobody", nobody, "root"), limits
    honest = next(v for k, v in _results(tmp_path / "out").items() if k.startswith("honest/"))
    assert honest["score"] == honest["max_score"], _failed_cases(honest)


def _serve(user: User, data: Path, *extra: str) -> tuple[subprocess.Popen, str, Path]:
    from tests.service.server import free_port

    port = free_port()
    log = user.home / f"serve-{port}.log"
    with log.open("w") as fh:
        proc = user.popen("serve", "--data", str(data), "--port", str(port), "--jobs", "1", *extra,
                          stdout=subprocess.DEVNULL, stderr=fh)
    return proc, f"http://127.0.0.1:{port}", log


def _wait_up(proc: subprocess.Popen, base: str, log: Path, timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, log.read_text()[-3000:]
        try:
            if httpx.get(base + "/healthz", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise AssertionError(log.read_text()[-3000:])


def test_the_service_as_an_unprivileged_user_grades_an_upload(grader):
    from tests.service.server import UPGRADED, make_course, notebook_bytes, submit, wait_done

    data = grader.home / "service" / "data"
    codes = make_course(data, ["s001"])
    grader.give(grader.home / "service")
    proc, base, log = _serve(grader, data)
    try:
        _wait_up(proc, base, log)
        with httpx.Client(base_url=f"{base}/c/{UPGRADED}/", headers={"Authorization": f"Bearer {codes['s001']}"}, timeout=60) as c:
            r = submit(c, A1, notebook_bytes(solution(A1)))
            assert r.status_code == 202, r.text
            done = wait_done(c, [r.json()["id"]])[r.json()["id"]]
        assert done["status"] == "graded" and done["score"] == done["max_score"], done
        text = log.read_text()
        assert "CPU 时间 = cgroup" in text and f"autograder@{grader.name}" in text, text[-2000:]
    finally:
        proc.terminate()
        proc.wait(timeout=60)


def test_the_service_refuses_weak_limits_unless_told(tmp_path):
    user = User(delegated=False)  # no cgroup subtree of its own: wall clock, per-process memory, per-user processes
    try:
        from tests.service.server import make_course

        data = user.home / "service" / "data"
        make_course(data, ["s001"])
        user.give(user.home / "service")
        proc, base, log = _serve(user, data)
        assert proc.wait(timeout=120) == 2
        text = log.read_text()
        assert "拒绝启动" in text and "CPU 时间不按 cgroup 计" in text and "内存上限不是每个沙箱的" in text \
            and "进程数上限不是每个沙箱的" in text and "--allow-weak-limits" in text, text
        proc, base, log = _serve(user, data, "--allow-weak-limits")
        try:
            _wait_up(proc, base, log)
            assert "CPU 时间 = wall clock" in log.read_text()
        finally:
            proc.terminate()
            proc.wait(timeout=60)
    finally:
        user.remove()


ATTACK = '''import ctypes, errno, os, signal, time
libc = ctypes.CDLL(None, use_errno=True)


def attack(targets):
    seen = {}
    for name, pid in targets.items():
        try:
            os.kill(pid, signal.SIGKILL)
            seen[name] = "killed"
        except ProcessLookupError:
            seen[name] = "not found"
        except PermissionError:
            seen[name] = "denied"
    try:
        os.kill(-1, signal.SIGKILL)
    except OSError:
        pass
    kid = os.fork()
    if kid == 0:
        time.sleep(30)
        os._exit(0)
    seen["ptrace"] = [libc.ptrace(16, kid, None, None), errno.errorcode.get(ctypes.get_errno(), "?")]
    os.kill(kid, signal.SIGKILL)
    os.waitpid(kid, 0)
    return seen
'''


# run by the grader's account: one victim sandbox, one attacker sandbox; prints the victim's host uids
ATTACK_RUN = """import json, os, sys
from autograder.sandbox import Session
from autograder.sandbox.cgroup import process_tree

victim = Session([(0, "def alive():\\n    return 1\\n")], None)
attacker = Session([(0, open(sys.argv[1]).read())], None)
try:
    assert victim.call("alive", []).ok
    victim_pids = sorted(pid for pid, _ in process_tree(victim.proc.pid))
    targets = {"grader": os.getpid(), "victim_bwrap": victim.proc.pid, **{f"victim_{p}": p for p in victim_pids}}
    out = attacker.call("attack", [targets])
    assert out.ok, out
    assert {k: v for k, v in out.value.items() if k != "ptrace"} == {k: "not found" for k in targets}, out.value
    assert out.value["ptrace"] == [-1, "EPERM"], out.value
    assert victim.call("alive", []).ok and sorted(pid for pid, _ in process_tree(victim.proc.pid)) == victim_pids
    print(json.dumps({"uids": sorted({os.stat(f"/proc/{p}").st_uid for p in victim_pids + [victim.proc.pid]})}))
finally:
    victim.close()
    attacker.close()
"""


def test_a_sandbox_cannot_signal_or_ptrace_another_sandbox_or_the_grader(grader):
    """From the student's side: the grader's and another sandbox's processes are not even visible (also when they
    are the same host account: the unprivileged grader itself, or ``nobody`` for every sandbox of a root grader),
    kill(-1) reaches only the attacker's own namespace, and ptrace is denied."""
    script, attack = grader.home / "attack_run.py", grader.home / "attack.py"
    script.write_text(ATTACK_RUN, encoding="utf-8")
    attack.write_text(ATTACK, encoding="utf-8")
    as_root = subprocess.run([str(REPO / ".venv" / "bin" / "python"), str(script), str(attack)],
                             capture_output=True, text=True, timeout=120)
    assert as_root.returncode == 0, as_root.stderr[-3000:]
    assert json.loads(as_root.stdout.splitlines()[-1])["uids"] == [pwd.getpwnam("nobody").pw_uid], as_root.stdout
    p = grader.popen(str(attack), script=str(script), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 0, err[-3000:]
    assert json.loads(out.splitlines()[-1])["uids"] == [grader.uid], out
