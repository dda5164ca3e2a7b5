"""LTI 1.3 launch: login initiation, id_token validation, sign-in, and every refusal.

The tool runs in process, the platform is a real HTTP server (its key set is fetched over HTTP).  A refused
launch must create nothing (no account, no LTI person) and answer with a Chinese page that names the problem.
"""

from __future__ import annotations

import re
import time

import pytest
import sqlalchemy as sa

from autograder.service import sessions
from autograder.service.database import ACCOUNTS
from autograder.service.lti import launch as lti_launch
from autograder.service.lti import bindings, registry
from autograder.service.lms_tables import NONCES, USERS
from autograder.service.roster import import_students, Student

from .conftest import ASSIGNMENT, COURSE, TOOL, auth_state, authorize, launch, login, people, visible_text
from .fake_lms import FakePlatform


def counts(tool) -> tuple[int, int]:
    with tool.db.read() as con:
        return (con.execute(sa.select(sa.func.count()).select_from(ACCOUNTS)).scalar(),
                con.execute(sa.select(sa.func.count()).select_from(USERS)).scalar())


def follow_to_page(tool, response):
    """Redeem the launch's ticket as the browser does (the Refresh header), then follow to the page; where the
    browser is signed in to the course as someone else, the person confirms the switch on the page it shows."""
    assert response.status_code == 200, visible_text(response)
    target = response.headers["refresh"].split("url=", 1)[1]
    entered = tool.client.get("/lti/" + target.split("lti/", 1)[1])
    if entered.status_code == 200:
        assert "继续会换成上面的账号" in visible_text(entered), visible_text(entered)
        entered = confirm(tool, entered)
    assert entered.status_code == 303, visible_text(entered)
    return entered, tool.client.get(entered.headers["location"].replace("../", "/"))


def confirm(tool, page):
    """Click “是我，继续” on the page /lti/enter shows."""
    fields = dict(re.findall(r'name="(csrf_token|t)" value="([^"]*)"', page.text))
    return tool.client.post("/lti/enter", data=fields, headers={"Origin": TOOL})


def test_student_launch_signs_in_and_opens_the_assignment(tool, platform):
    response = launch(tool, platform, "alice")
    assert "已通过课程平台登录" in visible_text(response) and "张 丽" in visible_text(response)
    assert "frame-ancestors " + platform.base in response.headers["content-security-policy"]
    entered, page = follow_to_page(tool, response)
    assert entered.headers["location"].endswith(f"assignments/{ASSIGNMENT}")
    assert sessions.COOKIE in entered.headers["set-cookie"] and "SameSite=Strict" in entered.headers["set-cookie"]
    assert page.status_code == 200 and "作业 1" in visible_text(page)
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]  # every other page: never framed
    with tool.db.read() as con:
        account = con.execute(sa.select(ACCOUNTS)).one()
    assert account.role == "student" and account.login.startswith("lti-") and account.email == "alice@example.edu"


def test_ticket_is_single_use(tool, platform):
    response = launch(tool, platform, "alice")
    target = response.headers["refresh"].split("url=", 1)[1]
    url = "/lti/" + target.split("lti/", 1)[1]
    assert tool.client.get(url).status_code == 303
    again = tool.client.get(url)
    assert again.status_code == 400 and "已经用过或已过期" in visible_text(again)


def test_student_is_linked_to_their_roster_entry(tool, platform):
    import_students(tool.db, [Student("s001", "张丽", "")])
    follow_to_page(tool, launch(tool, platform, "alice"))  # Canvas sends lis.person_sourcedid = s001
    with tool.db.read() as con:
        accounts = con.execute(sa.select(ACCOUNTS.c.login)).scalars().all()
    assert accounts == ["s001"]


def test_instructor_launch_opens_the_dashboard(tool, platform):
    entered, page = follow_to_page(tool, launch(tool, platform, "teacher"))
    assert entered.headers["location"].endswith(f"instructor/assignments/{ASSIGNMENT}")
    assert page.status_code == 200
    with tool.db.read() as con:
        assert con.execute(sa.select(ACCOUNTS.c.role)).scalar() == "instructor"


