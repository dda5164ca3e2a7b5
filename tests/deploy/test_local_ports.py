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
