"""Deep linking offers, beside each assignment's resource link, the link that opens it in the students' JupyterHub
(a plain ``link`` item: no launch, no gradebook column) - where the site has a hub, the course a repository of its
released notebooks, and the platform takes plain links."""

from __future__ import annotations

import html as htmllib
import re
from urllib.parse import parse_qs, urlsplit

import httpx
import sqlalchemy as sa

from autograder.check import all_assignments
from autograder.service.hub import HubSite
from autograder.service.lms_tables import LINKS
from autograder.service.policy import parse_policy
from autograder.service.web.hub import Hub

from .conftest import ASSIGNMENT, launch, visible_text
from .test_deeplink_nrps import DL, choose

HUB = "https://hub.example.edu"
RELEASE = "https://example.edu/binary-eval-release.git"


def _with_hub(tool) -> None:
    known = all_assignments()
    tool.service.policy = parse_policy({"assignments": {n: {} for n in known}, "hub": {"repository": RELEASE}}, list(known))
    tool.client.app.state.hub = Hub(HubSite(HUB, HUB + "/hub/api", "grader", "t" * 32))


def test_the_instructor_can_add_the_jupyterhub_link_of_an_assignment(tool, platform):
    _with_hub(tool)
    platform.accept_types = ["ltiResourceLink", "link"]
    page = launch(tool, platform, "teacher", type="LtiDeepLinkingRequest")
    assert page.status_code == 200 and "在学生的 JupyterHub 中打开作业的链接" in visible_text(page)
    back = choose(tool, page, "hub:" + ASSIGNMENT)
    assert back.status_code == 200, visible_text(back)
    action = htmllib.unescape(re.search(r'<form method="post" action="([^"]+)"', back.text).group(1))
    token = htmllib.unescape(re.search(r'name="JWT" value="([^"]+)"', back.text).group(1))
    assert httpx.post(action, data={"JWT": token}, timeout=10).status_code == 200
    (claims,) = platform.deep_link_responses
    (item,) = claims[DL + "content_items"]
    assert item["type"] == "link" and "lineItem" not in item and "在 JupyterHub 中打开" in item["title"]
    url = urlsplit(item["url"])
    assert f"{url.scheme}://{url.netloc}{url.path}" == HUB + "/hub/user-redirect/git-pull"
    assert parse_qs(url.query)["repo"] == [RELEASE] and parse_qs(url.query)["targetpath"] == ["default"]
    with tool.db.read() as con:  # a plain link is no resource link: the assignment is not linked there
        assert con.execute(sa.select(sa.func.count()).select_from(LINKS)).scalar() == 0


def test_no_jupyterhub_link_where_the_platform_takes_only_resource_links_or_there_is_no_hub(tool, platform):
    page = launch(tool, platform, "teacher", type="LtiDeepLinkingRequest")
    assert "JupyterHub" not in visible_text(page)  # no hub at the site
    _with_hub(tool)
    page = launch(tool, platform, "teacher", type="LtiDeepLinkingRequest")  # accept_types: ltiResourceLink only
    assert "JupyterHub" not in visible_text(page)
    refused = choose(tool, page, "hub:" + ASSIGNMENT)
    assert refused.status_code == 400 and "没有作业 hub:" in visible_text(refused)
