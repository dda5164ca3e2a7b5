"""A real JupyterHub and a real ``autograder serve`` (conftest.py): signing in through the hub's OAuth, and uploads
made with hub tokens, as JupyterLab's 提交 sends them - who the hub says owns the token is who submits."""

from __future__ import annotations

import json
import subprocess
import time
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from tests.service.hub.conftest import ASSIGNMENT, REPO
from tests.service.server import AUTOGRADER, make_course

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("jupyterhub")]
RELEASED = (REPO / "exercises" / ASSIGNMENT / "threshold_metrics.ipynb").read_bytes()


def _sign_in(site, user: str, course: str) -> httpx.Client:
    """``user`` signed in to the hub, then to ``course`` through the service's "用 JupyterHub 账号登录"."""
    client = site.hub_session(user)
    answer = client.get(f"{site.service_url}/jupyterhub/login", params={"course": course})
    assert answer.status_code == 200 and "已通过 JupyterHub 登录" in answer.text, answer.text[-800:]
    return client


def _whoami(client: httpx.Client, site, course: str) -> dict:
    answer = client.get(f"{site.service_url}/c/{course}/api/v1/session")
    return answer.json() if answer.status_code == 200 else {"status": answer.status_code}


def _upload(site, token: str | None, data: bytes = RELEASED, course: str | None = None, headers: dict | None = None) -> httpx.Response:
    files = {"notebook": ("threshold_metrics.ipynb", data, "application/x-ipynb+json")}
    return httpx.post(f"{site.service_url}/jupyterhub/api/submissions", files=files,
                      data={"course": course} if course else None, timeout=60,
                      headers={**({"Authorization": f"Bearer {token}"} if token else {}), **(headers or {})})


def test_a_hub_user_signs_in_to_a_course_as_the_roster_account_without_an_access_code(hub_site):
    client = _sign_in(hub_site, "bob", "bin-hub")
    assert _whoami(client, hub_site, "bin-hub") == {"role": "student", "login": "bob", "name": "学生 bob",
                                                      "csrf_token": _whoami(client, hub_site, "bin-hub")["csrf_token"]}
    assert client.get(f"{hub_site.service_url}/c/bin-hub/").status_code == 200
    # the instructor's hub name is mapped to the instructor's account by course.yml
    wang = _sign_in(hub_site, "wang", "bin-hub")
    assert _whoami(wang, hub_site, "bin-hub")["role"] == "instructor"


def test_a_ta_in_one_course_and_a_student_in_another_has_each_role_only_in_its_course(hub_site):
    client = _sign_in(hub_site, "dave", "bin-hub")
    _sign_in_again = client.get(f"{hub_site.service_url}/jupyterhub/login", params={"course": "lab-hub"})
    assert _sign_in_again.status_code == 200, _sign_in_again.text[-500:]
    assert _whoami(client, hub_site, "bin-hub")["role"] == "student"
    assert _whoami(client, hub_site, "lab-hub")["role"] == "ta"
    assert client.get(f"{hub_site.service_url}/c/lab-hub/api/v1/grades.csv").status_code == 200
    assert client.get(f"{hub_site.service_url}/c/bin-hub/api/v1/grades.csv").status_code == 403
    # the hub's groups grant nothing: wang in a hub group named after lab-hub's staff is still nobody in lab-hub
    with hub_site.hub.api() as api:
        api.post("users", json={"usernames": ["wang"]})
        assert api.post("groups/lab-hub-staff", json={"users": ["wang"]}).status_code in (201, 409)
    wang = hub_site.hub_session("wang")
    refused = wang.get(f"{hub_site.service_url}/jupyterhub/login", params={"course": "lab-hub"})
    assert refused.status_code == 403 and "不在课程" in refused.text


def test_a_user_on_no_roster_is_refused_with_a_clear_message(hub_site):
    client = hub_site.hub_session("mallory")
    refused = client.get(f"{hub_site.service_url}/jupyterhub/login", params={"course": "bin-hub"})
    assert refused.status_code == 403
    assert "JupyterHub 用户 mallory 不在课程“测试课程 bin-hub”的名单上" in refused.text and "联系任课教师" in refused.text
    assert _whoami(client, hub_site, "bin-hub") == {"status": 401}
    # a student of another course is told where they do have an account
    erin = hub_site.hub_session("erin")
    refused = erin.get(f"{hub_site.service_url}/jupyterhub/login", params={"course": "bin-hub"})
    assert refused.status_code == 403 and "测试课程 lab-hub" in refused.text
    # and over the API (JupyterLab's 提交)
    answer = _upload(hub_site, hub_site.token("mallory"))
    assert answer.status_code == 403 and answer.json()["reason"] == "not_enrolled" and "mallory" in answer.json()["error"]


def test_the_oauth_state_belongs_to_the_browser_that_started_the_sign_in(hub_site):
    victim_flow = hub_site.hub_session("mallory")  # an attacker's own sign-in, stopped before the callback
    victim_flow.follow_redirects = False
    start = victim_flow.get(f"{hub_site.service_url}/jupyterhub/login", params={"course": "bin-hub"})
    authorize = victim_flow.get(start.headers["location"])
    callback = authorize.headers["location"]
    assert urlsplit(callback).path == "/jupyterhub/callback" and "code" in parse_qs(urlsplit(callback).query)
    other_browser = httpx.Client(timeout=30)  # the link sent to someone else: no state cookie of this sign-in
    refused = other_browser.get(callback)
    assert refused.status_code == 403 and "不是从这个浏览器发起" in refused.text
    assert not any(name.startswith("autograder_session") for name in other_browser.cookies)


