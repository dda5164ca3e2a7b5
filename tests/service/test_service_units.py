"""The grading service's parts without a server: course.yml, uploads, sessions, codes, the queue, counting."""

from __future__ import annotations

import json
import re
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from types import SimpleNamespace

import pytest
import sqlalchemy as sa

from autograder.batch.collect import is_late
from autograder.check import all_assignments
from autograder.service import attempts, codes, counting, sessions, uploads
from autograder.service.errors import Invalid, TooLarge
from autograder.service.web import forms
from autograder.service.database import SUBMISSIONS
from autograder.service.policy import PolicyError, parse_policy
from autograder.service import queue
from autograder.service.failures import Failure
from autograder.service.queue import GAVE_UP, MAX_TRIES, Queue

REPO = Path(__file__).resolve().parents[2]
A = all_assignments()
KNOWN = list(A)


# ---- course.yml


@pytest.mark.parametrize("data, message", [
    ({"assignments": {"ps9": {}}}, "未知的键 ps9"),
    ({"assignments": {"ps1_threshold_metrics": {"deadline": "2026-12-01T10:00:00"}}}, "必须带时区"),
    ({"assignments": {"ps1_threshold_metrics": {"deadline": "tomorrow"}}}, "不是 ISO 8601"),
    ({"assignments": {"ps1_threshold_metrics": {"deadline": "2026-12-01T10:00:00Z",
                                                "late": {"penalty": 1.5, "until": "2026-12-02T00:00:00Z"}}}}, "0 到 1"),
    ({"assignments": {"ps1_threshold_metrics": {"deadline": "2026-12-01T10:00:00Z",
                                                "late": {"penalty": 0.5, "until": "2026-11-01T00:00:00Z"}}}}, "晚于 deadline"),
    ({"assignments": {"ps1_threshold_metrics": {"feedback_before_deadline": "all"}}}, "full / cases / score"),
    ({"assignments": {"ps1_threshold_metrics": {"counts": "first"}}}, "best / last"),
    ({"assignments": {"ps1_threshold_metrics": {"attempts_per_24h": 0}}}, "1 到 1000"),
    ({"assignments": {"ps1_threshold_metrics": {"deadlne": "2026-12-01T10:00:00Z"}}}, "未知的键 deadlne"),
    ({"assignments": {}}, "至少列出一个作业"),
])
def test_course_yml_errors_name_the_key(data, message):
    with pytest.raises(PolicyError, match=re.escape(message)):
        parse_policy(data, KNOWN)


def test_lateness_and_feedback_follow_the_deadline_and_the_cutoff():
    d = datetime(2026, 12, 1, 12, tzinfo=timezone(timedelta(hours=8)))
    p = parse_policy({"assignments": {"ps1_threshold_metrics": {
        "deadline": d.isoformat(), "late": {"penalty": 0.5, "until": (d + timedelta(days=1)).isoformat()},
        "feedback_before_deadline": "score"}}}, KNOWN).assignments["ps1_threshold_metrics"]
    assert p.lateness(d) == "on_time" and p.lateness(d + timedelta(seconds=1)) == "late"
    assert p.lateness(d + timedelta(days=1, seconds=1)) == "closed"
    # hidden inputs stay hidden while late work is still accepted
    assert p.feedback(d + timedelta(hours=1)) == "score" and p.feedback(d + timedelta(days=2)) == "full"
    refused = parse_policy({"assignments": {"ps1_threshold_metrics": {"deadline": d.isoformat()}}}, KNOWN)
    assert refused.assignments["ps1_threshold_metrics"].lateness(d + timedelta(seconds=1)) == "closed"



def test_the_service_and_batch_grading_judge_lateness_alike():
    """One lateness rule (:func:`autograder.batch.collect.is_late`): at, just before and just after the deadline and
    the late cut-off, the service's policy says late (or closed) exactly when batch grading marks the moment late."""
    d = datetime(2026, 12, 1, 12, tzinfo=timezone(timedelta(hours=8)))
    until = d + timedelta(days=1)
    p = parse_policy({"assignments": {"ps1_threshold_metrics": {
        "deadline": d.isoformat(), "late": {"penalty": 0.5, "until": until.isoformat()}}}}, KNOWN).assignments["ps1_threshold_metrics"]
    for edge in (d, until):
        for t in (edge - timedelta(microseconds=1), edge, edge + timedelta(microseconds=1)):
            assert (p.lateness(t) != "on_time") == is_late(t, d)
            assert (p.lateness(t) == "closed") == is_late(t, until)

