"""The server side of 提交 in JupyterLab: four small handlers under ``<server>/autograder/``.

=======  ============================  ====================================================================
GET      /autograder/config             whether 提交 is available here (a grading service is configured)
POST     /autograder/submit             ``{"path", "course"?}``: the saved notebook at ``path`` goes to the service
GET      /autograder/status?course&id&t  a submission's status (the service's ticket ``t`` of the upload)
POST     /autograder/relogin            forget this server's hub login, so the next page load signs in again
=======  ============================  ====================================================================

The notebook is read from disk through the server's contents manager (JupyterLab saves it first) and sent with the
token of the person's JupyterHub session with this server: the service asks the hub whose token it is, so the
submission is the hub user's and nobody else's, and the token never reaches the page's JavaScript.  Nothing here
says which course or assignment the notebook is: the service decides that from its records and the file.  A
refusal of the token (expired, revoked) is the service's ``"reason": "token"``; the notebook stays where it is.
"""

from __future__ import annotations

import json
import os
import secrets
from urllib.parse import urlencode, urlsplit

from jupyter_server.base.handlers import APIHandler
from jupyter_server.utils import ensure_async, url_path_join
from tornado import web
from tornado.escape import url_escape
from tornado.httpclient import AsyncHTTPClient, HTTPClientError, HTTPRequest

MAX_BYTES = 20 << 20  # the service's largest notebook (autograder.model.MAX_NOTEBOOK_BYTES)
TIMEOUT = 120.0


def service_url(environ=os.environ) -> str:
    """The grading service's public address (``AUTOGRADER_URL``, set by the hub's ``c.Spawner.environment``); "" if unset."""
    url = environ.get("AUTOGRADER_URL", "").strip().rstrip("/")
    parts = urlsplit(url)
    return url if parts.scheme in ("http", "https") and parts.hostname else ""


def multipart(fields: dict[str, str], filename: str, data: bytes) -> tuple[bytes, str]:
    """A ``multipart/form-data`` body with the text ``fields`` and the file ``notebook``; its content type."""
    boundary = "autograder-" + secrets.token_hex(16)
    out = []
    for name, value in fields.items():
        out.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode())
    quoted = filename.replace("\\", "\\\\").replace('"', '\\"')
    out.append(f'--{boundary}\r\nContent-Disposition: form-data; name="notebook"; filename="{quoted}"\r\n'
               f"Content-Type: application/x-ipynb+json\r\n\r\n".encode("utf-8") + data + b"\r\n")
    out.append(f"--{boundary}--\r\n".encode())
    return b"".join(out), f"multipart/form-data; boundary={boundary}"


class Base(APIHandler):
    @property
    def url(self) -> str:
        return self.settings["autograder_url"]

    def answer(self, status: int, data: dict) -> None:
        self.set_status(status)
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps(data, ensure_ascii=False))

    def hub_token(self) -> str | None:
        """The token of this request's JupyterHub session (None when this server is not a hub's)."""
        hub_auth = getattr(self.identity_provider, "hub_auth", None)
        return hub_auth.get_token(self) if hub_auth is not None else None

    async def forward(self, request: HTTPRequest) -> None:
        """The service's answer, passed on as it is (its JSON), or a refusal saying the service is out of reach."""
        try:
            response = await AsyncHTTPClient().fetch(request, raise_error=False)
        except (OSError, HTTPClientError) as exc:
            self.answer(502, {"error": f"无法连接评分服务（{self.url}）：{exc}。笔记本已保存，请稍后再试", "reason": "unreachable"})
            return
        try:
            data = json.loads(response.body or b"{}")
        except ValueError:
            data = {"error": f"评分服务的回答无法读取（HTTP {response.code}）", "reason": "refused"}
        self.answer(response.code, data if isinstance(data, dict) else {"error": "评分服务的回答无法读取", "reason": "refused"})


class Config(Base):
    @web.authenticated
    def get(self) -> None:
        self.answer(200, {"enabled": bool(self.url), "url": self.url})


class Submit(Base):
    @web.authenticated
    async def post(self) -> None:
        if not self.url:
            self.answer(404, {"error": "这个 JupyterLab 没有配置评分服务（AUTOGRADER_URL）", "reason": "refused"})
            return
        try:
            asked = json.loads(self.request.body or b"{}")
        except ValueError:
            asked = None
        path = asked.get("path") if isinstance(asked, dict) else None
        course = asked.get("course") if isinstance(asked, dict) else None
        if not isinstance(path, str) or not path.endswith(".ipynb") or (course is not None and not isinstance(course, str)):
            self.answer(400, {"error": "请在打开的笔记本（.ipynb）中点“提交”", "reason": "refused"})
            return
        token = self.hub_token()
        if not token:
            self.answer(401, {"error": "这个 JupyterLab 不是通过 JupyterHub 登录的，无法以你的身份提交", "reason": "token"})
            return
        model = await ensure_async(self.contents_manager.get(path, content=True, type="file", format="text"))
        data = model["content"].encode("utf-8")
        if len(data) > MAX_BYTES:
            self.answer(413, {"error": f"笔记本超过 {MAX_BYTES >> 20} MiB：请先清除输出（编辑 → 清除所有输出）、保存后再提交",
                              "reason": "refused"})
            return
        body, kind = multipart({"course": course} if course else {}, path.rsplit("/", 1)[-1], data)
        await self.forward(HTTPRequest(f"{self.url}/jupyterhub/api/submissions", method="POST", body=body,
                                       headers={"Content-Type": kind, "Authorization": f"Bearer {token}"},
                                       request_timeout=TIMEOUT))


class Status(Base):
    @web.authenticated
    async def get(self) -> None:
        course, sid, ticket = (self.get_query_argument(k, "") for k in ("course", "id", "t"))
        if not self.url or not (course and sid and ticket):
            self.answer(400, {"error": "缺少提交的编号", "reason": "refused"})
            return
        path = f"/jupyterhub/api/submissions/{url_escape(course, plus=False)}/{url_escape(sid, plus=False)}"
        await self.forward(HTTPRequest(f"{self.url}{path}?{urlencode({'t': ticket})}", request_timeout=30.0))


class Relogin(Base):
    @web.authenticated
    def post(self) -> None:
        """Drop the cookie holding this server's hub token: the next page load goes through the hub's sign-in."""
        hub_auth = getattr(self.identity_provider, "hub_auth", None)
        if hub_auth is not None:
            name = hub_auth.cookie_name
            self.clear_cookie(name, **({"path": "/", "secure": True} if name.startswith("__Host-") else {"path": hub_auth.cookie_path}))
        self.answer(200, {"reload": True})


def setup_handlers(web_app) -> None:
    web_app.settings["autograder_url"] = service_url()
    base = url_path_join(web_app.settings["base_url"], "autograder")
    web_app.add_handlers(".*$", [(url_path_join(base, "config"), Config), (url_path_join(base, "submit"), Submit),
                                 (url_path_join(base, "status"), Status), (url_path_join(base, "relogin"), Relogin)])
