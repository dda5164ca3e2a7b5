"""``grades.csv`` as the instructor downloads it (issue 40, item 9), in process (:mod:`.inprocess`): UTF-8 with a
byte order mark (a spreadsheet in a Chinese locale reads 张三, not mojibake), an ``attempts`` column, and a wide
shape (``?format=wide``: one row per student, a column per assignment) beside the long one; both linked from the
staff's overview.
"""

from __future__ import annotations

import csv
import io

import pytest

from autograder.service.roster import Student, import_students

from .inprocess import Site, solution_bytes, upload

A1, A2 = "ps1_threshold_metrics", "ps2_roc_auc"


@pytest.fixture
def site(tmp_path):
    s = Site(tmp_path, {"assignments": {A1: {"attempts_per_24h": 5}, A2: {"attempts_per_24h": 5, "counts": "last"}}},
             ["s002"], 1.8e9)
    issued = import_students(s.db, [Student("s001", "张三"), Student("s003", "=王五")])  # a name a spreadsheet would evaluate
    s.codes.update({student.student_id: code for student, code in issued})
    yield s
    s.db.dispose()


def download(site: Site, query: str = ""):
    r = site.client("instructor").get(f"/api/v1/grades.csv{query}")
    assert r.status_code == 200 and r.headers["content-type"] == "text/csv; charset=utf-8", r.text
    return r


def test_the_long_sheet_has_a_byte_order_mark_and_the_attempts_made(site):
    c = site.client("s001")
    for score in (4, 9, 6):
        upload(c, A1, solution_bytes(A1))
        site.grade(score=score)
    upload(c, A2, solution_bytes(A2))  # still queued: an attempt made, nothing counts yet
    r = download(site)
    assert r.content.startswith(b"\xef\xbb\xbf") and r.headers["content-disposition"] == 'attachment; filename="grades.csv"'
    assert r.content.count(b"\xef\xbb\xbf") == 1
    rows = {(x["student_id"], x["assignment"]): x for x in csv.DictReader(io.StringIO(r.content.decode("utf-8-sig")))}
    assert list(next(iter(rows.values())))[-1] == "attempts"
    assert (rows[("s001", A1)]["student_name"], rows[("s001", A1)]["score"], rows[("s001", A1)]["attempts"]) == ("张三", "9", "3")
    assert (rows[("s001", A2)]["score"], rows[("s001", A2)]["attempts"]) == ("", "1")
    assert rows[("s002", A1)]["attempts"] == "0" and rows[("s003", A2)]["student_name"] == "'=王五"
    assert len(rows) == 6


def test_the_wide_sheet_has_a_row_per_student_and_a_column_per_assignment(site):
    upload(site.client("s001"), A1, solution_bytes(A1))
    upload(site.client("s002"), A2, solution_bytes(A2))
    site.grade(score=7)
    r = download(site, "?format=wide")
    assert r.content.startswith(b"\xef\xbb\xbf") and 'filename="grades-wide.csv"' in r.headers["content-disposition"]
    lines = list(csv.reader(io.StringIO(r.content.decode("utf-8-sig"))))
    assert lines[0] == ["student_id", "student_name", A1, A2]
    assert lines[1:] == [["s001", "张三", "7", ""], ["s002", "", "", "7"], ["s003", "'=王五", "", ""]]


def test_an_unknown_shape_is_refused_and_students_get_none(site):
    r = site.client("instructor").get("/api/v1/grades.csv?format=xlsx")
    assert r.status_code == 400 and "format 应为 long 或 wide" in r.json()["error"]
    assert site.client("s001").get("/api/v1/grades.csv?format=wide").status_code == 403


def test_the_overview_links_both_shapes(site):
    teacher, _ = site.signed_in("instructor")
    page = teacher.get("/instructor/").text
    assert 'href="../api/v1/grades.csv" download>下载 grades.csv（每人每项作业一行）' in page
    assert 'href="../api/v1/grades.csv?format=wide" download>下载 grades.csv（每人一行，每项作业一列）' in page
