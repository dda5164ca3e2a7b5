"""A small fake LTI 1.3 platform (an "LMS") for the tests and for trying the tool out with ``make serve``.

A real HTTP server on loopback with its own RSA keys; never meant for real courses.

It plays the LMS's parts: the key set (``/jwks``, rotatable), the OIDC authorization endpoint (``/auth``: it
answers with a form that posts the signed ``id_token`` and the ``state`` to the tool, like Canvas and Moodle
do), the OAuth 2 token endpoint (``/token``: it VERIFIES the tool's client assertion against the tool's key
set), AGS line items and scores, NRPS memberships with ``Link`` paging, a course page that opens the tool in
an iframe or top-level, and the deep-linking return endpoint (it verifies the tool's signed response).
Launch payloads are shaped like Canvas's and Moodle's (claims, custom fields, role URIs).

``mode`` switches the AGS/NRPS/token endpoints to ``"down"`` (503) or ``"busy"`` (429 with Retry-After).
Its front page (``/``) lists the people and opens the tool as each of them, in a new window or in a frame, and
shows the gradebook (the scores the tool posted).
"""

from __future__ import annotations

import html
import json
import secrets
import socket
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

import httpx
import jwt
import uvicorn
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

LTI = "https://purl.imsglobal.org/spec/lti/claim/"
LIS = "http://purl.imsglobal.org/vocab/lis/v2/"
LEARNER = [LIS + "institution/person#Student", LIS + "membership#Learner", LIS + "system/person#User"]
INSTRUCTOR = [LIS + "institution/person#Instructor", LIS + "membership#Instructor", LIS + "system/person#User"]
TEACHING_ASSISTANT = [LIS + "membership#Instructor", LIS + "membership/Instructor#TeachingAssistant", LIS + "system/person#User"]


def role_name(roles: list[str]) -> str:
    """How the fake LMS's pages name a person's part in a context."""
    if any(r.endswith("#TeachingAssistant") for r in roles):
        return "助教"
    return "教师" if any(r.endswith("membership#Instructor") for r in roles) else "学生"


def item_id(lineitem: dict) -> str:
    """The path part a score POST of ``lineitem`` carries (its ``{item}``)."""
    return str(lineitem.get("id", "")).split("/line_items/", 1)[-1].split("?", 1)[0]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def new_key() -> tuple[str, bytes, dict]:
    private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    kid = "plat-" + secrets.token_hex(4)
    jwk = {**json.loads(RSAAlgorithm.to_jwk(private.public_key())), "kid": kid, "alg": "RS256", "use": "sig"}
    return kid, pem, jwk


@dataclass
class User:
    sub: str
    name: str
    email: str
    roles: list[str]
    sourcedid: str = ""
    given: str = ""
    family: str = ""


