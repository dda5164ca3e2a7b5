"""A small fake LTI 1.3 platform (an "LMS") for trying the tool out: ``make serve`` starts one beside the demo
courses (:mod:`.demo_course`), ``python -m autograder.commands.lti_demo`` one for a real service (the instructors'
tutorial, docs/instructors/tutorial.md).

A real HTTP server on loopback with its own RSA keys; never meant for real courses.

It plays the LMS's parts: the key set (``/jwks``), the OIDC authorization endpoint (``/auth``: it answers with a
form that posts the signed ``id_token`` and the ``state`` to the tool, like Canvas and Moodle do), the OAuth 2
token endpoint (``/token``: it VERIFIES the tool's client assertion against the tool's key set), AGS line items
and scores, NRPS memberships with ``Link`` paging, a course page that opens the tool in an iframe or top-level,
and the deep-linking return endpoint (it verifies the tool's signed response).  Launch payloads are shaped like
Canvas's (claims, custom fields, role URIs).  Its front page (``/``) lists the people and opens the tool as each
of them, in a new window or in a frame, and shows the gradebook (the scores the tool posted).

The public names are :data:`__all__`.  The tests' fake LMS (tests/service/lti/fake_lms.py) is a subclass of
:class:`DemoPlatform` that adds what only tests need (outages, a Moodle-shaped launch, logs of what it verified);
it overrides the methods whose docstrings say so and imports nothing else of this module.
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
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

__all__ = ["DemoPlatform", "User", "LIS", "LEARNER", "INSTRUCTOR", "TEACHING_ASSISTANT", "new_key", "main"]

LTI = "https://purl.imsglobal.org/spec/lti/claim/"
AGS_ENDPOINT = "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint"
LIS = "http://purl.imsglobal.org/vocab/lis/v2/"
LEARNER = [LIS + "institution/person#Student", LIS + "membership#Learner", LIS + "system/person#User"]
INSTRUCTOR = [LIS + "institution/person#Instructor", LIS + "membership#Instructor", LIS + "system/person#User"]
TEACHING_ASSISTANT = [LIS + "membership#Instructor", LIS + "membership/Instructor#TeachingAssistant", LIS + "system/person#User"]
HEAD = "<head><meta charset='utf-8'><meta name='viewport' content='width=device-width'>{title}</head>"


def _role_name(roles: list[str]) -> str:
    """How the fake LMS's pages name a person's part in a context."""
    if any(r.endswith("#TeachingAssistant") for r in roles):
        return "助教"
    return "教师" if any(r.endswith("membership#Instructor") for r in roles) else "学生"


def _item_id(lineitem: dict) -> str:
    """The path part a score POST of ``lineitem`` carries (its ``{item}``)."""
    return str(lineitem.get("id", "")).split("/line_items/", 1)[-1].split("?", 1)[0]


def _free_port() -> int:
    """A TCP port on loopback that was free a moment ago (the platform's default port)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def new_key() -> tuple[str, bytes, dict]:
    """A fresh RSA signing key: (key id, private PEM, public JWK)."""
    private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    kid = "plat-" + secrets.token_hex(4)
    jwk = {**json.loads(RSAAlgorithm.to_jwk(private.public_key())), "kid": kid, "alg": "RS256", "use": "sig"}
    return kid, pem, jwk


def _form_post(action: str, id_token: str, state: str) -> HTMLResponse:
    """The page an LMS answers an authorization request with: a form that posts the token to the tool at once."""
    return HTMLResponse(
        f'<!DOCTYPE html><html><body><form method="post" action="{html.escape(action)}">'
        f'<input type="hidden" name="id_token" value="{html.escape(id_token)}">'
        f'<input type="hidden" name="state" value="{html.escape(state)}">'
        '<noscript><button type="submit">continue</button></noscript></form>'
        '<script>document.forms[0].submit()</script></body></html>')


@dataclass
class User:
    """A person of the LMS: the ``sub`` it launches with, names, e-mail, roles and SIS id (``sourcedid``)."""

    sub: str
    name: str
    email: str
    roles: list[str]
    sourcedid: str = ""
    given: str = ""
    family: str = ""


@dataclass
class DemoPlatform:
    """The fake LMS: its registration values, its people, LMS courses (contexts) and activities, and what the tool
    sent it (line items, scores); :meth:`start` serves it on ``host:port`` in a thread of this process."""

    host: str = "127.0.0.1"
    client_id: str = "10000000000042"
    deployment_id: str = "42:8865aa05b4b79b64a91a86042e43af5ea8ae79eb"
    port: int = field(default_factory=_free_port)
    tool: str = ""  # the tool's base URL
    page_size: int = 2  # NRPS members per page (small, so that paging happens)
    users: dict[str, User] = field(default_factory=dict)  # login hint -> person
    contexts: dict[str, str] = field(default_factory=dict)  # id -> title
    lineitems: dict[str, list[dict]] = field(default_factory=dict)  # context -> line items
    scores: list[dict] = field(default_factory=list)  # every score POST received (with "context" and "lineitem")
    tokens: dict[str, float] = field(default_factory=dict)  # access token -> expiry
    custom: dict[str, dict] = field(default_factory=dict)  # resource link id -> custom parameters
    enrolments: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # context -> {user: roles there}
    links: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # context -> its resource links (id, title)

    def __post_init__(self) -> None:
        self.base = f"http://{self.host}:{self.port}"
        self.issuer = self.base
        self.keys = [new_key()]
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

    @property
    def name(self) -> str:
        """The name the tool registers it under."""
        return "假平台 canvas"

    def registration(self) -> dict[str, Any]:
        """The keyword arguments of the tool's ``registry.add`` for this platform."""
        return dict(name=self.name, issuer=self.issuer, client_id=self.client_id, deployments=[self.deployment_id],
                    auth_login_url=self.auth_url, auth_token_url=self.token_url, jwks_url=self.jwks_url)

    # ---- launches

    def sign(self, claims: dict) -> str:
        """``claims`` as a JWT signed with the platform's newest key."""
        kid, pem, _ = self.keys[-1]
        return jwt.encode(claims, pem, algorithm="RS256", headers={"kid": kid})

    def roles_in(self, hint: str, context: str) -> list[str]:
        """The roles of user ``hint`` in ``context`` (its enrolment there, else the user's own)."""
        return self.enrolments.get(context, {}).get(hint, self.users[hint].roles)

    def claims(self, user: User, nonce: str, *, context: str = "course-1", link: str = "link-1", custom: dict | None = None,
               message_type: str = "LtiResourceLinkRequest", now: float | None = None, lineitem: str | None = None,
               roles: list[str] | None = None) -> dict:
        """An id_token payload shaped like a real launch (``roles``: the user's own by default): the claims of
        every LTI 1.3 platform, the services offered, the message's own part, then :meth:`product_claims`."""
        now = int(now or time.time())
        custom = dict(self.custom.get(link, {}) if custom is None else custom)
        c: dict[str, Any] = {
            "iss": self.issuer, "aud": self.client_id, "sub": user.sub, "exp": now + 300, "iat": now,
            "nonce": nonce, LTI + "message_type": message_type, LTI + "version": "1.3.0",
            LTI + "deployment_id": self.deployment_id, LTI + "target_link_uri": self.tool + "/lti/launch",
            LTI + "roles": user.roles if roles is None else roles,
            LTI + "context": {"id": context, "label": "BIN101", "title": self.contexts.get(context, "评价二分类模型"),
                              "type": ["http://purl.imsglobal.org/vocab/lis/v2/course#CourseOffering"]},
            LTI + "custom": custom, "name": user.name, "email": user.email, "given_name": user.given, "family_name": user.family,
            **self._service_claims(context),
        }
        if lineitem:
            c[AGS_ENDPOINT]["lineitem"] = lineitem
        if message_type == "LtiResourceLinkRequest":
            c[LTI + "resource_link"] = {"id": link, "title": "作业", "description": None}
        else:
            c["https://purl.imsglobal.org/spec/lti-dl/claim/deep_linking_settings"] = self.deep_linking_settings(context)
        return c | self.product_claims(user, context)

    def _service_claims(self, context: str) -> dict[str, Any]:
        """The AGS and NRPS endpoints of ``context``: every launch offers the tool both services."""
        ctx_url = f"{self.base}/api/lti/courses/{context}"
        return {
            AGS_ENDPOINT: {
                "scope": ["https://purl.imsglobal.org/spec/lti-ags/scope/lineitem",
                          "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem.readonly",
                          "https://purl.imsglobal.org/spec/lti-ags/scope/result.readonly",
                          "https://purl.imsglobal.org/spec/lti-ags/scope/score"],
                "lineitems": f"{ctx_url}/line_items"},
            "https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice": {
                "context_memberships_url": f"{ctx_url}/names_and_roles", "service_versions": ["2.0"]},
        }

    def deep_linking_settings(self, context: str) -> dict[str, Any]:
        """The deep-linking request's settings: one LTI resource link back, its ``data`` an opaque string as Canvas
        sends it.  The tests' platform overrides this to vary what it accepts."""
        return {"deep_link_return_url": f"{self.base}/deep_linking_return/{context}", "accept_types": ["ltiResourceLink"],
                "accept_presentation_document_targets": ["iframe", "window"], "accept_multiple": False,
                "data": "opaque-" + secrets.token_hex(4)}

    def product_claims(self, user: User, context: str) -> dict[str, Any]:
        """The claims a launch carries because the LMS is Canvas (its ``azp``, extensions and locale), beside the
        ones every platform sends.  The tests' platform overrides this to launch like Moodle."""
        return {
            "azp": self.client_id,
            LTI + "lis": {"person_sourcedid": user.sourcedid, "course_offering_sourcedid": "BIN101-2026"},
            LTI + "tool_platform": {"guid": "canvas-guid:42", "name": "假 Canvas", "version": "cloud", "product_family_code": "canvas"},
            LTI + "launch_presentation": {"document_target": "iframe", "locale": "zh-Hans",
                                          "return_url": f"{self.base}/courses/{context}/external_content/success"},
            "https://www.instructure.com/placement": "assignment_selection",
            LTI + "lti11_legacy_user_id": secrets.token_hex(20),
            "errors": {"errors": {}},
            "locale": "zh-Hans",
        }

    # ---- what it checks of the tool

    def tool_key(self, kid: str) -> Any:
        """The tool's public key ``kid``, from the tool's key set (the tests' platform may read it in-process)."""
        keys = httpx.get(self.tool + "/lti/jwks.json", timeout=10).json()
        return jwt.PyJWKSet.from_dict(keys)[kid]

    def assertion_audience(self) -> str:
        """The ``aud`` a client assertion must name: the token URL (the tests' platform may require another)."""
        return self.token_url

    def verify_assertion(self, form: FormData) -> dict:
        """The verified claims of a token request's client assertion; raises when anything does not verify."""
        assertion = str(form.get("client_assertion", ""))
        header = jwt.get_unverified_header(assertion)
        claims = jwt.decode(assertion, self.tool_key(header["kid"]), algorithms=["RS256"], audience=self.assertion_audience(),
                            issuer=self.client_id, options={"require": ["exp", "iat", "jti", "sub"]})
        if claims["sub"] != self.client_id or form.get("grant_type") != "client_credentials" or \
                form.get("client_assertion_type") != "urn:ietf:params:oauth:client-assertion-type:jwt-bearer":
            raise ValueError("not a client-credentials request of the registered tool")
        return claims

    def verify_deep_link(self, token: str) -> dict:
        """The verified claims of the tool's deep-linking response; raises when its signature does not verify."""
        header = jwt.get_unverified_header(token)
        return jwt.decode(token, self.tool_key(header["kid"]), algorithms=["RS256"], audience=self.issuer, issuer=self.client_id)

    def unavailable(self) -> Response | None:
        """The answer of the token and service endpoints when the LMS is out of order; the demo never is (the tests'
        platform overrides this to answer 503 or 429)."""
        return None

    def _gate(self, request: Request) -> Response | None:
        """An outage's answer, or 401 without a valid access token; None: go ahead."""
        trouble = self.unavailable()
        if trouble:
            return trouble
        token = request.headers.get("authorization", "").removeprefix("Bearer ")
        if not (token in self.tokens and self.tokens[token] > time.time()):
            return JSONResponse({"error": "unauthorized"}, status_code=401)
        return None

    # ---- the endpoints

    async def serve_jwks(self, request: Request) -> Response:
        return JSONResponse({"keys": [k[2] for k in self.keys]})

    async def serve_auth(self, request: Request) -> Response:
        """The OIDC authorization endpoint: checks the tool's request and posts a signed launch back (400: refused)."""
        p = request.query_params
        user = self.users.get(p.get("login_hint", ""))
        ok = (p.get("client_id") == self.client_id and p.get("response_type") == "id_token" and p.get("scope") == "openid"
              and p.get("response_mode") == "form_post" and p.get("redirect_uri") == self.tool + "/lti/launch"
              and p.get("nonce") and p.get("state") and user is not None)
        if not ok:
            return HTMLResponse("<p>invalid authorization request</p>", status_code=400)
        hint = json.loads(p.get("lti_message_hint") or "{}")
        context = hint.get("context", "course-1")
        claims = self.claims(user, p["nonce"], context=context, link=hint.get("link", "link-1"),
                             message_type=hint.get("type", "LtiResourceLinkRequest"), lineitem=hint.get("lineitem"),
                             roles=self.roles_in(p.get("login_hint", ""), context))
        return _form_post(p["redirect_uri"], self.sign(claims), p["state"])

    async def serve_token(self, request: Request) -> Response:
        """The OAuth 2 token endpoint: an access token for a verified client assertion (401: refused)."""
        trouble = self.unavailable()
        if trouble:
            return trouble
        form = await request.form()
        try:
            self.verify_assertion(form)
        except Exception:  # noqa: BLE001 (the fake platform refuses whatever does not verify)
            return JSONResponse({"error": "invalid_client"}, status_code=401)
        value = secrets.token_urlsafe(16)
        self.tokens[value] = time.time() + 3600
        return JSONResponse({"access_token": value, "token_type": "Bearer", "expires_in": 3600, "scope": form.get("scope", "")})

    async def serve_lineitems(self, request: Request) -> Response:
        """AGS line items of a context: listed (optionally of one resource) or created."""
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

    async def serve_scores(self, request: Request) -> Response:
        """An AGS score POST, kept in :attr:`scores`."""
        refusal = self._gate(request)
        if refusal:
            return refusal
        if request.headers.get("content-type") != "application/vnd.ims.lis.v1.score+json":
            return JSONResponse({"error": "content type"}, status_code=415)
        ctx, item = request.path_params["ctx"], request.path_params["item"]
        self.scores.append({**(await request.json()), "context": ctx, "lineitem": item})
        return Response(status_code=204)

    async def serve_memberships(self, request: Request) -> Response:
        """NRPS: one page of a context's members, with a ``Link`` to the next page."""
        refusal = self._gate(request)
        if refusal:
            return refusal
        ctx = request.path_params["ctx"]
        page = int(request.query_params.get("page", "1"))
        everyone = self.members_of(ctx)
        chunk = everyone[(page - 1) * self.page_size: page * self.page_size]
        headers = {}
        if page * self.page_size < len(everyone):
            headers["Link"] = f'<{self.base}/api/lti/courses/{ctx}/names_and_roles?page={page + 1}>; rel="next"'
        return JSONResponse({"id": str(request.url), "context": {"id": ctx}, "members": chunk}, headers=headers,
                            media_type="application/vnd.ims.lti-nrps.v2.membershipcontainer+json")

    def members_of(self, ctx: str) -> list[dict]:
        """The members NRPS lists for ``ctx``: its enrolments (the tests' platform may list others)."""
        return self.enrolled_members(ctx)

    def enrolled_members(self, ctx: str) -> list[dict]:
        """The NRPS members of ``ctx``: its enrolments (everyone, when the context lists none)."""
        people = self.enrolments.get(ctx) or {hint: u.roles for hint, u in self.users.items()}
        return [{"user_id": self.users[h].sub, "name": self.users[h].name, "email": self.users[h].email, "roles": roles,
                 "lis_person_sourcedid": self.users[h].sourcedid, "status": "Active"} for h, roles in people.items()]

    async def serve_course(self, request: Request) -> Response:
        """An LMS course's page as user ``?user=``: the activity ``?link=`` opened top-level or (``?frame=1``) in a
        frame, with ``?type=`` its message type, and the course's other activities."""
        ctx = request.path_params["ctx"]
        hint = request.query_params.get("user", "")
        current = request.query_params.get("link", "link-1")
        kind = request.query_params.get("type", "LtiResourceLinkRequest")
        login = self._login_url(ctx, hint, current, kind)
        title = html.escape(self.contexts.get(ctx, ctx))
        if request.query_params.get("frame") == "1":
            body = (f'<h1>假课程平台：{title}</h1>'
                    f'<iframe id="tool" src="{html.escape(login)}" style="width:100%;max-width:900px;height:600px"></iframe>')
        else:
            body = f'<h1>假课程平台：{title}</h1><a id="open" href="{html.escape(login)}">打开作业</a>'
        others = [(lid, t) for lid, t in self.links.get(ctx, []) if lid != current]
        if others and kind == "LtiResourceLinkRequest":
            body += "<h2>这门课的其他活动</h2><ul>" + "".join(
                f'<li><a href="{html.escape(self._login_url(ctx, hint, lid))}">{html.escape(t)}</a></li>' for lid, t in others) + "</ul>"
        return HTMLResponse(f"<!DOCTYPE html><html lang='zh-CN'>{HEAD.format(title='')}<body>{body}</body></html>")

    def _login_url(self, ctx: str, hint: str, link: str, kind: str = "LtiResourceLinkRequest") -> str:
        """The tool's login URL that launches ``hint`` into ``link`` of ``ctx``, as an LMS's third-party login."""
        message = json.dumps({"context": ctx, "link": link, "type": kind})
        return self.tool + "/lti/login?" + urlencode({"iss": self.issuer, "login_hint": hint, "target_link_uri": self.tool + "/lti/launch",
                                                       "lti_message_hint": message, "client_id": self.client_id,
                                                       "lti_deployment_id": self.deployment_id})

    async def serve_deep_link_return(self, request: Request) -> Response:
        """The deep-linking return: each content item of the tool's verified response becomes an activity of the
        course, as an LMS adds it."""
        form = await request.form()
        claims = self.verify_deep_link(str(form.get("JWT", "")))
        items = claims.get("https://purl.imsglobal.org/spec/lti-dl/claim/content_items", [])
        ctx = request.path_params["ctx"]
        for item in items:
            link = f"dl-{len(self.custom) + 1}"
            self.custom[link] = dict(item.get("custom") or {})
            self.links.setdefault(ctx, []).append((link, str(item.get("title", link))))
        return HTMLResponse(f"<p id='added'>已添加 {len(items)} 项：{html.escape(items[0]['title']) if items else ''}</p>")

    async def serve_index(self, request: Request) -> Response:
        """The front page: per LMS course, its people with links that open the tool as each of them, and its
        gradebook."""
        sections = "".join(self._course_section(ctx, title)
                           for ctx, title in (self.contexts or {"course-1": "评价二分类模型"}).items())
        return HTMLResponse(f"<!DOCTYPE html><html lang='zh-CN'>{HEAD.format(title='<title>假课程平台</title>')}<body>"
                            "<h1>假课程平台（试用 LTI）</h1>"
                            f"<p>这不是真正的 LMS，只用来试用本服务的 LTI 1.3 启动、深度链接、名单同步与成绩回传。</p>{sections}"
                            "</body></html>")

    def _course_section(self, ctx: str, title: str) -> str:
        """The front page's part for one LMS course: a line per person (teachers may also add an activity by deep
        linking), then the gradebook."""
        people = self.enrolments.get(ctx) or {hint: u.roles for hint, u in self.users.items()}
        rows = []
        for hint, roles in people.items():
            kind = _role_name(roles)
            page = f"/courses/{html.escape(ctx)}?user={html.escape(hint)}"
            links = [f'<a href="{page}">新窗口打开作业</a>', f'<a href="{page}&amp;frame=1">在框架中打开作业</a>']
            if kind == "教师":
                links.append(f'<a href="{page}&amp;frame=1&amp;type=LtiDeepLinkingRequest">添加作业（深度链接）</a>')
            rows.append(f"<li>{kind} {html.escape(self.users[hint].name)}：{' · '.join(links)}</li>")
        return (f"<section><h2>{html.escape(title)} <small>（{html.escape(ctx)}）</small></h2><ul>{''.join(rows)}</ul>"
                f"{self._gradebook_html(ctx)}</section>")

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
                f"<td>{cell['scoreGiven']:g} / {cell['scoreMaximum']:g}</td>" if (cell := latest.get((sub, _item_id(li)))) else "<td>—</td>"
                for li in items) + "</tr>" for sub in people)
        return f"<table><caption>成绩册</caption><tr><th scope='col'>学生</th>{head}</tr>{body}</table>"

    # ---- the server

    def app(self) -> Starlette:
        """The platform's HTTP routes, each served by a ``serve_*`` method."""
        return Starlette(routes=[
            Route("/", self.serve_index),
            Route("/jwks", self.serve_jwks), Route("/auth", self.serve_auth), Route("/token", self.serve_token, methods=["POST"]),
            Route("/api/lti/courses/{ctx}/line_items", self.serve_lineitems, methods=["GET", "POST"]),
            Route("/api/lti/courses/{ctx}/line_items/{item}/scores", self.serve_scores, methods=["POST"]),
            Route("/api/lti/courses/{ctx}/names_and_roles", self.serve_memberships),
            Route("/courses/{ctx}", self.serve_course),
            Route("/deep_linking_return/{ctx}", self.serve_deep_link_return, methods=["POST"]),
        ])

    def start(self) -> "DemoPlatform":
        """Serve :meth:`app` in a daemon thread; returns once it listens."""
        config = uvicorn.Config(self.app(), host=self.host if self.host != "localhost" else "127.0.0.1", port=self.port,
                                log_level="warning", lifespan="off")
        self._server = uvicorn.Server(config)
        threading.Thread(target=self._server.run, daemon=True).start()
        deadline = time.monotonic() + 20
        while not self._server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("the fake platform did not start")
            time.sleep(0.02)
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True


# ---- on its own: a fake LMS for one course of a real service (the instructors' tutorial, docs/instructors/tutorial.md)

#: The LMS course of a fake LMS started on its own, and the deployment id it registers with.
STANDALONE_CONTEXT = "course-1"
STANDALONE_DEPLOYMENT = "1"


def standalone(host: str, port: int, tool: str, roster: list[tuple[str, str]], teacher: str) -> DemoPlatform:
    """A fake LMS with one LMS course (:data:`STANDALONE_CONTEXT`) whose students are ``roster`` ((student id, name):
    the id is also their SIS id) and whose teacher is ``teacher``; no activity yet (the teacher adds one by deep
    linking).  Not started."""
    platform = DemoPlatform(host=host, port=port, deployment_id=STANDALONE_DEPLOYMENT)
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
