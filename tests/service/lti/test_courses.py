"""One service, two courses, one platform registration: roles hold only in the course an LMS course is bound to.

Each finding of the attack on the one-course service (2026-12-07) is a test here (the numbers are the issue's):

1. a student who teaches her own sandbox course on the same LMS is no teacher here;
2. another platform's claimed SIS id or e-mail never takes over a roster entry;
3. a forged ``Host`` cannot put its address into anything the service writes (passback comments, redirects);
4. a launch ticket opened in another browser signs nobody in silently (login CSRF);
5. a score goes to every bound LMS course where the assignment is linked, and a column is never created elsewhere;
6. a deep-linking request's ``data`` comes back unchanged whatever its JSON type.

And each finding of the red team of the courses (issue 39, 2026-12), at the end: a score goes to an LMS course
only while it is bound to the course and the student is a member there; one course's accounts hold no upload slot
of another's; a course called ``admin`` keeps its own sessions; an account-linking ticket works only in the browser
that launched.

The tool runs in process (two new courses of one site, each its own SQLite database), the platform is the fake LMS
on loopback with per-course roles.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import re
import time

import httpx
import pytest
import sqlalchemy as sa

from autograder.service import counting
from autograder.service.database import ACCOUNTS, ADMINS, SUBMISSIONS
from autograder.service.lti import bindings, nrps, passback, registry
from autograder.service.lti.ags import Tokens
from autograder.service.lti.keys import ToolKeys
from autograder.service.lms_tables import LINEITEMS, MEMBERSHIPS, PASSBACK, USERS
from autograder.service.roles import ADMIN
from autograder.service.roster import Student, import_students, staff_code

from ..inprocess import solution_bytes
from .conftest import ASSIGNMENT, TOOL, auth_state, authorize, make_site, people, visible_text
from .fake_lms import INSTRUCTOR, LEARNER, TEACHING_ASSISTANT, FakePlatform, User

A2 = "ps2_roc_auc"


@pytest.fixture
def site(tmp_path):
    """Courses ``bin`` and ``lab``."""
    t = make_site(tmp_path, ("bin", "lab"))
    yield t
    t.client.close()
    for service in t.site.courses.values():
        service.db.dispose()
    t.site.db.dispose()


@pytest.fixture
def lms(running_platform, site):
    """The fake LMS, registered once: ``course-1`` and its section ``section-2`` bound to ``bin`` (the first an
    authority on its roster), ``lab-1`` bound to ``lab``; ``alice-sandbox`` (alice teaches it) bound to nothing."""
    p = running_platform
    p.tool, p.mode, p.audience, p.deep_link_data = TOOL, "up", None, None
    p.users = {**people(), "tina": User("sub-tina", "唐 助教", "tina@example.edu", TEACHING_ASSISTANT),
               "carol": User("sub-carol", "陈 同学", "carol@example.edu", LEARNER, sourcedid="s002")}
    p.enrolments = {"course-1": {"alice": LEARNER, "bob": LEARNER, "teacher": INSTRUCTOR, "tina": TEACHING_ASSISTANT,
                                 "carol": LEARNER},
                    "section-2": {"bob": LEARNER, "teacher": INSTRUCTOR},
                    "alice-sandbox": {"alice": INSTRUCTOR, "bob": LEARNER},
                    "lab-1": {"alice": LEARNER}}
    p.scores, p.lineitems, p.members, p.tokens, p.assertions, p.deep_link_responses = [], {}, {}, {}, [], []
    p.keys = p.keys[:1]
    p.custom = {"link-1": {"assignment": ASSIGNMENT}, "link-ps2": {"assignment": A2}}
    p.tool_jwks = lambda: ToolKeys(site.data).jwks()
    registered = registry.add(site.site.db, **p.registration())
    p.registered_id = registered.id
    for context, course, authority in (("course-1", "bin", True), ("section-2", "bin", False), ("lab-1", "lab", False)):
        bindings.bind(site.site.db, registered.id, p.deployment_id, context, course, by="管理员", roster_authority=authority)
    return p


def launch_in(site, platform, user: str, context: str, link: str = "link-1", kind: str = "LtiResourceLinkRequest",
              client: httpx.Client | None = None) -> httpx.Response:
    """A launch of ``user`` from ``context`` (its roles there), through login, the platform's authorization and the form post."""
    c = client or site.client
    params = {"iss": platform.issuer, "login_hint": user, "target_link_uri": TOOL + "/lti/launch", "client_id": platform.client_id,
              "lti_message_hint": f'{{"context": "{context}", "link": "{link}", "type": "{kind}"}}'}
    r = c.get("/lti/login", params=params)
    return c.post("/lti/launch", data=authorize(platform, r))


def enter(site, response: httpx.Response, client: httpx.Client | None = None) -> httpx.Response:
    """The landing page's ticket redeemed in the same browser: the answer of ``/lti/enter``."""
    assert response.status_code == 200, visible_text(response)
    target = response.headers["refresh"].split("url=", 1)[1]
    return (client or site.client).get("/lti/" + target.split("lti/", 1)[1])