@dataclass
class FakePlatform:
    host: str = "127.0.0.1"
    flavour: str = "canvas"  # "canvas" | "moodle": the shape of the launch payloads
    client_id: str = "10000000000042"
    deployment_id: str = "42:8865aa05b4b79b64a91a86042e43af5ea8ae79eb"
    port: int = field(default_factory=free_port)
    tool: str = ""  # the tool's base URL (set by the test)
    mode: str = "up"
    page_size: int = 2
    users: dict[str, User] = field(default_factory=dict)
    contexts: dict[str, str] = field(default_factory=dict)  # id -> title
    lineitems: dict[str, list[dict]] = field(default_factory=dict)  # context -> line items
    scores: list[dict] = field(default_factory=list)  # every score POST received (with "lineitem")
    members: dict[str, list[dict]] = field(default_factory=dict)
    tokens: dict[str, float] = field(default_factory=dict)
    assertions: list[dict] = field(default_factory=list)  # verified client assertions
    deep_link_responses: list[dict] = field(default_factory=list)
    accept_types: list[str] = field(default_factory=lambda: ["ltiResourceLink"])  # of a deep-linking request
    refused_requests: int = 0
    custom: dict[str, dict] = field(default_factory=dict)  # resource link id -> custom parameters
    enrolments: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # context -> {user: roles there}
    links: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # context -> its resource links (id, title)
    deep_link_data: Any = None  # the deep-linking request's ``data`` (None: an opaque string, as Canvas sends)
    audience: str | None = None  # the aud it requires in client assertions (Brightspace: not the token URL)
    tool_jwks: Any = None  # in-process tests: a callable giving the tool's key set (else fetched from the tool)

    def __post_init__(self) -> None:
        self.base = f"http://{self.host}:{self.port}"
        self.issuer = self.base
        kid, pem, jwk = new_key()
        self.keys = [(kid, pem, jwk)]
        self._server: uvicorn.Server | None = None

    # ---- registration values

    @property
    def auth_url(self) -> str:
        return self.base + "/auth"

    @property
    def token_url(self) -> str:
        return self.base + "/token"

    @property
    def jwks_url(self) -> str:
        return self.base + "/jwks"

    def registration(self) -> dict[str, Any]:
        return dict(name=f"假平台 {self.flavour}", issuer=self.issuer, client_id=self.client_id, deployments=[self.deployment_id],
                    auth_login_url=self.auth_url, auth_token_url=self.token_url, jwks_url=self.jwks_url, auth_audience=self.audience)

    def cli_args(self) -> list[str]:
        return ["--name", f"假平台 {self.flavour}", "--issuer", self.issuer, "--client-id", self.client_id,
                "--deployment-id", self.deployment_id, "--auth-login-url", self.auth_url, "--auth-token-url", self.token_url,
                "--jwks-url", self.jwks_url]

    def rotate(self) -> str:
        kid, pem, jwk = new_key()
        self.keys.append((kid, pem, jwk))
        return kid

    # ---- tokens

    def sign(self, claims: dict, kid: str | None = None, pem: bytes | None = None) -> str:
        k = self.keys[-1] if kid is None else next(k for k in self.keys if k[0] == kid)
        return jwt.encode(claims, pem or k[1], algorithm="RS256", headers={"kid": kid or k[0]})

    def roles_in(self, hint: str, context: str) -> list[str]:
        """The roles of user ``hint`` in ``context`` (its enrolment there, else the user's own)."""
        return self.enrolments.get(context, {}).get(hint, self.users[hint].roles)

    def claims(self, user: User, nonce: str, *, context: str = "course-1", link: str = "link-1", custom: dict | None = None,
               message_type: str = "LtiResourceLinkRequest", now: float | None = None, lineitem: str | None = None,
               roles: list[str] | None = None) -> dict:
        """An id_token payload shaped like the flavour's real launches (``roles``: the user's own by default)."""
        now = int(now or time.time())
        custom = dict(self.custom.get(link, {}) if custom is None else custom)
        ctx_url = f"{self.base}/api/lti/courses/{context}"
        c: dict[str, Any] = {
            "iss": self.issuer, "aud": self.client_id, "azp": self.client_id, "sub": user.sub, "exp": now + 300, "iat": now,
            "nonce": nonce, LTI + "message_type": message_type, LTI + "version": "1.3.0",
            LTI + "deployment_id": self.deployment_id, LTI + "target_link_uri": self.tool + "/lti/launch",
            LTI + "roles": user.roles if roles is None else roles,
            LTI + "context": {"id": context, "label": "BIN101", "title": self.contexts.get(context, "评价二分类模型"),
                              "type": ["http://purl.imsglobal.org/vocab/lis/v2/course#CourseOffering"]},
            LTI + "custom": custom, "name": user.name, "email": user.email, "given_name": user.given, "family_name": user.family,
            "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint": {
                "scope": ["https://purl.imsglobal.org/spec/lti-ags/scope/lineitem",
                          "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem.readonly",
                          "https://purl.imsglobal.org/spec/lti-ags/scope/result.readonly",
                          "https://purl.imsglobal.org/spec/lti-ags/scope/score"],
                "lineitems": f"{ctx_url}/line_items"},
            "https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice": {
                "context_memberships_url": f"{ctx_url}/names_and_roles", "service_versions": ["2.0"]},
        }
        if lineitem:
            c["https://purl.imsglobal.org/spec/lti-ags/claim/endpoint"]["lineitem"] = lineitem
        if message_type == "LtiResourceLinkRequest":
            c[LTI + "resource_link"] = {"id": link, "title": "作业", "description": None}
        else:
            c["https://purl.imsglobal.org/spec/lti-dl/claim/deep_linking_settings"] = {
                "deep_link_return_url": f"{self.base}/deep_linking_return/{context}", "accept_types": self.accept_types,
                "accept_presentation_document_targets": ["iframe", "window"], "accept_multiple": False,
                "data": "opaque-" + secrets.token_hex(4) if self.deep_link_data is None else self.deep_link_data}
        if self.flavour == "canvas":
            c[LTI + "lis"] = {"person_sourcedid": user.sourcedid, "course_offering_sourcedid": "BIN101-2026"}
            c[LTI + "tool_platform"] = {"guid": "canvas-guid:42", "name": "假 Canvas", "version": "cloud",
                                        "product_family_code": "canvas"}
            c[LTI + "launch_presentation"] = {"document_target": "iframe", "return_url": f"{self.base}/courses/{context}/external_content/success",
                                              "locale": "zh-Hans"}
            c["https://www.instructure.com/placement"] = "assignment_selection"
            c[LTI + "lti11_legacy_user_id"] = secrets.token_hex(20)
            c["errors"] = {"errors": {}}
            c["locale"] = "zh-Hans"
        else:  # Moodle
            c[LTI + "lis"] = {"person_sourcedid": user.sourcedid, "course_section_sourcedid": ""}
            c[LTI + "tool_platform"] = {"product_family_code": "moodle", "version": "2024100700", "guid": self.host,
                                        "name": "假 Moodle", "description": "Moodle"}
            c[LTI + "launch_presentation"] = {"locale": "zh_cn", "document_target": "iframe",
                                              "return_url": f"{self.base}/mod/lti/return.php?course={context}"}
            c[LTI + "ext"] = {"user_username": user.sourcedid or user.sub, "lms": "moodle-2"}
            c.pop("azp", None)  # Moodle sends aud only
        return c

    # ---- the server

    def _authorized(self, request: Request) -> bool:
        header = request.headers.get("authorization", "")
        token = header.removeprefix("Bearer ")
        return token in self.tokens and self.tokens[token] > time.time()

    def _trouble(self) -> Response | None:
        if self.mode == "down":
            return JSONResponse({"error": "maintenance"}, status_code=503)
        if self.mode == "busy":
            return JSONResponse({"error": "rate limited"}, status_code=429, headers={"Retry-After": "1"})
        return None

    def _gate(self, request: Request) -> Response | None:
        """503/429 in those modes, 401 without a valid access token; None: go ahead."""
        trouble = self._trouble()
        if trouble:
            return trouble
        if not self._authorized(request):
            return JSONResponse({"error": "unauthorized"}, status_code=401)
        return None

    def tool_key(self, kid: str) -> Any:
        keys = self.tool_jwks() if self.tool_jwks else httpx.get(self.tool + "/lti/jwks.json", timeout=10).json()
        return jwt.PyJWKSet.from_dict(keys)[kid]

    def app(self) -> Starlette:
        async def jwks(request: Request) -> Response:
            return JSONResponse({"keys": [k[2] for k in self.keys]})

        async def auth(request: Request) -> Response:
            p = request.query_params
            user = self.users.get(p.get("login_hint", ""))
            ok = (p.get("client_id") == self.client_id and p.get("response_type") == "id_token" and p.get("scope") == "openid"
                  and p.get("response_mode") == "form_post" and p.get("redirect_uri") == self.tool + "/lti/launch"
                  and p.get("nonce") and p.get("state") and user is not None)
            if not ok:
                self.refused_requests += 1
                return HTMLResponse("<p>invalid authorization request</p>", status_code=400)
            hint = json.loads(p.get("lti_message_hint") or "{}")
            context = hint.get("context", "course-1")
            claims = self.claims(user, p["nonce"], context=context, link=hint.get("link", "link-1"),
                                 message_type=hint.get("type", "LtiResourceLinkRequest"), lineitem=hint.get("lineitem"),
                                 roles=self.roles_in(p.get("login_hint", ""), context))
            token = self.sign(claims)
            return HTMLResponse(
                f'<!DOCTYPE html><html><body><form method="post" action="{html.escape(p["redirect_uri"])}">'
                f'<input type="hidden" name="id_token" value="{html.escape(token)}">'
                f'<input type="hidden" name="state" value="{html.escape(p["state"])}">'
                '<noscript><button type="submit">continue</button></noscript></form>'
                '<script>document.forms[0].submit()</script></body></html>')

        async def token(request: Request) -> Response:
            trouble = self._trouble()
            if trouble:
                return trouble
            form = await request.form()
            assertion = str(form.get("client_assertion", ""))
            try:
                header = jwt.get_unverified_header(assertion)
                claims = jwt.decode(assertion, self.tool_key(header["kid"]), algorithms=["RS256"], audience=self.audience or self.token_url,
                                    issuer=self.client_id, options={"require": ["exp", "iat", "jti", "sub"]})
                assert claims["sub"] == self.client_id
                assert form.get("grant_type") == "client_credentials"
                assert form.get("client_assertion_type") == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
            except Exception:  # noqa: BLE001 (the fake platform refuses whatever does not verify)
                self.refused_requests += 1
                return JSONResponse({"error": "invalid_client"}, status_code=401)
            self.assertions.append(claims)
            value = secrets.token_urlsafe(16)
            self.tokens[value] = time.time() + 3600
            return JSONResponse({"access_token": value, "token_type": "Bearer", "expires_in": 3600, "scope": form.get("scope", "")})

        async def lineitems(request: Request) -> Response:
            refusal = self._gate(request)
            if refusal:
                return refusal
            ctx = request.path_params["ctx"]
            items = self.lineitems.setdefault(ctx, [])
            if request.method == "GET":
                rid = request.query_params.get("resource_id")
                return JSONResponse([li for li in items if rid is None or li.get("resourceId") == rid],
                                    media_type="application/vnd.ims.lis.v2.lineitemcontainer+json")
            body = await request.json()
            item = {**body, "id": f"{self.base}/api/lti/courses/{ctx}/line_items/{uuid.uuid4().hex[:8]}?v=1"}
            items.append(item)
            return JSONResponse(item, media_type="application/vnd.ims.lis.v2.lineitem+json")

        async def scores(request: Request) -> Response:
            refusal = self._gate(request)
            if refusal:
                return refusal
            if request.headers.get("content-type") != "application/vnd.ims.lis.v1.score+json":
                return JSONResponse({"error": "content type"}, status_code=415)
            ctx, item = request.path_params["ctx"], request.path_params["item"]
            self.scores.append({**(await request.json()), "context": ctx, "lineitem": item})
            return Response(status_code=204)

        async def memberships(request: Request) -> Response:
            refusal = self._gate(request)
            if refusal:
                return refusal
            ctx = request.path_params["ctx"]
            page = int(request.query_params.get("page", "1"))
            everyone = self.members.get(ctx) or self.enrolled_members(ctx)
            chunk = everyone[(page - 1) * self.page_size: page * self.page_size]
            headers = {}
            if page * self.page_size < len(everyone):
                headers["Link"] = f'<{self.base}/api/lti/courses/{ctx}/names_and_roles?page={page + 1}>; rel="next"'
            return JSONResponse({"id": str(request.url), "context": {"id": ctx}, "members": chunk}, headers=headers,
                                media_type="application/vnd.ims.lti-nrps.v2.membershipcontainer+json")

        async def course(request: Request) -> Response:
            ctx = request.path_params["ctx"]
            hint = request.query_params.get("user", "")

            def login_url(link: str, kind: str = "LtiResourceLinkRequest") -> str:
                message = json.dumps({"context": ctx, "link": link, "type": kind})
                return self.tool + "/lti/login?" + urlencode({"iss": self.issuer, "login_hint": hint, "target_link_uri": self.tool + "/lti/launch",
                                                               "lti_message_hint": message, "client_id": self.client_id,
                                                               "lti_deployment_id": self.deployment_id})

            title = html.escape(self.contexts.get(ctx, ctx))
            kind = request.query_params.get("type", "LtiResourceLinkRequest")
            login = login_url(request.query_params.get("link", "link-1"), kind)
            if request.query_params.get("frame") == "1":
                body = (f'<h1>假课程平台：{title}</h1>'
                        f'<iframe id="tool" src="{html.escape(login)}" style="width:100%;max-width:900px;height:600px"></iframe>')
            else:
                body = f'<h1>假课程平台：{title}</h1><a id="open" href="{html.escape(login)}">打开作业</a>'
            others = [(lid, t) for lid, t in self.links.get(ctx, []) if lid != request.query_params.get("link", "link-1")]
            if others and kind == "LtiResourceLinkRequest":
                body += "<h2>这门课的其他活动</h2><ul>" + "".join(
                    f'<li><a href="{html.escape(login_url(lid))}">{html.escape(t)}</a></li>' for lid, t in others) + "</ul>"
            head = "<head><meta charset='utf-8'><meta name='viewport' content='width=device-width'></head>"
            return HTMLResponse(f"<!DOCTYPE html><html lang='zh-CN'>{head}<body>{body}</body></html>")

        async def deep_link_return(request: Request) -> Response:
            form = await request.form()
            token = str(form.get("JWT", ""))
            header = jwt.get_unverified_header(token)
            claims = jwt.decode(token, self.tool_key(header["kid"]), algorithms=["RS256"], audience=self.issuer, issuer=self.client_id)
            self.deep_link_responses.append(claims)
            items = claims.get("https://purl.imsglobal.org/spec/lti-dl/claim/content_items", [])
            ctx = request.path_params["ctx"]
            for item in items:  # each item becomes an activity of the course, as an LMS adds it
                link = f"dl-{len(self.custom) + 1}"
                self.custom[link] = dict(item.get("custom") or {})
                self.links.setdefault(ctx, []).append((link, str(item.get("title", link))))
            return HTMLResponse(f"<p id='added'>已添加 {len(items)} 项：{html.escape(items[0]['title']) if items else ''}</p>")

        async def index(request: Request) -> Response:
            sections = []
            for ctx, title in (self.contexts or {"course-1": "评价二分类模型"}).items():
                people = self.enrolments.get(ctx) or {hint: u.roles for hint, u in self.users.items()}
                rows = []
                for hint, roles in people.items():
                    u = self.users[hint]
                    kind = role_name(roles)
                    links = [f'<a href="/courses/{html.escape(ctx)}?user={html.escape(hint)}">新窗口打开作业</a>',
                             f'<a href="/courses/{html.escape(ctx)}?user={html.escape(hint)}&amp;frame=1">在框架中打开作业</a>']
                    if kind == "教师":
                        links.append(f'<a href="/courses/{html.escape(ctx)}?user={html.escape(hint)}&amp;frame=1&amp;type=LtiDeepLinkingRequest">'
                                     "添加作业（深度链接）</a>")
                    rows.append(f"<li>{kind} {html.escape(u.name)}：{' · '.join(links)}</li>")
                sections.append(f"<section><h2>{html.escape(title)} <small>（{html.escape(ctx)}）</small></h2><ul>{''.join(rows)}</ul>"
                                f"{self._gradebook_html(ctx)}</section>")
            head = "<head><meta charset='utf-8'><meta name='viewport' content='width=device-width'><title>假课程平台</title></head>"
            return HTMLResponse(f"<!DOCTYPE html><html lang='zh-CN'>{head}<body><h1>假课程平台（试用 LTI）</h1>"
                                f"<p>这不是真正的 LMS，只用来试用本服务的 LTI 1.3 启动、深度链接、名单同步与成绩回传。</p>{''.join(sections)}"
                                "</body></html>")

        return Starlette(routes=[
            Route("/", index),
            Route("/jwks", jwks), Route("/auth", auth), Route("/token", token, methods=["POST"]),
            Route("/api/lti/courses/{ctx}/line_items", lineitems, methods=["GET", "POST"]),
            Route("/api/lti/courses/{ctx}/line_items/{item}/scores", scores, methods=["POST"]),
            Route("/api/lti/courses/{ctx}/names_and_roles", memberships),
            Route("/courses/{ctx}", course), Route("/deep_linking_return/{ctx}", deep_link_return, methods=["POST"]),
        ])

    def enrolled_members(self, ctx: str) -> list[dict]:
        """The NRPS members of ``ctx``: its enrolments (everyone, when the context lists none)."""
        people = self.enrolments.get(ctx) or {hint: u.roles for hint, u in self.users.items()}
        return [{"user_id": self.users[h].sub, "name": self.users[h].name, "email": self.users[h].email, "roles": roles,
                 "lis_person_sourcedid": self.users[h].sourcedid, "status": "Active"} for h, roles in people.items()]

    def _gradebook_html(self, ctx: str) -> str:
        """The context's gradebook as an LMS shows it: a row per person (by name), a column per line item, the
        latest score of each cell."""
        items = self.lineitems.get(ctx, [])
        if not items:
            return "<p>成绩册：还没有成绩列。</p>"
        names = {u.sub: u.name for u in self.users.values()}
        latest: dict[tuple[str, str], dict] = {}
        for score in self.scores:
            if score["context"] == ctx:
                latest[(score["userId"], score["lineitem"])] = score  # a later post replaces the cell
        head = "".join(f"<th scope='col'>{html.escape(str(li.get('label', '')))}</th>" for li in items)
        people = sorted({sub for sub, _ in latest}, key=lambda sub: names.get(sub, sub))
        body = "".join(
            f"<tr><th scope='row'>{html.escape(names.get(sub, sub))}</th>" + "".join(
                f"<td>{cell['scoreGiven']:g} / {cell['scoreMaximum']:g}</td>" if (cell := latest.get((sub, item_id(li)))) else "<td>—</td>"
                for li in items) + "</tr>" for sub in people)
        return f"<table><caption>成绩册</caption><tr><th scope='col'>学生</th>{head}</tr>{body}</table>"

    def start(self) -> "FakePlatform":
        config = uvicorn.Config(self.app(), host=self.host if self.host != "localhost" else "127.0.0.1", port=self.port,
                                log_level="warning", lifespan="off")
        self._server = uvicorn.Server(config)
        threading.Thread(target=self._server.run, daemon=True).start()
        deadline = time.monotonic() + 20
        while not self._server.started:
            assert time.monotonic() < deadline, "the fake platform did not start"
            time.sleep(0.02)
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True

    def scores_for(self, sub: str) -> list[dict]:
        return [s for s in self.scores if s["userId"] == sub]