def test_a_student_never_becomes_an_instructor(tool, platform):
    """The same person launching once as a student and once as an instructor gets two separate accounts; the
    institution role 'Instructor' alone (not a course role) makes nobody an instructor."""
    follow_to_page(tool, launch(tool, platform, "alice"))
    platform.users["alice"].roles = ["http://purl.imsglobal.org/vocab/lis/v2/institution/person#Instructor",
                                     "http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"]
    follow_to_page(tool, launch(tool, platform, "alice"))
    with tool.db.read() as con:
        roles = con.execute(sa.select(ACCOUNTS.c.role)).scalars().all()
    assert roles == ["student"]
    assert lti_launch.context_role(["http://purl.imsglobal.org/vocab/lis/v2/institution/person#Instructor"]) is None
    assert lti_launch.context_role("Instructor") is None  # not a list: ignored


def test_moodle_shaped_launch(tool, tmp_path):
    moodle = FakePlatform(flavour="moodle", client_id="moodle-client-7", deployment_id="3").start()
    try:
        moodle.tool, moodle.users, moodle.custom = TOOL, people(), {"link-1": {"assignment": ASSIGNMENT}}
        registered = registry.add(tool.db, **moodle.registration())
        bindings.bind(tool.db, registered.id, moodle.deployment_id, "course-1", COURSE, by="测试")
        response = launch(tool, moodle, "bob")
        assert "李 波" in visible_text(response)
        follow_to_page(tool, response)
    finally:
        moodle.stop()


# ---- refusals: each creates nothing and shows a Chinese page naming the problem


def refused(tool, response, words: str, status: int | None = None) -> None:
    text = visible_text(response)
    assert "无法从课程平台打开本作业" in text and words in text, text
    assert response.status_code == status if status else response.status_code >= 400
    assert "set-cookie" not in response.headers or sessions.COOKIE not in response.headers["set-cookie"]
    assert counts(tool) == (0, 0)


def post_token(tool, platform, claims_change=None, *, user="alice", sign=None, state=None, kid=None):
    """A launch whose id_token is made by the test (claims changed by ``claims_change``)."""
    params = auth_state(login(tool, platform, user))
    claims = platform.claims(platform.users[user], params["nonce"], custom={"assignment": ASSIGNMENT})
    if claims_change:
        claims_change(claims)
    token = sign(claims) if sign else platform.sign(claims, kid=kid)
    return tool.client.post("/lti/launch", data={"id_token": token, "state": state or params["state"]})


def test_refuses_bad_signature(tool, platform):
    other = FakePlatform()  # same kid claimed, different private key
    r = post_token(tool, platform, sign=lambda c: platform.sign(c, kid=platform.keys[0][0], pem=other.keys[0][1]))
    refused(tool, r, "签名不正确", 403)


def test_refuses_unknown_key_after_one_refresh(tool, platform):
    other = FakePlatform()
    r = post_token(tool, platform, sign=lambda c: other.sign(c))
    refused(tool, r, "签名密钥（kid）不是这个课程平台公布的密钥", 403)


def test_a_rotated_platform_key_is_fetched_once(tool, platform, monkeypatch):
    monkeypatch.setattr(registry, "REFRESH_GAP", 0.0)
    follow_to_page(tool, launch(tool, platform, "alice"))  # the key set is cached now
    platform.rotate()
    response = launch(tool, platform, "bob")  # signed with the new kid: one refresh finds it
    assert response.status_code == 200, visible_text(response)


def test_refuses_expired_token(tool, platform):
    r = post_token(tool, platform, lambda c: c.update(iat=int(time.time()) - 900, exp=int(time.time()) - 300))
    refused(tool, r, "已过期")


def test_accepts_small_clock_skew_refuses_future_token(tool, platform):
    ok = post_token(tool, platform, lambda c: c.update(iat=int(time.time()) + 20))  # LMS clock 20 s ahead
    assert ok.status_code == 200, visible_text(ok)
    with tool.db.write() as con:  # start again from nothing
        con.execute(sa.delete(USERS))
        con.execute(sa.delete(ACCOUNTS))
    r = post_token(tool, platform, lambda c: c.update(iat=int(time.time()) + 600, nbf=int(time.time()) + 600, exp=int(time.time()) + 900))
    refused(tool, r, "签发时间在未来")


