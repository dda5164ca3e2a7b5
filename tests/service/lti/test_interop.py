"""The tool against an LTI 1.3 platform nobody on this project wrote: the package ``lti1p3platform``.

Both sides are real HTTP servers on loopback (uvicorn, in threads): the tool's site (one course, ``bin``) and
the library's platform (:mod:`.interop_platform`), registered with the tool and its LMS course ``lib-101`` bound
to ``bin``.  Every check of the other side is the library's own: its login initiation and signed launch, its
verification of the tool's deep-linking response and client assertion against the tool's ``/lti/jwks.json``
(fetched over HTTP), its bearer-token checks on the AGS and NRPS endpoints, its ``Link`` paging of members.
"""

from __future__ import annotations

import html as htmllib
import re
from urllib.parse import urljoin

import httpx
import jwt
import pytest
import sqlalchemy as sa

from autograder.service.lti import bindings, nrps, passback, registry
from autograder.service.lti.ags import SCORE_TYPE, Tokens
from autograder.service.lti.keys import ToolKeys
from autograder.service.lms_tables import MEMBERSHIPS, USERS
from autograder.service.web.app import make_app
from ..server import free_port
from .fake_lms import INSTRUCTOR, LEARNER, User

from .conftest import ASSIGNMENT, make_site, visible_text
from .interop_platform import LibraryPlatform, new_pem, serve
from .test_courses import grade

pytestmark = pytest.mark.slow

CONTEXT = "lib-101"
DL = "https://purl.imsglobal.org/spec/lti-dl/claim/"
LEARNERS = {"ann": "安 娜", "ben": "本 杰", "cai": "蔡 明", "dai": "戴 琳"}


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    port = free_port()
    tool = make_site(tmp_path_factory.mktemp("interop"), ("bin",), public=f"http://127.0.0.1:{port}")
    tool.client.close()
    server = serve(make_app(tool.site), port)
    lms = LibraryPlatform(tool=tool.site.public_url, memberships_query="?limit=2")
    lms.people = {login: User(f"lib-sub-{login}", name, f"{login}@example.edu", [LEARNER[1]]) for login, name in LEARNERS.items()}
    lms.people["wu"] = User("lib-sub-wu", "吴 老师", "wu@example.edu", [INSTRUCTOR[1]])
    lms.contexts = {CONTEXT: "评价二分类模型（平台库）"}
    lms.enrolments = {CONTEXT: {login: p.roles for login, p in lms.people.items()}}
    lms.custom = {"link-ps1": {"assignment": ASSIGNMENT}}
    lms.start()
    platform = registry.add(tool.site.db, **lms.registration())
    binding = bindings.bind(tool.site.db, platform.id, lms.deployment_id, CONTEXT, "bin", by="管理员", roster_authority=True)
    yield {"tool": tool, "lms": lms, "binding": binding}
    lms.stop()
    server.should_exit = True
    tool.service.db.dispose()
    tool.site.db.dispose()


def open_from_lms(lms: LibraryPlatform, browser: httpx.Client, person: str, **target) -> tuple[httpx.Response, str]:
    """A person opens the tool on the platform: the library's login initiation, the tool's authorization request,
    the library's auto-submitting form posted to the tool.  The tool's answer, and the browser's launch cookie
    (given by hand: http.cookiejar never sends a ``Secure`` cookie over plain HTTP)."""
    initiation = browser.get(lms.start_url(person, CONTEXT, **target))
    assert initiation.status_code == 302, initiation.text
    authorization = browser.get(initiation.headers["location"])
    assert authorization.status_code == 302, visible_text(authorization)
    cookie = authorization.headers["set-cookie"].split(";", 1)[0]
    form = browser.get(authorization.headers["location"])
    assert form.status_code == 200, form.text
    action = htmllib.unescape(re.search(r'<form method="POST" action="([^"]+)"', form.text).group(1))
    fields = {k: htmllib.unescape(v) for k, v in re.findall(r'name="(id_token|state)" value="([^"]*)"', form.text)}
    return browser.post(action, data=fields, headers={"Cookie": cookie}), cookie


def signed_in_page(browser: httpx.Client, landing: httpx.Response, cookie: str) -> httpx.Response:
    """The landing page's ticket redeemed in the browser that launched, and the page it leads to."""
    assert landing.status_code == 200, visible_text(landing)
    entered = browser.get(urljoin(str(landing.url), landing.headers["refresh"].split("url=", 1)[1]), headers={"Cookie": cookie})
    assert entered.status_code == 303, visible_text(entered)
    return browser.get(urljoin(str(entered.url), entered.headers["location"]))


def test_a_students_launch_from_the_library_signs_her_in(world):
    tool, lms = world["tool"], world["lms"]
    with httpx.Client(timeout=30) as browser:
        landing, cookie = open_from_lms(lms, browser, "ann", link="link-ps1")
        page = signed_in_page(browser, landing, cookie)
        assert str(page.url) == f"{tool.site.public_url}/c/bin/assignments/{ASSIGNMENT}"
        assert page.status_code == 200 and "安 娜" in visible_text(page) and "作业 1：固定阈值指标" in visible_text(page)
        assert browser.get(f"{tool.site.public_url}/c/bin/api/v1/session").json()["role"] == "student"


