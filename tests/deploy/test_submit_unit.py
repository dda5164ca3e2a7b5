"""The submission service's unit gives the sandbox what it needs: a delegated cgroup, the v1 set-up as root
before start, and nothing that blocks user namespaces or hides the cgroup file system."""

from __future__ import annotations

import configparser
import re
import shlex
from pathlib import Path
from urllib.parse import urlsplit

from autograder.service.site import allowed_hosts, public_url

ROOT = Path(__file__).resolve().parents[2]
UNIT = ROOT / "deploy" / "systemd" / "course-submit.service"
NGINX = ROOT / "deploy" / "nginx" / "course.conf"


def _service() -> dict[str, str]:
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.optionxform = str
    parser.read_string(UNIT.read_text(encoding="utf-8"))
    return dict(parser["Service"])


def test_the_submit_unit_delegates_cgroups_and_prepares_them_as_root():
    service = _service()
    assert service["User"] == "course" and service["Delegate"] == "yes"
    assert service["ExecStartPre"] == "+/srv/course/.venv/bin/autograder sandbox setup --user course"
    assert "--allow-weak-limits" not in service["ExecStart"]


def test_the_submit_unit_does_not_block_user_namespaces():
    service = _service()
    for key in ("RestrictNamespaces", "PrivateUsers", "ProtectControlGroups"):
        assert key not in service, key


def test_the_submit_unit_serves_the_address_the_nginx_site_passes_on():
    """Behind the shipped nginx site the service is https://<server_name>/submit: the unit says so with
    ``--public-url``.  Without it a service on 127.0.0.1 takes itself for http://127.0.0.1:8060, refuses every
    request nginx passes on (their ``Host`` is the site's name) and would give that address to the LMS."""
    args = shlex.split(_service()["ExecStart"])
    assert "--public-url" in args, args
    given = args[args.index("--public-url") + 1]
    conf = NGINX.read_text(encoding="utf-8")
    (server_name,) = [n for n in re.findall(r"server_name\s+([^;\s]+)", conf) if n != "_"]  # "_": the catch-all
    assert re.search(r"location /submit/ \{", conf)
    url = public_url(given, args[args.index("--host") + 1], int(args[args.index("--port") + 1]), https=False)
    assert url == f"https://{server_name}/submit" and urlsplit(url).hostname in allowed_hosts(url)
