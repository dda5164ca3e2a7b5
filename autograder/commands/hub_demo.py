"""A JupyterHub on this machine, beside the grading service: for ``make serve HUB=1`` and the tests.

It runs the documented configuration (``deploy/jupyterhub/jupyterhub_config.py``) with what a trial on one machine
changes: loopback ports, the dummy authenticator (any password of the trial), the simple local spawner (each user's
server is a ``jupyterhub-singleuser`` of this environment, home folders under the hub's folder, ``--allow-root``
since the tests run as root), ``configurable-http-proxy`` from ``deploy/jupyterhub/node_modules``, and one more
service, ``hub-admin``, whose token lets a test or the demo manage users and tokens.  :meth:`LocalHub.register`
writes the grading service's side: ``DATA/jupyterhub.yml`` and its token file.
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import yaml

REPO = Path(__file__).resolve().parents[2]
CONFIG = REPO / "deploy" / "jupyterhub" / "jupyterhub_config.py"
PROXY = REPO / "deploy" / "jupyterhub" / "node_modules" / ".bin" / "configurable-http-proxy"
BIN = Path(sys.executable).parent
SERVICE = "grader"
ADMIN_SCOPES = ["admin:users", "admin:servers", "admin:groups", "tokens", "access:servers", "read:users"]


class HubNotReady(RuntimeError):
    """The local hub could not be started (message names the log)."""


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


LOCAL = '''
c = get_config()  # noqa: F821
load_subconfig({config!r})  # noqa: F821 - the documented configuration, then what a trial on one machine changes
c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = {port}
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = {hub_port}
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{proxy_port}"
c.ConfigurableHTTPProxy.command = [{proxy!r}]
c.JupyterHub.db_url = "sqlite:///{folder}/jupyterhub.sqlite"
c.JupyterHub.cookie_secret_file = "{folder}/jupyterhub_cookie_secret"
c.JupyterHub.pid_file = "{folder}/jupyterhub.pid"
c.JupyterHub.authenticator_class = "dummy"
c.Authenticator.allow_all = True
c.DummyAuthenticator.password = {password!r}
c.JupyterHub.spawner_class = "simple"
c.SimpleLocalProcessSpawner.home_dir_template = "{folder}/home/{{username}}"
c.Spawner.cmd = [{singleuser!r}]
c.Spawner.args = ["--allow-root", "--LabApp.user_settings_dir={folder}/lab-user-settings"]
c.Spawner.default_url = "/lab"
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 120
c.JupyterHub.services.append({{"name": "hub-admin", "api_token": {admin_token!r}}})
c.JupyterHub.load_roles.append({{"name": "hub-admin", "scopes": {admin_scopes!r}, "services": ["hub-admin"]}})
{extra}
'''


@dataclass
class LocalHub:
    """``jupyterhub`` on ``127.0.0.1:port`` with its data in ``folder``; the grading service at ``grader_url``."""

    folder: Path
    grader_url: str
    port: int = field(default_factory=free_port)
    password: str = field(default_factory=lambda: secrets.token_urlsafe(12))
    token: str = field(default_factory=lambda: secrets.token_hex(32))  # the grading service's api_token
    admin_token: str = field(default_factory=lambda: secrets.token_hex(32))
    extra: str = ""  # more configuration lines (e.g. ``c.JupyterHub.oauth_token_expires_in = 30``)
    proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def log(self) -> Path:
        return self.folder / "jupyterhub.log"

    def register(self, data: Path) -> None:
        """The grading service's side: ``DATA/jupyterhub.yml`` and ``DATA/jupyterhub.token`` (mode 0600)."""
        token = data / "jupyterhub.token"
        token.write_text(self.token + "\n", encoding="utf-8")
        token.chmod(0o600)
        (data / "jupyterhub.yml").write_text(yaml.safe_dump({"url": self.url, "service": SERVICE,
                                                             "token_file": "jupyterhub.token"}), encoding="utf-8")

    def start(self, timeout: float = 120) -> "LocalHub":
        if not PROXY.exists():
            raise HubNotReady(f"没有 {PROXY}：先运行 make setup（安装 configurable-http-proxy）")
        self.folder.mkdir(parents=True, exist_ok=True)
        (self.folder / "home").mkdir(exist_ok=True)
        quiet = self.folder / "lab-user-settings" / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
        quiet.parent.mkdir(parents=True, exist_ok=True)
        quiet.write_text('{"fetchNews": "false"}\n', encoding="utf-8")  # no "get notified about Jupyter news?" toast
        config = self.folder / "jupyterhub_config.py"
        config.write_text(LOCAL.format(config=str(CONFIG), port=self.port, hub_port=free_port(), proxy_port=free_port(),
                                       proxy=str(PROXY), folder=self.folder, password=self.password,
                                       singleuser=str(BIN / "jupyterhub-singleuser"), admin_token=self.admin_token,
                                       admin_scopes=ADMIN_SCOPES, extra=self.extra), encoding="utf-8")
        env = {**os.environ, "GRADER_URL": self.grader_url, "GRADER_HUB_TOKEN": self.token,
               "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
        self.proc = subprocess.Popen([str(BIN / "jupyterhub"), "-f", str(config)], cwd=self.folder, env=env,
                                     stdout=subprocess.DEVNULL, stderr=self.log.open("a"), start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise HubNotReady(f"jupyterhub 退出了（{self.proc.returncode}）：{self.log.read_text()[-3000:]}")
            try:
                if httpx.get(f"{self.url}/hub/api/", timeout=2).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.3)
        self.stop()
        raise HubNotReady(f"jupyterhub 没有在 {timeout} 秒内启动：{self.log.read_text()[-3000:]}")

    def stop(self) -> None:
        """Stop the hub, its proxy and the users' servers (one process group)."""
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=30)

    def restart(self, extra: str = "") -> "LocalHub":
        """Stop and start again with ``extra`` configuration (the users' servers stop with the hub; data stays)."""
        self.stop()
        self.extra = extra
        return self.start()

    def api(self) -> httpx.Client:
        """A client of the hub's REST API with the ``hub-admin`` service's token."""
        return httpx.Client(base_url=f"{self.url}/hub/api/", headers={"Authorization": f"Bearer {self.admin_token}"},
                            timeout=60)

    def wipe(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


def release_repository(folder: Path, assignments: list[str]) -> str:
    """A git repository of the released notebooks (``exercises/<assignment>/``), as an instructor publishes them for
    nbgitpuller; its ``file://`` address (a hub on the same machine clones it)."""
    for name in assignments:
        shutil.copytree(REPO / "exercises" / name, folder / "exercises" / name)
    git = ["git", "-c", "user.name=课程", "-c", "user.email=course@example.test", "-C", str(folder)]
    subprocess.run(["git", "init", "-q", "-b", "main", str(folder)], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "作业发布"], check=True)
    return f"file://{folder}"
