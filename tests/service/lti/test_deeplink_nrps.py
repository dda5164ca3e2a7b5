"""Deep linking (an instructor adds an assignment with its gradebook column) and roster sync (NRPS, paged)."""

from __future__ import annotations

import html as htmllib
import re

import httpx
import jwt
import pytest
import sqlalchemy as sa

from autograder.service.database import ACCOUNTS
from autograder.service.lti import bindings, deeplink, nrps, registry
from autograder.service.lti.ags import Tokens
from autograder.service.lti.keys import ToolKeys
from autograder.service.lti.launch import Launch, LaunchRefused
from autograder.service.lms_tables import CONTEXTS, MEMBERSHIPS
from autograder.service.roles import Role
from autograder.service.roster import Student, import_students

from .conftest import ASSIGNMENT, launch, visible_text
from .fake_lms import LEARNER, LIS, User
from .test_launch import follow_to_page

DL = "https://purl.imsglobal.org/spec/lti-dl/claim/"


def choose(tool, page, assignment: str):
    ticket = re.search(r'name="ticket" value="([^"]+)"', page.text).group(1)
    return tool.client.post("/lti/deeplink", data={"ticket": ticket, "assignment": assignment})


def test_instructor_adds_an_assignment_with_its_line_item(tool, platform):
    page = launch(tool, platform, "teacher", type="LtiDeepLinkingRequest")
    text = visible_text(page)
    assert page.status_code == 200 and "选择要添加到课程平台的作业" in text
    assert "作业 1：固定阈值指标" in text and "满分" in text
    assert "frame-ancestors " + platform.base in page.headers["content-security-policy"]
    back = choose(tool, page, ASSIGNMENT)
    assert back.status_code == 200 and "返回课程平台并添加" in visible_text(back)
    action = htmllib.unescape(re.search(r'<form method="post" action="([^"]+)"', back.text).group(1))
    assert action.startswith(platform.base + "/deep_linking_return/")
    assert "form-action 'self' " + platform.base in back.headers["content-security-policy"]
    token = htmllib.unescape(re.search(r'name="JWT" value="([^"]+)"', back.text).group(1))
    # the platform verifies the tool's signature against the tool's published key set
    answer = httpx.post(action, data={"JWT": token}, timeout=10)
    assert answer.status_code == 200 and "已添加 1 项" in answer.text
    (claims,) = platform.deep_link_responses
    assert claims["https://purl.imsglobal.org/spec/lti/claim/message_type"] == "LtiDeepLinkingResponse"
    assert claims["https://purl.imsglobal.org/spec/lti/claim/deployment_id"] == platform.deployment_id
    assert claims[DL + "data"].startswith("opaque-")  # the platform's data echoed
    (item,) = claims[DL + "content_items"]
    assert item["custom"] == {"assignment": ASSIGNMENT} and item["url"].endswith("/lti/launch")
    assert item["lineItem"]["resourceId"] == ASSIGNMENT and item["lineItem"]["label"] == "作业 1：固定阈值指标"
    assert item["lineItem"]["scoreMaximum"] > 0
    # the ticket is used up
    again = tool.client.post("/lti/deeplink", data={"ticket": re.search(r'name="ticket" value="([^"]+)"', page.text).group(1),
                                                     "assignment": ASSIGNMENT})
    assert again.status_code == 400 and "已过期或已用过" in visible_text(again)


def test_a_forged_deep_linking_response_does_not_verify(tool, platform):
    """The platform's check in the test is real: a response signed by another key is rejected."""
    from .fake_lms import new_key

    kid, pem, _ = new_key()
    forged = jwt.encode({"iss": platform.client_id, "aud": [platform.issuer]}, pem, algorithm="RS256",
                        headers={"kid": ToolKeys(tool.data).current().kid})
    try:
        httpx.post(platform.base + "/deep_linking_return/course-1", data={"JWT": forged}, timeout=10)
    except httpx.HTTPError:
        pass
    assert platform.deep_link_responses == []


def test_a_student_cannot_deep_link(tool, platform):
    page = launch(tool, platform, "alice", type="LtiDeepLinkingRequest")
    assert page.status_code == 403 and "只有课程的教师可以添加作业" in visible_text(page)
    with tool.db.read() as con:
        assert con.execute(sa.select(sa.func.count()).select_from(ACCOUNTS)).scalar() == 0


