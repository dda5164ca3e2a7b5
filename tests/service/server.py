"""A real ``autograder serve`` process for the tests: its own data folder, roster and port.

Starting the service and making its course is :mod:`bench.service_process`'s (the service benchmark starts it
the same way); this module adds what only the tests need and names both for the test modules.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx

from bench.service_process import (  # noqa: F401 - the test modules take these from here
    AUTOGRADER,
    REPO,
    UPGRADED,
    Server,
    free_port,
    make_course,
    notebook_bytes,
    run,
    submit,
)

sys.path.insert(0, str(REPO / "tests" / "autograder"))


#: The browser tests' screenshots are pictures for a person to look at, never compared by a check: taken only with
#: ``COURSE_SCREENSHOTS=1`` (each full-page one cost chromium ~0.3-1 s of CPU; tests/service/test_pages.py took ~40).
SCREENSHOTS = os.environ.get("COURSE_SCREENSHOTS", "") == "1"


def screenshot(page, path: Path, *, full_page: bool = True) -> None:
    """``page`` (a Playwright page) as a PNG at ``path`` when :data:`SCREENSHOTS` is on; else nothing."""
    if SCREENSHOTS:
        path.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(path), full_page=full_page)


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
