"""What a cut feedback says about itself (issue 40, item 7), in process (:mod:`.inprocess`): one sentence that names
the moment it becomes full - the last moment a submission can arrive, the late cut-off when late work is accepted
(``AssignmentPolicy.feedback`` is the rule) - on the attempt and in the assignment's facts; a student's extension
moves that moment for them.  Never 「本次反馈只显示：只显示得分。截止后可以看到各用例」 beside a late period.
"""

from __future__ import annotations

import html as htmllib
import re
from datetime import datetime, timedelta, timezone

import pytest

from .inprocess import Site, solution_bytes, upload

A1, A2, A3 = "ps1_threshold_metrics", "ps2_roc_auc", "ps3_pr_ap"
CHINA = timezone(timedelta(hours=8))
T0 = datetime(2026, 12, 1, 12, 0, tzinfo=CHINA)
DEADLINE = datetime(2026, 12, 3, 23, 59, tzinfo=CHINA)
LATE_UNTIL = datetime(2026, 12, 6, 23, 59, tzinfo=CHINA)


@pytest.fixture
def site(tmp_path):
    config = {"assignments": {
        A1: {"deadline": DEADLINE.isoformat(), "feedback_before_deadline": "cases"},
        A2: {"feedback_before_deadline": "score"},  # no deadline
        A3: {"deadline": DEADLINE.isoformat(), "late": {"penalty": 0.5, "until": LATE_UNTIL.isoformat()},
             "feedback_before_deadline": "score"},
    }}
    s = Site(tmp_path, config, ["s001", "s002"], T0.timestamp())
    yield s
    s.db.dispose()


def visible(page: str) -> str:
    return re.sub(r"\s+", " ", htmllib.unescape(re.sub(r"<[^>]+>", " ", page)))


def fact(page: str, name: str) -> str:
    """The text of the assignment page's fact ``name`` (its ``<dt>``)."""
    return visible(re.search(rf"<dt>{name}</dt><dd>(.*?)</dd>", page, re.S).group(1)).strip()


def graded_page(site: Site, who: str, assignment: str) -> str:
    upload(site.client(who), assignment, solution_bytes(assignment))
    site.grade(score=4)
    page, _ = site.signed_in(who)
    return page.get(f"/assignments/{assignment}").text


def test_after_the_deadline_in_a_late_period_the_feedback_names_the_late_cut_off(site):
    site.clock.advance(DEADLINE.timestamp() - site.clock() + 3600)  # the moment: ps3 in its late period
    page = graded_page(site, "s001", A3)
    text = visible(page)
    sentence = "现在只显示得分；迟交期在 2026-12-06 23:59（UTC+08:00）结束，之后可以看到每个用例的结果、输入和期望值。"
    assert sentence in text
    assert fact(page, "反馈") == sentence
    assert "截止后可以看到各用例" not in text and "本次反馈只显示" not in text and "截止前的反馈" not in text
    site.clock.advance(LATE_UNTIL.timestamp() - site.clock() + 1)
    page, _ = site.signed_in("s001")
    html = page.get(f"/assignments/{A3}").text
    assert "现在只显示" not in visible(html) and fact(html, "反馈").startswith("显示全部")


def test_without_late_work_the_deadline_and_for_an_extended_student_their_own(site):
    page = graded_page(site, "s001", A1)
    sentence = "现在只显示每个用例是否通过；本作业在 2026-12-03 23:59（UTC+08:00）截止，之后可以看到每个用例的输入、期望值和你的函数的结果。"
    assert sentence in visible(page) and fact(page, "反馈") == sentence
    teacher, token = site.signed_in("instructor")
    assert teacher.post("/instructor/students/s002/extend", follow_redirects=False,
                        data={"assignment": A3, "deadline": "2026-12-05T12:00", "csrf_token": token}).status_code == 303
    page = graded_page(site, "s002", A3)
    assert "迟交期在 2026-12-08 12:00（UTC+08:00）结束" in fact(page, "反馈")  # their late period moved with the deadline


def test_without_a_deadline_the_feedback_says_only_what_it_shows(site):
    page = graded_page(site, "s001", A2)
    assert "现在只显示得分。" in visible(page) and fact(page, "反馈") == "现在只显示得分。"
    assert "之后" not in fact(page, "反馈")
