"""A whole-assignment regrade (issue 40, item 14), in process (:mod:`.inprocess`): the button asks first, and while
the attempts wait to be graded again the dashboard's histogram and case figures and the students' pages keep showing
their previous results, with a note that a regrade is in progress (never 「还没有评分完成的提交」 nor 「排队中 得分：—」).
The browser's confirmation itself: ``test_pages_fairness.py``.
"""

from __future__ import annotations

import html as htmllib
import re

import pytest

from .inprocess import Site, solution_bytes, upload

A1 = "ps1_threshold_metrics"
STUDENTS = ["s001", "s002"]


@pytest.fixture
def site(tmp_path):
    s = Site(tmp_path, {"assignments": {A1: {"attempts_per_24h": 5, "feedback_before_deadline": "full"}}}, STUDENTS, 1.8e9)
    yield s
    s.db.dispose()


def visible(page: str) -> str:
    return re.sub(r"\s+", " ", htmllib.unescape(re.sub(r"<[^>]+>", " ", page)))


def test_the_regrade_button_asks_first_and_names_how_many(site):
    for who in STUDENTS:
        upload(site.client(who), A1, solution_bytes(A1))
    site.grade(score=7)
    teacher, _ = site.signed_in("instructor")
    page = teacher.get(f"/instructor/assignments/{A1}").text
    form = re.search(r'<form[^>]*id="regrade-all"[^>]*>', page).group(0)
    assert "data-confirm=" in form and "全部 2 份提交" in htmllib.unescape(form)


def test_while_a_regrade_runs_everyone_sees_the_kept_results(site):
    sids = [upload(site.client(who), A1, solution_bytes(A1)).json()["id"] for who in STUDENTS]
    site.grade(score=7)
    teacher, token = site.signed_in("instructor")
    r = teacher.post(f"/instructor/assignments/{A1}/regrade", data={"csrf_token": token}, follow_redirects=False)
    assert r.status_code == 303
    assert all(site.client("instructor").get(f"/api/v1/submissions/{s}").json()["status"] == "queued" for s in sids)

    board = visible(teacher.get(f"/instructor/assignments/{A1}/live").text)
    assert "还没有评分完成的提交" not in board
    assert "2 名学生，满分" in board and "平均 7.0" in board  # the histogram of the kept results
    assert "还有 2 份在重新评分" in board and "重新评分进行中 ：0 / 2" in board and "重新评分中 2" in board

    student, _ = site.signed_in("s001")
    for path in (f"/assignments/{A1}", f"/assignments/{A1}/live", "/", f"/submissions/{sids[0]}"):
        shown = visible(student.get(path).text)
        assert "得分：—" not in shown and "排队中" not in shown, path
        assert "7 / 10" in shown, path
    shown = visible(student.get(f"/assignments/{A1}").text)
    assert "重新评分中" in shown and "这里显示的是上一次的评分结果，它仍然计入成绩" in shown
    assert "目前计入成绩： 7 / 10" in shown

    site.grade(score=9)
    shown = visible(student.get(f"/assignments/{A1}").text)
    assert "重新评分中" not in shown and "9 / 10" in shown
    board = visible(teacher.get(f"/instructor/assignments/{A1}/live").text)
    assert "重新评分已完成 ：2 / 2" in board, board
    assert "在重新评分" not in board, board
    assert "平均 9.0" in board, board
