"""The HTTP API of a real ``autograder serve`` (uvicorn, SQLite, sandboxed grading): contract, policies, errors."""

from __future__ import annotations

import csv
import io
import json
import time

import httpx
import make_corpus
import pytest

from .conftest import COURSE
from .server import files_under, notebook_bytes, submit, wait_done

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("service-course")]  # one running course (conftest.py)

A1, A2, A3 = "ps1_threshold_metrics", "ps2_roc_auc", "ps3_pr_ap"
SOLUTION = {a: notebook_bytes(make_corpus.solution(a)) for a in (A1, A2, A3)}
UNTOUCHED = {a: notebook_bytes(make_corpus.student(a)) for a in (A1, A2)}
MAX1, MAX2 = make_corpus.A[A1].max_score(), make_corpus.A[A2].max_score()


def _gradebook_score(data, assignment: str, student: str) -> float:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{data / 'gradebook.db'}") as gb:
        return gb.find_submission(assignment, student).score


def _grades_csv(course) -> dict[tuple[str, str], float]:
    with course["server"].client(course["codes"]["instructor"]) as c:
        r = c.get("/api/v1/grades.csv")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(r.content.decode("utf-8-sig"))))
    assert list(rows[0])[:5] == ["student_id", "student_name", "assignment", "score", "max_score"]
    return {(row["student_id"], row["assignment"]): float(row["score"]) for row in rows if row["score"]}  # "": not submitted


def test_upload_grade_and_read_back(course):
    server, codes = course["server"], course["codes"]
    with server.client(codes["s001"]) as c:
        r = submit(c, A1, SOLUTION[A1], "threshold_metrics.ipynb")
        assert r.status_code == 202, r.text
        sid = r.json()["id"]
        assert r.json() == {"id": sid, "status": "queued"} and r.headers["location"] == f"{server.url}/api/v1/submissions/{sid}"
        assert len(sid) == 22  # 128 random bits, URL-safe
        first = c.get(f"/api/v1/submissions/{sid}").json()
        assert first["status"] in ("queued", "grading", "graded") and first["student_id"] == "s001"
        doc = wait_done(c, [sid])[sid]
        assert set(doc) >= {"id", "student_id", "assignment", "status", "score", "max_score", "late", "created_at",
                            "graded_at", "feedback_url"}
        assert (doc["status"], doc["score"], doc["max_score"], doc["late"]) == ("graded", MAX1, MAX1, False)
        assert doc["created_at"].endswith("+00:00") and doc["graded_at"] >= doc["created_at"]
        page = c.get(doc["feedback_url"])
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        assert "全部用例通过" in page.text and f"{MAX1} / {MAX1}" in page.text
        mine = c.get("/api/v1/submissions", params={"assignment": A1}).json()["submissions"]
        assert [s["id"] for s in mine] == [sid]
        assignments = {a["name"]: a for a in c.get("/api/v1/assignments").json()["assignments"]}
        assert assignments[A3]["open"] is False and assignments[A1]["attempts_per_24h"] == 3
    with server.client(codes["instructor"]) as c:
        everyone = c.get("/api/v1/submissions").json()["submissions"]
        assert sid in [s["id"] for s in everyone]
    assert _grades_csv(course)[("s001", A1)] == MAX1
    assert _gradebook_score(course["data"], A1, "s001") == MAX1  # the nbgrader gradebook holds it


def _refused(c: httpx.Client, assignment: str, data: bytes, filename: str = "x.ipynb", **kw) -> httpx.Response:
    return submit(c, assignment, data, filename, **kw)