# ---- uploads


def _rules(name="ps2_roc_auc"):
    src = {n: REPO / "solutions" / n / f"{A[n].notebook}.ipynb" for n in A}
    return uploads.notebook_rules(A[name], src[name], src)


@pytest.mark.parametrize("name", ["../x.ipynb", "a/b.ipynb", "..\\x.ipynb", ".hidden.ipynb", "x\x00.ipynb", "x\u202e.ipynb",
                                  "notes.txt", "", "x" * 300 + ".ipynb"])
def test_bad_file_names_are_refused(name):
    with pytest.raises(Invalid):
        uploads.check_filename(name)


def test_plain_names_pass_including_chinese():
    assert uploads.check_filename("作业 2 (1).ipynb") == "作业 2 (1).ipynb"


@pytest.mark.parametrize("data, message", [
    (b"\xff\xfe{}", "UTF-8"),
    (b"not json", "不是合法的 JSON"),
    (b'{"nbformat": 3, "worksheets": []}', "nbformat 4"),
    (b"[" * 100_000 + b"]" * 100_000, "嵌套超过"),
    (b'{"nbformat": 4, "cells": [], "metadata": ' + b"[" * 70 + b"]" * 70 + b"}", "嵌套超过"),
    (b'{"nbformat": 4, "cells": [], "metadata": {"x": [' + b"[]," * 300_000 + b"[]]}}", "结构过于庞杂"),
    (b'{"nbformat": 4, "cells": [{"cell_type": "code", "source": 5}]}', "单元格式"),
    (b'{"nbformat": 4, "cells": [{"cell_type": "code", "source": "print(1)"}]}', "既没有作业的答题单元"),
])
def test_unreadable_or_foreign_notebooks_are_refused(data, message):
    with pytest.raises(Invalid, match=message):
        uploads.check_notebook(data, _rules())


def test_the_notebook_of_another_assignment_is_named():
    other = (REPO / "exercises" / "ps1_threshold_metrics" / "threshold_metrics.ipynb").read_bytes()
    with pytest.raises(Invalid, match="这是作业 ps1_threshold_metrics 的笔记本"):
        uploads.check_notebook(other, _rules())


def test_real_notebooks_pass_also_pasted_into_a_new_notebook():
    uploads.check_notebook((REPO / "exercises" / "ps2_roc_auc" / "roc_auc.ipynb").read_bytes(), _rules())
    pasted = {"nbformat": 4, "nbformat_minor": 5, "metadata": {},
              "cells": [{"cell_type": "code", "metadata": {}, "source": "def roc_curve(y, s):\n    return 1"}]}
    uploads.check_notebook(json.dumps(pasted).encode(), _rules())


def _form(parts: list[tuple[str, str | None, bytes]], boundary="XyZ") -> tuple[bytes, str]:
    body = b""
    for name, filename, data in parts:
        disp = f'form-data; name="{name}"' + (f'; filename="{filename}"' if filename is not None else "")
        body += f"--{boundary}\r\nContent-Disposition: {disp}\r\n\r\n".encode() + data + b"\r\n"
    return body + f"--{boundary}--\r\n".encode(), f"multipart/form-data; boundary={boundary}"


def test_multipart_parsing_bounds_parts_and_sizes():
    body, ctype = _form([("notebook", "a.ipynb", b"{}"), ("csrf_token", None, b"t")])
    form = forms.parse_form(body, ctype, 100)
    assert bytes(form["notebook"].data) == b"{}" and form["notebook"].filename == "a.ipynb"
    with pytest.raises(TooLarge):
        forms.parse_form(*_form([("notebook", "a.ipynb", b"x" * 101)]), 100)
    with pytest.raises(Invalid, match="字段过多"):
        forms.parse_form(*_form([(f"f{i}", None, b"") for i in range(5)]), 100)
    with pytest.raises(Invalid, match="不是 UTF-8"):
        forms.parse_form(b'--XyZ\r\nContent-Disposition: form-data; name="notebook"; filename="\xff.ipynb"\r\n\r\nx\r\n--XyZ--\r\n',
                           "multipart/form-data; boundary=XyZ", 100)
    with pytest.raises(Invalid, match="multipart/form-data"):
        forms.parse_form(b"{}", "application/json", 100)


