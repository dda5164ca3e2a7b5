"""A real JupyterHub beside a real ``autograder serve``, on loopback, for the modules of this folder.

The hub (:class:`autograder.commands.hub_demo.LocalHub`) runs the documented ``deploy/jupyterhub/jupyterhub_config.py``
with the dummy authenticator and the simple local spawner; the service has two courses that take hub users:

* ``bin-hub``: students ``alice``, ``bob``, ``carol``, ``dave``, ``frank``, ``gina``; instructor 王老师 (hub user ``wang``); its notebooks come from a
  git repository made here (nbgitpuller pulls it into each student's home);
* ``lab-hub``: students ``alice`` and ``erin``; teaching assistant 戴助教 (hub user ``dave``, a student of ``bin-hub``).

``mallory`` is a hub user on no roster.  The service's public address is ``localhost``, the hub's ``127.0.0.1``:
two sites, as a real deployment's hub and service are two origins.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from autograder.commands.hub_demo import LocalHub, release_repository
from tests.service.server import Server, make_course, run

REPO = Path(__file__).resolve().parents[3]
ASSIGNMENT, NOTEBOOK = "ps1_threshold_metrics", "threshold_metrics.ipynb"


@dataclass
class HubSite:
    server: Server
    hub: LocalHub
    data: Path

    @property
    def service_url(self) -> str:
        """The service's public address (``localhost``)."""
        return f"http://localhost:{self.server.port}"

    def token(self, user: str, scopes: list[str] | None = None, expires_in: int | None = None) -> str:
        """A new API token of hub user ``user`` (made through the hub's API, as a user makes one on /hub/token)."""
        body = {"scopes": scopes if scopes is not None else ["access:services!service=grader"], "note": "test"}
        if expires_in is not None:
            body["expires_in"] = expires_in
        with self.hub.api() as api:
            api.post("users", json={"usernames": [user]})  # 409 when it exists: fine
            answer = api.post(f"users/{user}/tokens", json=body)
        assert answer.status_code == 201, answer.text
        return answer.json()["token"]

    def hub_session(self, user: str) -> httpx.Client:
        """A client signed in to the hub as ``user`` (its login form, like a browser), following redirects."""
        client = httpx.Client(timeout=60, follow_redirects=True)
        page = client.get(f"{self.hub.url}/hub/login")
        xsrf = re.search(r'name="_xsrf" value="([^"]+)"', page.text)
        form = {"username": user, "password": self.hub.password, **({"_xsrf": xsrf.group(1)} if xsrf else {})}
        answer = client.post(f"{self.hub.url}/hub/login", data=form)
        assert answer.status_code == 200 and client.cookies.get("jupyterhub-hub-login"), answer.text[-500:]
        return client


@pytest.fixture(scope="session")
def hub_site(tmp_path_factory) -> HubSite:
    root = tmp_path_factory.mktemp("hub-site")
    data = root / "data"
    repository = release_repository(root / "release", [ASSIGNMENT, "ps2_roc_auc"])
    ps1 = {ASSIGNMENT: {"feedback_before_deadline": "full"}}
    make_course(data, ["alice", "bob", "carol", "dave", "frank", "gina"], cli="bin-hub", config={
        "assignments": ps1, "hub": {"staff": {"wang": "王老师"}, "repository": repository}})
    make_course(data, ["alice", "erin"], cli="lab-hub", config={
        "assignments": {**ps1, "ps2_roc_auc": {}}, "hub": {"staff": {"dave": "戴助教"}, "repository": repository}})
    run("roster", "instructor", "戴助教", "--role", "ta", "--course", "lab-hub", "--data", str(data))
    server = Server(data, public_host="localhost", course="bin-hub")
    hub = LocalHub(root / "hub", f"http://localhost:{server.port}")
    hub.register(data)
    server.start()
    hub.start()
    yield HubSite(server, hub, data)
    hub.stop()
    server.stop()