def signed_in(site, response: httpx.Response) -> str:
    entered = enter(site, response)
    assert entered.status_code == 303, visible_text(entered)
    return entered.headers["location"]


def accounts(site, course: str) -> list[tuple[str, str]]:
    with site.site.courses[course].db.read() as con:
        return sorted(con.execute(sa.select(ACCOUNTS.c.role, ACCOUNTS.c.login)).all())


def browser(site) -> httpx.Client:
    """Another browser (its own cookies) on the same in-process tool."""
    return httpx.Client(transport=site.client._transport, base_url=TOOL, follow_redirects=False)


def session_cookies(client: httpx.Client) -> set[str]:
    """The names of the session cookies the browser holds (over HTTPS each has the ``__Host-`` prefix)."""
    return {n.removeprefix("__Host-") for n in client.cookies.keys() if n.removeprefix("__Host-").startswith("autograder_session")}


# ---- 1. a teacher of any LMS course is not a teacher here


def test_teaching_an_unbound_sandbox_course_grants_nothing(site, lms):
    assert signed_in(site, launch_in(site, lms, "alice", "course-1")).endswith(f"c/bin/assignments/{ASSIGNMENT}")
    before = {c: accounts(site, c) for c in ("bin", "lab")}
    sandbox = launch_in(site, lms, "alice", "alice-sandbox")
    text = visible_text(sandbox)
    assert sandbox.status_code == 403 and "这门课程还没有接入本服务" in text and "申请把这门课绑定到本服务的课程" in text
    assert "refresh" not in sandbox.headers and "lti/enter" not in sandbox.text  # no ticket: nobody is signed in
    assert {c: accounts(site, c) for c in ("bin", "lab")} == before  # no account made anywhere
    assert session_cookies(site.client) == {"autograder_session-bin"}  # still only her student session of bin
    for path in ("/c/bin/instructor/", "/c/bin/instructor/roster", "/c/bin/lti/admin", "/c/bin/api/v1/grades.csv"):
        assert site.client.get(path).status_code == 403, path
    # a learner of an unbound LMS course is told so, and asked nothing
    bob = httpx.Client(transport=site.client._transport, base_url=TOOL, follow_redirects=False)
    refused = launch_in(site, lms, "bob", "alice-sandbox", client=bob)
    assert refused.status_code == 403 and "还没有接入本服务" in visible_text(refused) and "bind-request" not in refused.text


def test_a_person_is_a_student_in_one_course_and_a_teacher_in_another(site, lms):
    """Once the administrator binds alice's own LMS course to ``lab``, she teaches ``lab`` - and still only studies
    in ``bin``: each role holds in its course alone, each course has its own session."""
    signed_in(site, launch_in(site, lms, "alice", "course-1"))
    bindings.bind(site.site.db, lms.registered_id, lms.deployment_id, "alice-sandbox", "lab", by="管理员")
    assert signed_in(site, launch_in(site, lms, "alice", "alice-sandbox")).endswith(f"c/lab/instructor/assignments/{ASSIGNMENT}")
    assert session_cookies(site.client) == {"autograder_session-bin", "autograder_session-lab"}
    assert site.client.get("/c/lab/instructor/").status_code == 200
    assert site.client.get("/c/bin/instructor/").status_code == 403
    assert site.client.get("/c/bin/api/v1/session").json()["role"] == "student"
    assert site.client.get("/c/lab/api/v1/session").json()["role"] == "instructor"
    assert [r for r, _ in accounts(site, "bin")] == ["student"] and [r for r, _ in accounts(site, "lab")] == ["instructor"]


def test_a_session_of_one_course_is_refused_by_another_with_the_same_account_id(site, lms):
    """Accounts of two courses share ids (each course counts from 1): a session cookie carries its course."""
    signed_in(site, launch_in(site, lms, "alice", "course-1"))  # account 1 of bin
    with site.site.courses["lab"].db.write() as con:  # and an account 1 of lab, someone else
        con.execute(sa.insert(ACCOUNTS).values(id=1, role="instructor", login="周老师", name="周老师", email="", code_id="zzzzzzzz",
                                               code_hash="x", created_at=time.time()))
    value = site.client.cookies.get("__Host-autograder_session-bin")
    with httpx.Client(transport=site.client._transport, base_url=TOOL) as c:
        c.cookies.set("__Host-autograder_session-lab", value, domain="tool.test")
        assert c.get("/c/lab/api/v1/session").status_code == 401
        assert c.get("/c/lab/instructor/", follow_redirects=False).status_code == 303  # to lab's sign-in page


# ---- roles: instructor, teaching assistant, student


