"""A one-course service's database (the schema of ``tests/service/legacy/schema.py``, with rows) becomes a site whose
course ``default`` keeps everything: accounts and their codes, attempts and the scores that count, exceptions, the
LMS people and what was passed back.  On SQLite and PostgreSQL, with two service processes starting at once.

What the upgrade decides (migration ``s001``): every LMS course the service had seen a launch from is bound to the
course, none an authority on its roster - active where students launched or grades went, waiting for confirmation
where only a teacher launched (a student's own sandbox); ``lti_users`` keeps the person -> account links, its last LMS
course becoming a membership (``c002``); the assignments a course's LMS had a column of count as linked there.
"""

from __future__ import annotations

import json
import threading
import time

import pytest
import sqlalchemy as sa

from autograder.check import all_assignments
from autograder.model import SubmissionResult
from autograder.service import courses, sessions
from autograder.service.accounts import Accounts
from autograder.service.database import Database
from autograder.service.lti import bindings
from autograder.service.lms_tables import LINKS, MEMBERSHIPS, USERS
from autograder.service.policy import parse_policy
from autograder.service.roster import reset_code
from autograder.service.schema import VERSION_TABLE, head, prepare
from autograder.service.service import Service
from autograder.store.urls import engine_url

from .legacy import schema as old

A1, A2 = "ps1_threshold_metrics", "ps2_roc_auc"
NOW = time.time()


def result(student: str, assignment: str, score: float, max_score: float) -> str:
    return json.dumps(SubmissionResult(student, assignment, score, max_score, {}, []).to_json())


def legacy_database(url: str) -> None:
    """At ``url``, a one-course service's tables with a class's rows (the codes of s001 and the instructor are known)."""
    engine = sa.create_engine(engine_url(url))
    old.META.create_all(engine)
    with engine.begin() as con:
        accounts = [(1, "student", "s001", "张三", "s001@example.edu"), (2, "student", "s002", "李四", ""),
                    (3, "instructor", "王老师", "王老师", ""), (4, "student", "lti-0123456789ab", "赵六", "z@example.edu"),
                    (5, "instructor", "陈 某（lti-aaaaaaaaaaaa）", "陈 某", "")]
        for i, role, login, name, email in accounts:
            con.execute(sa.insert(old.ACCOUNTS).values(id=i, role=role, login=login, name=name, email=email, code_id=f"code{i:04d}",
                                                       code_hash="argon2-hash", created_at=NOW - 86400))
        subs = [("a1", "s001", A1, 50.0, 54.0, 1.0, False), ("a2", "s002", A1, 40.0, 54.0, 1.0, False),
                ("a3", "s002", A2, 60.0, 69.0, 0.5, True), ("a4", "lti-0123456789ab", A1, 54.0, 54.0, 1.0, False)]
        for n, (sid, student, assignment, score, top, penalty, late) in enumerate(subs):
            con.execute(sa.insert(old.SUBMISSIONS).values(
                id=sid, student_id=student, assignment=assignment, status="graded", created_at=NOW - 3600 + n, filename="nb.ipynb",
                path=f"submissions/{sid}", sha256="0" * 64, size=10, late=late, penalty=penalty, tries=1, started_at=NOW - 3500,
                graded_at=NOW - 3400, finished_at=NOW - 3400, graded_by="old", score=score, max_score=top, fingerprint="f",
                result_json=result(student, assignment, score, top), settled=True))
            con.execute(sa.insert(old.COUNTING).values(student_id=student, assignment=assignment, submission_id=sid, updated_at=NOW))
        con.execute(sa.insert(old.OVERRIDES).values(student_id="s002", assignment=A1, deadline=NOW + 86400, extra_attempts=2,
                                                    updated_at=NOW, updated_by="王老师"))
        con.execute(sa.insert(old.PLATFORMS).values(id=1, name="学校 Canvas", issuer="https://canvas.example.edu", client_id="42",
                                                    auth_login_url="https://canvas.example.edu/auth", auth_token_url="https://canvas.example.edu/token",
                                                    jwks_url="https://canvas.example.edu/jwks", created_at=NOW))
        con.execute(sa.insert(old.DEPLOYMENTS).values(platform_id=1, deployment_id="d1"))
        people = [("sub-s001", "student", 1, "course-1"), ("sub-zhao", "student", 4, "course-1"),
                  ("sub-chen", "instructor", 5, "chen-sandbox")]  # the attack of finding 1, already made
        for sub, role, account, context in people:
            con.execute(sa.insert(old.USERS).values(platform_id=1, sub=sub, role=role, account_id=account, name="", email="",
                                                    context_id=context, first_launch=NOW - 7200, last_launch=NOW - 7000, active=True))
        for context, title in (("course-1", "BIN101"), ("chen-sandbox", "陈某的课")):
            con.execute(sa.insert(old.CONTEXTS).values(platform_id=1, context_id=context, deployment_id="d1", title=title,
                                                       lineitems_url=f"https://canvas.example.edu/{context}/line_items",
                                                       memberships_url=None, scopes="", updated_at=NOW))
        con.execute(sa.insert(old.LINEITEMS).values(platform_id=1, context_id="course-1", assignment=A1,
                                                    url="https://canvas.example.edu/course-1/line_items/1"))
        con.execute(sa.insert(old.PASSBACK).values(
            platform_id=1, context_id="course-1", sub="sub-s001", student_id="s001", assignment=A1, submission_id="a1", score=50.0,
            max_score=54.0, timestamp="2026-12-06T00:00:00.000Z", version=1, status="sent", tries=1, next_at=NOW, sent_at=NOW,
            sent_version=1))
        con.execute(sa.insert(old.HANDOFFS).values(token="t" * 64, account_id=1, target="", expires=NOW + 60))
    engine.dispose()