def test_every_refusal_says_why_in_chinese_and_stores_nothing(course):
    server, codes, data = course["server"], course["codes"], course["data"]
    before = files_under(data / "submissions") if (data / "submissions").exists() else []
    with server.client(codes["s002"]) as c, server.client() as anonymous, server.client("wrong-code") as wrong:
        with server.client(codes["instructor"]) as teacher:
            cases = [
                (anonymous, A1, SOLUTION[A1], "x.ipynb", 401, "访问码"),
                (wrong, A1, SOLUTION[A1], "x.ipynb", 401, "访问码"),
                (c, "ps9_unknown", SOLUTION[A1], "x.ipynb", 404, "没有开放提交的作业"),
                (c, A1, b"not json at all", "x.ipynb", 400, "不是合法的 JSON"),
                (c, A1, b'{"nbformat": 3, "worksheets": []}', "x.ipynb", 400, "nbformat 4"),
                (c, A1, SOLUTION[A2], "roc_auc.ipynb", 400, "这是作业 ps2_roc_auc 的笔记本"),
                (c, A1, "{}".encode("utf-16"), "x.ipynb", 400, "UTF-8"),
                (c, A1, SOLUTION[A1], "../../../evil.ipynb", 400, "文件名不合法"),
                (c, A1, SOLUTION[A1], "x.py", 400, ".ipynb"),
                (c, A1, b"[" * 200_000 + b"]" * 200_000, "x.ipynb", 400, "嵌套超过"),
                (c, A3, SOLUTION[A3], "pr_ap.ipynb", 403, "已于"),
                (teacher, A1, SOLUTION[A1], "x.ipynb", 403, "教师和助教的账号不能提交"),
            ]
            for client, assignment, body, name, status, message in cases:
                r = _refused(client, assignment, body, name)
                assert r.status_code == status, (assignment, name, r.status_code, r.text)
                assert message in r.json()["error"], r.json()
        big = json.loads(SOLUTION[A1])
        big["cells"][0]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "x" * (6 << 20)}]
        big["cells"][0]["cell_type"] = "code"
        r = _refused(c, A1, json.dumps(big).encode())
        assert r.status_code == 413 and "最大 5 MiB" in r.json()["error"]

        def chunks():  # no Content-Length: refused while it streams
            for _ in range(80):
                yield b"x" * (128 << 10)

        r = c.post(f"/api/v1/assignments/{A1}/submissions", content=chunks(),
                   headers={"Content-Type": "multipart/form-data; boundary=b"})
        assert r.status_code == 413
        r = c.post(f"/api/v1/assignments/{A1}/submissions", content=b"\x1f\x8b" + b"\0" * 100,
                   headers={"Content-Type": "multipart/form-data; boundary=b", "Content-Encoding": "gzip"})
        assert r.status_code == 415 and "压缩" in r.json()["error"]
        r = c.post(f"/api/v1/assignments/{A1}/submissions", files={"other": ("x.ipynb", SOLUTION[A1])})
        assert r.status_code == 400 and "notebook" in r.json()["error"]
        assert c.get("/api/v1/submissions").json()["submissions"] == []
    after = files_under(data / "submissions") if (data / "submissions").exists() else []
    assert after == before
    assert not any(p.name == "evil.ipynb" for p in data.parent.rglob("evil.ipynb"))


def test_attempt_limit_per_rolling_24_hours(course):
    server, codes = course["server"], course["codes"]
    with server.client(codes["s002"]) as c:
        ids = [submit(c, A1, body).json()["id"] for body in (UNTOUCHED[A1], UNTOUCHED[A1], SOLUTION[A1])]
        r = submit(c, A1, SOLUTION[A1])
        assert r.status_code == 429 and "24 小时内最多评分 3 次" in r.json()["error"]
        assert 86000 < int(r.headers["retry-after"]) <= 86400
        assert len(c.get("/api/v1/submissions", params={"assignment": A1}).json()["submissions"]) == 3
        done = wait_done(c, ids)
    assert [done[i]["score"] for i in ids] == [0, 0, MAX1]


