"""The second pass: the API attacked from a student's side; each finding of the review is a test here.

(Other students' ids, forged cookies, oversized and bomb uploads and the timing of code checks are in
test_api.py; these are the odder requests.)  Sent from 127.0.0.20: their wrong codes count against that
address, not against the other tests'.
"""

from __future__ import annotations

import socket

import make_corpus
import pytest

from .conftest import COURSE
from .server import notebook_bytes, submit

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("service-course")]  # one running course (conftest.py)
A1 = "ps1_threshold_metrics"
SOURCE = "127.0.0.20"


def test_path_tricks_in_the_url_reach_nothing(course):
    server, codes, data = course["server"], course["codes"], course["data"]
    body = notebook_bytes(make_corpus.solution(A1))
    with server.client(codes["s005"], SOURCE) as c:
        for assignment in ("..%2F..%2Fetc", "%2E%2E", "ps1_threshold_metrics%00", "ps1_threshold_metrics%2F..%2Fps2_roc_auc"):
            r = c.post(f"/api/v1/assignments/{assignment}/submissions", files={"notebook": ("x.ipynb", body)})
            assert r.status_code == 404, (assignment, r.text)
        for sid in ("%00", "..%2F..%2Fgradebook.db", "x" * 500, "%27%20OR%201%3D1--", "*"):
            r = c.get(f"/api/v1/submissions/{sid}")
            assert r.status_code == 404 and r.json()["error"] in ("没有这份提交", "没有这个地址")
    assert not list(data.parent.rglob("etc"))


def test_malformed_credentials_are_refused_cheaply(course):
    server, codes = course["server"], course["codes"]
    with server.client(source=SOURCE) as c:
        for header in ("Bearer", "Basic dXNlcjpwYXNz", f"bearer  {codes['s005']}x", "Bearer " + "a" * 4000):
            r = c.get("/api/v1/submissions", headers={"Authorization": header})
            assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer", header
        r = c.get("/api/v1/submissions", headers={"Authorization": "Bearer " + "a" * 20000})
        assert r.status_code in (400, 401, 431)  # by the HTTP parser, or as a malformed code
    with server.client(source=SOURCE, cookies={f"autograder_session-{COURSE}": "x" * 2000}) as c:
        assert c.get("/api/v1/submissions").status_code == 401


def test_login_bodies_are_bounded(course):
    server = course["server"]
    with server.client(source=SOURCE) as c:
        assert c.post("/api/v1/session", content=b"[" * 4000, headers={"Content-Type": "application/json"}).status_code == 400
        assert c.post("/api/v1/session", content=b"x" * 5000, headers={"Content-Type": "application/json"}).status_code == 413
        assert c.post("/api/v1/session", json={"code": ["not", "a", "string"]}).status_code == 400
        assert c.post("/api/v1/session", data={"code": "abcdefgh-nothing"}).status_code == 401
        r = c.post("/api/v1/session", json={"code": course["codes"]["s005"]}, headers={"Origin": "null"})
        assert r.status_code == 403 and "set-cookie" not in r.headers


def test_unsupported_methods_and_headers_on_errors(course):
    server, codes = course["server"], course["codes"]
    with server.client(codes["s005"], SOURCE) as c:
        for method in ("PUT", "PATCH", "DELETE", "OPTIONS"):
            r = c.request(method, f"/api/v1/assignments/{A1}/submissions")
            assert r.status_code == 405 and r.headers["x-content-type-options"] == "nosniff"


def test_a_body_that_never_ends_does_not_hold_the_upload(course):
    """A declared length far above the limit is refused before the body is read (no waiting for it)."""
    server, codes = course["server"], course["codes"]
    with socket.create_connection(("127.0.0.1", server.port), timeout=30, source_address=(SOURCE, 0)) as s:
        s.sendall((f"POST /c/{COURSE}/api/v1/assignments/{A1}/submissions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                   f"Authorization: Bearer {codes['s005']}\r\nContent-Type: multipart/form-data; boundary=b\r\n"
                   f"Content-Length: {10 << 30}\r\n\r\n").encode())
        answer = b""
        while b"}" not in answer:  # the JSON error body ends the answer; the server did not wait for 10 GiB
            chunk = s.recv(65536)
            if not chunk:
                break
            answer += chunk
        answer = answer.decode("utf-8", "replace")
    assert answer.startswith("HTTP/1.1 413") and "最大 5 MiB" in answer


def test_no_listing_of_another_students_files_through_the_feedback(course):
    """A graded submission's feedback is reachable only by id; the ids are not guessable from anything shown."""
    server, codes = course["server"], course["codes"]
    with server.client(codes["s005"], SOURCE) as c:
        r = submit(c, A1, notebook_bytes(make_corpus.student(A1)))
        sid = r.json()["id"]
    with server.client(codes["s008"], SOURCE) as other:
        for guess in (sid[:-1] + ("A" if sid[-1] != "A" else "B"), sid.lower(), sid.upper()):
            if guess != sid:
                assert other.get(f"/api/v1/submissions/{guess}").status_code == 404
        assert other.get(f"/api/v1/submissions/{sid}").status_code == 404