def test_stored_files_stay_in_the_data_folder(tmp_path):
    rel, digest = uploads.store_file(tmp_path, "ps2_roc_auc", "s001", "abc", b"{}")
    assert (tmp_path / rel).read_bytes() == b"{}" and rel == "submissions/ps2_roc_auc/s001/abc.ipynb"
    with pytest.raises(Invalid):
        uploads.store_file(tmp_path, "..", "..", "escape", b"{}")
    assert not (tmp_path.parent / "escape.ipynb").exists()


# ---- sessions and codes


def test_session_cookies_are_signed_and_expire():
    signer = sessions.Signer(b"k" * 32)
    value, session = signer.issue(7, "abcdefgh")
    assert signer.read(value) == session
    body, mac = value.split(".")
    forged_body = sessions._b64(json.dumps({"a": 1, "c": "abcdefgh", "n": "x", "e": time.time() + 99}).encode())
    for forged in (f"{forged_body}.{mac}", f"{body}.{mac[:-2]}AA", body, value + "x", "", "a.b.c", "é.é"):
        assert signer.read(forged) is None
    assert sessions.Signer(b"o" * 32).read(value) is None  # another server secret
    assert signer.read(value, now=session.expires + 1) is None


def test_csrf_tokens_belong_to_one_session():
    signer = sessions.Signer(b"k" * 32)
    _, s1 = signer.issue(1, "abcdefgh")
    _, s2 = signer.issue(1, "abcdefgh")
    assert signer.check_csrf(s1, signer.csrf_token(s1))
    assert not signer.check_csrf(s1, signer.csrf_token(s2))
    assert not signer.check_csrf(s1, None) and not signer.check_csrf(s1, "") and not signer.check_csrf(s1, "é")


def test_cookie_attributes():
    """Over HTTPS ``__Host-`` (browsers then require Secure, Path=/ and no Domain); over HTTP the plain name,
    without Secure (a __Host- cookie without Secure is refused by browsers)."""
    header = sessions.cookie_header("v", secure=True)
    assert header.startswith("__Host-autograder_session=v;")
    assert all(a in header for a in ("HttpOnly", "SameSite=Strict", "Secure", "Path=/")) and "Domain" not in header
    plain = sessions.cookie_header("v", secure=False, name=sessions.LOGIN_COOKIE)
    assert plain.startswith("autograder_login=v;") and "Secure" not in plain and "__Host-" not in plain


def test_secret_file_is_private_and_shared(tmp_path):
    s1 = sessions.load_secret(tmp_path / "secret.key")
    assert sessions.load_secret(tmp_path / "secret.key") == s1 and len(s1) == 32
    assert (tmp_path / "secret.key").stat().st_mode & 0o077 == 0


def test_codes_are_hashed_and_checked():
    code, code_id, code_hash = codes.new_code()
    assert code_hash.startswith("$argon2id$") and code.split("-")[1] not in code_hash
    cid, secret = codes.split(code)
    assert cid == code_id and codes.verify(secret, code_hash)
    assert not codes.verify(secret + "x", code_hash) and not codes.verify(secret, None)
    for bad in ("", "nodash", "short-x", "é" * 8 + "-x", "a" * 200):
        assert codes.split(bad) is None


# ---- the queue and counting (SQLite)


def _add(db, sid, created, student="s1", status="queued"):
    with db.write() as con:
        con.execute(sa.insert(SUBMISSIONS).values(id=sid, student_id=student, assignment="a", status=status,
                                                  created_at=created, filename="x.ipynb", path="p", sha256="0" * 64,
                                                  size=1, late=False, penalty=1.0, tries=0, settled=True))