def test_an_instructors_deep_linking_response_is_verified_by_the_library(world):
    tool, lms = world["tool"], world["lms"]
    lms.deep_link_data = {"placement": "module-3", "position": 2}  # the library's request data is a JSON object
    before = len(lms.deep_link_responses)
    with httpx.Client(timeout=30) as browser:
        picker, cookie = open_from_lms(lms, browser, "wu", deep_linking=True)
        assert picker.status_code == 200 and "选择要添加到课程平台的作业" in visible_text(picker)
        ticket = re.search(r'name="ticket" value="([^"]+)"', picker.text).group(1)
        # the choice is posted from the browser that launched, with its launch cookie (the held launch is bound to it)
        back = browser.post(f"{tool.site.public_url}/lti/deeplink", data={"ticket": ticket, "assignment": ASSIGNMENT},
                            headers={"Cookie": cookie})
        assert back.status_code == 200, visible_text(back)
        action = htmllib.unescape(re.search(r'<form method="post" action="([^"]+)"', back.text).group(1))
        token = htmllib.unescape(re.search(r'name="JWT" value="([^"]+)"', back.text).group(1))
        answer = browser.post(action, data={"JWT": token})
    assert action == lms.url("/deep_link_return")
    assert answer.status_code == 200 and "<p id='added'>1</p>" in answer.text, answer.text
    claims = lms.deep_link_responses[-1]
    assert claims[DL + "data"] == {"placement": "module-3", "position": 2}
    (item,) = claims[DL + "content_items"]
    assert item["type"] == "ltiResourceLink" and item["custom"] == {"assignment": ASSIGNMENT}
    assert item["lineItem"]["resourceId"] == ASSIGNMENT and item["lineItem"]["scoreMaximum"] > 0
    # the same claims under the tool's key id, signed by another key: the library refuses them
    forged = jwt.encode(jwt.decode(token, options={"verify_signature": False}), new_pem(), algorithm="RS256",
                        headers={"kid": jwt.get_unverified_header(token)["kid"]})
    refused = httpx.post(action, data={"JWT": forged})
    assert refused.status_code == 400 and "InvalidSignatureError" in refused.text
    assert len(lms.deep_link_responses) == before + 1


def test_a_placement_that_takes_no_assignment_links_is_refused_before_the_choice(world):
    """The library refuses a response with a content item of a type its request did not accept (here the tool's
    only kind, ``ltiResourceLink``): the tool says so at once instead of offering a choice that would fail."""
    lms = world["lms"]
    lms.accept_types = ["link", "html"]
    try:
        with httpx.Client(timeout=30) as browser:
            refused, _ = open_from_lms(lms, browser, "wu", deep_linking=True)
    finally:
        lms.accept_types = None
    text = visible_text(refused)
    kinds = re.search(r"只接受这些内容：(\S+?)，不接受作业链接（ltiResourceLink）", text)
    assert refused.status_code == 400 and kinds and sorted(kinds.group(1).split("、")) == ["html", "link"], text
    assert 'name="ticket"' not in refused.text


def test_a_score_reaches_the_librarys_gradebook_through_the_passback_worker(world):
    tool, lms = world["tool"], world["lms"]
    with httpx.Client(timeout=30) as browser:
        signed_in_page(browser, *open_from_lms(lms, browser, "ben", link="link-ps1"))
        login = browser.get(f"{tool.site.public_url}/c/bin/api/v1/session").json()["login"]
    grade(tool.service, login, ASSIGNMENT, 7.5)
    worker = passback.Passback(tool.service.db, tool.site.db, ToolKeys(tool.data), "interop", course_id="bin",
                               feedback_url=lambda sid: f"{tool.site.public_url}/c/bin/submissions/{sid}")
    issued = lms.tokens_issued
    assert worker.run_once() == 1
    assert lms.tokens_issued == issued + 1  # the library verified the tool's client assertion
    (column,) = lms.lineitems[CONTEXT]
    assert column["resourceId"] == ASSIGNMENT and column["label"] == ASSIGNMENT and column["scoreMaximum"] == 10.0
    score = lms.scores[-1]
    assert score["content_type"] == SCORE_TYPE and score["userId"] == "lib-sub-ben"
    assert (score["scoreGiven"], score["scoreMaximum"]) == (7.5, 10.0)
    assert (score["activityProgress"], score["gradingProgress"]) == ("Completed", "FullyGraded")
    assert score["timestamp"].endswith("Z") and f"{tool.site.public_url}/c/bin/submissions/" in score["comment"]
    # a better attempt goes to the same column, with the cached token
    grade(tool.service, login, ASSIGNMENT, 9.0)
    assert worker.run_once() == 1
    assert len(lms.lineitems[CONTEXT]) == 1 and lms.scores[-1]["scoreGiven"] == 9.0 and lms.tokens_issued == issued + 1


def test_roster_sync_reads_the_librarys_memberships_page_by_page(world):
    tool, lms = world["tool"], world["lms"]
    with httpx.Client(timeout=30) as browser:  # the teacher's launch tells the tool where the memberships are
        landing, _ = open_from_lms(lms, browser, "wu", link="link-ps1")
        assert landing.status_code == 200, visible_text(landing)
    pages = lms.membership_pages
    with httpx.Client(timeout=30) as http:
        result = nrps.sync(tool.service.db, tool.site.db, Tokens(ToolKeys(tool.data), http), http, world["binding"])
    assert lms.membership_pages - pages == 3  # five members, two a page: the library's Link rel=next, followed
    assert result.members == len(LEARNERS)  # the teacher is no student
    with tool.service.db.read() as con:
        listed = con.execute(sa.select(MEMBERSHIPS.c.name).where((MEMBERSHIPS.c.context_id == CONTEXT)
                                                                & (MEMBERSHIPS.c.role == "student") & MEMBERSHIPS.c.active)).scalars()
        enrolled = con.execute(sa.select(USERS.c.sub).where(USERS.c.role == "student")).scalars()
        assert sorted(listed) == sorted(LEARNERS.values())
        assert sorted(enrolled) == sorted(f"lib-sub-{login}" for login in LEARNERS)  # the LMS course speaks for the roster