# ---- on its own: a fake LMS for one course of a real service (the instructors' tutorial, docs/instructors/tutorial.md)

#: The LMS course of a fake LMS started on its own, and the deployment id it registers with.
STANDALONE_CONTEXT = "course-1"
STANDALONE_DEPLOYMENT = "1"


def standalone(host: str, port: int, tool: str, roster: list[tuple[str, str]], teacher: str) -> FakePlatform:
    """A fake LMS with one LMS course (:data:`STANDALONE_CONTEXT`) whose students are ``roster`` ((student id, name):
    the id is also their SIS id) and whose teacher is ``teacher``; no activity yet (the teacher adds one by deep
    linking).  Not started."""
    platform = FakePlatform(host=host, port=port, flavour="canvas", deployment_id=STANDALONE_DEPLOYMENT)
    platform.tool = tool.rstrip("/")
    for student_id, name in roster:
        platform.users[student_id] = User(f"lms-{student_id}", name or student_id, f"{student_id}@example.edu", LEARNER,
                                          sourcedid=student_id)
    platform.users["teacher"] = User("lms-teacher", teacher, "teacher@example.edu", INSTRUCTOR)
    platform.contexts = {STANDALONE_CONTEXT: "BIN101 评价二分类模型"}
    platform.enrolments = {STANDALONE_CONTEXT: {hint: u.roles for hint, u in platform.users.items()}}
    platform.links = {STANDALONE_CONTEXT: []}
    return platform