def test_a_teaching_assistant_regrades_and_grants_but_manages_no_roster_codes_or_lms(site, lms):
    assert signed_in(site, launch_in(site, lms, "tina", "course-1")).endswith(f"c/bin/instructor/assignments/{ASSIGNMENT}")
    assert accounts(site, "bin") == [("ta", f"唐 助教（{tina_login(lms)}）")]
    import_students(site.site.courses["bin"].db, [Student("s001", "张三")])
    page = site.client.get("/c/bin/instructor/students/s001")
    assert page.status_code == 200
    nav = re.search(r"<nav.*?</nav>", page.text, re.S).group(0)
    assert "学生" in nav and "名单与访问码" not in nav and "课程平台" not in nav
    csrf = re.search(r'name="csrf_token" value="([^"]+)"', page.text).group(1)
    post = dict(data={"csrf_token": csrf, "assignment": ASSIGNMENT, "extra": "2"}, headers={"Origin": TOOL})
    assert site.client.post("/c/bin/instructor/students/s001/attempts", **post).status_code == 303
    for path in ("/c/bin/instructor/roster", "/c/bin/lti/admin"):
        assert site.client.get(path).status_code == 403, path
    refused = site.client.post("/c/bin/instructor/roster/s001/reset", data={"csrf_token": csrf}, headers={"Origin": TOOL})
    assert refused.status_code == 403 and "只有教师可以管理名单和访问码" in visible_text(refused)
    assert site.client.get("/c/bin/api/v1/grades.csv").status_code == 200


def tina_login(platform) -> str:
    from autograder.service.lti.enroll import lti_login
    from autograder.service.lti.launch import Launch

    return lti_login(Launch(platform=registry.Platform(0, "", platform.issuer, "", "", "", "", ()), claims={}, message_type="",
                            deployment_id="", sub="sub-tina", role=None))


# ---- binding requests: asked from the LMS, confirmed by the course's instructor


def test_a_teachers_request_binds_only_once_that_courses_instructor_confirms(site, lms):
    form_page = launch_in(site, lms, "alice", "alice-sandbox")
    ticket = re.search(r'name="ticket" value="([^"]+)"', form_page.text).group(1)
    asked = site.client.post("/lti/bind-request", data={"ticket": ticket, "course": "lab"})
    assert asked.status_code == 200 and "已提交绑定申请" in visible_text(asked)
    found = bindings.find(site.site.db, lms.registered_id, lms.deployment_id, "alice-sandbox")
    assert found.course_id == "lab" and not found.active and "张 丽" in found.requested_by
    again = launch_in(site, lms, "alice", "alice-sandbox")  # still nothing granted meanwhile
    assert again.status_code == 403 and "正在等待" in visible_text(again)
    key = {"platform": str(lms.registered_id), "deployment": lms.deployment_id, "context": "alice-sandbox"}
    for course in ("bin", "lab"):  # an instructor of each course, signed in with a code
        service = site.site.courses[course]
        code = staff_code(service.db, f"{course} 老师")
        with browser(site) as c:
            token = c.post(f"/c/{course}/api/v1/session", json={"code": code}).json()["csrf_token"]
            page = c.get(f"/c/{course}/lti/admin")
            r = c.post(f"/c/{course}/lti/admin/confirm", data={"csrf_token": token, **key}, headers={"Origin": TOOL})
            if course == "bin":  # another course's instructor: not theirs to confirm
                assert "alice-sandbox" not in page.text and r.status_code == 404
            else:
                assert "等待确认的绑定申请" in visible_text(page) and "张 丽" in visible_text(page)
                assert r.status_code == 200 and "已确认" in visible_text(r)
    assert bindings.find(site.site.db, lms.registered_id, lms.deployment_id, "alice-sandbox").active
    assert signed_in(site, launch_in(site, lms, "alice", "alice-sandbox")).endswith(f"c/lab/instructor/assignments/{ASSIGNMENT}")


def test_an_administrator_binds_and_unbinds_from_the_administrators_pages(site, lms):
    code = staff_code(site.site.db, "管理员甲", ADMIN, ADMINS)
    c = site.client
    form = c.get("/admin/login")
    token = re.search(r'name="csrf_token" value="([^"]+)"', form.text).group(1)
    r = c.post("/admin/login", data={"login": "管理员甲", "code": code, "csrf_token": token}, headers={"Origin": TOOL})
    assert r.status_code == 303
    home = c.get("/admin/")
    assert home.status_code == 200 and "课程 bin" in visible_text(home) and "course-1" in visible_text(home)
    csrf = re.search(r'name="csrf_token" value="([^"]+)"', home.text).group(1)
    fields = {"csrf_token": csrf, "platform": str(lms.registered_id), "deployment": lms.deployment_id, "context": "new-ctx",
              "course": "lab", "title": "新课"}
    assert "已把课程平台上的课程 new-ctx 绑定到" in visible_text(c.post("/admin/bind", data=fields, headers={"Origin": TOOL}))
    assert bindings.find(site.site.db, lms.registered_id, lms.deployment_id, "new-ctx").course_id == "lab"
    assert "已删除" in visible_text(c.post("/admin/unbind", data=fields, headers={"Origin": TOOL}))
    assert bindings.find(site.site.db, lms.registered_id, lms.deployment_id, "new-ctx") is None
    # an administrator's session is nobody's in a course, and a course's session is not an administrator's
    assert c.get("/c/bin/instructor/", follow_redirects=False).status_code == 303
    with browser(site) as student:
        signed_in_as_student = launch_in(site, lms, "alice", "course-1", client=student)
        enter(site, signed_in_as_student, student)
        assert student.get("/admin/").status_code == 303  # to the administrators' sign-in


# ---- 2. another platform's claims never take over a roster entry