@pytest.mark.parametrize(("accepted", "refused"), [(["link", "html"], True), (["link", "ltiResourceLink"], False), (None, False)])
def test_a_request_that_accepts_no_resource_link_is_refused(accepted, refused):
    """A placement that takes only links or HTML (a rich-text editor's) would refuse the tool's one kind of item."""
    settings = {"deep_link_return_url": "https://lms.example/return"} | ({"accept_types": accepted} if accepted else {})
    request = Launch(platform=registry.Platform(1, "LMS", "https://lms.example", "c1", "", "", "", ("d1",)),
                     claims={DL + "deep_linking_settings": settings}, message_type="LtiDeepLinkingRequest",
                     deployment_id="d1", sub="t1", role=Role.INSTRUCTOR)
    if refused:
        with pytest.raises(LaunchRefused, match=r"只接受这些内容：link、html，不接受作业链接（ltiResourceLink）"):
            deeplink.check_accepts(request)
    else:
        deeplink.check_accepts(request)


def member(sub: str, name: str, roles: list[str], status: str = "Active", sourcedid: str = "") -> dict:
    return {"user_id": sub, "name": name, "email": f"{sub}@example.edu", "roles": roles, "status": status,
            "lis_person_sourcedid": sourcedid}


def test_roster_sync_follows_paging_enrolls_and_marks_departed(tool, platform):
    import_students(tool.db, [Student("s042", "赵六", "")])
    follow_to_page(tool, launch(tool, platform, "alice"))  # the course and its NRPS endpoint are known now
    alice = platform.users["alice"]
    platform.members["course-1"] = [
        member(alice.sub, alice.name, [LIS + "membership#Learner"]),
        member("sub-c", "陈 一", [LIS + "membership#Learner"]),
        member("sub-d", "赵 六", [LIS + "membership#Learner"], sourcedid="s042"),  # on the roster already
        member("sub-t", "王 老师", [LIS + "membership#Instructor"]),
        member("sub-x", "退 课", [LIS + "membership#Learner"], status="Inactive"),
    ]
    platform.page_size = 2  # three pages
    client = httpx.Client(timeout=10)
    tokens = Tokens(ToolKeys(tool.data), client)
    with tool.db.read() as con:
        pid = con.execute(sa.select(CONTEXTS.c.platform_id)).scalar()
    binding = bindings.find(tool.db, pid, platform.deployment_id, "course-1")
    result = nrps.sync(tool.db, tool.db, tokens, client, binding)
    assert (result.enrolled, result.departed, result.members) == (2, 0, 3)
    assert sorted(n for _, n in nrps.never_launched(tool.db, pid, "course-1")) == ["赵 六", "陈 一"]
    with tool.db.read() as con:
        logins = set(con.execute(sa.select(ACCOUNTS.c.login)).scalars())
    assert "s042" in logins and len(logins) == 3  # linked to the roster entry; no account for the instructor
    # chen leaves the course
    platform.members["course-1"] = [m for m in platform.members["course-1"] if m["user_id"] != "sub-c"]
    result = nrps.sync(tool.db, tool.db, tokens, client, binding)
    assert (result.enrolled, result.departed) == (0, 1)
    with tool.db.read() as con:
        active = dict(con.execute(sa.select(MEMBERSHIPS.c.sub, MEMBERSHIPS.c.active)).all())
    assert active == {alice.sub: True, "sub-c": False, "sub-d": True}
    assert [n for _, n in nrps.never_launched(tool.db, pid, "course-1")] == ["赵 六"]
    # a roster-synced student who launches later is no longer "never launched"
    platform.users["d"] = User("sub-d", "赵 六", "sub-d@example.edu", LEARNER, sourcedid="s042")
    follow_to_page(tool, launch(tool, platform, "d"))
    assert nrps.never_launched(tool.db, pid, "course-1") == []