def test_best_attempt_counts_and_the_gradebook_holds_it(course):
    server, codes = course["server"], course["codes"]
    with server.client(codes["s004"]) as c:
        good = submit(c, A1, SOLUTION[A1]).json()["id"]
        wait_done(c, [good])
        worse = submit(c, A1, UNTOUCHED[A1]).json()["id"]
        assert wait_done(c, [worse])[worse]["score"] == 0
    assert _grades_csv(course)[("s004", A1)] == MAX1
    assert _gradebook_score(course["data"], A1, "s004") == MAX1


def test_late_work_with_penalty_and_last_attempt_counts(course):
    server, codes = course["server"], course["codes"]
    with server.client(codes["s003"]) as c:
        first = submit(c, A2, SOLUTION[A2]).json()["id"]
        doc = wait_done(c, [first])[first]
        assert (doc["late"], doc["raw_score"], doc["score"], doc["penalty"]) == (True, MAX2, MAX2 * 0.5, 0.5)
        assert _grades_csv(course)[("s003", A2)] == MAX2 * 0.5
        assert _gradebook_score(course["data"], A2, "s003") == MAX2 * 0.5
        page = c.get(doc["feedback_url"]).text
        assert "迟交：得分按 0.5 倍计入" in page
        assert "未通过的用例" not in page and "通过的用例" not in page  # policy "score": scores only
        last = submit(c, A2, UNTOUCHED[A2]).json()["id"]
        wait_done(c, [last])
    assert _grades_csv(course)[("s003", A2)] == 0  # "last": the later, worse attempt counts
    assert _gradebook_score(course["data"], A2, "s003") == 0


def test_feedback_cases_before_the_deadline(course):
    """Real grading, feedback ``cases``: no inputs for the student, everything for the instructor.  The turn to
    ``full`` at the deadline is followed in process with a moving clock (``test_policy.py``)."""
    server, codes = course["server"], course["codes"]
    wrong = notebook_bytes(make_corpus.build()["wrong_strict_threshold"][1])
    with server.client(codes["s008"]) as c, server.client(codes["instructor"]) as teacher:
        sid = submit(c, A1, wrong).json()["id"]
        doc = wait_done(c, [sid])
        assert 0 < doc[sid]["score"] < MAX1
        student_page = c.get(doc[sid]["feedback_url"]).text
        assert "未通过的用例" in student_page and "<th>输入</th>" not in student_page  # cases: no inputs
        assert "本次反馈只显示" in student_page
        assert "<th>输入</th>" in teacher.get(doc[sid]["feedback_url"]).text  # instructors see everything


def test_a_student_sees_only_their_own(course):
    server, codes = course["server"], course["codes"]
    with server.client(codes["s001"]) as owner:
        sid = submit(owner, A2, SOLUTION[A2]).json()["id"]
        wait_done(owner, [sid])
    with server.client(codes["s005"]) as other:
        for path in (f"/api/v1/submissions/{sid}", f"/api/v1/submissions/{sid}/feedback"):
            theirs = other.get(path)
            missing = other.get(path.replace(sid, "A" * 22))
            assert theirs.status_code == missing.status_code == 404
            assert theirs.text == missing.text and theirs.headers.keys() == missing.headers.keys()
        assert sid not in other.get("/api/v1/submissions").text
        assert other.get("/api/v1/submissions", params={"student": "s001"}).json()["submissions"] == []
        r = other.get("/api/v1/grades.csv")
        assert r.status_code == 403 and "只有教师" in r.json()["error"]


