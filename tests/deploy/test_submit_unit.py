"""The submission service's unit gives the sandbox what it needs: a delegated cgroup, the v1 set-up as root
before start, and nothing that blocks user namespaces or hides the cgroup file system."""

from __future__ import annotations

import configparser
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
UNIT = ROOT / "deploy" / "systemd" / "course-submit.service"


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