def test_instructor_page_lists_passbacks_and_syncs_the_roster(tool, platform):
    follow_to_page(tool, launch(tool, platform, "alice"))
    alice = platform.users["alice"]
    platform.members["course-1"] = [member(alice.sub, alice.name, [LIS + "membership#Learner"]),
                                    member("sub-c", "陈 一", [LIS + "membership#Learner"])]
    student_view = tool.client.get("/c/default/lti/admin")
    assert student_view.status_code == 403 and "只有教师" in visible_text(student_view)
    tool.client.cookies.clear()
    follow_to_page(tool, launch(tool, platform, "teacher"))
    page = tool.client.get("/c/default/lti/admin")
    text = visible_text(page)
    assert page.status_code == 200 and "课程平台（LTI）" in text and "学生 1 名" in text
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
    csrf = re.search(r'name="csrf_token" value="([^"]+)"', page.text).group(1)
    synced = tool.client.post("/c/default/lti/admin/sync", data={"csrf_token": csrf, "platform": "1", "context": "course-1",
                                                                        "deployment": platform.deployment_id},
                              headers={"Origin": "https://tool.test"})
    text = visible_text(synced)
    assert "名单已同步" in text and "新加入 1 名" in text and "从未打开过作业：陈 一" in text
    forged = tool.client.post("/c/default/lti/admin/sync", data={"csrf_token": "x", "platform": "1", "context": "course-1",
                                                                       "deployment": platform.deployment_id})
    assert forged.status_code == 403


def test_instructor_page_shows_failed_passbacks_and_retries_them(tool, platform):
    from autograder.service.lti import passback
    from autograder.service.lms_tables import PASSBACK

    from .test_passback import enrolled, grade, worker

    (alice,) = enrolled(tool, platform, "alice")
    grade(tool, alice, 7.0)
    platform.mode = "down"
    worker(tool).run_once()
    with tool.db.write() as con:  # as after the last of the retries
        con.execute(sa.update(PASSBACK).values(status="failed"))
    tool.client.cookies.clear()
    follow_to_page(tool, launch(tool, platform, "teacher"))
    text = visible_text(tool.client.get("/c/default/lti/admin"))
    assert "失败 1 条" in text and alice in text and "HTTP 503" in text
    csrf = re.search(r'name="csrf_token" value="([^"]+)"', tool.client.get("/c/default/lti/admin").text).group(1)
    retried = tool.client.post("/c/default/lti/admin/retry", data={"csrf_token": csrf}, headers={"Origin": "https://tool.test"})
    assert "已重新排队 1 条" in visible_text(retried)
    platform.mode = "up"
    assert worker(tool).run_once() == 1 and passback.summary(tool.db)["sent"] == 1


def test_the_fake_lms_shows_what_an_lms_would(running_platform):
    """What ``make serve``'s fake LMS shows a person trying the tool: each LMS course's gradebook by name with a
    column per line item and the latest score of each cell; its members for a roster sync (from its enrolments);
    an activity added by deep linking on the LMS course's page."""
    from .fake_lms import INSTRUCTOR as TEACHING

    p = running_platform
    p.users = {"zs": User("sub-zs", "张三", "zs@example.edu", LEARNER, sourcedid="s001"),
               "t": User("sub-t", "王老师", "t@example.edu", TEACHING)}
    p.contexts, p.enrolments = {"course-1": "BIN101"}, {"course-1": {"zs": LEARNER, "t": TEACHING}}
    p.lineitems = {"course-1": [{"id": f"{p.base}/api/lti/courses/course-1/line_items/abc?v=1", "label": "作业 2：ROC"}]}
    p.scores = [{"userId": "sub-zs", "scoreGiven": g, "scoreMaximum": 69.0, "timestamp": t, "context": "course-1", "lineitem": "abc"}
                for g, t in ((40.0, "1"), (60.0, "2"))]
    p.links, p.custom = {"course-1": [("link-1", "作业 1")]}, {"link-1": {"assignment": ASSIGNMENT}}
    front = visible_text(httpx.get(p.base + "/", timeout=10))
    assert "BIN101" in front and "作业 2：ROC" in front and "张三 60 / 69" in front and "40 / 69" not in front
    members = p.enrolled_members("course-1")
    assert {(m["name"], m["lis_person_sourcedid"]) for m in members} == {("张三", "s001"), ("王老师", "")}
    p.links["course-1"] = p.links["course-1"] + [("dl-9", "作业 3：PR")]  # as a deep-linking return adds it
    page = visible_text(httpx.get(p.base + "/courses/course-1?user=zs", timeout=10))
    assert "这门课的其他活动" in page and "作业 3：PR" in page