def test_another_platforms_claimed_sis_id_is_not_believed(site, lms):
    bin_db = site.site.courses["bin"].db
    import_students(bin_db, [Student("s002", "李四", "s002@example.edu")])
    other = FakePlatform(flavour="moodle", client_id="moodle-7", deployment_id="3").start()
    try:
        other.tool, other.tool_jwks = TOOL, lambda: ToolKeys(site.data).jwks()
        other.custom = {"link-1": {"assignment": ASSIGNMENT}}
        other.users = {"mallory": User("sub-mallory", "马 某", "s002@example.edu", LEARNER, sourcedid="s002")}
        reg = registry.add(site.site.db, **other.registration())
        bindings.bind(site.site.db, reg.id, other.deployment_id, "course-1", "bin", by="管理员")  # not an authority
        asked = launch_in(site, other, "mallory", "course-1")
        text = visible_text(asked)
        assert asked.status_code == 200 and "关联你的名单账号" in text and "lti/enter" not in asked.text
        assert 'value="s002"' in asked.text  # the id the LMS claims is filled in; the code is what counts
        ticket = re.search(r'name="ticket" value="([^"]+)"', asked.text).group(1)
        wrong = site.client.post("/lti/link", data={"ticket": ticket, "choice": "code", "login": "s002", "code": "abcdefgh-" + "x" * 26})
        assert wrong.status_code == 401 and "学号或访问码不正确" in visible_text(wrong)
        new = site.client.post("/lti/link", data={"ticket": ticket, "choice": "new"})
        assert new.status_code == 200 and "已通过课程平台登录" in visible_text(new)
        assert signed_in(site, new).endswith(f"c/bin/assignments/{ASSIGNMENT}")
        assert site.client.get("/c/bin/api/v1/session").json()["login"].startswith("lti-")  # not s002
        with bin_db.read() as con:
            linked = con.execute(sa.select(USERS.c.platform_id).join(ACCOUNTS, ACCOUNTS.c.id == USERS.c.account_id)
                                 .where(ACCOUNTS.c.login == "s002")).all()
        assert linked == []
        # the real s002, from the authoritative LMS course, is linked by the SIS id its LMS vouches for
        with browser(site) as carol:
            enter(site, launch_in(site, lms, "carol", "course-1", client=carol), carol)
            assert carol.get("/c/bin/api/v1/session").json()["login"] == "s002"
        # the roster sync of the non-authoritative course links nobody either
        other.members["course-1"] = [{"user_id": "sub-eve", "name": "伊 娃", "lis_person_sourcedid": "s002",
                                      "email": "s002@example.edu", "roles": [LEARNER[1]], "status": "Active"}]
        with httpx.Client(timeout=10) as http:
            result = nrps.sync(bin_db, site.site.db, Tokens(ToolKeys(site.data), http), http,
                               bindings.find(site.site.db, reg.id, other.deployment_id, "course-1"))
        assert result.enrolled == 1
        with bin_db.read() as con:
            assert con.execute(sa.select(USERS.c.sub).where(USERS.c.sub == "sub-eve")).first() is None
            assert con.execute(sa.select(MEMBERSHIPS.c.sub).where(MEMBERSHIPS.c.sub == "sub-eve")).first() is not None
    finally:
        other.stop()


def test_a_student_links_their_roster_entry_with_their_access_code(site, lms):
    bin_db = site.site.courses["bin"].db
    ((_, code),) = import_students(bin_db, [Student("s010", "周同学")])
    asked = launch_in(site, lms, "bob", "section-2")  # a bound section that is no authority on the roster
    ticket = re.search(r'name="ticket" value="([^"]+)"', asked.text).group(1)
    linked = site.client.post("/lti/link", data={"ticket": ticket, "choice": "code", "login": "s010", "code": code})
    assert linked.status_code == 200 and "已通过课程平台登录" in visible_text(linked)
    signed_in(site, linked)
    assert site.client.get("/c/bin/api/v1/session").json()["login"] == "s010"
    used = site.client.post("/lti/link", data={"ticket": ticket, "choice": "new"})
    assert used.status_code == 400 and "已过期或已用过" in visible_text(used)
    # the next launch goes straight in
    assert signed_in(site, launch_in(site, lms, "bob", "course-1")).endswith(f"c/bin/assignments/{ASSIGNMENT}")


# ---- 3. addresses come from the configuration, never from the request


def test_a_forged_host_is_refused_and_links_use_the_public_address(tmp_path, running_platform):
    t = make_site(tmp_path, ("bin",), public="https://tool.test/submit")
    try:
        for path in ("/lti/login", "/c/bin/login", "/healthz"):
            r = t.client.get(path, headers={"Host": "evil.example.com"})
            assert r.status_code == 400 and "evil" not in r.text, path
        launch = t.client.post("/lti/launch", data={"id_token": "x", "state": "y"}, headers={"Host": "evil.example.com"})
        assert launch.status_code == 400
        p = running_platform
        registry.add(t.site.db, **p.registration())
        r = t.client.get("/lti/login", params={"iss": p.issuer, "login_hint": "alice", "client_id": p.client_id})
        assert auth_state(r)["redirect_uri"] == "https://tool.test/submit/lti/launch"  # the proxy's prefix included
        worker = passback.for_course(t.db, t.site.db, t.data, {}, t.site.course_url("bin"), lambda m: None)
        assert worker.feedback_url("abc") == "https://tool.test/submit/c/bin/submissions/abc"
        config = t.client.get("/lti/config/canvas.json").json()
        assert config["oidc_initiation_url"] == "https://tool.test/submit/lti/login"
    finally:
        t.client.close()


