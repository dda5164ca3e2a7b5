"""Fixtures: a fake LTI platform (real HTTP server on loopback) and the tool in process (Starlette TestClient).

The tool answers at ``https://tool.test`` (the TestClient's base URL and the site's public address), so its
``Secure`` launch cookie is kept; the platform fetches the tool's key set through :attr:`FakePlatform.tool_jwks`
instead of over HTTP.  The tool's one course is ``default`` (a one-course database upgraded in place); the
platform's LMS course ``course-1`` is bound to it, as an authority on its roster unless a test says otherwise.
"""

from __future__ import annotations

import html as htmllib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from starlette.testclient import TestClient

from autograder.check.specs import all_assignments
from autograder.service import sessions
from autograder.service.courses import UPGRADED
from autograder.service.database import Database
from autograder.service.lti import bindings, registry
from autograder.service.service import Service
from autograder.service.site import Site
from autograder.service.web.app import make_app
from autograder.service.lti.keys import ToolKeys
from autograder.service.policy import parse_policy
from autograder.service.schema import prepare
from autograder.service.uploads import notebook_rules

from .. import server as _server  # noqa: F401 (puts tests/autograder on sys.path for test_pages)
from .fake_lms import INSTRUCTOR, LEARNER, FakePlatform, User

REPO = Path(__file__).resolve().parents[3]
TOOL = "https://tool.test"
ASSIGNMENT = "ps1_threshold_metrics"


COURSE = UPGRADED.id
CONTEXT = "course-1"


@dataclass
class Tool:
    service: Service
    client: TestClient
    db: Database
    data: Path
    site: Site


def make_tool(tmp: Path, url: str | None = None, config: dict | None = None) -> Tool:
    """The tool over a SQLite database in ``tmp`` (or the database at ``url``); ``config``: its ``course.yml`` (default:
    every assignment open, no quiz)."""
    data = tmp / "data"
    data.mkdir()
    db = Database(url or f"sqlite:///{data / 'gradebook.db'}")
    prepare(db)
    prepare(db, "site")
    known = all_assignments()
    policy = parse_policy(config or {"assignments": {n: {} for n in known}}, list(known))
    sources = {n: REPO / "solutions" / n / f"{a.notebook}.ipynb" for n, a in known.items()}
    rules = {n: notebook_rules(a, sources[n], sources) for n, a in known.items()}
    secret = sessions.load_secret(data / "secret.key")
    titles = {**{n: a.title for n, a in known.items()}, **{n: q.title for n, q in policy.quizzes.items()}}
    service = Service(db, policy, data, sessions.Signer(secret, scope=COURSE), rules, titles)
    site = Site(db, data, TOOL, {COURSE: service}, secret)
    client = TestClient(make_app(site), base_url=TOOL, follow_redirects=False)
    return Tool(service, client, db, data, site)


def make_site(tmp: Path, course_ids: tuple[str, ...], url: str | None = None, public: str = TOOL) -> Tool:
    """A site of new courses (each its own SQLite file under ``tmp/data/courses``, or its schema of the PostgreSQL
    database at ``url``), served at ``public``; the returned tool's ``service`` and ``db`` are the first course's."""
    from autograder.service import courses

    data = tmp / "data"
    data.mkdir()
    site_db = Database(url or f"sqlite:///{data / 'gradebook.db'}")
    prepare(site_db, "site")
    known = all_assignments()
    policy = parse_policy({"assignments": {n: {} for n in known}}, list(known))
    sources = {n: REPO / "solutions" / n / f"{a.notebook}.ipynb" for n, a in known.items()}
    rules = {n: notebook_rules(a, sources[n], sources) for n, a in known.items()}
    secret = sessions.load_secret(data / "secret.key")
    services = {}
    for cid in course_ids:
        course = courses.add(site_db, data, cid, f"课程 {cid}")
        db = Database(course.db_url(site_db.url, data))
        services[cid] = Service(db, policy, course.data_root(data), sessions.Signer(secret, scope=cid), rules,
                                {n: a.title for n, a in known.items()}, course=course, site_db=site_db)
    site = Site(site_db, data, public, services, secret)
    client = TestClient(make_app(site), base_url=TOOL, follow_redirects=False)
    first = services[course_ids[0]]
    return Tool(first, client, first.db, data, site)


