"""The course policy through the real web layer and core, in process (:mod:`.inprocess`): a clock the test moves
instead of waiting for deadlines and 24-hour windows, a stub grader instead of the sandbox.

The same rules are tested once against a real ``autograder serve`` (``test_api.py``, ``test_pages.py``); here
they are followed across time: before and after a deadline, through a rolling 24-hour window, after a regrade.
"""

from __future__ import annotations

import csv
import io
from datetime import datetime, timedelta, timezone

import pytest
import sqlalchemy as sa

from autograder.service.database import COUNTING, SIGN_IN_FAILURES
from autograder.service.errors import NotSignedIn, TooMany
from autograder.service.policy import DAY

from .inprocess import Site, solution_bytes, upload

A1, A2, A3, A4 = "ps1_threshold_metrics", "ps2_roc_auc", "ps3_pr_ap", "ps4_calibration"
CHINA = timezone(timedelta(hours=8))
T0 = datetime(2026, 12, 1, 12, 0, tzinfo=CHINA)
DEADLINE = T0 + timedelta(hours=1)
STUDENTS = ["s001", "s002", "s003", "s004"]
NB = {a: solution_bytes(a) for a in (A1, A2, A3, A4)}


def _config() -> dict:
    return {"login_failures": {"max": 5, "per_account": 3, "window_minutes": 15}, "assignments": {
        A1: {"deadline": DEADLINE.isoformat(), "attempts_per_24h": 2, "feedback_before_deadline": "cases"},
        A2: {"deadline": DEADLINE.isoformat(), "late": {"penalty": 0.5, "until": (DEADLINE + timedelta(days=1)).isoformat()},
             "feedback_before_deadline": "score", "counts": "last"},
        A3: {"deadline": (T0 - timedelta(days=1)).isoformat()},
        A4: {"attempts_per_24h": 2},
    }}


@pytest.fixture
def site(tmp_path):
    s = Site(tmp_path, _config(), STUDENTS, T0.timestamp())
    yield s
    s.db.dispose()


def _grades(site: Site) -> dict[tuple[str, str], float]:
    r = site.client("instructor").get("/api/v1/grades.csv")
    assert r.status_code == 200
    rows = list(csv.DictReader(io.StringIO(r.content.decode("utf-8-sig"))))
    assert {row["student_id"] for row in rows} == set(STUDENTS)  # everyone enrolled has rows, submitted or not
    return {(row["student_id"], row["assignment"]): float(row["score"]) for row in rows if row["score"]}  # "": not submitted


def test_feedback_turns_full_at_the_deadline_and_uploads_close(site):
    c = site.client("s001")
    sid = upload(c, A1, NB[A1]).json()["id"]
    site.grade(score=4)
    url = c.get(f"/api/v1/submissions/{sid}").json()["feedback_url"]
    before = c.get(url).text
    assert "本次反馈只显示" in before and "<th>输入</th>" not in before
    assert "<th>输入</th>" in site.client("instructor").get(url).text  # instructors see everything at once
    site.clock.advance(DEADLINE.timestamp() - site.clock() + 1)
    after = c.get(url).text
    assert "本次反馈只显示" not in after and "<th>输入</th>" in after
    r = upload(c, A1, NB[A1])
    assert r.status_code == 403 and "已于 2026-12-01T13:00:00+08:00 截止" in r.json()["error"]
    assert {a["name"]: a["open"] for a in c.get("/api/v1/assignments").json()["assignments"]}[A1] is False


def test_attempts_come_back_one_by_one_as_the_24_hours_roll(site):
    c = site.client("s002")
    first = upload(c, A4, NB[A4])
    site.clock.advance(600)
    assert upload(c, A4, NB[A4]).status_code == 202 and first.status_code == 202
    site.clock.advance(60)
    r = upload(c, A4, NB[A4])
    assert r.status_code == 429 and "24 小时内最多评分 2 次" in r.json()["error"]
    assert int(r.headers["retry-after"]) == DAY - 660  # the first attempt leaves the window then
    site.clock.advance(DAY - 660 - 1)
    assert upload(c, A4, NB[A4]).status_code == 429
    site.clock.advance(1)
    assert upload(c, A4, NB[A4]).status_code == 202
    r = upload(c, A4, NB[A4])
    assert r.status_code == 429 and int(r.headers["retry-after"]) == 600  # then the second one, 10 minutes later


