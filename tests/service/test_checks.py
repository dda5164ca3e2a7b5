"""A check before spending an attempt (issue 40, item 1's last point), in process (:mod:`.inprocess`): the visible
tests run on the server against an uploaded notebook without counting as an attempt.

What must hold against abuse: a check is never an attempt (no attempt used, nothing counted, nothing on the class's
figures); only the visible cases run (the job says so, and the page drops anything else a worker sends back); it is
bounded (``checks_per_hour`` per student and assignment, one pending check per student, none once closed, none for
staff); the grading loop takes an attempt before any check, and a check's job never shares an attempt's key.  The
same flow in Debian's chromium against a real sandbox: ``test_pages_fairness.py``.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest
import sqlalchemy as sa

from autograder.batch.jobs import Job, visible_part
from autograder.check import all_assignments
from autograder.model import CaseRecord, CaseResult, CellScore, Limits, SubmissionResult
from autograder.service.checks import CHECK_TAG, FOLDER, CheckQueue
from autograder.service.courses import UPGRADED
from autograder.service.database import CHECKS, SUBMISSIONS
from autograder.service.dispatcher import Dispatcher, Lane

from .inprocess import REPO, A, Site, solution_bytes, upload

A1, A2 = "ps1_threshold_metrics", "ps2_roc_auc"
CHINA = timezone(timedelta(hours=8))
T0 = datetime(2026, 12, 1, 12, 0, tzinfo=CHINA)


@pytest.fixture
def site(tmp_path):
    config = {"assignments": {
        A1: {"deadline": (T0 + timedelta(days=3)).isoformat(), "attempts_per_24h": 3, "checks_per_hour": 2},
        A2: {"deadline": (T0 - timedelta(days=1)).isoformat()},  # closed
    }}
    s = Site(tmp_path, config, ["s001", "s002"], T0.timestamp())
    yield s
    s.db.dispose()


def check(client, assignment: str = A1, data: bytes | None = None, **kw):
    return client.post(f"/api/v1/assignments/{assignment}/checks",
                       files={"notebook": ("mine.ipynb", data or solution_bytes(assignment), "application/x-ipynb+json")}, **kw)


def loop(site: Site) -> Dispatcher:
    source = REPO / "solutions" / A1 / f"{A[A1].notebook}.ipynb"
    lane = Lane(UPGRADED.id, site.queue, lambda: site.gradebook, site.service.data_root,
                {A1: (A[A1].notebook, source, "best")}, checks=CheckQueue(site.db, "stub", 30))
    return Dispatcher([lane], lambda: None, sandbox=False, limits=Limits(), scratch=None, log=lambda message: None)


def worker_result(job: Job, *, hidden_too: bool = False) -> dict:
    """What a worker sends back for ``job``: its visible cases, the first failed (and, from a misbehaving worker, a
    hidden case as well)."""
    cases = [CaseRecord(c.id, c.cell, c.points, c.function, c.description, False,
                        CaseResult(i > 0, call=f"{c.function}(...)", expected="1", got="0"))
             for i, c in enumerate(visible_part(all_assignments()[job.assignment]).cases)]
    if hidden_too:
        cases.append(CaseRecord("hidden.secret_case", "a1_hidden_edge", 2, "f", "不该出现的隐藏用例", True,
                                CaseResult(False, call="f(SECRET_INPUT)")))
    result = SubmissionResult(job.student, job.assignment, 1.0, 2.0, {"a1_visible": CellScore(1.0, 2.0)}, cases,
                              fingerprint=job.fingerprint)
    return {"result": result.to_json()}


def run_one(site: Site, d: Dispatcher, **kw) -> Job:
    job = d._claim()
    assert job is not None
    d._record(site.gradebook, job, worker_result(job, **kw), None)
    return job


def test_a_check_uses_no_attempt_and_shows_only_the_visible_cases(site):
    c = site.client("s001")
    page, _ = site.signed_in("s001")
    before = page.get(f"/assignments/{A1}").text
    assert "24 小时内还可提交 3 次" in before and 'for="check-notebook">只检查可见测试</label>' in before
    assert "这一小时内还可检查 2 次" in before
    r = check(c)
    assert r.status_code == 202 and r.json()["status"] == "queued"
    stored = list((site.service.data_root / FOLDER).rglob("*.ipynb"))
    assert len(stored) == 1
    live = page.get(f"/assignments/{A1}/check").text
    assert 'data-pending="1"' in live and "排队中" in live
    job = run_one(site, loop(site), hidden_too=True)
    assert job.visible_only and job.tag.startswith(f"{UPGRADED.id}/{CHECK_TAG}")
    html = page.get(f"/assignments/{A1}").text
    visible_ids = [x.id for x in visible_part(all_assignments()[A1]).cases]
    assert f"可见测试：<b>{len(visible_ids) - 1} / {len(visible_ids)}</b> 个通过" in html
    assert all(i in html for i in visible_ids) and "未通过" in html and "参考实现的结果" in html
    assert "hidden.secret_case" not in html and "SECRET_INPUT" not in html
    assert "24 小时内还可提交 3 次" in html  # no attempt used
    with site.db.read() as con:
        assert con.execute(sa.select(sa.func.count()).select_from(SUBMISSIONS)).scalar() == 0
    assert not any(p.is_file() for p in stored)  # the checked notebook is not kept
    assert c.get("/api/v1/submissions").json()["submissions"] == []
    assert "还没有评分完成的提交" in site.signed_in("instructor")[0].get(f"/instructor/assignments/{A1}/live").text


def test_checks_are_bounded_per_hour_and_one_at_a_time(site):
    c = site.client("s001")
    d = loop(site)
    assert check(c).status_code == 202
    r = check(c)
    assert r.status_code == 429 and "上一次检查还没有完成" in r.json()["error"] and r.headers["retry-after"] == "10"
    run_one(site, d)
    site.clock.advance(600)
    assert check(c).status_code == 202
    run_one(site, d)
    r = check(c)
    assert r.status_code == 429 and "每小时最多检查 2 次" in r.json()["error"]
    assert int(r.headers["retry-after"]) == 3600 - 600  # when the first leaves the rolling hour
    assert upload(c, A1, solution_bytes(A1)).status_code == 202  # attempts are not affected
    page, _ = site.signed_in("s001")
    assert "这一小时内的 2 次检查已用完" in page.get(f"/assignments/{A1}").text
    site.clock.advance(3000)
    assert check(c).status_code == 202
    assert check(site.client("s002")).status_code == 202  # another student's budget is their own


def test_with_no_attempts_left_the_check_keeps_a_button_of_its_own(site):
    c = site.client("s002")
    for _ in range(3):
        assert upload(c, A1, solution_bytes(A1)).status_code == 202
    page, _ = site.signed_in("s002")
    html = page.get(f"/assignments/{A1}").text
    assert 'id="upload"' not in html and "24 小时内的 3 次评分已用完" in html
    assert 'for="check-notebook">只检查可见测试（不占次数）</label>' in html
    assert check(c).status_code == 202


def test_no_check_once_closed_when_turned_off_or_for_staff(site):
    r = check(site.client("s001"), A2)
    assert r.status_code == 403 and "截止" in r.json()["error"]
    page, _ = site.signed_in("s001")
    assert 'id="check"' not in page.get(f"/assignments/{A2}").text
    r = check(site.client("instructor"))
    assert r.status_code == 403 and "不能检查作业" in r.json()["error"]
    session, _ = site.signed_in("s001")
    assert check(session).status_code == 403  # a session without the CSRF token: refused before the body is read


def test_checks_can_be_turned_off(tmp_path):
    s = Site(tmp_path, {"assignments": {A1: {"checks_per_hour": 0}}}, ["s001"], T0.timestamp())
    try:
        r = check(s.client("s001"))
        assert r.status_code == 403 and "没有开放提交前的检查" in r.json()["error"]
        page, _ = s.signed_in("s001")
        html = page.get(f"/assignments/{A1}").text
        assert 'id="check"' not in html and "检查" not in html.split('id="upload-title"')[1].split("提交记录与反馈")[0]
    finally:
        s.db.dispose()


def test_the_loop_takes_an_attempt_before_a_check_and_their_jobs_never_share_a_key(site):
    c = site.client("s001")
    data = solution_bytes(A1)
    assert check(c, data=data).status_code == 202
    assert upload(c, A1, data).status_code == 202  # queued after the check, claimed before it
    d = loop(site)
    first, second = d._claim(), d._claim()
    assert not first.visible_only and second.visible_only
    assert first.submission == second.submission and first.key != second.key
    assert Job.from_json(json.loads(json.dumps(second.to_json()))).visible_only
    with site.db.read() as con:
        assert con.execute(sa.select(CHECKS.c.status)).scalar() == "grading"


def test_visible_part_keeps_exactly_the_cases_of_the_visible_cells():
    for name, assignment in all_assignments().items():
        part = visible_part(assignment)
        assert part.cases and all(c.cell.endswith("_visible") for c in part.cases), name
        assert len(part.cases) == sum(1 for c in assignment.cases if c.cell.endswith("_visible"))
        assert len(assignment.cases) > len(part.cases)  # the hidden ones are left out, the assignment itself unchanged