def test_an_upload_is_the_token_owners_whatever_a_header_claims(hub_site):
    forged = {"X-Forwarded-User": "alice", "X-JupyterHub-User": "alice", "X-Remote-User": "alice", "Remote-User": "alice"}
    anonymous = _upload(hub_site, None, headers=forged)
    assert anonymous.status_code == 401 and anonymous.json()["reason"] == "token"
    answer = _upload(hub_site, hub_site.token("bob"), headers=forged)
    assert answer.status_code == 202, answer.text
    sub = answer.json()
    assert (sub["course"], sub["assignment"]) == ("bin-hub", ASSIGNMENT)
    status = httpx.get(sub["status_url"], timeout=30).json()
    assert status["student_id"] == "bob"
    # a made-up token, and a real token of bob's that may not reach the service, are refused
    assert _upload(hub_site, "0" * 32).json()["reason"] == "token"
    narrow = _upload(hub_site, hub_site.token("bob", scopes=["read:users:name!user"]))
    assert narrow.status_code == 403 and "access:services!service=grader" in narrow.json()["error"]
    # the status ticket opens that submission only
    parts = urlsplit(sub["status_url"])
    other = f"{hub_site.service_url}/jupyterhub/api/submissions/lab-hub/{sub['id']}?{parts.query}"
    assert httpx.get(other, timeout=30).status_code == 404
    assert httpx.get(sub["status_url"].replace("t=", "t=x"), timeout=30).status_code == 404


def test_the_course_and_assignment_come_from_the_records_and_the_file(hub_site):
    alice = hub_site.token("alice")
    both = _upload(hub_site, alice)  # ps1 is open in both of alice's courses: she is asked which
    assert both.status_code == 409 and both.json()["reason"] == "choose_course"
    assert sorted(c["course"] for c in both.json()["choices"]) == ["bin-hub", "lab-hub"]
    chosen = _upload(hub_site, alice, course="lab-hub")
    assert chosen.status_code == 202 and chosen.json()["course"] == "lab-hub"
    # a course she is not a student of cannot be chosen, whatever the form says
    assert _upload(hub_site, alice, course="nowhere").status_code == 400
    # the ps2 notebook goes to ps2 (open in lab-hub only), even when its metadata claims ps1
    nb = json.loads((REPO / "exercises" / "ps2_roc_auc" / "roc_auc.ipynb").read_text(encoding="utf-8"))
    nb["metadata"]["nbgrader"] = {"assignment": ASSIGNMENT}
    ps2 = _upload(hub_site, alice, data=json.dumps(nb).encode())
    assert ps2.status_code == 202 and (ps2.json()["course"], ps2.json()["assignment"]) == ("lab-hub", "ps2_roc_auc")
    erin = _upload(hub_site, hub_site.token("erin"), data=b"{not json")
    assert erin.status_code == 400 and "JSON" in erin.json()["error"]


def test_expired_and_revoked_tokens_are_refused_and_told_to_sign_in_again(hub_site):
    expiring = hub_site.token("bob", expires_in=2)
    time.sleep(3)
    expired = _upload(hub_site, expiring)
    assert expired.status_code == 401 and expired.json()["reason"] == "token" and "重新登录" in expired.json()["error"]
    revoked = hub_site.token("bob")
    with hub_site.hub.api() as api:
        tokens = api.get("users/bob/tokens").json()["api_tokens"]
        for t in tokens:
            api.delete(f"users/bob/tokens/{t['id']}")
    answer = _upload(hub_site, revoked)
    assert answer.status_code == 401 and answer.json()["reason"] == "token"


def test_the_grade_and_the_feedback_page_reached_through_the_hub_sign_in(hub_site):
    answer = _upload(hub_site, hub_site.token("dave"))  # dave: a student in bin-hub (a TA in lab-hub cannot submit there)
    assert answer.status_code == 202, answer.text
    sub = answer.json()
    deadline = time.monotonic() + 300
    while (status := httpx.get(sub["status_url"], timeout=30).json())["status"] not in ("graded", "failed"):
        assert time.monotonic() < deadline, status
        time.sleep(0.5)
    assert status["status"] == "graded" and status["max_score"] > 0 and status["score"] is not None
    client = hub_site.hub_session("dave")
    page = client.get(status["feedback_url"])  # the hub's sign-in, then the submission's page
    assert page.status_code == 200 and "已通过 JupyterHub 登录" in page.text
    shown = client.get(f"{hub_site.service_url}/c/bin-hub/submissions/{sub['id']}")
    assert shown.status_code == 200 and "得分" in shown.text


def test_a_bad_jupyterhub_yml_stops_the_service_before_it_starts_naming_the_key(tmp_path):
    data = tmp_path / "data"
    make_course(data, ["s001"], cli="one", config={"assignments": {ASSIGNMENT: {}}, "hub": {}})
    (data / "jupyterhub.token").write_text("t" * 40)
    (data / "jupyterhub.token").chmod(0o644)
    (data / "jupyterhub.yml").write_text("url: https://hub.example.edu\nservice: grader\ntoken_file: jupyterhub.token\n")
    refused = subprocess.run([AUTOGRADER, "serve", "--data", str(data), "--port", "9"], capture_output=True, text=True, timeout=120)
    assert refused.returncode != 0 and "token_file" in refused.stderr and "chmod 600" in refused.stderr
    assert "Traceback" not in refused.stderr
