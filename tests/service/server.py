"""A real ``autograder serve`` process for the tests: its own data folder, roster and port."""

from __future__ import annotations

import csv
import json
import os
import signal
import socket
import ssl
import subprocess
import sys
import time
from pathlib import Path

import httpx
import yaml

REPO = Path(__file__).resolve().parents[2]
AUTOGRADER = str(REPO / ".venv" / "bin" / "autograder")
sys.path.insert(0, str(REPO / "tests" / "autograder"))


#: The browser tests' screenshots are pictures for a person to look at, never compared by a check: taken only with
#: ``COURSE_SCREENSHOTS=1`` (each full-page one cost chromium ~0.3-1 s of CPU; tests/service/test_pages.py took ~40).
SCREENSHOTS = os.environ.get("COURSE_SCREENSHOTS", "") == "1"


def screenshot(page, path: Path, *, full_page: bool = True) -> None:
    """``page`` (a Playwright page) as a PNG at ``path`` when :data:`SCREENSHOTS` is on; else nothing."""
    if SCREENSHOTS:
        path.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(path), full_page=full_page)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
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
    import`` and ``roster instructor``, as an instructor does (the API tests' course, tests/service/conftest.py),
    in its own folder ``data/courses/<id>``.  Else the data folder is a one-course service's (course
    :data:`UPGRADED`), made through the functions those commands call, in this process (two command starts, about
    1.5 s of CPU, fewer for each of the other courses)."""
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
        """``tls``: (certificate, key) to serve HTTPS with (:func:`self_signed`); the clients trust that certificate.
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


def self_signed(folder: Path) -> tuple[Path, Path]:
    """A throwaway certificate for 127.0.0.1 (and localhost) and its key, as PEM files in ``folder``."""
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
                                                        x509.DNSName("localhost"), x509.DNSName("*.example.test")]),
                           critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    folder.mkdir(parents=True, exist_ok=True)
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path


def notebook_bytes(nb) -> bytes:
    import nbformat

    return nbformat.writes(nb).encode()


def submit(client: httpx.Client, assignment: str, data: bytes, filename: str = "notebook.ipynb", **kw) -> httpx.Response:
    return client.post(f"/api/v1/assignments/{assignment}/submissions",
                       files={"notebook": (filename, data, "application/x-ipynb+json")}, **kw)


def wait_done(client: httpx.Client, ids: list[str], timeout: float = 300) -> dict[str, dict]:
    """Poll until every submission is graded or failed; their status documents by id."""
    deadline = time.monotonic() + timeout
    out: dict[str, dict] = {}
    while time.monotonic() < deadline:
        for sid in ids:
            if sid not in out:
                r = client.get(f"/api/v1/submissions/{sid}")
                assert r.status_code == 200, r.text
                if r.json()["status"] in ("graded", "failed"):
                    out[sid] = r.json()
        if len(out) == len(ids):
            return out
        time.sleep(0.3)
    raise AssertionError(f"not graded in {timeout} s: {sorted(set(ids) - set(out))}")


def files_under(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file())


def dumps(data) -> bytes:
    return json.dumps(data).encode()


def start_demo_course(port: int, *extra: str, timeout: float = 120) -> tuple[subprocess.Popen, str]:
    """``python -m autograder.commands.demo_course`` on ``port``; the process and what it printed until it served."""
    proc = subprocess.Popen([str(REPO / ".venv" / "bin" / "python"), "-m", "autograder.commands.demo_course", "--port", str(port),
                             "--jobs", "1", *extra], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    lines: list[str] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        assert line or proc.poll() is None, "".join(lines)
        lines.append(line)
        if "autograder serve：" in line:
            break
    return proc, "".join(lines)


class Tosser:
    """A page on another port (or, with ``tls``, another host name) of the same machine that sets the service's
    session cookie to ``value`` (cookie tossing: cookies keep neither ports nor, with ``Domain``, sibling hosts
    apart), as a classmate's server could; ``cookies``: the ``Set-Cookie`` values (default: the plain name)."""

    def __init__(self, value: str, cookies: list[str] | None = None, tls: tuple[Path, Path] | None = None) -> None:
        import http.server
        import ssl
        import threading

        sent = cookies or [f"autograder_session-{UPGRADED}={value}; Path=/; HttpOnly; SameSite=Lax"]

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - the standard library's name
                body = "<!DOCTYPE html><title>x</title><p>hello".encode()
                self.send_response(200)
                for cookie in sent:
                    self.send_header("Set-Cookie", cookie)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        if tls is not None:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(str(tls[0]), str(tls[1]))
            self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