# ---- 4. a ticket opened in another browser signs nobody in silently


def test_a_launch_ticket_works_at_once_only_in_the_browser_that_launched(site, lms):
    with browser(site) as victim, browser(site) as attacker:
        enter(site, launch_in(site, lms, "bob", "course-1", client=victim), victim)
        assert victim.get("/c/bin/api/v1/session").json()["login"].startswith("lti-")
        bob = victim.get("/c/bin/api/v1/session").json()["login"]
        landing = launch_in(site, lms, "alice", "course-1", client=attacker)  # her own launch, ticket kept unused
        ticket_url = "/lti/" + landing.headers["refresh"].split("url=", 1)[1].split("lti/", 1)[1]
        shown = victim.get(ticket_url)  # the attacker's link, opened in the victim's browser
        text = visible_text(shown)
        assert shown.status_code == 200 and "确认登录的账号" in text and "张 丽" in text and bob in text and "继续会换成" in text
        assert "frame-ancestors 'none'" in shown.headers["content-security-policy"]  # the button cannot be framed
        assert victim.get("/c/bin/api/v1/session").json()["login"] == bob  # nothing changed by opening it
        ticket = ticket_url.split("t=", 1)[1]
        # a cross-site form posting the ticket (no confirmation cookie, a foreign origin) is refused
        forged = attacker.post("/lti/enter", data={"t": ticket, "csrf_token": "x"}, headers={"Origin": "https://evil.example"})
        assert forged.status_code == 403
        assert victim.get("/c/bin/api/v1/session").json()["login"] == bob
        # the attacker's own browser (her launch cookie) would have gone straight in
        assert attacker.get(ticket_url).status_code == 303


# ---- 5. passback to every bound LMS course where the assignment is linked, and nowhere else


def grade(service, student: str, assignment: str, score: float) -> None:
    from autograder.model import SubmissionResult

    from .test_passback import Recorder

    sid = f"sub{time.monotonic_ns()}"[-30:]
    result = SubmissionResult(student, assignment, score, 10.0, {}, [])
    import json

    with service.db.write() as con:
        con.execute(sa.insert(SUBMISSIONS).values(
            id=sid, student_id=student, assignment=assignment, status="graded", created_at=time.time(), filename="a.ipynb",
            path="x", sha256="0" * 64, size=1, late=False, penalty=1.0, tries=1, score=score, max_score=10.0,
            result_json=json.dumps(result.to_json()), settled=False, graded_at=time.time()))
    counting.settle(service.db, Recorder(), lambda a: "last", lambda a: "nb", student, assignment)


def test_scores_go_to_every_bound_course_where_linked_and_no_column_is_made_elsewhere(site, lms):
    bin_service = site.site.courses["bin"]
    signed_in(site, launch_in(site, lms, "bob", "course-1"))  # ps1 linked in course-1
    signed_in(site, launch_in(site, lms, "bob", "course-1", link="link-ps2"))  # ps2 linked in course-1
    signed_in(site, launch_in(site, lms, "bob", "section-2", link="link-ps2"))  # ps2 linked in section-2 (not ps1)
    bob = site.client.get("/c/bin/api/v1/session").json()["login"]
    grade(bin_service, bob, A2, 6.9)
    grade(bin_service, bob, ASSIGNMENT, 5.4)
    worker = passback.Passback(bin_service.db, site.site.db, ToolKeys(site.data), "t", course_id="bin",
                               feedback_url=lambda sid: None)
    assert worker.run_once() == 3
    got = {(s["context"], s["scoreGiven"]) for s in lms.scores}
    assert got == {("course-1", 6.9), ("section-2", 6.9), ("course-1", 5.4)}
    assert {li["resourceId"] for li in lms.lineitems["section-2"]} == {A2}  # no ps1 column where ps1 is not linked
    # a lower last attempt at ps2 goes to both; course-1 never keeps an old score the service no longer counts
    grade(bin_service, bob, A2, 0.0)
    assert worker.run_once() == 2
    latest = {}
    for s in lms.scores:
        latest[(s["context"], s["lineitem"])] = s["scoreGiven"]
    assert sorted(latest.values()) == [0.0, 0.0, 5.4]
    with bin_service.db.read() as con:
        assert con.execute(sa.select(sa.func.count()).select_from(LINEITEMS)).scalar() == 3


# ---- 6. deep linking echoes data of any JSON type