def test_two_processes_never_claim_the_same_submission(db):
    for i in range(6):
        _add(db, f"id{i}", i)
    q1, q2 = Queue(db, "one", 30), Queue(db, "two", 30)
    got = [q.claim() for q in (q1, q2, q1, q2, q1, q2, q1)]
    assert [c.id for c in got[:6]] == [f"id{i}" for i in range(6)] and got[6] is None
    assert not q2.graded("id0", score=1, max_score=1, fingerprint="f", result_json="{}", counts="best")  # q1's claim
    assert q1.graded("id0", score=1, max_score=1, fingerprint="f", result_json="{}", counts="best")


def test_an_expired_lease_is_claimed_again_and_gives_up_after_max_tries(db):
    _add(db, "x", 0)
    q = Queue(db, "p", lease=30)
    now = time.time()
    for n in range(1, MAX_TRIES + 1):
        claim = q.claim(now=now + 100 * n)
        assert claim.id == "x" and claim.tries == n
        assert q.claim(now=now + 100 * n + 1) is None  # the lease holds
    assert q.claim(now=now + 100 * (MAX_TRIES + 1)) is None
    with db.read() as con:
        row = con.execute(sa.select(SUBMISSIONS).where(SUBMISSIONS.c.id == "x")).first()
    assert (row.status, row.failure, row.error) == ("failed", Failure.GAVE_UP, str(MAX_TRIES))
    assert queue.error_for(row.status, row.failure, row.error, instructor=False) == GAVE_UP.format(n=MAX_TRIES)


def test_a_student_reads_the_reasons_written_for_them_and_no_other():
    """:func:`~autograder.service.queue.error_for`: an instructor reads every failure's whole reason, its detail
    included; a student reads the kinds written for them (and a regrade's note naming one) as they are, the grading
    system's own only as its failure - also when its detail reads like one of theirs."""
    pool = "工作节点 grader-7 无法使用沙箱：bwrap 不可用"
    reasons = {(Failure.SYSTEM, pool): f"{queue.SYSTEM_FAILED}{pool}",
               (Failure.SYSTEM, queue.FILE_LOST): f"{queue.SYSTEM_FAILED}{queue.FILE_LOST}",
               (Failure.GAVE_UP, str(MAX_TRIES)): GAVE_UP.format(n=MAX_TRIES), (Failure.FILE_LOST, None): queue.FILE_LOST,
               (Failure.NOT_CONFIGURED, "ps9_gone"): queue.NOT_CONFIGURED.format(assignment="ps9_gone")}
    assert {kind for kind, _ in reasons} == set(Failure)
    for (kind, detail), reason in reasons.items():
        regraded = queue.REGRADE_FAILED.format(reason=reason)
        assert queue.error_for("failed", kind, detail, instructor=True) == reason
        assert queue.error_for("graded", kind, detail, instructor=True) == regraded
        student = queue.error_for("failed", kind, detail, instructor=False), queue.error_for("graded", kind, detail, instructor=False)
        if kind is Failure.SYSTEM:
            assert student == (queue.STUDENT_SYSTEM_FAILED, queue.STUDENT_REGRADE_FAILED)
        else:
            assert student == (reason, regraded)
    for status in ("graded", "failed"):  # no failure: nothing to say
        assert queue.error_for(status, None, None, instructor=False) is None
        assert queue.error_for(status, None, None, instructor=True) is None
    for text in (queue.STUDENT_SYSTEM_FAILED, queue.STUDENT_REGRADE_FAILED):  # what to do, in the student's words
        assert "不是你的代码的问题" in text and "grader-7" not in text


def test_only_a_given_up_attempt_is_not_forgiven():
    """:func:`~autograder.service.attempts.forgiven`: a failed attempt of every kind but ``gave_up`` is free; a graded
    one (also one that kept its previous result after a failed regrade) and a pending one never are."""
    assert [kind for kind in Failure if attempts.forgiven("failed", kind)] == [k for k in Failure if k is not Failure.GAVE_UP]
    assert not any(attempts.forgiven(status, kind) for status in ("graded", "queued", "grading") for kind in [*Failure, None])