def test_security_headers_on_every_kind_of_answer(course):
    server, codes = course["server"], course["codes"]
    with server.client(codes["s001"]) as c, server.client() as anonymous:
        some = c.get("/api/v1/submissions").json()["submissions"]
        graded = next(s for s in some if s["status"] == "graded")
        answers = [c.get("/api/v1/submissions"), c.get(graded["feedback_url"]), anonymous.get("/api/v1/submissions"),
                   c.get("/api/v1/nothing/here"), c.put("/api/v1/submissions"), anonymous.get(server.base + "/healthz")]
        page = anonymous.get("/nothing/here")  # outside the API: the pages' 404, with the pages' policy
    for r in answers:
        csp = r.headers["content-security-policy"]
        assert "frame-ancestors 'none'" in csp and "default-src 'none'" in csp and "script-src" not in csp
        assert r.headers["x-content-type-options"] == "nosniff" and r.headers["cache-control"] == "no-store"
        assert "server" not in r.headers
    assert [r.status_code for r in answers] == [200, 200, 401, 404, 405, 200]
    assert answers[3].json()["error"] == "没有这个地址"
    assert page.status_code == 404 and "没有这个页面" in page.text and page.headers["x-frame-options"] == "DENY"
    assert "script-src 'self';" in page.headers["content-security-policy"] and "unsafe" not in page.headers["content-security-policy"]


def test_hostile_values_are_escaped_in_feedback(course):
    server, codes = course["server"], course["codes"]
    evil = make_corpus.append(make_corpus.solution(A1), "def confusion_counts(y_true, y_pred):\n"
                              "    raise ValueError('<script>alert(1)</script><img src=x onerror=alert(2)>')")
    with server.client(codes["s007"]) as c, server.client(codes["instructor"]) as teacher:
        r = submit(c, A1, notebook_bytes(evil), "<img src=x onerror=alert(3)>.ipynb")
        assert r.status_code == 202, r.text
        doc = wait_done(c, [r.json()["id"]])[r.json()["id"]]
        assert doc["filename"] == "<img src=x onerror=alert(3)>.ipynb" and doc["score"] < MAX1
        page = teacher.get(doc["feedback_url"]).text  # full feedback: the message is shown
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<script" not in page and "<img" not in page


def test_concurrent_wrong_codes_are_checked_at_most_the_budget_and_a_right_code_still_signs_in(course):
    """Finding 6, against the real server, from its own loopback address: 80 wrong codes at once are checked at
    most the address's budget (5: 401), the others refused unchecked (429 with Retry-After); then a right code
    from the same address (a classmate behind the same NAT) still signs in, by header and by the session endpoint.

    (s006's code is used here for the first time, so it is not in the server's cache of verified codes.)"""
    from concurrent.futures import ThreadPoolExecutor

    server, codes = course["server"], course["codes"]
    source = "127.0.0.9"

    def guess(i: int) -> httpx.Response:
        with server.client(source=source) as c:
            return c.get("/api/v1/submissions", headers={"Authorization": f"Bearer abcd{i:04d}-guess"})

    with ThreadPoolExecutor(40) as pool:
        answers = list(pool.map(guess, range(80)))
    statuses = sorted(r.status_code for r in answers)
    assert statuses.count(401) == 5 and statuses.count(429) == 75, statuses
    refused = next(r for r in answers if r.status_code == 429)
    assert int(refused.headers["retry-after"]) > 800 and "过多" in refused.json()["error"]
    with server.client(source=source) as c:
        r = c.get("/api/v1/submissions", headers={"Authorization": f"Bearer {codes['s006']}"})
        assert r.status_code == 200, r.text
        r = c.post("/api/v1/session", json={"code": codes["s006"]})
        assert r.status_code == 200 and r.json()["login"] == "s006"
        assert c.get("/api/v1/session").json()["login"] == "s006"
        r = c.get("/api/v1/submissions", headers={"Authorization": "Bearer abcdefgh-oneguessmore"})
        assert r.status_code == 429  # the budget is still used up for codes naming no account