@pytest.mark.parametrize("data", [{"course": 7, "nested": [1, {"a": None}]}, ["x", 1], 42, "opaque"])
def test_deep_linking_returns_the_data_claim_unchanged(site, lms, data):
    lms.deep_link_data = data
    page = launch_in(site, lms, "teacher", "course-1", kind="LtiDeepLinkingRequest")
    assert page.status_code == 200 and "选择要添加到课程平台的作业" in visible_text(page)
    ticket = re.search(r'name="ticket" value="([^"]+)"', page.text).group(1)
    back = site.client.post("/lti/deeplink", data={"ticket": ticket, "assignment": A2})
    token = re.search(r'name="JWT" value="([^"]+)"', back.text).group(1)
    import jwt

    claims = jwt.decode(token, options={"verify_signature": False})
    assert claims["https://purl.imsglobal.org/spec/lti-dl/claim/data"] == data
    with site.site.courses["bin"].db.read() as con:  # the chosen assignment is linked in that LMS course now
        from autograder.service.lms_tables import LINKS

        assert con.execute(sa.select(LINKS.c.assignment).where(LINKS.c.context_id == "course-1")).scalars().all() == [A2]


def test_a_teaching_assistant_cannot_deep_link(site, lms):
    page = launch_in(site, lms, "tina", "course-1", kind="LtiDeepLinkingRequest")
    assert page.status_code == 403 and "只有课程的教师可以添加作业" in visible_text(page)


# ---- the red team of the courses (2026-12): passback goes only to LMS courses bound to the course now


def test_grades_stop_going_to_an_lms_course_once_it_is_bound_to_another_course(site, lms):
    """An administrator moves ``course-1`` from ``bin`` to ``lab`` (or unbinds it): bin's later scores must not land
    in that LMS course's gradebook (lab's now), nor anywhere once it is unbound."""
    bin_service = site.site.courses["bin"]
    signed_in(site, launch_in(site, lms, "bob", "course-1"))  # ps1 linked in course-1
    bob = site.client.get("/c/bin/api/v1/session").json()["login"]
    worker = passback.Passback(bin_service.db, site.site.db, ToolKeys(site.data), "t", course_id="bin")
    grade(bin_service, bob, ASSIGNMENT, 5.4)
    assert worker.run_once() == 1 and [s["scoreGiven"] for s in lms.scores] == [5.4]
    bindings.bind(site.site.db, lms.registered_id, lms.deployment_id, "course-1", "lab", by="管理员")
    grade(bin_service, bob, ASSIGNMENT, 7.0)
    worker.run_once()
    bindings.unbind(site.site.db, (lms.registered_id, lms.deployment_id, "course-1"))
    grade(bin_service, bob, ASSIGNMENT, 9.0)
    worker.run_once()
    assert [s["scoreGiven"] for s in lms.scores] == [5.4]  # nothing after the move
    with bin_service.db.read() as con:
        row = con.execute(sa.select(PASSBACK.c.status, PASSBACK.c.error)).one()
    assert row.status == "failed" and "不再绑定" in row.error  # listed on the course's LMS page, with why


def test_a_score_queued_before_the_student_left_the_lms_course_is_not_posted_there(site, lms):
    """A score waits for a platform that is down; meanwhile the roster sync finds the student gone from that LMS
    course (moved to another section): the waiting score is not posted there once the platform is back."""
    bin_service = site.site.courses["bin"]
    signed_in(site, launch_in(site, lms, "bob", "course-1"))
    bob = site.client.get("/c/bin/api/v1/session").json()["login"]
    worker = passback.Passback(bin_service.db, site.site.db, ToolKeys(site.data), "t", course_id="bin")
    lms.mode = "down"
    grade(bin_service, bob, ASSIGNMENT, 5.4)
    assert worker.run_once() == 0
    lms.mode = "up"
    lms.members["course-1"] = [m for m in lms.enrolled_members("course-1") if m["user_id"] != lms.users["bob"].sub]
    with httpx.Client(timeout=10) as http:
        found = bindings.find(site.site.db, lms.registered_id, lms.deployment_id, "course-1")
        assert nrps.sync(bin_service.db, site.site.db, Tokens(ToolKeys(site.data), http), http, found).departed == 1
    with bin_service.db.write() as con:  # the retry is due now
        con.execute(sa.update(PASSBACK).values(next_at=0.0))
    worker.run_once()
    assert lms.scores == []


# ---- one course's upload slots are not another's