def test_refuses_wrong_audience(tool, platform):
    r = post_token(tool, platform, lambda c: c.update(aud="another-tool", azp="another-tool"))
    refused(tool, r, "aud 不是本工具", 403)


def test_refuses_foreign_azp(tool, platform):
    r = post_token(tool, platform, lambda c: c.update(aud=[platform.client_id, "x"], azp="x"))
    refused(tool, r, "azp", 403)


def test_refuses_wrong_issuer(tool, platform):
    r = post_token(tool, platform, lambda c: c.update(iss="https://evil.example"))
    refused(tool, r, "iss 不是注册的课程平台", 403)


def test_refuses_replayed_token(tool, platform):
    form = authorize(platform, login(tool, platform, "alice"))
    assert tool.client.post("/lti/launch", data=form).status_code == 200
    with tool.db.write() as con:
        con.execute(sa.delete(USERS))
        con.execute(sa.delete(ACCOUNTS))
    again = tool.client.post("/lti/launch", data=form)  # the same state and token a second time
    refused(tool, again, "state 无效或已用过")
    # the same token with a fresh state of this browser: its nonce is not this login's
    fresh = auth_state(login(tool, platform, "alice"))
    r = tool.client.post("/lti/launch", data={"id_token": form["id_token"], "state": fresh["state"]})
    refused(tool, r, "nonce", 403)


def test_refuses_a_nonce_used_before(tool, platform):
    params = auth_state(login(tool, platform, "alice"))
    with tool.db.write() as con:
        con.execute(sa.insert(NONCES).values(nonce=params["nonce"], used_at=time.time()))
    claims = platform.claims(platform.users["alice"], params["nonce"])
    r = tool.client.post("/lti/launch", data={"id_token": platform.sign(claims), "state": params["state"]})
    refused(tool, r, "已经用过", 403)


def test_refuses_missing_state(tool, platform):
    r = post_token(tool, platform, state="-")
    refused(tool, r, "state 无效或已用过")
    r = tool.client.post("/lti/launch", data={"id_token": "x.y.z"})
    refused(tool, r, "缺少 state")


def test_refuses_a_state_from_another_browser(tool, platform):
    form = authorize(platform, login(tool, platform, "alice"))
    tool.client.cookies.clear()  # another browser: without this one's launch cookie
    r = tool.client.post("/lti/launch", data=form)
    refused(tool, r, "不是从这个浏览器发起的", 403)


def test_refuses_unregistered_deployment(tool, platform):
    r = post_token(tool, platform, lambda c: c.update({lti_launch.LTI + "deployment_id": "99:other"}))
    refused(tool, r, "部署 99:other 没有在本服务注册", 403)


def test_refuses_wrong_message_type_and_version(tool, platform):
    r = post_token(tool, platform, lambda c: c.update({lti_launch.LTI + "message_type": "LtiSubmissionReviewRequest"}))
    refused(tool, r, "不支持的消息类型")
    r = post_token(tool, platform, lambda c: c.update({lti_launch.LTI + "version": "1.1"}))
    refused(tool, r, "LTI 版本")


def test_refuses_an_unregistered_platform_even_claiming_instructor(tool, platform):
    rogue = FakePlatform(client_id=platform.client_id)  # never registered; not even started
    r = tool.client.get("/lti/login", params={"iss": rogue.issuer, "login_hint": "teacher", "client_id": platform.client_id})
    refused(tool, r, "没有在本服务注册", 403)
    # its token posted against a registered platform's state: its key is not that platform's
    r = post_token(tool, platform, lambda c: c.update(iss=rogue.issuer, **{lti_launch.LTI + "roles": c[lti_launch.LTI + "roles"]}),
                   user="teacher", sign=lambda c: rogue.sign(c))
    refused(tool, r, "签名密钥", 403)