def service_of(db: Database, tmp_path) -> Service:
    known = all_assignments()
    policy = parse_policy({"assignments": {A1: {"counts": "best"}, A2: {"counts": "best"}}}, list(known))
    return Service(db, policy, tmp_path, sessions.Signer(b"k" * 32, scope=courses.UPGRADED.id), {},
                   {n: a.title for n, a in known.items()})


def check_upgraded(url: str, tmp_path) -> None:
    db = Database(url)
    try:
        site = courses.all_courses(db)
        assert site == [courses.UPGRADED]  # the course stays in place: its data folder and tables are the site's
        assert courses.UPGRADED.db_url(db.url, tmp_path) == db.url
        with db.read() as con:
            assert set(con.execute(sa.select(sa.text("version_num")).select_from(sa.table(VERSION_TABLE))).scalars()) == \
                {head("site"), head("course")}
            assert {c["name"] for c in sa.inspect(con).get_columns("lti_users")} == {"platform_id", "sub", "role", "account_id",
                                                                                     "name", "email"}
            members = con.execute(sa.select(MEMBERSHIPS.c.sub, MEMBERSHIPS.c.context_id, MEMBERSHIPS.c.role,
                                            MEMBERSHIPS.c.first_launch)).all()
            assert sorted(members) == [("sub-chen", "chen-sandbox", "instructor", NOW - 7200), ("sub-s001", "course-1", "student", NOW - 7200),
                                       ("sub-zhao", "course-1", "student", NOW - 7200)]
            assert con.execute(sa.select(USERS.c.sub, USERS.c.account_id).order_by(USERS.c.sub)).all() == \
                [("sub-chen", 5), ("sub-s001", 1), ("sub-zhao", 4)]
            assert con.execute(sa.select(LINKS.c.context_id, LINKS.c.assignment)).all() == [("course-1", A1)]
            assert con.execute(sa.text("SELECT COUNT(*) FROM lti_handoffs")).scalar() == 0  # transient tickets: gone
        found = {b.context_id: b for b in bindings.of_course(db, courses.UPGRADED.id)}
        assert set(found) == {"course-1", "chen-sandbox"} and not any(b.roster_authority for b in found.values())
        # the class's LMS course (students launched, grades went) stays bound; the sandbox only a teacher launched
        # from - the escalation of the one-course service - waits for the course's instructor to confirm it
        assert found["course-1"].active and not found["chen-sandbox"].active
        service = service_of(db, tmp_path)
        sheet = service.submissions.grades_csv()
        assert "s001" in sheet and "张三" in sheet and "李四" in sheet
        scores = {(r.student_id, r.assignment): r.score * r.penalty for r in _counting(db)}
        assert scores == {("s001", A1): 50.0, ("s002", A1): 40.0, ("s002", A2): 30.0, ("lti-0123456789ab", A1): 54.0}
        assert service.extra_attempts("s002", A1) == 2
        # the accounts work as before: a new code for s001 signs in to the course
        code = reset_code(db, "student", "s001")
        assert Accounts(db, service.policy, time.time).sign_in(code, "127.0.0.1").login == "s001"
    finally:
        db.dispose()


def _counting(db: Database) -> list:
    from autograder.service.counting import counting_rows

    with db.read() as con:
        return counting_rows(con)


def upgrade(url: str) -> None:
    """What ``autograder serve`` does first: the site's tables, then its course's (the same database)."""
    db = Database(url)
    try:
        prepare(db, "site")
        prepare(db, "course")
    finally:
        db.dispose()


def test_a_sqlite_one_course_database_becomes_a_site_with_its_course_intact(tmp_path):
    url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    legacy_database(url)
    upgrade(url)
    check_upgraded(url, tmp_path)
    upgrade(url)  # again: nothing left to do, nothing done twice
    check_upgraded(url, tmp_path)


@pytest.mark.slow
def test_a_postgresql_one_course_database_upgrades_once_with_two_processes_starting(postgres, tmp_path):
    url = postgres.url("upgrade_one_course")
    legacy_database(url)
    errors: list[BaseException] = []

    def start() -> None:
        try:
            upgrade(url)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=start) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors
    check_upgraded(url, tmp_path)


@pytest.mark.slow
def test_a_new_course_on_postgresql_lives_in_a_schema_of_its_own(postgres, tmp_path):
    """Two courses of one PostgreSQL site never share a table: each new course is a schema (its nbgrader gradebook
    too, reached through the same URL)."""
    from autograder.service.roster import Student, import_students

    site = Database(postgres.url("two_courses"))
    try:
        prepare(site, "site")
        made = [courses.add(site, tmp_path, cid, cid) for cid in ("bin-2026", "lab")]
        assert [c.db_schema for c in made] == ["course_bin_2026", "course_lab"]
        dbs = [Database(c.db_url(site.url, tmp_path)) for c in made]
        import_students(dbs[0], [Student("s001")])
        import_students(dbs[1], [Student("s002")])
        for db, mine in zip(dbs, ("s001", "s002")):
            assert [a.login for a in Accounts(db, service_of(db, tmp_path).policy, time.time).students("")] == [mine]
        from autograder.store import gradebook

        gradebook.update_students(dbs[0].url, [("s001", "张三", "")])  # nbgrader's tables, in the course's schema
        with dbs[0].read() as con:
            assert "student" in sa.inspect(con).get_table_names()
        with dbs[1].read() as con:
            assert "student" not in sa.inspect(con).get_table_names()
        for db in dbs:
            db.dispose()
    finally:
        site.dispose()