def test_free_failures_are_at_most_the_allowance_and_the_oldest_taken_one_comes_back_first():
    """:func:`~autograder.service.attempts.attempts_left`: of 3 allowed, the newest 3 system failures are free, a 4th
    takes one like the graded attempts; with none left the wait is until the oldest attempt that took one leaves
    the 24 hours."""
    now = 100_000.0
    failed = [attempts.Recent(now - i, "failed", Failure.SYSTEM) for i in range(1, 4)]
    graded = [attempts.Recent(now - 100, "graded", None), attempts.Recent(now - 200, "failed", Failure.GAVE_UP)]
    assert attempts.attempts_left(failed + graded, 3, now) == (1, None)
    fourth = attempts.Recent(now - 300, "failed", Failure.FILE_LOST)
    left = attempts.attempts_left(failed + graded + [fourth], 3, now)
    assert left == (0, int(attempts.WINDOW) - 300)
    assert attempts.attempts_left([], 3, now) == (3, None)
    assert attempts.allowance(3, None) == 3 and attempts.allowance(3, 2) == 5


def test_release_gives_back_without_counting_a_try(db):
    _add(db, "x", 0)
    q = Queue(db, "p", lease=30)
    assert q.claim().tries == 1 and q.release() == 1
    assert q.claim().tries == 1


def test_counting_attempt_best_or_last_with_penalty():
    r = lambda i, score, penalty, t: SimpleNamespace(id=i, score=score, penalty=penalty, created_at=t)  # noqa: E731
    rows = [r("a", 10, 1.0, 1), r("b", 18, 0.5, 2), r("c", 10, 1.0, 3)]
    assert counting.choose(rows, "best").id == "a"  # 10 beats 18 x 0.5 = 9; the earliest of equals
    assert counting.choose(rows, "last").id == "c"
    assert counting.choose([], "best") is None


# ---- roster


@pytest.mark.parametrize("text, message", [
    ("id,name\ns1,a\n", "包含 student_id"),
    ("student_id\n../etc\n", "第 2 行：学号 '../etc' 不合法"),
    ("student_id\ns1\ns1\n", "第 3 行：学号 s1 重复"),
    ("student_id,name\ns1,\x07\n", "控制字符"),
])
def test_roster_errors_name_the_line(tmp_path, text, message):
    from autograder.service.roster import RosterError, read_roster

    (tmp_path / "r.csv").write_text(text, encoding="utf-8")
    with pytest.raises(RosterError, match=re.escape(message)):
        read_roster(tmp_path / "r.csv")


def test_roster_import_keeps_codes_and_reset_replaces_them(db, tmp_path):
    from autograder.service.database import ACCOUNTS
    from autograder.service.roster import Student, import_students, read_roster, reset_code

    (tmp_path / "r.csv").write_bytes("\ufeffstudent_id,name,email\ns1,张三,a@b.cn\ns2,,\n".encode())
    students = read_roster(tmp_path / "r.csv")
    assert students[0] == Student("s1", "张三", "a@b.cn")
    first = dict((s.student_id, c) for s, c in import_students(db, students))
    assert set(first) == {"s1", "s2"} and import_students(db, students) == []  # known students keep their codes
    new = reset_code(db, "student", "s1")
    with db.read() as con:
        row = con.execute(sa.select(ACCOUNTS).where(ACCOUNTS.c.login == "s1")).first()
    assert row.code_id == new.split("-")[0] != first["s1"].split("-")[0]
    assert first["s1"].split("-")[1] not in row.code_hash and codes.verify(new.split("-")[1], row.code_hash)