@pytest.fixture
def tool(request, tmp_path):
    """The tool in process; a test marked ``@pytest.mark.parametrize("tool", ["postgresql"], indirect=True)`` gets
    a fresh PostgreSQL database of its own (the server of tests/grading_runs.py)."""
    url = None
    if getattr(request, "param", "sqlite") == "postgresql":
        url = request.getfixturevalue("postgres").url(f"lti_{abs(hash(request.node.name)) % 10**8}")
    t = make_tool(tmp_path, url)
    yield t
    t.client.close()
    t.db.dispose()


def people() -> dict[str, User]:
    return {"alice": User("a1b2c3-sub-alice", "张 丽", "alice@example.edu", LEARNER, sourcedid="s001", given="丽", family="张"),
            "bob": User("sub-bob", "李 波", "bob@example.edu", LEARNER, sourcedid="", given="波", family="李"),
            "teacher": User("sub-teacher", "王 老师", "wang@example.edu", INSTRUCTOR, sourcedid="t01")}


@pytest.fixture(scope="module")
def running_platform():
    p = FakePlatform(flavour="canvas").start()
    yield p
    p.stop()


@pytest.fixture
def platform(running_platform, tool):
    """The module's fake platform, reset, pointing at this test's tool and registered there."""
    p = running_platform
    p.tool, p.mode, p.audience = TOOL, "up", None
    p.users, p.scores, p.lineitems, p.members, p.tokens = people(), [], {}, {}, {}
    p.assertions, p.deep_link_responses, p.refused_requests = [], [], 0
    p.keys = p.keys[:1]
    p.accept_types = ["ltiResourceLink"]
    p.custom = {"link-1": {"assignment": ASSIGNMENT}}
    p.tool_jwks = lambda: ToolKeys(tool.data).jwks()
    registered = registry.add(tool.db, **p.registration())
    bindings.bind(tool.db, registered.id, p.deployment_id, CONTEXT, COURSE, by="测试", roster_authority=True, title="评价二分类模型")
    return p


def login(tool: Tool, platform: FakePlatform, user: str, **hint) -> httpx.Response:
    """The tool's answer to the platform's login initiation (a redirect to the platform's /auth)."""
    params = {"iss": platform.issuer, "login_hint": user, "target_link_uri": TOOL + "/lti/launch", "client_id": platform.client_id,
              "lti_message_hint": json.dumps(hint) if hint else ""}
    return tool.client.get("/lti/login", params=params)


def auth_state(response: httpx.Response) -> dict[str, str]:
    """The authorization request's parameters (state, nonce ...) from the tool's redirect."""
    assert response.status_code == 302, response.text
    return {k: v[0] for k, v in parse_qs(urlsplit(response.headers["location"]).query).items()}


def authorize(platform: FakePlatform, login_response: httpx.Response) -> dict[str, str]:
    """What the platform's /auth posts back: ``{"id_token", "state"}``."""
    page = httpx.get(login_response.headers["location"], timeout=10)
    assert page.status_code == 200, page.text
    fields = dict(re.findall(r'name="(id_token|state)" value="([^"]*)"', page.text))
    return {k: htmllib.unescape(v) for k, v in fields.items()}


def launch(tool: Tool, platform: FakePlatform, user: str, **hint) -> httpx.Response:
    """The whole launch: login initiation, authorization at the platform, the form post to /lti/launch."""
    return tool.client.post("/lti/launch", data=authorize(platform, login(tool, platform, user, **hint)))


def visible_text(response: httpx.Response) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", response.text))