def main(argv: list[str] | None = None) -> int:
    """``python -m autograder.commands.lti_demo``: a fake LMS for trying a real service's LTI 1.3 side, until Ctrl-C."""
    import argparse
    import csv
    import sys
    from pathlib import Path

    parser = argparse.ArgumentParser(prog="python -m autograder.commands.lti_demo",
                                     description="假课程平台：在本机试用评分服务的 LTI 1.3（启动、深度链接、成绩回传）")
    parser.add_argument("--host", default="127.0.0.1", help="监听地址（默认 127.0.0.1）")
    parser.add_argument("--port", type=int, default=8070, help="端口（默认 8070）")
    parser.add_argument("--tool", required=True, help="评分服务的地址，如 http://127.0.0.1:8080")
    parser.add_argument("--roster", required=True, help="名单 CSV（student_id，可选 name）：这些学生是课程平台上这门课的学生")
    parser.add_argument("--teacher", default="王老师", help="课程平台上这门课的教师（默认 王老师）")
    args = parser.parse_args(argv)
    try:
        with Path(args.roster).open(encoding="utf-8-sig", newline="") as f:
            roster = [(row["student_id"].strip(), (row.get("name") or "").strip()) for row in csv.DictReader(f)]
    except (OSError, KeyError) as exc:
        print(f"lti_demo: 无法读取名单 {args.roster}（需要 student_id 列）：{exc}", file=sys.stderr)
        return 2
    platform = standalone(args.host, args.port, args.tool, roster, args.teacher).start()
    print(f"假课程平台：{platform.base}/（课程 {STANDALONE_CONTEXT}：{len(roster)} 名学生，教师 {args.teacher}）", file=sys.stderr)
    print(f"在评分服务中注册它：autograder lti add-platform --data DATA --name 假课程平台 --issuer {platform.issuer} "
          f"--client-id {platform.client_id} --deployment-id {platform.deployment_id} --auth-login-url {platform.auth_url} "
          f"--auth-token-url {platform.token_url} --jwks-url {platform.jwks_url}", file=sys.stderr, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        platform.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
