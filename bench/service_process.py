"""A real ``autograder serve`` process with a course of its own: the service benchmark (bench_service.py) and
the service's tests (tests/service/server.py) both start the service this way, so the benchmark measures what the
tests check.  Nothing here imports the tests: the dependency points from tests/ to bench/, never back.
"""

from __future__ import annotations

import csv
import os
import signal
import socket
import ssl
import subprocess
import time
from pathlib import Path

import httpx
import yaml

REPO = Path(__file__).resolve().parents[1]
AUTOGRADER = str(REPO / ".venv" / "bin" / "autograder")


def free_port() -> int:
    """A TCP port on loopback that was free a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """``autograder ARGS``; its output, after checking that it succeeded."""
    proc = subprocess.run([AUTOGRADER, *args], capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


#: The course of a data folder made by :func:`make_course` without ``cli``: a one-course service's database,
#: which ``autograder serve`` upgrades in place into a site whose course ``default`` keeps the folder.
UPGRADED = "default"


def make_course(data: Path, students: list[str], *, db: str | None = None, config: dict | None = None,
                cli: str | None = None) -> dict[str, str]:
    """Roster, codes (student id -> code, plus ``"instructor"``) and ``course.yml`` of one course in ``data``.

    ``cli``: a course id; the course is made with ``autograder course add`` and filled with ``autograder roster
    import`` and ``roster instructor``, as an instructor does, in its own folder ``data/courses/<id>``.  Else the
    data folder is a one-course service's (course :data:`UPGRADED`), made through the functions those commands
    call, in this process (two command starts, about 1.5 s of CPU, fewer for each of the other courses)."""
    data.mkdir(parents=True, exist_ok=True)
    roster = data.parent / f"{data.name}-roster.csv"
    roster.write_text("student_id,name\n" + "".join(f"{s},学生 {s}\n" for s in students), encoding="utf-8")
    if cli:
        db_args = ["--db", db] if db else []
        policy = []
        if config is not None:
            policy_file = data.parent / f"{data.name}-{cli}.yml"
            policy_file.write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
            policy = ["--config", str(policy_file)]
        run("course", "add", cli, "--title", f"测试课程 {cli}", "--data", str(data), *policy, *db_args)
        codes_file = data.parent / f"{data.name}-{cli}-codes.csv"
        run("roster", "import", str(roster), "--data", str(data), "--course", cli, "--codes", str(codes_file), *db_args)
        codes = {r["student_id"]: r["code"] for r in csv.DictReader(codes_file.open(encoding="utf-8"))}
        codes["instructor"] = run("roster", "instructor", "王老师", "--data", str(data), "--course", cli, *db_args).stdout.strip()
        return codes
    codes = _enroll_in_process(data, roster, db)
    if config is not None:
        (data / "course.yml").write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
    return codes


def _enroll_in_process(data: Path, roster: Path, db: str | None) -> dict[str, str]:
    """What ``autograder roster import ROSTER`` and ``roster instructor 王老师`` do (autograder.commands.roster), in
    this process: the data folder made private, the tables, the accounts and their codes."""
    from autograder.service.accounts import enroll
    from autograder.service.database import Database, keep_private
    from autograder.service.roster import instructor_code, read_roster
    from autograder.service.schema import prepare
    from autograder.store.urls import database_url

    mask = os.umask(0o077)  # keep_private sets the service's umask; this process keeps its own
    try:
        keep_private(data)
        database = Database(database_url(db, data.resolve()))
        try:
            prepare(database)
            codes = {student.student_id: code for student, code in enroll(database, read_roster(roster))}
            codes["instructor"] = instructor_code(database, "王老师")
        finally:
            database.dispose()
    finally:
        os.umask(mask)
    return codes


class Server:
    """``autograder serve`` on a free port; :meth:`kill` (SIGKILL) and :meth:`start` again at will.

    ``base`` is the site's address (its origin), ``url`` the course's (``base`` + ``/c/<course>``), where
    :meth:`client` sends its requests."""

    def __init__(self, data: Path, *extra: str, db: str | None = None, tls: tuple[Path, Path] | None = None,
                 course: str = UPGRADED, public_host: str | None = None) -> None:
        """``tls``: (certificate, key) to serve HTTPS with; the clients trust that certificate.
        ``public_host``: the host name of the service's public address (``--public-url``; 127.0.0.1 stays allowed
        for the clients)."""
        self.data, self.extra, self.db = data, list(extra), db
        self.port = free_port()
        self.verify: ssl.SSLContext | bool = True
        if tls is not None:
            self.extra += ["--ssl-certfile", str(tls[0]), "--ssl-keyfile", str(tls[1])]
            self.verify = ssl.create_default_context(cafile=str(tls[0]))
        self.base = f"{'https' if tls else 'http'}://127.0.0.1:{self.port}"
        if public_host is not None:
            self.extra += ["--public-url", f"{'https' if tls else 'http'}://{public_host}:{self.port}", "--allowed-host", "127.0.0.1"]
        self.url = f"{self.base}/c/{course}"
        self.log = data.parent / f"{data.name}-serve-{self.port}.log"
        self.proc: subprocess.Popen | None = None

    def start(self, timeout: float = 180) -> "Server":
        cmd = [AUTOGRADER, "serve", "--data", str(self.data), "--port", str(self.port), *self.extra]
        if self.db:
            cmd += ["--db", self.db]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=self.log.open("a"))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"autograder serve ended ({self.proc.returncode}): {self.log.read_text()[-3000:]}")
            try:
                if httpx.get(self.base + "/healthz", timeout=1, verify=self.verify).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        raise AssertionError(f"autograder serve did not start in {timeout} s: {self.log.read_text()[-3000:]}")

    def client(self, code: str | None = None, source: str | None = None, **kw) -> httpx.Client:
        """A client sending ``code``; ``source``: another loopback address to send from (rate limits are per address)."""
        headers = {"Authorization": f"Bearer {code}"} if code else {}
        if source:
            kw["transport"] = httpx.HTTPTransport(local_address=source, verify=self.verify)
        return httpx.Client(base_url=self.url + "/", headers=headers, timeout=60, verify=self.verify, **kw)

    def kill(self) -> None:
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=30)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()


def notebook_bytes(nb) -> bytes:
    """``nb`` (an nbformat notebook) as the bytes of an ``.ipynb`` upload."""
    import nbformat

    return nbformat.writes(nb).encode()


def submit(client: httpx.Client, assignment: str, data: bytes, filename: str = "notebook.ipynb", **kw) -> httpx.Response:
    """Upload ``data`` as a submission of ``assignment`` through the service's API."""
    return client.post(f"/api/v1/assignments/{assignment}/submissions",
                       files={"notebook": (filename, data, "application/x-ipynb+json")}, **kw)