def test_attempt_refusals_agree_between_the_page_and_the_api(site):
    """The page's "no attempts left" and the API's 429 come from one rule (with the student's extra attempts)."""
    c = site.client("s003")
    for _ in range(2):
        assert upload(c, A1, NB[A1]).status_code == 202
    c, csrf = site.signed_in("s003")
    assert "24 小时内的 2 次评分已用完" in c.get(f"/assignments/{A1}").text
    assert upload(c, A1, NB[A1], headers={"X-CSRF-Token": csrf}).status_code == 429
    teacher, token = site.signed_in("instructor")
    r = teacher.post("/instructor/students/s003/attempts", data={"assignment": A1, "extra": "1", "csrf_token": token},
                     follow_redirects=False)
    assert r.status_code == 303
    assert "24 小时内还可提交 1 次（共 3 次）" in c.get(f"/assignments/{A1}").text
    assert upload(c, A1, NB[A1], headers={"X-CSRF-Token": csrf}).status_code == 202


def test_late_work_counts_with_its_penalty_in_every_place(site):
    c = site.client("s004")
    site.clock.advance(DEADLINE.timestamp() - site.clock() + 60)
    sid = upload(c, A2, NB[A2]).json()["id"]
    site.grade()
    doc = c.get(f"/api/v1/submissions/{sid}").json()
    assert (doc["late"], doc["raw_score"], doc["score"], doc["penalty"]) == (True, 10, 5, 0.5)
    assert _grades(site)[("s004", A2)] == 5 and site.gradebook.scores[("s004", A2)] == 5
    teacher, _ = site.signed_in("instructor")
    assert "5 / 10" in teacher.get("/instructor/students").text
    site.clock.advance(DAY + 60)  # past the late cut-off: closed for good
    r = upload(c, A2, NB[A2])
    assert r.status_code == 403 and "迟交期也已结束" in r.json()["error"]


def test_a_regrade_of_the_counting_attempt_leaves_one_story(site):
    """The counting score is the counting submission's: after a regrade, grades.csv, the pages, the API and the
    gradebook all follow it, and service_counting stores no score of its own."""
    c = site.client("s001")
    sid = upload(c, A1, NB[A1]).json()["id"]
    site.grade()
    assert _grades(site)[("s001", A1)] == 10
    teacher, token = site.signed_in("instructor")
    assert teacher.post(f"/instructor/submissions/{sid}/regrade", data={"csrf_token": token},
                        follow_redirects=False).status_code == 303
    assert c.get(f"/api/v1/submissions/{sid}").json()["status"] == "queued"
    assert _grades(site)[("s001", A1)] == 10  # still counts with its last result while it is graded again
    assert site.grade(score=3) == [sid]  # graded again, as if a hidden test had been corrected
    assert site.gradebook.scores[("s001", A1)] == 3
    assert c.get(f"/api/v1/submissions/{sid}").json()["score"] == 3
    assert _grades(site)[("s001", A1)] == 3
    assert "3 / 10" in teacher.get("/instructor/students").text
    assert set(COUNTING.c.keys()) == {"student_id", "assignment", "submission_id", "updated_at"}


def test_an_extension_reopens_a_closed_assignment_for_one_student(site):
    c, other = site.client("s002"), site.client("s003")
    assert upload(c, A3, NB[A3]).status_code == 403
    teacher, token = site.signed_in("instructor")
    later = (T0 + timedelta(days=2)).strftime("%Y-%m-%dT%H:%M")
    r = teacher.post("/instructor/students/s002/extend", data={"assignment": A3, "deadline": later, "csrf_token": token},
                     follow_redirects=False)
    assert r.status_code == 303
    assert upload(c, A3, NB[A3]).status_code == 202
    assert upload(other, A3, NB[A3]).status_code == 403
    bad = teacher.post("/instructor/students/s002/extend", data={"assignment": A3, "deadline": "soon", "csrf_token": token})
    assert bad.status_code == 400 and "YYYY-MM-DDTHH:MM" in bad.text


def _failures(site: Site, where=sa.true()) -> int:
    with site.db.read() as con:
        return con.execute(sa.select(sa.func.count()).select_from(SIGN_IN_FAILURES).where(where)).scalar()


def _wrong_secret(code: str) -> str:
    """``code`` with its secret part replaced: the first part still names the account."""
    return code.split("-")[0] + "-" + "x" * 26


