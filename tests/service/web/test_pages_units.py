"""The parts behind the service's pages, without a server: a student's exceptions (later deadline, extra
attempts), regrades and their progress, the dashboard's figures, times and relative links."""

from __future__ import annotations

import csv
import io
import json
import re
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from types import SimpleNamespace

import pytest
import sqlalchemy as sa

from autograder.model import CaseRecord, CaseResult, CellScore, SubmissionResult
from autograder.service import dashboard, overrides, regrade, submissions
from autograder.service.database import COUNTING, SUBMISSIONS
from autograder.service.overrides import OverrideError
from autograder.service.web.render import duration_text, root_of, site_root_of, when
from autograder.service.policy import parse_policy
from autograder.service.times import course_zone, stamp

CHINA = timezone(timedelta(hours=8))
REPO = Path(__file__).resolve().parents[3]


def _policy(**entry):
    return parse_policy({"assignments": {"a": entry}}, ["a"]).assignments["a"]


def test_an_extension_moves_the_deadline_and_the_late_period_for_that_student_only(db):
    p = _policy(deadline="2026-12-20T23:59:00+08:00", late={"penalty": 0.5, "until": "2026-12-22T23:59:00+08:00"}, attempts_per_24h=3)
    new = datetime(2026, 12, 25, 12, 0, tzinfo=CHINA)
    overrides.extend_deadline(db, p, "s1", new, "王老师")
    mine = overrides.personal_policy(p, overrides.get(db, "s1", "a"))
    assert mine.deadline == new and mine.deadline.utcoffset() == timedelta(hours=8)
    assert mine.late_until == new + timedelta(days=2)  # the late period keeps its length
    assert mine.lateness(datetime(2026, 12, 24, tzinfo=CHINA)) == "on_time"
    assert p.lateness(datetime(2026, 12, 24, tzinfo=CHINA)) == "closed"
    assert overrides.personal_policy(p, overrides.get(db, "s2", "a")) is p  # nobody else changes
    assert mine.attempts_per_24h == 3


def test_a_closed_assignment_opens_for_an_extended_student(db):
    p = _policy(deadline="2020-01-01T00:00:00+08:00")
    overrides.extend_deadline(db, p, "s1", datetime(2099, 1, 1, tzinfo=CHINA), "t")
    now = datetime.now(timezone.utc)
    assert p.lateness(now) == "closed"
    assert overrides.personal_policy(p, overrides.get(db, "s1", "a")).lateness(now) == "on_time"


def test_extensions_must_be_later_and_need_a_deadline(db):
    p = _policy(deadline="2026-12-20T23:59:00+08:00")
    with pytest.raises(OverrideError, match="必须晚于"):
        overrides.extend_deadline(db, p, "s1", datetime(2026, 12, 1, tzinfo=CHINA), "t")
    with pytest.raises(OverrideError, match="没有截止时间"):
        overrides.extend_deadline(db, _policy(), "s1", datetime(2099, 1, 1, tzinfo=CHINA), "t")
    assert overrides.get(db, "s1", "a") is None


def test_extra_attempts_add_up_and_keep_an_extension(db):
    p = _policy(deadline="2026-12-20T23:59:00+08:00", attempts_per_24h=3)
    overrides.extend_deadline(db, p, "s1", datetime(2026, 12, 21, tzinfo=CHINA), "t")
    assert overrides.add_attempts(db, p, "s1", 2, "t") == 2
    assert overrides.add_attempts(db, p, "s1", 1, "t") == 3
    mine = overrides.personal_policy(p, overrides.get(db, "s1", "a"))
    assert mine.attempts_per_24h == 6 and mine.deadline == datetime(2026, 12, 21, tzinfo=CHINA)
    for bad in (0, -1, 101, True, "2"):
        with pytest.raises(OverrideError):
            overrides.add_attempts(db, p, "s1", bad, "t")


def _result(student: str, passed: list[bool], score: float) -> str:
    cases = [CaseRecord(f"c{i}", "cell", 1, "f", f"用例 {i}", i > 0, CaseResult(ok)) for i, ok in enumerate(passed)]
    r = SubmissionResult(student, "a", score, len(passed), {"cell": CellScore(score, len(passed))}, cases, fingerprint="fp")
    return json.dumps(r.to_json())


def _add(db, sid, student, status, created, *, score=None, passed=None, late=False, penalty=1.0):
    with db.write() as con:
        con.execute(sa.insert(SUBMISSIONS).values(
            id=sid, student_id=student, assignment="a", status=status, created_at=created, filename="x.ipynb", path="p",
            sha256="0" * 64, size=1, late=late, penalty=penalty, tries=2, settled=True, score=score, max_score=4 if score is not None else None,
            graded_at=created + 1 if status in ("graded", "failed") else None,
            finished_at=created + 1 if status in ("graded", "failed") else None, fingerprint="fp",
            result_json=_result(student, passed, score) if passed else None))
        if status == "graded":
            con.execute(sa.delete(COUNTING).where(COUNTING.c.student_id == student))
            con.execute(sa.insert(COUNTING).values(student_id=student, assignment="a", submission_id=sid, updated_at=created))


