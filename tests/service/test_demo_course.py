"""``make serve``'s submission service: ``python -m autograder.commands.demo_course`` makes two throwaway courses,
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
        base = f"http://127.0.0.1:{port}"
        data = Path(re.search(r"数据目录 (\S+?)；", out).group(1))
        assert data.is_dir() and f"{base}/" in out
        blocks = re.split(r"\n  (?=课程 |管理员 )", out)
        codes = {}
        for block in blocks:
            found = re.search(r"课程 .+?：\S+/c/([a-z0-9-]+)/", block)
            if found:
                codes[found.group(1)] = dict(re.findall(r"(?:学生|教师|助教) (\S+?)(?:（\S+）)?\s+访问码 (\S+)", block))
        assert set(codes) == {"bin-2026", "ml-lab"}, out
        assert set(codes["bin-2026"]) == {"s001", "s002", "s003", "王老师", "赵助教"}
        assert set(codes["ml-lab"]) == {"s101", "s102", "周老师", "李四"}
        front = httpx.get(f"{base}/")
        assert front.status_code == 200 and "评价二分类模型（2026 秋季）" in front.text and "机器学习实践（演示）" in front.text
        page = httpx.get(f"{base}/c/bin-2026/login")
        assert page.status_code == 200 and "访问码" in page.text and "评价二分类模型（2026 秋季）" in page.text
        with httpx.Client(base_url=f"{base}/c/bin-2026/", headers={"Authorization": f"Bearer {codes['bin-2026']['s001']}"}) as c:
            rules = {a["name"]: a for a in c.get("/api/v1/assignments").json()["assignments"]}
        # every assignment the book's assignment page lists, all open
        book = re.findall(r"^\| \{assignment\}`(ps\d_\w+)` \|", (REPO / "book" / "assignments" / "index.md").read_text(encoding="utf-8"), re.M)
        assert len(book) == 5 and [n for n, a in rules.items() if a["open"]] == book
        assert rules["ps3_pr_ap"]["late_penalty"] == 0.5  # in its late period: open, with a penalty
        with httpx.Client(base_url=f"{base}/c/bin-2026/", headers={"Authorization": f"Bearer {codes['bin-2026']['s001']}"}) as c:
            quizzes = {q["name"]: q for q in c.get("/api/v1/quizzes").json()["quizzes"]}
        # a graded quiz and a short timed exam, both open to start
        assert [q["kind"] for q in quizzes.values()] == ["quiz", "exam"] and not any(q["refusal"] for q in quizzes.values())
        assert [q["time_limit_minutes"] for q in quizzes.values()] == [None, 10]
        def me(course: str, who: str) -> httpx.Response:
            return httpx.get(f"{base}/c/{course}/api/v1/session", headers={"Authorization": f"Bearer {codes[course][who]}"})
        assert me("bin-2026", "王老师").json()["role"] == "instructor"
        assert me("bin-2026", "s002").json()["role"] == "student" and me("ml-lab", "李四").json()["role"] == "ta"
        # a code works only in its own course
        assert httpx.get(f"{base}/c/ml-lab/api/v1/session",
                         headers={"Authorization": f"Bearer {codes['bin-2026']['王老师']}"}).status_code == 401
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    assert not data.parent.exists(), "the throwaway data folder is removed"
