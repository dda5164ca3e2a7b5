"""JupyterHub's web module: sign in with the hub, submit from JupyterLab with the hub token, the assignments' hub links.

Mounted at ``/jupyterhub`` of the site, and at ``/c/<id>/jupyterhub`` of each course (:mod:`.app`):

=======  ==============================================  ============================================================
GET      /jupyterhub/login?course=ID[&next=PATH]          to the hub's authorization page (the OAuth state bound to
                                                         this browser by a signed cookie; PKCE)
GET      /jupyterhub/callback                            the hub's answer: code -> token -> ``/hub/api/user`` -> the
                                                         course's account -> its ordinary session cookie
POST     /jupyterhub/api/submissions                     a notebook from JupyterLab (multipart ``notebook``, optional
                                                         ``course``), ``Authorization: Bearer <the user's hub token>``
GET      /jupyterhub/api/submissions/{course}/{id}?t=T   that submission's status (``T``: the ticket the POST answered)
GET      /c/<id>/jupyterhub/                             the course's links that open each assignment in JupyterLab
=======  ==============================================  ============================================================

Who is asking is always the hub's answer for the token (``GET /hub/api/user``, never cached for an upload); a header
naming a user (``X-Forwarded-User``, ``X-JupyterHub-User`` ...) is never read.  The token must be a user's and
carry ``access:services!service=<name>`` (the hub grants it to the tokens of this service's OAuth flow, and to a
user server's tokens where ``jupyterhub_config.py`` allows it, docs/jupyterhub.md).  A refused token answers 401
with ``"reason": "token"``, which the JupyterLab extension turns into "sign in again" (nothing of the notebook is
touched).  Every other refusal is the core's, with its usual status, as ``{"error", "reason"}``.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass
from enum import Enum
from urllib.parse import urlencode

import httpx
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from ...check import all_assignments
from .. import hub as core
from .. import sessions
from ..codes import Account
from ..errors import Busy, Forbidden, Invalid, NotFound, NotReady, NotSignedIn, ServiceError, TooLarge
from ..lti import enroll
from ..service import Service
from ..site import Site
from ..uploads import check_filename, read_notebook
from . import auth
from .api import submission_json
from .errors import headers_of, status_of
from .forms import read_upload
from .render import page_headers, render, site_root_of

OAUTH_COOKIE = "autograder_hub_oauth"
STATE_SECONDS = 600  # from the hub's sign-in page back to the callback
TICKET_SECONDS = 7 * 86400  # a status ticket: as long as a student may keep a Lab tab open
NEXT = re.compile(r"(?:[A-Za-z0-9_-][A-Za-z0-9_.-]*/?){0,6}")  # a page of the course, relative to it
TIMEOUT = httpx.Timeout(10.0, connect=5.0)
SIGN_IN_AGAIN = ("你的 JupyterHub 登录已过期或已被撤销，本次没有提交。请重新登录 JupyterHub 后再点“提交”；"
                 "你的笔记本仍在 JupyterLab 中，没有丢失。")


class Reason(str, Enum):
    """What the JupyterLab extension does with a refusal (``reason`` of the JSON answer)."""

    TOKEN = "token"  # sign in again
    CHOOSE = "choose_course"  # the notebook fits several courses: ask which
    NOT_ENROLLED = "not_enrolled"
    REFUSED = "refused"  # anything else: show the message


class TokenRefused(NotSignedIn):
    """No hub token, or one the hub does not know (any more): expired, revoked, or never issued."""


class NoScope(Forbidden):
    """A hub token that may not speak to this service (a service's token, or one without the access scope)."""


class HubUnreachable(Busy):
    """The hub did not answer as it should (down, or a configuration that does not match it): try again later."""

    def __init__(self, message: str) -> None:
        super().__init__(message, retry_after=30)


class ChooseCourse(NotReady):
    """The notebook is an open assignment in several of the student's courses; ``choices`` lists them."""

    def __init__(self, message: str, choices: list[dict[str, str]]) -> None:
        super().__init__(message)
        self.choices = choices


REASONS: dict[type[ServiceError], Reason] = {TokenRefused: Reason.TOKEN, ChooseCourse: Reason.CHOOSE,
                                             core.NotOnRoster: Reason.NOT_ENROLLED}


@dataclass(frozen=True)
class HubUser:
    """The hub's answer for a token."""

    name: str
    kind: str
    scopes: frozenset[str]


class Hub:
    """The site's hub (:class:`~autograder.service.hub.HubSite`) and an HTTP client for its API."""

    def __init__(self, site: core.HubSite, transport: httpx.BaseTransport | None = None) -> None:
        self.site = site
        self.http = httpx.Client(timeout=TIMEOUT, transport=transport, follow_redirects=False)

    def user(self, token: str) -> HubUser:
        """Who the hub says owns ``token`` (:class:`TokenRefused` when the hub does not accept it)."""
        try:
            answer = self.http.get(self.site.user_url, headers={"Authorization": f"Bearer {token}"})
        except httpx.HTTPError:
            raise HubUnreachable("暂时无法连接 JupyterHub，请稍后再试") from None
        if answer.status_code in (401, 403):
            raise TokenRefused(SIGN_IN_AGAIN)
        try:
            data = answer.json() if answer.status_code == 200 else None
        except ValueError:
            data = None
        if not isinstance(data, dict) or not isinstance(data.get("name"), str):
            raise HubUnreachable(f"JupyterHub 的回答不正确（HTTP {answer.status_code}），请稍后再试或联系管理员")
        scopes = data.get("scopes") if isinstance(data.get("scopes"), list) else []
        return HubUser(data["name"], str(data.get("kind", "")), frozenset(s for s in scopes if isinstance(s, str)))

    def exchange(self, code: str, redirect_uri: str, verifier: str) -> str:
        """The access token of an authorization ``code`` (the service authenticates as its OAuth client)."""
        form = {"client_id": self.site.client_id, "client_secret": self.site.token, "grant_type": "authorization_code",
                "code": code, "redirect_uri": redirect_uri, "code_verifier": verifier}
        try:
            answer = self.http.post(self.site.token_url, data=form)
        except httpx.HTTPError:
            raise HubUnreachable("暂时无法连接 JupyterHub，请稍后再试") from None
        try:
            token = answer.json().get("access_token") if answer.status_code == 200 else None
        except (ValueError, AttributeError):
            token = None
        if not isinstance(token, str) or not token:
            raise Forbidden("JupyterHub 没有接受这次登录（授权码无效或已用过）：请重新登录")
        return token

    def identify(self, token: str) -> HubUser:
        """The user of ``token`` if it is a user's token that may speak to this service."""
        user = self.user(token)
        if user.kind != "user":
            raise NoScope("只接受 JupyterHub 用户的令牌（不接受服务的令牌）")
        if not user.scopes & {self.site.scope, "access:services"}:
            raise NoScope(f"这个 JupyterHub 令牌没有访问评分服务的权限（{self.site.scope}）：请管理员按 docs/jupyterhub.md 配置 JupyterHub")
        return user


def connect(site: Site) -> Hub | None:
    """The site's hub from ``DATA/jupyterhub.yml`` (None: the service is not registered in a hub)."""
    found = core.load_site(site.data_root)
    return Hub(found) if found is not None else None


def hub_of(request: Request) -> Hub:
    hub = getattr(request.app.state, "hub", None)
    if hub is None:
        raise NotFound("本服务没有接入 JupyterHub")
    return hub


def _site(request: Request) -> Site:
    return request.app.state.site


def _callback_url(request: Request) -> str:
    """The redirect URI registered in the hub (from the configured public address, never the request's)."""
    return f"{_site(request).public_url}/jupyterhub/callback"


def hub_course(site: Site, course_id: str) -> tuple[Service, core.HubCourse]:
    """A course that takes hub users, and its settings (:class:`NotFound` otherwise)."""
    service = site.course(course_id)
    if service.policy.hub is None:
        raise NotFound(f"课程 {service.course.title} 没有开启 JupyterHub 登录")
    return service, service.policy.hub


def _oauth_cookie(request: Request, value: str, max_age: int) -> str:
    """The state cookie: ``SameSite=Lax`` (it must come back on the hub's redirect, a top-level navigation from
    another site), ``__Host-`` and ``Secure`` over HTTPS."""
    secure = auth.is_https(request)
    parts = [f"{sessions.cookie_name(OAUTH_COOKIE, secure=secure)}={value}", "Path=/", f"Max-Age={max_age}", "HttpOnly",
             "SameSite=Lax"]
    return "; ".join(parts + (["Secure"] if secure else []))


# ---- signing in: the hub's OAuth, ending in the course's ordinary session


def login(request: Request) -> Response:
    hub = hub_of(request)
    site = _site(request)
    course_id = request.query_params.get("course", "")
    hub_course(site, course_id)
    target = request.query_params.get("next", "")
    if not NEXT.fullmatch(target) or ".." in target.split("/"):
        raise Invalid("登录后要去的页面不合法")
    state, verifier = secrets.token_urlsafe(32), secrets.token_urlsafe(48)
    challenge = core.b64url(hashlib.sha256(verifier.encode()).digest())
    cookie = core.sign(site.secret, "oauth", {"s": state, "c": course_id, "n": target, "v": verifier}, STATE_SECONDS)
    query = {"client_id": hub.site.client_id, "redirect_uri": _callback_url(request), "response_type": "code",
             "state": state, "code_challenge": challenge, "code_challenge_method": "S256"}
    response = RedirectResponse(f"{hub.site.authorize_url}?{urlencode(query)}", status_code=303, headers=page_headers())
    response.headers.append("Set-Cookie", _oauth_cookie(request, cookie, STATE_SECONDS))
    return response


def callback(request: Request) -> Response:
    """The hub sends the browser back here: the state must be this browser's (its cookie), the code is exchanged
    for a token, the token's user mapped to the course's account, and the course's session cookie set."""
    hub = hub_of(request)
    site = _site(request)
    held = core.unsign(site.secret, "oauth", auth.read_cookie(request, OAUTH_COOKIE))
    state = request.query_params.get("state", "")
    if held is None or not state or not secrets.compare_digest(state.encode(), str(held.get("s", "")).encode()):
        raise Forbidden("这次 JupyterHub 登录不是从这个浏览器发起的，或已超过十分钟：请回到课程页面重新点“用 JupyterHub 登录”")
    service, setting = hub_course(site, str(held["c"]))
    if request.query_params.get("error"):
        raise Forbidden("JupyterHub 没有授权这次登录（已取消或被拒绝）")
    token = hub.exchange(request.query_params.get("code", ""), _callback_url(request), str(held["v"]))
    user = hub.identify(token)
    try:
        account = core.account_for(service.db, setting, user.name, service.course.title)
    except core.NotOnRoster as refused:
        response = render(request, "hub/refused.html", 403, account=None, csrf="", message=refused.message,
                          username=user.name, others=_courses_of(site, user.name, exclude=service.course.id),
                          hub_url=hub.site.url)
        response.headers.append("Set-Cookie", _oauth_cookie(request, "", 0))
        return response
    target = str(held["n"]) or ("instructor/" if account.is_staff else "")
    cookie, _ = auth.new_session(request, account, service.signer)
    # a page of our own goes on: the session cookie is SameSite=Strict, which a browser withholds from a redirect
    # chain that began on the hub's site
    go = f"c/{service.course.id}/{target}"
    response = render(request, "hub/signed_in.html", account=None, csrf="", person=account, course_title=service.course.title,
                      go=go, username=user.name)
    response.headers["Refresh"] = f"0;url={site_root_of(request)}{go}"
    response.headers.append("Set-Cookie", cookie)
    response.headers.append("Set-Cookie", _oauth_cookie(request, "", 0))
    return response


def accounts_of(site: Site, username: str) -> list[tuple[Service, Account]]:
    """Hub user ``username``'s account in each course of the site that takes hub users and has them."""
    out = []
    for service in site.courses.values():
        if service.policy.hub is not None:
            try:
                out.append((service, core.account_for(service.db, service.policy.hub, username, service.course.title)))
            except core.NotOnRoster:
                pass
    return out


def _courses_of(site: Site, username: str, exclude: str) -> list[dict[str, str]]:
    """The other courses hub user ``username`` has an account in (for the refusal page)."""
    return [{"id": s.course.id, "title": s.course.title, "role": a.role_label} for s, a in accounts_of(site, username)
            if s.course.id != exclude]


async def login_route(request: Request) -> Response:
    return await run_in_threadpool(login, request)


async def callback_route(request: Request) -> Response:
    return await run_in_threadpool(callback, request)


# ---- submitting from JupyterLab


def _token(request: Request) -> str:
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() not in ("bearer", "token") or not token.strip() or len(token) > 1000:
        raise TokenRefused(SIGN_IN_AGAIN)
    return token.strip()


def _enrolments(site: Site, username: str) -> list[tuple[Service, core.Enrolment]]:
    """The courses where hub user ``username`` is a student."""
    return [(s, core.Enrolment(s.course.id, a, s.rules)) for s, a in accounts_of(site, username) if not a.is_staff]


def _refusal(exc: ServiceError) -> JSONResponse:
    body = {"error": exc.message, "reason": next((r.value for k, r in REASONS.items() if isinstance(exc, k)), Reason.REFUSED.value)}
    if isinstance(exc, ChooseCourse):
        body["choices"] = exc.choices
    return JSONResponse(body, status_code=status_of(exc), headers=headers_of(exc, api=True))


def _accept(site: Site, username: str, enrolled: list[tuple[Service, core.Enrolment]], filename: str | None,
            data: bytes, course: str | None, completed: float) -> tuple[Service, core.Target, str]:
    """Find the notebook's course and assignment, and accept it there: ``(course, target, submission id)``."""
    name = check_filename(filename)
    by_id = {e.course_id: s for s, e in enrolled}
    if course is not None and course not in by_id:
        raise Invalid(f"你不是课程 {course[:60]} 的学生，不能提交到那里")
    found = core.targets(read_notebook(data), [e for _, e in enrolled], course)
    courses = sorted({t.course_id for t in found})
    if not found:
        titles = "、".join(f"“{s.course.title}”" for s, _ in enrolled)
        raise Invalid(f"这个笔记本不是你所在课程（{titles}）中任何一项开放提交的作业：请提交作业发布的笔记本（文件中的答题单元不要删除）")
    if len(courses) > 1:
        raise ChooseCourse("这个笔记本是你所在的几门课程共有的作业，请选择提交到哪一门",
                           [{"course": cid, "title": by_id[cid].course.title,
                             "assignment": next(t.assignment for t in found if t.course_id == cid)} for cid in courses])
    if len(found) > 1:
        raise Invalid("这个笔记本同时含有几项作业的答题单元，无法确定是哪一项：请用作业发布的笔记本")
    target = found[0]
    service = by_id[target.course_id]
    if len(data) > service.policy.upload_limit_bytes:
        raise TooLarge(f"笔记本超过课程的上限 {service.policy.upload_limit_bytes / (1 << 20):g} MiB（可先清除输出再提交）")
    service.submissions.check_can_submit(target.account, target.assignment, completed)
    return service, target, service.submissions.accept(target.account, target.assignment, completed, name, data)


async def submit(request: Request) -> Response:
    """An upload from JupyterLab.  The token and the enrolments are checked before a byte of the body is read."""
    site = _site(request)
    try:
        hub = hub_of(request)
        user = await run_in_threadpool(hub.identify, _token(request))
        enrolled = await run_in_threadpool(_enrolments, site, user.name)
        if not enrolled:
            raise core.NotOnRoster(f"JupyterHub 用户 {user.name} 不在本服务任何课程的学生名单上：如果你选了课，请联系任课教师把你加入名单")
        limit = max(s.policy.upload_limit_bytes for s, _ in enrolled)
        with request.app.state.upload_slots.take(f"hub:{user.name}"):
            form = await read_upload(request, limit)
            part, chosen = form["notebook"], form.get("course")
            course = bytes(chosen.data).decode("utf-8", "replace")[:60] if chosen is not None and chosen.filename is None else None
            completed = site.clock()
            if await request.is_disconnected():
                return Response(status_code=499)
            service, target, sid = await run_in_threadpool(_accept, site, user.name, enrolled, part.filename,
                                                           bytes(part.data), course, completed)
    except ServiceError as exc:
        return _refusal(exc)
    ticket = core.sign(site.secret, "status", {"c": target.course_id, "s": sid, "a": target.account.id}, TICKET_SECONDS)
    return JSONResponse({"id": sid, "status": "queued", "course": target.course_id, "course_title": service.course.title,
                         "assignment": target.assignment, "title": service.submissions.title(target.assignment),
                         "status_url": f"{site.public_url}/jupyterhub/api/submissions/{target.course_id}/{sid}?{urlencode({'t': ticket})}",
                         "feedback_url": feedback_link(site, target.course_id, sid)}, status_code=202)


def feedback_link(site: Site, course_id: str, submission_id: str) -> str:
    """The submission's page, reached through the hub's sign-in (seamless while the person is signed in to the hub)."""
    return f"{site.public_url}/jupyterhub/login?{urlencode({'course': course_id, 'next': f'submissions/{submission_id}'})}"


def _status(site: Site, course_id: str, submission_id: str, ticket: str | None) -> dict:
    held = core.unsign(site.secret, "status", ticket)
    if held is None or held.get("c") != course_id or held.get("s") != submission_id:
        raise NotFound("没有这份提交")
    service = site.course(course_id)
    account = enroll.account_of(service.db, int(held["a"]))
    row = service.submissions.get(account, submission_id)
    data = submission_json(row, account, f"{site.course_url(course_id)}/api/v1")
    return {**data, "feedback_url": feedback_link(site, course_id, submission_id), "course": course_id,
            "title": service.submissions.title(row.assignment)}


async def status(request: Request) -> Response:
    site = _site(request)
    try:
        hub_of(request)
        data = await run_in_threadpool(_status, site, request.path_params["course"], request.path_params["id"],
                                       request.query_params.get("t"))
    except ServiceError as exc:
        return _refusal(exc)
    return JSONResponse(data)


# ---- the course's page of hub links


def links(request: Request) -> Response:
    """Each open assignment with the link that opens it in the person's JupyterLab (and how to submit from there)."""
    hub = hub_of(request)
    service = auth.service_of(request)
    who = auth.page_caller(request)
    _, setting = hub_course(_site(request), service.course.id)
    known = all_assignments()
    items = [{"name": n, "title": service.submissions.title(n),
              "link": core.pull_link(hub.site.url, setting, service.course.id, n, known[n].notebook)}
             for n in service.policy.assignments]
    return render(request, "hub/links.html", account=who.account, csrf=auth.csrf_token(request, who), items=items,
                  hub_url=hub.site.url, service_name=hub.site.service)


async def links_route(request: Request) -> Response:
    return await run_in_threadpool(links, request)


ROUTES = [
    Route("/login", login_route, methods=["GET"]),
    Route("/callback", callback_route, methods=["GET"]),
    Route("/api/submissions", submit, methods=["POST"]),
    Route("/api/submissions/{course}/{id}", status, methods=["GET"]),
]
COURSE_ROUTES = [Route("/", links_route, methods=["GET"])]