def test_regrade_requeues_finished_submissions_and_reports_progress(db):
    t = time.time() - 100
    _add(db, "g1", "s1", "graded", t, score=4, passed=[True] * 4)
    _add(db, "f1", "s2", "failed", t + 1)
    _add(db, "q1", "s3", "queued", t + 2)
    p = regrade.request(db, "a", "王老师")
    assert p.total == 2 and p.done == 0 and not p.finished
    with db.read() as con:
        rows = {r.id: r for r in con.execute(sa.select(SUBMISSIONS)).all()}
    assert rows["g1"].status == rows["f1"].status == "queued" and rows["g1"].tries == 0 and rows["q1"].tries == 2
    with db.write() as con:  # the grading loop records g1 again
        now = time.time()
        con.execute(sa.update(SUBMISSIONS).where(SUBMISSIONS.c.id == "g1").values(status="graded", graded_at=now, finished_at=now))
    later = regrade.latest(db, "a")
    assert (later.id, later.total, later.done, later.failed) == (p.id, 2, 1, 0)
    one = regrade.request(db, "a", "王老师", student="s1", submission_id="g1")
    assert one.total == 1 and regrade.latest(db, "a").id == p.id  # a single submission's regrade is not the assignment's
    assert regrade.latest(db, "a", student="s1").id == one.id


def test_dashboard_figures(db):
    now = time.time()
    _add(db, "x1", "s1", "graded", now - 30, score=4, passed=[True] * 4)
    _add(db, "x2", "s2", "graded", now - 20, score=2, passed=[True, True, False, False], late=True, penalty=0.5)
    _add(db, "x3", "s3", "queued", now - 5)
    _add(db, "x4", "s3", "grading", now - 4000)
    f = dashboard.assignment_figures(db, "a", "作业", now)
    assert (f["queued"], f["grading"], f["graded"], f["submissions"], f["students"]) == (1, 1, 2, 4, 3)
    assert f["last_minute"] == 3 and f["per_minute"] == pytest.approx(3 / 10)
    assert f["summary"]["histogram"][9] == 1 and f["summary"]["histogram"][2] == 1  # 4/4 and 2 x 0.5 = 1 of 4
    shares = {c["id"]: c["share"] for c in f["cases"]}
    assert shares == {"c2": 0.5, "c3": 0.5, "c0": 0.0, "c1": 0.0} and [c["id"] for c in f["cases"]][:2] == ["c2", "c3"]
    assert f["late_total"] == 1 and f["late"][0].student_id == "s2"
    assert dashboard.queue_length(db) == {"queued": 1, "grading": 1}


def test_times_and_relative_links():
    assert duration_text(-1) == "已截止" and duration_text(30) == "还剩不到 1 分钟"
    assert duration_text(3 * 86400 + 5 * 3600 + 60) == "还剩 3 天 5 小时" and duration_text(2 * 3600 + 600) == "还剩 2 小时 10 分钟"
    html = str(when(datetime(2026, 12, 20, 15, 59, tzinfo=timezone.utc), CHINA))
    assert html == '<time datetime="2026-12-20T15:59:00+00:00">2026-12-20 23:59（UTC+08:00）</time>'
    assert "<" not in str(when(None))

    def request(path, depth=0):
        return SimpleNamespace(url=SimpleNamespace(path=path), scope={"app": 1},
                               app=SimpleNamespace(state=SimpleNamespace(root_depth=depth)))

    assert [root_of(request(p)) for p in ("/", "/login", "/instructor/", "/assignments/a/live", "/instructor/students/s1")] == \
        ["./", "./", "../", "../../", "../../"]
    # a course's pages: relative to the course's root c/<id>/; the site's root (static files) two levels up
    paths = ("/c/x/", "/c/x/login", "/c/x/instructor/", "/c/x/assignments/a/live")
    assert [root_of(request(p, 2)) for p in paths] == ["./", "./", "../", "../../"]
    assert [site_root_of(request(p, 2)) for p in paths] == ["../../", "../../", "../../../", "../../../../"]
    # a fragment fetched at <page>/live is put into its page: its links are the page's
    assert root_of(request("/c/x/instructor/students/s1/live", 2), fragment=True) == "../../"
    assert root_of(request("/c/x/assignments/a/live", 2), fragment=True) == "../"


# ---- one time zone, one upload limit, grades.csv


def test_the_course_zone_is_that_of_the_deadlines_and_every_time_is_written_in_it():
    policy = parse_policy({"assignments": {"a": {}, "b": {"deadline": "2026-12-05T15:59:00Z",
                                                          "late": {"penalty": 0.5, "until": "2026-12-12T23:59:00+08:00"}}}},
                          ["a", "b"])
    tz = course_zone(policy)
    assert tz.utcoffset(None) == timedelta(0)  # the first deadline's zone, although the late cut-off is in +08:00
    p = policy.assignments["b"]
    text = submissions.late_text(p, tz)
    assert text == "截止后到 2026-12-12 15:59（UTC+00:00）仍可提交，得分乘以 0.5"  # the cut-off moved into the course's zone
    assert stamp(p.deadline, CHINA) == "2026-12-05 23:59（UTC+08:00）"
    assert course_zone(parse_policy({"assignments": {"a": {}}}, ["a"])) is timezone.utc


