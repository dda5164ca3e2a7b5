"""The shipped nginx site in front of a real ``autograder serve``, as deployed (its ``--public-url`` under /submit):
a request for another host name is dropped by nginx and, reaching the service directly, refused by it; a passback
comment or an LTI address never carries a forged ``Host``; the honest address keeps the ``/submit`` prefix.

nginx (Debian's ``nginx-light``) runs the site file with its listen ports moved to free loopback ports and its
upstream pointed at the test's service; everything else is the file as shipped."""

from __future__ import annotations

import http.client
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from tests.service.server import UPGRADED, Server, free_port, make_course

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "deploy" / "nginx" / "course.conf"
HOST = "course.example.edu"


def _raw(port: int, host: str, path: str) -> bytes:
    """The raw answer of nginx on ``port`` to a GET of ``path`` for ``host`` (b"" when it closes without one)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", path, headers={"Host": host})
        r = conn.getresponse()
        return f"{r.status} ".encode() + r.read()
    except (http.client.RemoteDisconnected, ConnectionResetError, ConnectionRefusedError):
        return b""
    finally:
        conn.close()


@pytest.fixture(scope="module")
def proxied(tmp_path_factory):
    folder = tmp_path_factory.mktemp("nginx")
    data = folder / "data"
    make_course(data, ["s001"], config={"assignments": {"ps1_threshold_metrics": {}}})
    server = Server(data, "--jobs", "1", "--forwarded-allow-ips", "127.0.0.1", "--public-url", f"https://{HOST}/submit",
                    "--allowed-host", "127.0.0.1").start()  # the test's own health checks come straight from loopback
    port = free_port()
    site = SITE.read_text(encoding="utf-8")
    site = re.sub(r"listen \[::\]:80[^;]*;\n", "", site)
    site = site.replace("listen 80 default_server;", f"listen 127.0.0.1:{port} default_server;")
    site = site.replace("listen 80;", f"listen 127.0.0.1:{port};")
    site = site.replace("server 127.0.0.1:8060;", f"server 127.0.0.1:{server.port};")
    (folder / "course.conf").write_text(site, encoding="utf-8")
    conf = folder / "nginx.conf"
    conf.write_text(f"worker_processes 1;\npid {folder}/nginx.pid;\nerror_log {folder}/error.log;\ndaemon off;\nevents {{}}\n"
                    f"http {{\naccess_log off;\nclient_body_temp_path {folder};\nproxy_temp_path {folder};\n"
                    f"include {folder}/course.conf;\n}}\n", encoding="utf-8")
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    proc = subprocess.Popen([nginx, "-c", str(conf), "-p", f"{folder}/"], stderr=subprocess.PIPE)
    deadline = time.monotonic() + 30
    while _raw(port, HOST, "/submit/healthz")[:3] != b"200":
        assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read().decode() if proc.poll() is not None else "nginx"
        time.sleep(0.2)
    yield {"port": port, "server": server}
    proc.send_signal(signal.SIGQUIT)
    proc.wait(timeout=30)
    server.stop()


def test_another_host_gets_no_answer_from_nginx(proxied):
    port = proxied["port"]
    assert _raw(port, HOST, f"/submit/c/{UPGRADED}/login").startswith(b"200 ")
    for host in ("evil.example.com", "127.0.0.1", f"{HOST}.evil.example.com"):
        assert _raw(port, host, f"/submit/c/{UPGRADED}/login") == b"", host  # 444: the connection closed unanswered


def test_the_service_refuses_another_host_and_gives_away_only_its_public_address(proxied):
    server = proxied["server"]
    direct = httpx.get(f"{server.base}/healthz", headers={"Host": "evil.example.com"})
    assert direct.status_code == 400 and "evil" not in direct.text
    port = proxied["port"]
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers={"Host": HOST}) as c:
        config = c.get("/submit/lti/config/canvas.json").json()
    assert config["oidc_initiation_url"] == f"https://{HOST}/submit/lti/login"
    assert config["target_link_uri"] == f"https://{HOST}/submit/lti/launch"