def test_an_account_of_one_course_holds_no_upload_slot_of_the_same_account_id_in_another(site):
    """Accounts of two courses share ids (each counts from 1): the first student of ``lab`` holding their two
    upload slots (bodies that do not arrive) must leave the first student of ``bin`` free to upload."""
    bin_db, lab_db = site.site.courses["bin"].db, site.site.courses["lab"].db
    ((_, bin_code),) = import_students(bin_db, [Student("s201", "乙")])
    ((_, lab_code),) = import_students(lab_db, [Student("s101", "甲")])
    app = site.client.app
    boundary = "slotboundary"
    head = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"notebook\"; filename=\"a.ipynb\"\r\n"
            "Content-Type: application/x-ipynb+json\r\n\r\n").encode()

    async def attempt() -> httpx.Response:
        release = asyncio.Event()

        async def slow_body():
            yield head
            await release.wait()  # the rest never comes while bin's student uploads
            yield f"\r\n--{boundary}--\r\n".encode()

        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=TOOL, timeout=60) as c:
            held = [asyncio.create_task(c.post(f"/c/lab/api/v1/assignments/{ASSIGNMENT}/submissions", content=slow_body(),
                                               headers={"Authorization": f"Bearer {lab_code}",
                                                        "Content-Type": f"multipart/form-data; boundary={boundary}"}))
                    for _ in range(2)]
            deadline = time.monotonic() + 30
            while app.state.upload_slots.in_use < 2:
                assert time.monotonic() < deadline and not any(t.done() for t in held), [t.result() for t in held if t.done()]
                await asyncio.sleep(0.02)
            try:
                return await c.post(f"/c/bin/api/v1/assignments/{ASSIGNMENT}/submissions",
                                    files={"notebook": ("a.ipynb", solution_bytes(ASSIGNMENT), "application/x-ipynb+json")},
                                    headers={"Authorization": f"Bearer {bin_code}"})
            finally:
                release.set()
                await asyncio.gather(*held, return_exceptions=True)

    # on a thread of its own: while the process's shared chromium lives (an earlier test's ``browser``), Playwright's
    # sync API keeps its event loop marked as running in the main thread, where asyncio.run refuses to start
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        answer = pool.submit(asyncio.run, attempt()).result()
    assert answer.status_code == 202, answer.text


# ---- a course named like the administrators' scope


def test_a_course_named_admin_has_sessions_of_its_own(tmp_path):
    """A course may be called ``admin``: signing in to it must not replace the administrator's session cookie in
    the same browser, and its sessions are not the administrators'."""
    t = make_site(tmp_path, ("admin",))
    try:
        admin_code = staff_code(t.site.db, "管理员甲", ADMIN, ADMINS)
        ((_, student_code),) = import_students(t.site.courses["admin"].db, [Student("s001", "张三")])
        c = t.client
        form = c.get("/admin/login")
        token = re.search(r'name="csrf_token" value="([^"]+)"', form.text).group(1)
        assert c.post("/admin/login", data={"login": "管理员甲", "code": admin_code, "csrf_token": token},
                      headers={"Origin": TOOL}).status_code == 303
        assert c.get("/admin/").status_code == 200
        assert c.post("/c/admin/api/v1/session", json={"code": student_code}).status_code == 200
        assert c.get("/c/admin/api/v1/session").json()["login"] == "s001"
        assert c.get("/admin/").status_code == 200  # still the administrator
    finally:
        t.client.close()
        for service in t.site.courses.values():
            service.db.dispose()
        t.site.db.dispose()


# ---- the account-linking ticket works only in the browser that launched


def test_a_link_ticket_posted_from_another_browser_signs_nobody_in(site, lms):
    """Login CSRF through the account-linking form: bob keeps the ticket of his own first launch from the
    non-authoritative ``section-2`` and has alice's browser post it ("I have no code") from any site.  alice
    launched ``lab`` at the top level a moment ago (her launch cookie is fresh) and has no session of ``bin``:
    she must not end up signed in to ``bin`` as bob's new account."""
    import_students(site.site.courses["bin"].db, [Student("s010", "周同学")])  # an unlinked roster entry: bob is asked
    with browser(site) as alice, browser(site) as bob:
        enter(site, launch_in(site, lms, "alice", "lab-1", client=alice), alice)
        asked = launch_in(site, lms, "bob", "section-2", client=bob)
        assert "关联你的名单账号" in visible_text(asked)
        ticket = re.search(r'name="ticket" value="([^"]+)"', asked.text).group(1)
        forged = alice.post("/lti/link", data={"ticket": ticket, "choice": "new"}, headers={"Origin": "https://evil.example"})
        if forged.status_code == 200 and "refresh" in forged.headers:
            enter(site, forged, alice)
        assert alice.get("/c/bin/api/v1/session").status_code == 401  # signed in to bin as nobody
        assert forged.status_code == 403, visible_text(forged)
        # bob's own browser still links him
        linked = bob.post("/lti/link", data={"ticket": ticket, "choice": "new"})
        assert linked.status_code == 200 and "已通过课程平台登录" in visible_text(linked)


# ---- the red team's findings after the first fixes: the upgrade, unbinding, e-mail and self-grants


