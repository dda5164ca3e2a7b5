"""The local addresses agree: ``make serve``'s ports (Makefile) are the ones deploy/local.yml gives the book's
links, and the deployment files run the submission service on the port nginx sends ``/submit/`` to."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlsplit

from coursebook.deployment import load_settings

ROOT = Path(__file__).resolve().parents[2]


def test_make_serve_ports_are_the_local_deployment_setting():
    make = dict(re.findall(r"^(PORT|DEMO_PORT|SUBMIT_PORT)\s*\?=\s*(\d+)$", (ROOT / "Makefile").read_text(encoding="utf-8"), re.M))
    local = load_settings(ROOT / "deploy" / "local.yml")
    assert {k: int(v) for k, v in make.items()} == {"PORT": urlsplit(local.site_url).port, "DEMO_PORT": urlsplit(local.demo_url).port,
                                                    "SUBMIT_PORT": urlsplit(local.submit_url).port}


def test_the_submission_unit_listens_where_nginx_proxies():
    unit = (ROOT / "deploy" / "systemd" / "course-submit.service").read_text(encoding="utf-8")
    site = (ROOT / "deploy" / "nginx" / "course.conf").read_text(encoding="utf-8")
    port = re.search(r"^ExecStart=.* serve .*--port (\d+)", unit, re.M).group(1)
    assert "--data " in unit and f"server 127.0.0.1:{port};" in site
    assert re.search(r"upstream course_submit \{\s*server 127\.0\.0\.1:" + port, site)


PORTS = {"PORT": 9100, "DEMO_PORT": 9150, "SUBMIT_PORT": 9160}


def _make(*args: str) -> str:
    import subprocess

    return subprocess.run(["make", "--no-print-directory", "-s", *args], cwd=ROOT, capture_output=True, text=True,
                          check=True, timeout=60).stdout


def test_make_writes_its_ports_into_the_deployment_setting(tmp_path):
    """``make serve PORT=.. DEMO_PORT=.. SUBMIT_PORT=..``: the setting every target builds or starts with names those ports."""
    site = tmp_path / "site.yml"
    _make("site-config", *(f"{k}={v}" for k, v in PORTS.items()), f"SERVE_SITE={site}")
    settings = load_settings(site)
    assert (settings.site_url, settings.demo_url, settings.submit_url) == (
        "http://127.0.0.1:9100/", "http://127.0.0.1:9150/", "http://127.0.0.1:9160/c/bin-2026/")  # the demo's first course
    default = tmp_path / "default.yml"
    _make("site-config", f"SERVE_SITE={default}")
    assert load_settings(default) == load_settings(ROOT / "deploy" / "local.yml")


def test_every_command_of_make_serve_gets_that_setting(tmp_path):
    site = tmp_path / "site.yml"
    plan = _make("-n", "serve", *(f"{k}={v}" for k, v in PORTS.items()), "LTI_PORT=9170", f"SERVE_SITE={site}")
    commands = {"book": "coursebook.book_build", "pdf": "coursebook.pdf", "demo": "-m demo ",
                "submission service": "autograder.commands.demo_course"}
    for what, marker in commands.items():
        lines = [line for line in plan.splitlines() if marker in line]
        assert lines and all(f"COURSE_SITE_CONFIG='{site}'" in line for line in lines), f"{what}: {lines}"
    assert "--port 9150" in plan and "--port 9160 --lti-port 9170" in plan and "http.server 9100" in plan
    # a published build's own setting is left as it is
    published = _make("-n", "book", "COURSE_SITE_CONFIG=deploy/public.example.yml")
    assert "COURSE_SITE_CONFIG='deploy/public.example.yml'" in published and "serve-site" not in published


def test_the_readme_names_every_port_of_make_serve():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    line = next(line for line in readme.splitlines() if "Ports: `make serve" in line)
    assert all(name in line for name in ("PORT=", "DEMO_PORT=", "SUBMIT_PORT=", "LTI_PORT=")), line