def test_the_upload_limit_is_the_one_the_notebooks_and_the_book_state():
    """One setting: the service's default is the grader's limit, and every text for students states that number."""
    from autograder.model import MAX_NOTEBOOK_BYTES

    mib = MAX_NOTEBOOK_BYTES >> 20
    assert parse_policy({"assignments": {"a": {}}}, ["a"]).upload_limit_bytes == MAX_NOTEBOOK_BYTES
    with pytest.raises(ValueError, match=f"0 到 {mib} 之间"):
        parse_policy({"assignments": {"a": {}}, "upload_limit_mib": mib + 1}, ["a"])
    texts = {p: p.read_text(encoding="utf-8") for p in [*sorted((REPO / "exercises").glob("ps*/*.ipynb")),
                                                         REPO / "book" / "assignments" / "index.md"]}
    assert len(texts) == 6
    for path, text in texts.items():
        stated = re.findall(r"不超过 (\d+(?:\.\d+)?) MiB", text)
        assert stated == [str(mib)], (path, stated)


def _account(db, login, name):
    from autograder.service.database import ACCOUNTS

    with db.write() as con:
        con.execute(sa.insert(ACCOUNTS).values(role="student", login=login, name=name, email="", code_id=f"id{login}",
                                               code_hash="x", created_at=0.0))


def test_grades_csv_has_names_times_late_penalty_and_a_row_for_everyone(db, tmp_path):
    from autograder.check import all_assignments
    from autograder.store.grades import COLUMNS as BATCH

    names = ["ps1_threshold_metrics", "ps2_roc_auc"]
    policy = parse_policy({"assignments": {n: {"deadline": "2099-01-01T00:00:00+08:00"} for n in names}}, names)
    sheet = submissions.Submissions(db, policy, tmp_path, {}, {}, time.time, lambda: None)  # grades_csv reads db and policy
    _account(db, "s1", "张三")
    _account(db, "s2", "=李四")  # a name a spreadsheet would evaluate
    _account(db, "s3", "王五")  # never submitted
    t = datetime(2026, 12, 5, 15, 0, tzinfo=timezone.utc).timestamp()
    with db.write() as con:
        for sid, student, assignment, score, late, penalty, created in [
                ("a", "s1", names[0], 40, False, 1.0, t), ("b", "s1", names[1], 60, True, 0.5, t + 3600),
                ("c", "s2", names[0], 54, False, 1.0, t + 60)]:
            con.execute(sa.insert(SUBMISSIONS).values(
                id=sid, student_id=student, assignment=assignment, status="graded", created_at=created, filename="x.ipynb",
                path="p", sha256="0" * 64, size=1, late=late, penalty=penalty, tries=1, settled=True, score=score,
                max_score=69 if assignment == names[1] else 54, graded_at=created + 5))
            con.execute(sa.insert(COUNTING).values(student_id=student, assignment=assignment, submission_id=sid,
                                                   updated_at=created))
    rows = list(csv.DictReader(io.StringIO(sheet.grades_csv())))  # times in the course's zone, that of the deadlines
    assert list(rows[0]) == [*BATCH[:6], "time_zone", "late", "penalty", "raw_score", "attempts"]
    assert list(rows[0])[:6] == ["student_id", "student_name", "assignment", "score", "max_score", "submitted_at"]
    got = {(r["student_id"], r["assignment"]): r for r in rows}
    assert len(rows) == 6  # three students x two assignments
    late = got[("s1", names[1])]
    assert (late["student_name"], late["score"], late["raw_score"], late["late"], late["penalty"]) == ("张三", "30", "60", "yes", "0.5")
    assert (late["submitted_at"], late["time_zone"]) == ("2026-12-06 00:00:00", "UTC+08:00")
    on_time = got[("s1", names[0])]
    assert (on_time["late"], on_time["penalty"], on_time["submitted_at"]) == ("no", "1", "2026-12-05 23:00:00")
    assert got[("s2", names[0])]["student_name"] == "'=李四"
    for assignment in names:  # the student without a submission: a row with an empty score
        r = got[("s3", assignment)]
        assert r["student_name"] == "王五" and r["score"] == "" and r["submitted_at"] == "" and r["late"] == ""
        assert r["max_score"] == f"{all_assignments()[assignment].max_score():g}"
    assert got[("s2", names[1])]["score"] == ""


def test_the_service_icon_is_the_book_icon():
    """The package serves its own copy (an installed service has no ``book/``); it must stay the book's icon,
    and be installed with the package."""
    from autograder.service.web.render import STATIC

    assert (STATIC / "favicon.svg").read_bytes() == (REPO / "book" / "_static" / "favicon.svg").read_bytes()
    import tomllib

    package_data = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["package-data"]
    assert "*.svg" in package_data["autograder.service.static"]