def test_an_older_database_loses_the_second_copy_of_the_counting_score(tmp_path):
    """Older versions stored the counting score in service_counting too (NOT NULL): start-up drops those columns,
    keeping which submission counts, so the new code's rows (without a score) can be written."""
    from autograder.service.database import COUNTING, Database
    from autograder.service.schema import prepare

    url = f"sqlite:///{tmp_path / 'old.db'}"
    engine = sa.create_engine(url)
    with engine.begin() as con:
        con.execute(sa.text("CREATE TABLE service_counting (student_id VARCHAR(128) NOT NULL, assignment VARCHAR(128) NOT NULL, "
                            "submission_id VARCHAR(32) NOT NULL, score FLOAT NOT NULL, max_score FLOAT NOT NULL, "
                            "updated_at FLOAT NOT NULL, PRIMARY KEY (student_id, assignment))"))
        con.execute(sa.text("INSERT INTO service_counting VALUES ('s1', 'a', 'sub1', 5.0, 10.0, 1.0)"))
    engine.dispose()
    db = Database(url)
    prepare(db)
    prepare(db)  # again: nothing left to drop
    with db.write() as con:
        assert con.execute(sa.select(COUNTING)).all() == [("s1", "a", "sub1", 1.0)]
        con.execute(sa.insert(COUNTING).values(student_id="s2", assignment="a", submission_id="sub2", updated_at=2.0))
    db.dispose()


def _a_database_without_finished_at(url: str, rows: tuple[tuple[str, str, float | None], ...]) -> None:
    """At ``url``, the service's tables as versions before ``finished_at`` left them, with ``rows`` of
    (id, status, graded_at)."""
    from autograder.service.database import Database
    from autograder.service.schema import prepare

    db = Database(url)
    prepare(db)
    with db.write() as con:  # as versions before the migrations left it: no version table either
        con.execute(sa.text("DROP TABLE autograder_schema_version"))
        con.execute(sa.text("ALTER TABLE service_submissions DROP COLUMN finished_at"))
        for sid, status, graded_at in rows:
            con.execute(sa.text("INSERT INTO service_submissions (id, student_id, assignment, status, created_at, filename, "
                                "path, sha256, size, late, penalty, tries, graded_at, settled) VALUES (:id, 's1', 'ps1', "
                                ":status, 1.0, 'x.ipynb', 'p', :h, 1, :late, 1.0, 0, :g, :settled)"),
                        {"id": sid, "status": status, "h": "0" * 64, "g": graded_at, "late": False, "settled": True})
    db.dispose()


def test_an_older_database_gets_finished_at_from_graded_at(tmp_path):
    """Older versions had no ``finished_at`` (a regrade's progress read ``graded_at``): start-up adds it, each row's
    from its ``graded_at``, so a regrade requested before the upgrade still counts its ended attempts."""
    from autograder.service.database import SUBMISSIONS, Database
    from autograder.service.schema import prepare

    url = f"sqlite:///{tmp_path / 'old.db'}"
    _a_database_without_finished_at(url, (("a", "graded", 5.0), ("b", "queued", None)))
    db = Database(url)
    prepare(db)
    prepare(db)  # again: nothing left to add
    with db.read() as con:
        rows = con.execute(sa.select(SUBMISSIONS.c.id, SUBMISSIONS.c.finished_at).order_by(SUBMISSIONS.c.id)).all()
    assert rows == [("a", 5.0), ("b", None)]
    db.dispose()


def test_an_older_postgresql_database_gets_finished_at_from_graded_at_with_two_processes_starting(postgres):
    """The same upgrade on PostgreSQL (its ALTER TABLE and the FLOAT type), with two service processes starting at
    once on the older database: one adds the column, the other waits for it and adds nothing (the advisory lock of
    :meth:`Database.create`)."""
    import threading

    from autograder.service.database import SUBMISSIONS, Database
    from autograder.service.schema import prepare

    url = postgres.url("finished_at")
    _a_database_without_finished_at(url, (("a", "graded", 5.0), ("b", "queued", None), ("c", "failed", 7.5)))
    errors: list[BaseException] = []

    def start() -> None:
        other = Database(url)
        try:
            prepare(other)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            other.dispose()

    threads = [threading.Thread(target=start) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    db = Database(url)
    try:
        with db.read() as con:
            rows = con.execute(sa.select(SUBMISSIONS.c.id, SUBMISSIONS.c.finished_at).order_by(SUBMISSIONS.c.id)).all()
            kind = con.execute(sa.text("SELECT data_type FROM information_schema.columns WHERE table_name = "
                                       "'service_submissions' AND column_name = 'finished_at'")).scalar()
        assert rows == [("a", 5.0), ("b", None), ("c", 7.5)] and kind == "double precision"
    finally:
        db.dispose()