def test_sign_in_failures_count_per_address_and_account_and_never_refuse_a_right_code(site):
    """Finding 6: the page's and the API's failures share one budget per address (5 here) and one per account
    (3 here); past the address's budget a right code still signs in, guesses naming no account are refused
    unchecked (and not recorded), a wrong secret for a real account is checked and refused 429 and counted
    against that account, whose budget, once used, refuses even its right code until the window moves on."""
    page, api = site.client(), site.client()
    form = page.get("/login")

    def sign_in(login: str, code: str, **kw):
        """Post the sign-in form with the token of the form last shown (every form showing has its own)."""
        nonlocal form
        token = form.text.split('name="csrf_token" value="')[1].split('"')[0]
        form = page.post("/login", data={"login": login, "code": code, "csrf_token": token}, **kw)
        return form

    def bearer(code: str):
        return api.get("/api/v1/submissions", headers={"Authorization": f"Bearer {code}"})

    for _ in range(2):  # a right code typed with another student's id counts like a wrong code (against s001)
        r = sign_in("s002", site.codes["s001"])
        assert r.status_code == 401 and "学号或访问码不正确" in r.text
    for i in range(3):
        assert bearer(f"abcdefgh-guess{i}").status_code == 401
    assert _failures(site) == 5
    # the address's budget is used up: guesses naming no account are refused without a check or a record ...
    for code in ("abcdefgh-guess9", "not a code"):
        r = bearer(code)
        assert r.status_code == 429 and int(r.headers["retry-after"]) == 900 and "错误的访问码尝试过多" in r.json()["error"]
    r = sign_in("s003", "zzzzzzzz-" + "y" * 26)
    assert r.status_code == 429 and r.headers["retry-after"] == "900" and "错误的访问码尝试过多" in r.text
    assert _failures(site) == 5
    # ... while a right code signs in (the API, then the page) and leaves no record
    assert bearer(site.codes["s003"]).status_code == 200
    r = sign_in("s004", site.codes["s004"], follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "./"
    assert _failures(site) == 5
    page = site.client()  # signed out again
    form = page.get("/login")
    # a wrong secret for a real account is checked, refused like the guesses, and counted against that account
    r = bearer(_wrong_secret(site.codes["s001"]))
    assert r.status_code == 429
    s001 = site.service.accounts.student("s001").id
    assert _failures(site, SIGN_IN_FAILURES.c.account_id == s001) == 3
    # s001's own budget (3) is used up: even the right code waits, from any address
    r = bearer(site.codes["s001"])
    assert r.status_code == 429 and int(r.headers["retry-after"]) == 900
    with pytest.raises(TooMany):
        site.service.accounts.sign_in(site.codes["s001"], "10.1.2.3")
    assert site.service.accounts.sign_in(site.codes["s002"], "10.1.2.3").login == "s002"  # others are not affected
    site.clock.advance(901)
    assert bearer(site.codes["s001"]).status_code == 200
    assert sign_in("s002", site.codes["s001"]).status_code == 401
    assert _failures(site) == 1  # the rows older than the window are gone


def test_concurrent_wrong_codes_are_checked_at_most_the_budget(site, monkeypatch):
    """Finding 6: 80 wrong codes at once from one address: at most its budget (5) are checked against a hash
    (the check and the record are one transaction); a right code from that address still signs in."""
    _burst(site, monkeypatch)


@pytest.mark.slow
def test_concurrent_wrong_codes_on_postgresql_are_checked_at_most_the_budget(tmp_path, monkeypatch):
    """The same on PostgreSQL, where the transaction is serialized by an advisory lock (not ``BEGIN IMMEDIATE``)."""
    from tests.grading_runs import Postgres

    pg = Postgres()
    try:
        site = Site(tmp_path, _config(), STUDENTS, T0.timestamp(), db_url=pg.url("signin"))
        try:
            _burst(site, monkeypatch)
        finally:
            site.db.dispose()
    finally:
        pg.close()


def _burst(site: Site, monkeypatch) -> None:
    from concurrent.futures import ThreadPoolExecutor

    from autograder.service import codes

    checked, real = [], codes.verify
    monkeypatch.setattr(codes, "verify", lambda secret, h: checked.append(1) or real(secret, h))

    def attempt(i: int) -> str:
        try:
            site.service.accounts.sign_in(f"zzzz{i:04d}-" + "q" * 26, "10.0.0.1")
        except Exception as exc:  # noqa: BLE001 - the kind of refusal is what is counted
            return type(exc).__name__
        return "signed in"

    with ThreadPoolExecutor(16) as pool:
        outcomes = list(pool.map(attempt, range(80)))
    assert outcomes.count("NotSignedIn") == 5 and outcomes.count("TooMany") == 75, outcomes
    assert len(checked) == 5 and _failures(site) == 5
    assert site.service.accounts.sign_in(site.codes["s001"], "10.0.0.1").login == "s001"


def test_refusals_past_the_address_budget_take_as_long_as_a_check(site):
    """Past an address's budget, a code naming no account is refused unchecked and one naming a real account is
    checked (then refused): both answers must take about as long, or their time would tell which first parts
    exist (the refusal unchecked pauses as long as a check takes)."""
    import time

    for i in range(5):
        with pytest.raises(NotSignedIn):
            site.service.accounts.sign_in(f"zzzz{i:04d}-" + "q" * 26, "10.0.0.2")
    times: dict[str, list[float]] = {"unknown": [], "known": []}
    for _ in range(3):  # 3 against s001: under its own budget of 3
        for kind, code in (("unknown", "zzzz9999-" + "q" * 26), ("known", _wrong_secret(site.codes["s001"]))):
            t0 = time.perf_counter()
            with pytest.raises(TooMany):
                site.service.accounts.sign_in(code, "10.0.0.2")
            times[kind].append(time.perf_counter() - t0)
    # medians: on a loaded machine one argon2 check can run much faster or slower than the pause's moving average
    unknown, known = sorted(times["unknown"])[1], sorted(times["known"])[1]
    assert unknown > 0.3 * known and known > 0.3 * unknown, times


def test_an_upload_from_a_page_shown_for_another_account_is_refused(site):
    """Finding 4: the upload form carries the account its page was shown for; when the session cookie was
    replaced since (another sign-in, or a cookie tossed by another site), the upload is refused with both
    accounts named, and nothing is stored."""
    shown, _ = site.signed_in("s001")
    page = shown.get(f"/assignments/{A1}").text
    action = page.split('id="upload"')[1].split('action="')[1].split('"')[0].replace("&amp;", "&")
    assert action.endswith("&account=s001")
    now, token = site.signed_in("s002")  # the cookie the browser holds by the time the student uploads
    r = now.post(action.replace("../", "/"), files={"notebook": ("nb.ipynb", NB[A1], "application/x-ipynb+json")},
                 headers={"X-CSRF-Token": token})
    assert r.status_code == 403, r.text
    assert "这个页面是为 s001 打开的，但你现在已作为 s002 登录" in r.json()["error"]
    assert site.grade() == []  # nothing was stored
    r = now.post(f"/api/v1/assignments/{A1}/submissions?account=s002",
                 files={"notebook": ("nb.ipynb", NB[A1], "application/x-ipynb+json")}, headers={"X-CSRF-Token": token})
    assert r.status_code == 202, r.text  # the page shown for the account signed in: accepted


def test_one_mapping_of_refusals_to_answers(site):
    """The web layer's one error mapping: JSON with the status under /api/, pages elsewhere, sign-in for a page
    without a session; a Mount's prefix answers like any unknown address."""
    anonymous, student = site.client(), site.client("s001")
    r = anonymous.get("/api/v1/submissions")
    assert (r.status_code, r.headers["www-authenticate"]) == (401, "Bearer") and "访问码" in r.json()["error"]
    for path in ("/api/v1", "/api/v1/nothing"):
        r = student.get(path, follow_redirects=False)
        assert (r.status_code, r.json()) == (404, {"error": "没有这个地址"}), path
    assert student.put("/api/v1/submissions").json() == {"error": "不支持这个请求方法"}
    r = student.get("/api/v1/submissions/" + "A" * 22)
    assert (r.status_code, r.json()) == (404, {"error": "没有这份提交"})
    assert student.get("/api/v1/grades.csv").status_code == 403
    r = anonymous.get(f"/assignments/{A1}", follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "../login"
    page, _ = site.signed_in("s001")
    r = page.get("/instructor/")
    assert r.status_code == 403 and "只有教师和助教可以查看这个页面" in r.text and r.headers["content-type"].startswith("text/html")
    r = page.get("/assignments/ps9")
    assert r.status_code == 404 and "没有开放提交的作业 ps9" in r.text


def test_a_graded_attempt_shows_with_its_counting_mark_before_the_gradebook_copy(site):
    """The result and the counting choice are one transaction: before the gradebook's copy is written the page
    already marks the attempt as counting and stops polling, and grades.csv agrees; the copy follows."""
    upload(site.client("s002"), A1, NB[A1])
    page, _ = site.signed_in("s002")
    site.grade(settle=False)
    live = page.get(f"/assignments/{A1}/live").text
    assert 'data-pending="0"' in live and "10 / 10" in live and 'class="badge count">计入成绩' in live
    assert _grades(site)[("s002", A1)] == 10 and ("s002", A1) not in site.gradebook.scores
    site.settle("s002", A1)
    assert site.gradebook.scores[("s002", A1)] == 10


@pytest.mark.parametrize("seed", range(6))
def test_free_failures_never_give_more_than_the_attempts_allowed_graded_nor_twice_as_many_uploads(site, seed):
    """A student who uploads whenever the window lets them, through any mix of outcomes (graded, the grading system's
    failures, the service giving up, still queued) over three days, with an instructor's extra attempts on the way:
    in every 24 hours before an accepted upload, at most ``attempts_per_24h`` attempts that were not free (graded,
    given up, pending) and at most twice as many uploads; ``left`` is what a brute-force count of the day's rows
    says (up to ``attempts_per_24h`` failures of the grading system are free), and the ``wait`` of a refusal is
    exact (one second earlier nothing is back, at it one attempt is).  Rows are written as the grading loop leaves
    them; the rule read is :meth:`Submissions.window`, which every upload checks under the student's lock."""
    import random

    from autograder.service import overrides
    from autograder.service.database import SUBMISSIONS
    from autograder.service.failures import Failure

    rng = random.Random(seed)
    subs = site.service.submissions
    student, start = "s002", site.clock()
    rows: list[tuple[float, str, Failure | None]] = []  # (created_at, status, failure) of every accepted upload

    def limit() -> int:
        return subs.policy_for(student, A4).attempts_per_24h

    def system_failure(row: tuple[float, str, Failure | None]) -> bool:  # free up to limit() a day
        return row[1] == "failed" and row[2] is not Failure.GAVE_UP

    def model(now: float) -> int:
        day = [r for r in rows if r[0] > now - DAY]
        return max(0, limit() - (len(day) - min(limit(), sum(map(system_failure, day)))))

    outcomes = [("graded", None), ("failed", Failure.SYSTEM), ("failed", Failure.FILE_LOST), ("failed", Failure.GAVE_UP),
                ("queued", None)]
    weights = [3, 4, 2, 1, 1]
    extra_given, refused = False, 0
    while site.clock() < start + 3 * DAY:
        now = site.clock()
        if not extra_given and now > start + DAY + 3600 * rng.random():
            overrides.add_attempts(site.db, subs.policy_for(student, A4), student, rng.randint(1, 2), "王老师")
            extra_given = True
        w = subs.window(student, A4, now)
        assert w.left == model(now), (seed, now - start, rows)
        if w.left:
            day = [r for r in rows if r[0] > now - DAY]
            assert len(day) < 2 * limit()
            assert sum(not system_failure(r) for r in day) < limit()
            status, failure = rng.choices(outcomes, weights)[0]
            with site.db.write() as con:
                con.execute(sa.insert(SUBMISSIONS).values(
                    id=f"r{len(rows)}", student_id=student, assignment=A4, status=status, created_at=now,
                    filename="x.ipynb", path="p", sha256="0" * 64, size=1, late=False, penalty=1.0, tries=1,
                    settled=True, failure=failure, graded_at=None if status == "queued" else now))
            rows.append((now, status, failure))
            site.clock.advance(rng.choice([1, 60, 600, 3600, 4 * 3600]))
        else:
            refused += 1
            assert w.wait is not None and w.wait >= 1
            assert model(now + w.wait - 1) == 0 and model(now + w.wait) >= 1, (seed, now - start, w.wait, rows)
            site.clock.advance(w.wait if rng.random() < 0.7 else rng.randint(1, w.wait))
    assert len(rows) > 3 * limit() and refused > 3
