"""The JupyterHub core without a hub: the settings, who a hub user is in a course, which assignment a notebook is,
the nbgitpuller links, the deep-link choices and the signed values (:mod:`autograder.service.hub`)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from autograder.check import all_assignments
from autograder.service import hub
from autograder.service.database import Database
from autograder.service.policy import PolicyError, parse_policy
from autograder.service.roles import Role
from autograder.service.roster import Student, import_students, staff_code
from autograder.service.schema import prepare
from autograder.service.uploads import notebook_rules, read_notebook

REPO = Path(__file__).resolve().parents[3]
A = all_assignments()
KNOWN = list(A)
SOURCES = {n: REPO / "solutions" / n / f"{A[n].notebook}.ipynb" for n in A}


def _rules(*names: str) -> dict:
    return {n: notebook_rules(A[n], SOURCES[n], SOURCES) for n in names}


# ---- settings


def test_a_course_hub_section_is_read_into_the_policy_with_its_defaults():
    policy = parse_policy({"assignments": {"ps1_threshold_metrics": {}}, "hub": {}}, KNOWN)
    assert policy.hub == hub.HubCourse()  # usernames are student ids; no staff; no links
    assert parse_policy({"assignments": {"ps1_threshold_metrics": {}}}, KNOWN).hub is None
    full = parse_policy({"assignments": {"ps1_threshold_metrics": {}}, "hub": {
        "match": "email", "staff": {"Wang": "王老师"}, "repository": "https://example.edu/release.git", "branch": "fall-2026",
        "folder": "released/"}}, KNOWN).hub
    assert (full.match, full.staff_login("wang"), full.staff_login("WANG"), full.branch, full.folder) == \
        ("email", "王老师", "王老师", "fall-2026", "released")


@pytest.mark.parametrize("section, named", [
    ({"match": "name"}, "hub.match"),
    ({"staff": ["wang"]}, "hub.staff"),
    ({"staff": {"wang": "王老师", "WANG": "李老师"}}, "hub.staff"),
    ({"repository": "http://example.edu/release.git"}, "repository"),
    ({"repository": "ftp://example.edu/release.git"}, "repository"),
    ({"branch": "a..b"}, "hub.branch"),
    ({"folder": "../outside"}, "hub.folder"),
    ({"hub_url": "https://hub.example.edu"}, "hub_url"),
])
def test_a_bad_hub_section_is_refused_naming_the_key(section, named):
    with pytest.raises(PolicyError) as refused:
        parse_policy({"assignments": {"ps1_threshold_metrics": {}}, "hub": section}, KNOWN)
    assert named in str(refused.value) and "course.yml" in str(refused.value)


def test_the_site_file_names_the_hub_and_keeps_its_token_private(tmp_path):
    token = tmp_path / "jupyterhub.token"
    token.write_text("t" * 40 + "\n")
    token.chmod(0o600)
    site = hub.parse_site({"url": "https://hub.example.edu/", "service": "grader", "token_file": "jupyterhub.token"}, tmp_path, {})
    assert (site.url, site.api_url, site.client_id, site.scope, site.token) == (
        "https://hub.example.edu", "https://hub.example.edu/hub/api", "service-grader", "access:services!service=grader", "t" * 40)
    assert site.authorize_url == "https://hub.example.edu/hub/api/oauth2/authorize"
    inner = hub.parse_site({"url": "https://hub.example.edu", "api_url": "http://10.0.0.5:8081/hub/api", "service": "grader"},
                           tmp_path, {"JUPYTERHUB_API_TOKEN": "e" * 32})
    assert (inner.token_url, inner.token) == ("http://10.0.0.5:8081/hub/api/oauth2/token", "e" * 32)
    token.chmod(0o644)
    with pytest.raises(hub.HubSettingError, match="chmod 600"):
        hub.parse_site({"url": "https://hub.example.edu", "service": "grader", "token_file": str(token)}, tmp_path, {})
    with pytest.raises(hub.HubSettingError, match="api_token"):
        hub.parse_site({"url": "https://hub.example.edu", "service": "grader"}, tmp_path, {})
    with pytest.raises(hub.HubSettingError, match="url"):
        hub.parse_site({"url": "http://hub.example.edu", "service": "grader"}, tmp_path, {"JUPYTERHUB_API_TOKEN": "e" * 32})
    assert hub.load_site(tmp_path / "nothing-here") is None


# ---- who a hub user is in a course


@pytest.fixture
def course_db(tmp_path):
    db = Database(f"sqlite:///{tmp_path / 'gradebook.db'}")
    prepare(db, "course")
    import_students(db, [Student("S001", "张三", "zhang@example.edu"), Student("s002", "李四", "Li.Si@Example.edu"),
                         Student("s003", "王五", "same@example.edu"), Student("s004", "赵六", "same@example.edu")])
    staff_code(db, "王老师", Role.INSTRUCTOR)
    staff_code(db, "戴助教", Role.TA)
    yield db
    db.dispose()


def test_a_hub_user_is_the_student_whose_id_or_email_is_the_username(course_db):
    by_id = hub.HubCourse()
    assert hub.account_for(course_db, by_id, "s001", "课程").login == "S001"  # hubs lower-case their usernames
    by_email = hub.HubCourse(match="email")
    found = hub.account_for(course_db, by_email, "li.si@example.edu", "课程")
    assert (found.login, found.role) == ("s002", "student")
    with pytest.raises(hub.NotOnRoster, match="两名学生"):  # two students with one e-mail: refused, never guessed
        hub.account_for(course_db, by_email, "same@example.edu", "课程")
    with pytest.raises(hub.NotOnRoster) as refused:
        hub.account_for(course_db, by_id, "mallory", "评价二分类模型")
    assert "mallory" in refused.value.message and "评价二分类模型" in refused.value.message and "名单" in refused.value.message


def test_staff_come_from_the_course_accounts_the_course_names_never_from_the_hub(course_db):
    setting = hub.HubCourse(staff=(("dave", "戴助教"), ("wang", "王老师")))
    assert hub.account_for(course_db, setting, "wang", "课程").role == Role.INSTRUCTOR
    assert hub.account_for(course_db, setting, "Dave", "课程").role == Role.TA
    # a student id that happens to equal a staff member's name is still only a student
    assert hub.account_for(course_db, hub.HubCourse(), "s002", "课程").role == Role.STUDENT
    with pytest.raises(hub.NotOnRoster, match="没有这个账号"):
        hub.account_for(course_db, hub.HubCourse(staff=(("zhou", "周老师"),)), "zhou", "课程")


# ---- which assignment a notebook is, in which course


def _released(name: str) -> bytes:
    return (REPO / "exercises" / name / f"{A[name].notebook}.ipynb").read_bytes()


def test_a_notebook_goes_to_the_assignment_its_cells_are_in_each_course_of_the_student():
    account = hub.Account(1, "student", "alice", "", "x")
    courses = [hub.Enrolment("bin", account, _rules("ps1_threshold_metrics")),
               hub.Enrolment("lab", account, _rules("ps1_threshold_metrics", "ps2_roc_auc"))]
    ps1, ps2 = read_notebook(_released("ps1_threshold_metrics")), read_notebook(_released("ps2_roc_auc"))
    assert [(t.course_id, t.assignment) for t in hub.targets(ps1, courses)] == [("bin", "ps1_threshold_metrics"),
                                                                                ("lab", "ps1_threshold_metrics")]
    assert [(t.course_id, t.assignment) for t in hub.targets(ps1, courses, "lab")] == [("lab", "ps1_threshold_metrics")]
    assert [(t.course_id, t.assignment) for t in hub.targets(ps2, courses)] == [("lab", "ps2_roc_auc")]
    # metadata a student can edit names nothing: a ps2 notebook that says it is ps1 is still ps2
    nb = json.loads(_released("ps2_roc_auc"))
    nb["metadata"]["nbgrader"] = {"assignment": "ps1_threshold_metrics"}
    nb["metadata"]["otter"] = {"assignment_name": "ps1_threshold_metrics"}
    forged = read_notebook(json.dumps(nb).encode())
    assert [(t.course_id, t.assignment) for t in hub.targets(forged, courses)] == [("lab", "ps2_roc_auc")]


# ---- links


def test_the_nbgitpuller_link_pulls_the_course_repository_into_the_course_folder_and_opens_the_notebook():
    setting = hub.HubCourse(repository="https://example.edu/release.git", branch="fall", folder="exercises")
    link = hub.pull_link("https://hub.example.edu", setting, "bin-2026", "ps1_threshold_metrics", "threshold_metrics")
    parts = urlsplit(link)
    assert f"{parts.scheme}://{parts.netloc}{parts.path}" == "https://hub.example.edu/hub/user-redirect/git-pull"
    assert {k: v[0] for k, v in parse_qs(parts.query).items()} == {
        "repo": "https://example.edu/release.git", "branch": "fall", "targetpath": "bin-2026",
        "urlpath": "lab/tree/bin-2026/exercises/ps1_threshold_metrics/threshold_metrics.ipynb"}
    assert hub.pull_link("https://hub.example.edu", hub.HubCourse(), "bin-2026", "ps1_threshold_metrics", "x") is None


def test_deep_link_choices_are_offered_only_where_the_platform_takes_plain_links():
    setting = hub.HubCourse(repository="https://example.edu/release.git")
    assignments = {"ps1_threshold_metrics": ("阈值与指标", "threshold_metrics")}
    offered = hub.deep_link_choices("https://hub.example.edu", setting, "bin", assignments, ["ltiResourceLink", "link"])
    assert [(c["value"], c["title"]) for c in offered] == [("hub:ps1_threshold_metrics", "阈值与指标")]
    assert offered[0]["url"].startswith("https://hub.example.edu/hub/user-redirect/git-pull?")
    assert hub.deep_link_choices("https://hub.example.edu", setting, "bin", assignments, ["ltiResourceLink"]) == []
    assert hub.deep_link_choices(None, setting, "bin", assignments, None) == []
    assert hub.deep_link_choices("https://hub.example.edu", None, "bin", assignments, None) == []


def test_a_hub_out_of_reach_is_a_refusal_to_retry_not_a_crash():
    from autograder.commands.hub_demo import free_port
    from autograder.service.web.hub import Hub, HubUnreachable

    closed = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    hub_client = Hub(hub.HubSite(closed, closed + "/hub/api", "grader", "t" * 32))
    with pytest.raises(HubUnreachable) as refused:
        hub_client.user("some-token")
    assert refused.value.retry_after == 30 and "JupyterHub" in refused.value.message


# ---- signed values


def test_signed_values_come_back_only_unchanged_for_their_purpose_and_in_time():
    secret = os.urandom(32)
    value = hub.sign(secret, "oauth", {"s": "state"}, 60, now=1000.0)
    assert hub.unsign(secret, "oauth", value, now=1030.0)["s"] == "state"
    assert hub.unsign(secret, "oauth", value, now=1061.0) is None  # expired
    assert hub.unsign(secret, "status", value, now=1030.0) is None  # another purpose
    assert hub.unsign(os.urandom(32), "oauth", value, now=1030.0) is None  # another site's secret
    body, mac = value.split(".")
    assert hub.unsign(secret, "oauth", body[:-2] + "xx." + mac, now=1030.0) is None
    assert hub.unsign(secret, "oauth", None) is None and hub.unsign(secret, "oauth", "a.b.c") is None


# ---- a site without a hub, a course without hub:


def test_without_a_hub_nothing_of_it_is_offered_or_answered(tmp_path):
    from tests.service.inprocess import Site, TestClient

    site = Site(tmp_path, {"assignments": {"ps1_threshold_metrics": {}}, "hub": {}}, ["s001"], 1.8e9)
    root = TestClient(site.app, base_url="http://testserver")
    assert "JupyterHub" not in root.get("/c/default/login").text  # the course takes hub users, the site has no hub
    assert root.get("/jupyterhub/login", params={"course": "default"}).status_code == 404
    refused = root.post("/jupyterhub/api/submissions", headers={"Authorization": "Bearer " + "x" * 20})
    assert refused.status_code == 404 and refused.json() == {"error": "本服务没有接入 JupyterHub", "reason": "refused"}
    client, _ = site.signed_in("s001")
    assert client.get("/jupyterhub/").status_code == 404
    assert "在 JupyterHub 中打开作业" not in client.get("/").text
