"""``make serve``'s submission service: ``python -m autograder.commands.demo_course`` makes a throwaway course,
prints working access codes, serves the pages and removes its data folder when stopped."""

from __future__ import annotations

import re
import signal
from pathlib import Path

import httpx
import pytest

from .server import REPO, free_port, start_demo_course

pytestmark = pytest.mark.slow


def test_demo_course_serves_pages_with_the_printed_codes():
    port = free_port()
    proc, out = start_demo_course(port)
    try:
        codes = dict(re.findall(r"(?:学生|教师) (\S+?)(?:（\S+）)?\s+访问码 (\S+)", out))
        assert set(codes) == {"s001", "s002", "s003", "王老师"}, out
        data = Path(re.search(r"数据目录 (\S+?)；", out).group(1))
        assert data.is_dir() and f"http://127.0.0.1:{port}/" in out
        base = f"http://127.0.0.1:{port}"
        page = httpx.get(f"{base}/login")
        assert page.status_code == 200 and "访问码" in page.text
        with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {codes['s001']}"}) as c:
            rules = {a["name"]: a for a in c.get("/api/v1/assignments").json()["assignments"]}
        # every assignment the book's assignment page lists, all open
        book = re.findall(r"^\| `(ps\d_\w+)` \|", (REPO / "book" / "assignments" / "index.md").read_text(encoding="utf-8"), re.M)
        assert len(book) == 5 and [n for n, a in rules.items() if a["open"]] == book
        assert rules["ps3_pr_ap"]["late_penalty"] == 0.5  # in its late period: open, with a penalty
        me = httpx.get(f"{base}/api/v1/session", headers={"Authorization": f"Bearer {codes['王老师']}"}).json()
        assert me["role"] == "instructor"
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    assert not data.parent.exists(), "the throwaway data folder is removed"