def test_an_upgrade_makes_no_teacher_of_someone_who_only_taught_a_sandbox(tmp_path, running_platform):
    """A one-course service recorded every LMS course it saw a launch from (``lti_contexts``), the sandbox alice
    teaches included (finding 1 of the issue was exactly that launch).  After the upgrade that LMS course must
    not make her a teacher of the course."""
    from autograder.service.database import Database
    from autograder.service.lms_tables import CONTEXTS
    from autograder.service.schema import prepare

    from .conftest import make_tool

    p = running_platform
    legacy = Database(f"sqlite:///{tmp_path / 'legacy.db'}")
    prepare(legacy)
    with legacy.write() as con:  # as the one-course service left it: no version table, the LMS courses it saw
        con.execute(sa.text("DROP TABLE autograder_schema_version"))
        for context in ("course-1", "alice-sandbox"):
            con.execute(sa.insert(CONTEXTS).values(platform_id=1, context_id=context, deployment_id=p.deployment_id,
                                                   title=context, scopes="", updated_at=time.time()))
    legacy.dispose()
    tool = make_tool(tmp_path, f"sqlite:///{tmp_path / 'legacy.db'}")  # upgraded in place: course "default"
    try:
        p.tool, p.mode, p.audience, p.deep_link_data, p.keys = TOOL, "up", None, None, p.keys[:1]
        p.users, p.enrolments = people(), {"alice-sandbox": {"alice": INSTRUCTOR, "bob": LEARNER}}
        p.custom, p.tool_jwks = {"link-1": {"assignment": ASSIGNMENT}}, lambda: ToolKeys(tool.data).jwks()
        assert registry.add(tool.db, **p.registration()).id == 1  # the platform the old rows name
        sandbox = launch_in(tool, p, "alice", "alice-sandbox")
        with tool.db.read() as con:
            roles = con.execute(sa.select(ACCOUNTS.c.role)).scalars().all()
        assert "instructor" not in roles and "lti/enter" not in sandbox.text, visible_text(sandbox)
    finally:
        tool.client.close()
        tool.db.dispose()


def test_unbinding_an_lms_course_ends_the_staff_sessions_it_gave(site, lms):
    """alice asks to bind her sandbox to ``lab``; lab's instructor confirms by mistake, sees alice teaching lab and
    unbinds it: the instructor session alice got through that binding ends with it."""
    form_page = launch_in(site, lms, "alice", "alice-sandbox")
    ticket = re.search(r'name="ticket" value="([^"]+)"', form_page.text).group(1)
    site.client.post("/lti/bind-request", data={"ticket": ticket, "course": "lab"})
    key = {"platform": str(lms.registered_id), "deployment": lms.deployment_id, "context": "alice-sandbox"}
    with browser(site) as teacher:
        code = staff_code(site.site.courses["lab"].db, "lab 老师")
        token = teacher.post("/c/lab/api/v1/session", json={"code": code}).json()["csrf_token"]
        post = dict(headers={"Origin": TOOL})
        assert teacher.post("/c/lab/lti/admin/confirm", data={"csrf_token": token, **key}, **post).status_code == 200
        signed_in(site, launch_in(site, lms, "alice", "alice-sandbox"))
        assert site.client.get("/c/lab/instructor/").status_code == 200
        assert teacher.post("/c/lab/lti/admin/unbind", data={"csrf_token": token, **key}, **post).status_code == 200
    assert site.client.get("/c/lab/instructor/").status_code != 200


def test_an_authoritative_moodle_course_does_not_link_a_roster_entry_by_an_email_its_user_typed(site, lms):
    bin_db = site.site.courses["bin"].db
    import_students(bin_db, [Student("s003", "王五", "wangwu@example.edu")])
    moodle = FakePlatform(flavour="moodle", client_id="moodle-9", deployment_id="5").start()
    try:
        moodle.tool, moodle.tool_jwks = TOOL, lambda: ToolKeys(site.data).jwks()
        moodle.custom = {"link-1": {"assignment": ASSIGNMENT}}
        # no SIS id sent (Moodle's idnumber left empty), the e-mail edited in her own profile
        moodle.users = {"mallory": User("7", "马 某", "wangwu@example.edu", LEARNER)}
        reg = registry.add(site.site.db, **moodle.registration())
        bindings.bind(site.site.db, reg.id, moodle.deployment_id, "2", "bin", by="管理员", roster_authority=True)
        entered = launch_in(site, moodle, "mallory", "2")
        if "lti/enter" in entered.text:
            signed_in(site, entered)
            assert site.client.get("/c/bin/api/v1/session").json()["login"] != "s003"
    finally:
        moodle.stop()


def test_nobody_grants_their_own_student_account_anything(site, lms):
    """tina is a TA in ``course-1`` and a learner in ``section-2`` (both bound to ``bin``): two accounts, one LMS
    person; her TA account cannot give her student account extra attempts or a later deadline."""
    lms.enrolments["section-2"]["tina"] = LEARNER
    signed_in(site, launch_in(site, lms, "tina", "course-1"))
    with browser(site) as student:
        enter(site, launch_in(site, lms, "tina", "section-2", client=student), student)
        asked = student.post("/lti/link", data={"ticket": re.search(r'name="ticket" value="([^"]+)"',
                                                                     launch_in(site, lms, "tina", "section-2", client=student).text
                                                                     ).group(1), "choice": "new"}) if False else None
        me = student.get("/c/bin/api/v1/session").json()
    assert asked is None and me["role"] == "student"
    page = site.client.get(f"/c/bin/instructor/students/{me['login']}")
    csrf = re.search(r'name="csrf_token" value="([^"]+)"', page.text).group(1)
    for action, field, value in (("attempts", "extra", "5"), ("extend", "deadline", "2099-01-01T12:00")):
        r = site.client.post(f"/c/bin/instructor/students/{me['login']}/{action}",
                             data={"csrf_token": csrf, "assignment": ASSIGNMENT, field: value}, headers={"Origin": TOOL})
        assert r.status_code == 403 and "你自己在课程平台上的另一个账号" in visible_text(r), action