def test_refuses_alg_none_and_hs256(tool, platform):
    import jwt

    r = post_token(tool, platform, sign=lambda c: jwt.encode(c, "k" * 32, algorithm="HS256"))
    refused(tool, r, "签名算法 HS256 不被接受")


def test_a_malformed_or_oversized_launch_form_is_refused_inside_the_platforms_frame(tool, platform):
    """The form's own errors (the web layer's domain errors) become the LTI refusal, with their status and a page
    the platform may frame (the ordinary error page could not be shown there)."""
    wrong_type = tool.client.post("/lti/launch", content=b'{"id_token": "x"}', headers={"content-type": "application/json"})
    refused(tool, wrong_type, "表单不正确：表单格式不正确", 400)
    assert "frame-ancestors " + platform.base in wrong_type.headers["content-security-policy"]
    huge = tool.client.post("/lti/launch", data={"id_token": "x" * (100 * 1024), "state": "s"})
    refused(tool, huge, "表单不正确", 413)


@pytest.mark.parametrize("missing", ["sub", "nonce", "exp"])
def test_refuses_missing_claims(tool, platform, missing):
    r = post_token(tool, platform, lambda c: c.pop(missing))
    refused(tool, r, "缺少声明" if missing != "nonce" else "缺少声明 nonce")


def test_login_requires_hint_and_sets_a_partitioned_launch_cookie(tool, platform):
    r = tool.client.get("/lti/login", params={"iss": platform.issuer})
    refused(tool, r, "缺少 iss 或 login_hint")
    ok = login(tool, platform, "alice")
    cookie = ok.headers["set-cookie"]
    assert "SameSite=None" in cookie and "Secure" in cookie and "Partitioned" in cookie and "; Path=/;" in cookie  # over HTTPS: __Host- (below)
    assert ok.headers["location"].startswith(platform.auth_url + "?")


def test_over_https_the_launch_cookie_is_host_only_and_a_planted_one_is_ignored(tool, platform):
    """A sibling host can set a plain ``lti_browser`` cookie for this host with a value it knows; over HTTPS the
    launch cookie is ``__Host-`` (path ``/``, no ``Domain``, ``Secure``), so the planted one is neither adopted
    by the login nor accepted as this browser's binding at the launch (a login CSRF needs both)."""
    first = login(tool, platform, "alice")
    header = first.headers["set-cookie"]
    name, value = header.split(";", 1)[0].split("=", 1)
    assert name == "__Host-lti_browser" and "; Path=/;" in header and "Secure" in header
    assert "domain" not in header.lower()
    tool.client.cookies.clear()
    tool.client.cookies.set("lti_browser", "planted-by-a-sibling-host", domain="tool.test", path="/lti/")
    again = login(tool, platform, "alice")
    assert "planted-by-a-sibling-host" not in again.headers["set-cookie"]
    form = authorize(platform, again)
    tool.client.cookies.clear()
    tool.client.cookies.set("lti_browser", again.headers["set-cookie"].split(";", 1)[0].split("=", 1)[1],
                            domain="tool.test", path="/lti/")  # the right value, under the name HTTP uses
    refused(tool, tool.client.post("/lti/launch", data=form), "不是从这个浏览器发起的", 403)


def test_one_address_cannot_fill_the_database_with_login_states(tool, platform, monkeypatch):
    """Login initiation is unauthenticated and stores a state row for ten minutes: one client address has at most
    ``STATES_PER_ADDRESS`` waiting; others are not held up by it."""
    monkeypatch.setattr(lti_launch, "STATES_PER_ADDRESS", 3)
    for _ in range(3):
        assert login(tool, platform, "alice").status_code == 302
    r = login(tool, platform, "alice")
    refused(tool, r, "登录太多", 429)
    with tool.db.read() as con:
        assert con.execute(sa.text("SELECT COUNT(*) FROM lti_states")).scalar() == 3
    other = tool.client.get("/lti/login", params={"iss": platform.issuer, "login_hint": "bob", "client_id": platform.client_id},
                            headers={"X-Forwarded-For": "10.9.9.9"})  # not trusted: the same client address
    assert other.status_code == 429