def test_unknown_and_wrong_codes_cost_the_same(course):
    """The first part of a code must not be confirmable by timing: an unknown id runs the same argon2 check."""
    server, codes = course["server"], course["codes"]
    known_id = codes["s007"].split("-")[0]
    transport = httpx.HTTPTransport(local_address="127.0.0.10")
    times = {"known": [], "unknown": []}
    with httpx.Client(base_url=server.url + "/", transport=transport, timeout=60) as c:
        assert c.get(server.base + "/healthz").status_code == 200  # the connection is open before timing starts
        for _ in range(2):  # 4 failures: under the limit of 5
            for kind, cid in (("known", known_id), ("unknown", "zzzzzzzz")):
                t0 = time.perf_counter()
                r = c.get("/api/v1/submissions", headers={"Authorization": f"Bearer {cid}-{'x' * 26}"})
                times[kind].append(time.perf_counter() - t0)
                assert r.status_code == 401
    known, unknown = min(times["known"]), min(times["unknown"])
    # both pay for argon2 (tens of ms each); a fast miss would be 20x cheaper. The bound leaves room for the
    # noise of a loaded machine (parallel test workers: 0.066 s against 0.135 s seen once)
    assert unknown > 0.2 * known and known > 0.2 * unknown, times


def test_sessions_cookies_and_csrf(course):
    server, codes, data = course["server"], course["codes"], course["data"]
    with server.client() as c:
        r = c.post("/api/v1/session", json={"code": codes["s006"]})
        assert r.status_code == 200, r.text
        cookie = r.headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/" in cookie
        token = r.json()["csrf_token"]
        assert c.get("/api/v1/session").json()["login"] == "s006"
        # a state-changing request with the cookie needs the CSRF token and our own origin
        assert submit(c, A1, SOLUTION[A1]).status_code == 403
        assert submit(c, A1, SOLUTION[A1], headers={"X-CSRF-Token": "forged"}).status_code == 403
        r = submit(c, A1, SOLUTION[A1], headers={"X-CSRF-Token": token, "Origin": "https://evil.example"})
        assert r.status_code == 403 and "其他网站" in r.json()["error"]
        r = c.post(f"/api/v1/assignments/{A1}/submissions",  # the form field alone is read too late: refused
                   files={"notebook": ("x.ipynb", SOLUTION[A1])}, data={"csrf_token": token})
        assert r.status_code == 403, r.text
        r = c.post(f"/api/v1/assignments/{A1}/submissions", params={"csrf_token": token},  # the form's address
                   files={"notebook": ("x.ipynb", SOLUTION[A1])})
        assert r.status_code == 202, r.text
        sid = r.json()["id"]
        assert submit(c, A1, SOLUTION[A1], headers={"X-CSRF-Token": token, "Origin": server.base}).status_code == 202
        value = c.cookies.get(f"autograder_session-{COURSE}")
        body, mac = value.split(".")
        import base64

        payload = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
        payload["a"] = payload["a"] - 1  # another account, same signature
        forged = base64.urlsafe_b64encode(json.dumps(payload).encode()).rstrip(b"=").decode() + "." + mac
    with server.client(cookies={f"autograder_session-{COURSE}": forged}) as f:
        assert f.get(f"/api/v1/submissions/{sid}").status_code == 401
    with server.client(cookies={f"autograder_session-{COURSE}": value}) as same:
        assert same.get(f"/api/v1/submissions/{sid}").status_code == 200
        # a new code ends the old code and every session made with it
        from .server import run

        codes_file = data.parent / "reset-s006.csv"
        run("roster", "import", "--data", str(data.parent.parent), "--codes", str(codes_file), "--reset", "s006")
        assert same.get(f"/api/v1/submissions/{sid}").status_code == 401
    with server.client(codes["s006"]) as old:
        assert old.get("/api/v1/submissions").status_code == 401
    new = list(csv.DictReader(codes_file.open(encoding="utf-8")))[0]["code"]
    with server.client(new) as c:
        assert c.get(f"/api/v1/submissions/{sid}").status_code == 200
        logged_in = c.post("/api/v1/session", json={"code": new})
        token = logged_in.json()["csrf_token"]
        c.headers.pop("Authorization")
        assert c.delete("/api/v1/session").status_code == 403
        r = c.delete("/api/v1/session", headers={"X-CSRF-Token": token})
        assert r.status_code == 200 and "Max-Age=0" in r.headers["set-cookie"]
