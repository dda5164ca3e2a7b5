"""The LTI 1.3 web module, mounted at ``/lti`` by :mod:`.app` (thin: the work is in :mod:`autograder.service.lti`).

======  ======================  ===============================================================================
GET     /lti/login              third-party initiated login (also POST): state + nonce, redirect to the platform
POST    /lti/login
POST    /lti/launch             the redirect URI: validate the id_token, sign in, hand over to a first-party session
GET     /lti/enter?t=TICKET     redeem the launch's one-time ticket: session cookie, then the assignment's page
POST    /lti/deeplink           the instructor's choice on the deep-linking page -> signed response to the LMS
GET     /lti/jwks.json          the tool's public keys
GET     /lti/config/canvas.json a Canvas developer-key configuration (JSON)
======  ======================  ===============================================================================

Browser binding without third-party cookies: ``/lti/login`` sets a launch-only cookie (random value,
``SameSite=None; Secure; Partitioned; HttpOnly``, ten minutes) and keeps only its hash with the state on the
server.  Over HTTPS it is ``__Host-lti_browser`` (path ``/``, no ``Domain``), so a sibling host cannot plant a
value it knows and bind a state of its own to this browser (a login CSRF); a plain ``lti_browser`` is then
ignored.  Over plain HTTP (a trial on loopback) it keeps the plain name and path ``/lti/``.
``Partitioned`` (CHIPS) keeps the cookie working inside the LMS's iframe where browsers
block third-party cookies.  The session itself is never a third-party cookie: the launch gives a one-time
ticket, redeemed on the tool's own site (at once in a top-level launch; in a frame, through "open in a new
window"), where :func:`.auth.new_session` sets the ordinary ``SameSite=Strict`` session cookie.

Framing: the LTI pages carry ``frame-ancestors`` with the registered platforms' origins (the launching
platform's for a launch); every other page of the service keeps ``frame-ancestors 'none'``.

Refusals: a launch the core refuses raises :class:`~autograder.service.lti.launch.LaunchRefused` (a domain
error), shown by :mod:`.errors` through :func:`refused_page`; a malformed form becomes such a refusal too, so
the platform's frame shows it.  The instructor's page uses :mod:`.auth` like the other pages.  The tool's keys
and the outbound client live in :class:`Tool`, made once per app (``app.state.lti``).
"""

from __future__ import annotations

import secrets
from urllib.parse import urlencode, urlsplit

import httpx
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from ...check.specs import all_assignments
from .. import sessions
from ..errors import Invalid, ServiceError
from ..lti import deeplink, enroll, launch, nrps, passback, registry
from ..lti import status as lti_status
from ..lti.ags import AgsError, Tokens
from ..lti.keys import ToolKeys
from . import auth
from .forms import read_form
from .render import SITE_TITLE, environment, render, root_of

BROWSER_COOKIE = "lti_browser"
BROWSER_SECONDS = 600
MAX_FORM = 80 * 1024  # an id_token with many claims (Canvas sends a few KiB)


class Tool:
    """The tool's side of LTI for one app: its keys, the platforms' cached key sets, the outbound client."""

    def __init__(self, data_root) -> None:
        self.keys = ToolKeys(data_root)
        self.platform_keys = registry.PlatformKeys()
        self.http = httpx.Client(timeout=20.0)
        self.tokens = Tokens(self.keys, self.http)


def tool_of(request: Request) -> Tool:
    return request.app.state.lti


def csp(frame_origins: list[str], form_origins: list[str] = ()) -> str:
    ancestors = " ".join(frame_origins) if frame_origins else "'none'"
    forms = " ".join(["'self'", *form_origins])
    return ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
            f"form-action {forms}; base-uri 'none'; frame-ancestors {ancestors}")


def _origin(url: str) -> str:
    p = urlsplit(url)
    return f"{p.scheme}://{p.netloc}"


def framed(request: Request) -> bool:
    """Is the page loaded inside a frame (``Sec-Fetch-Dest``, sent by every current browser)?"""
    return request.headers.get("sec-fetch-dest", "") in ("iframe", "frame", "embed", "object")


def _all_origins(request: Request) -> list[str]:
    return sorted({o for p in registry.all_platforms(auth.service_of(request).db) for o in p.origins()})


def page(request: Request, name: str, status: int = 200, frame: list[str] | None = None,
         forms: list[str] = (), **context) -> HTMLResponse:
    """An LTI page: framable by the platforms (``frame``: these origins; default every registered platform's)."""
    html = environment().get_template(name).render(root=root_of(request), site_title=SITE_TITLE, account=None, csrf="", **context)
    return HTMLResponse(html, status_code=status, headers={
        "Content-Security-Policy": csp(_all_origins(request) if frame is None else frame, list(forms)),
        "Referrer-Policy": "same-origin"})


def refused_page(request: Request, message: str, status: int) -> HTMLResponse:
    """The refusal of a login or launch (:mod:`.errors` shows every ``LaunchRefused`` with it)."""
    return page(request, "lti/refused.html", status, message=message)


def _base(request: Request) -> str:
    return str(request.base_url).rstrip("/")


def _browser_cookie(request: Request, value: str, max_age: int) -> str:
    """The launch cookie's ``Set-Cookie`` value: ``__Host-`` with path ``/`` over HTTPS, plain under ``/lti/``
    over HTTP (:func:`.auth.read_cookie` reads it under the same name)."""
    secure = auth.is_https(request)
    name, path = sessions.cookie_name(BROWSER_COOKIE, secure=secure), "/" if secure else "/lti/"
    return f"{name}={value}; Path={path}; Max-Age={max_age}; HttpOnly; Secure; SameSite=None; Partitioned"


async def _form(request: Request, limit: int = MAX_FORM) -> dict[str, str]:
    """The posted form; a malformed or too large one is a launch refusal (shown inside the platform's frame)."""
    try:
        return await read_form(request, limit)
    except ServiceError as exc:  # its status is the cause's (:func:`.errors.launch_refused`)
        raise launch.LaunchRefused(f"表单不正确：{exc.message}") from exc


# ---- launch: login initiation, the launch itself, the one-time ticket


async def login(request: Request) -> Response:
    service = auth.service_of(request)
    params = await _form(request) if request.method == "POST" else dict(request.query_params.items())
    browser = auth.read_cookie(request, BROWSER_COOKIE)
    if not browser or len(browser) > 64:
        browser = secrets.token_urlsafe(32)
    out = await run_in_threadpool(launch.begin, service.db, params, _base(request) + "/lti/launch", browser)
    response = RedirectResponse(f"{out.url}{'&' if '?' in out.url else '?'}{urlencode(out.params)}", status_code=302,
                                headers={"Content-Security-Policy": csp(out.platform.origins())})
    response.headers.append("Set-Cookie", _browser_cookie(request, browser, BROWSER_SECONDS))
    return response


def _launch(request: Request, form: dict[str, str], browser: str | None) -> Response:
    service, tool = auth.service_of(request), tool_of(request)
    verified = launch.validate(service.db, tool.platform_keys, form.get("id_token", ""), form.get("state", ""), browser)
    if verified.message_type == launch.DEEP_LINKING:
        return _deep_linking_page(request, verified)
    account = enroll.sign_in(service.db, verified)
    service.db.set_setting("lti_base_url", _base(request))
    assignment = enroll.assignment_of(verified, list(service.policy.assignments))
    if account.is_instructor:
        target = f"instructor/assignments/{assignment}" if assignment else "instructor/"
    else:
        target = f"assignments/{assignment}" if assignment else ""
    ticket = enroll.handoff(service.db, account, target)
    enter_url = f"{root_of(request)}lti/enter?{urlencode({'t': ticket})}"
    in_frame = framed(request)
    response = page(request, "lti/landing.html", frame=verified.platform.origins(), person=account, enter=enter_url,
                    framed=in_frame, title=service.titles.get(assignment, assignment) if assignment else "")
    if not in_frame:
        response.headers["Refresh"] = f"0;url={enter_url}"
    return response


async def launch_post(request: Request) -> Response:
    form = await _form(request)
    return await run_in_threadpool(_launch, request, form, auth.read_cookie(request, BROWSER_COOKIE))


def enter(request: Request) -> Response:
    """Redeem the ticket: the session is issued where every session is (:func:`.auth.new_session`)."""
    found = enroll.redeem(auth.service_of(request).db, request.query_params.get("t", ""))
    if found is None:
        raise launch.LaunchRefused("这个链接已经用过或已过期：请回到课程平台重新打开作业")
    account, target = found
    cookie, _ = auth.new_session(request, account)
    response = RedirectResponse(root_of(request) + target, status_code=303)
    response.headers.append("Set-Cookie", cookie)
    return response


# ---- deep linking: the instructor's choice waits on the server (a ticket) until they pick an assignment


def _deep_linking_page(request: Request, verified: launch.Launch) -> Response:
    service = auth.service_of(request)
    ticket = deeplink.hold(service.db, verified)
    items = [{"name": n, "title": service.titles.get(n, n), "max_score": max_score(n)} for n in service.policy.assignments]
    return page(request, "lti/deeplink.html", frame=verified.platform.origins(), ticket=ticket, assignments=items)


def _deep_link_choice(request: Request, form: dict[str, str]) -> Response:
    service = auth.service_of(request)
    name = form.get("assignment", "")
    held = deeplink.take(service.db, form.get("ticket", ""))
    if name not in service.policy.assignments:
        raise launch.LaunchRefused(f"没有作业 {name[:100]}")
    title = service.titles.get(name, name)
    item = deeplink.assignment_item(_base(request) + "/lti/launch", name, title, max_score(name))
    token = deeplink.response_jwt(tool_of(request).keys, held, [item])
    return page(request, "lti/deeplink_return.html", frame=held.platform.origins(), forms=[_origin(held.return_url)],
                title=title, return_url=held.return_url, jwt=token)


async def deep_link_post(request: Request) -> Response:
    form = await _form(request, 8192)
    return await run_in_threadpool(_deep_link_choice, request, form)


# ---- the instructor's page: passbacks (retry) and courses (roster sync, who never launched)

NOT_INSTRUCTOR = "只有教师可以查看课程平台的设置"


def _admin_page(request: Request, who: auth.Caller, message: str = "", status: int = 200) -> Response:
    db = auth.service_of(request).db
    return render(request, "lti/admin.html", status, account=who.account, csrf=auth.csrf_token(request, who),
                  message=message, summary=passback.summary(db), open=lti_status.open_passbacks(db),
                  courses=lti_status.courses(db))


def admin(request: Request) -> Response:
    return _admin_page(request, auth.instructor(auth.page_caller(request), NOT_INSTRUCTOR))


async def _posted(request: Request, message: str) -> tuple[auth.Caller, dict[str, str]]:
    form = await read_form(request)
    return auth.instructor(await run_in_threadpool(auth.page_post, request, form), message), form


async def admin_retry(request: Request) -> Response:
    who, _ = await _posted(request, "只有教师可以重试回传")
    n = await run_in_threadpool(passback.retry_failed, auth.service_of(request).db)
    return await run_in_threadpool(_admin_page, request, who, f"已重新排队 {n} 条回传失败的成绩")


def _sync(request: Request, who: auth.Caller, form: dict[str, str]) -> Response:
    tool = tool_of(request)
    try:
        platform = int(form.get("platform", "0"))
    except ValueError:
        raise Invalid("表单不正确") from None
    try:
        result = nrps.sync(auth.service_of(request).db, tool.tokens, tool.http, platform, form.get("context", ""))
    except AgsError as exc:
        return _admin_page(request, who, f"同步名单失败：{exc.message}", 502)
    return _admin_page(request, who, f"名单已同步：课程平台上有 {result.members} 名学生，新加入 {result.enrolled} 名，"
                                     f"新退课 {result.departed} 名")


async def admin_sync(request: Request) -> Response:
    who, form = await _posted(request, "只有教师可以同步名单")
    return await run_in_threadpool(_sync, request, who, form)


# ---- the tool's public configuration


def jwks(request: Request) -> Response:
    return JSONResponse(tool_of(request).keys.jwks(),
                        headers={"Cache-Control": "max-age=300", "Cross-Origin-Resource-Policy": "cross-origin"})


def canvas(request: Request) -> Response:
    return JSONResponse(canvas_config(_base(request)), headers={"Cross-Origin-Resource-Policy": "cross-origin"})


ROUTES = [
    Route("/login", login, methods=["GET", "POST"]),
    Route("/launch", launch_post, methods=["POST"]),
    Route("/enter", enter, methods=["GET"]),
    Route("/deeplink", deep_link_post, methods=["POST"]),
    Route("/admin", admin, methods=["GET"]),
    Route("/admin/retry", admin_retry, methods=["POST"]),
    Route("/admin/sync", admin_sync, methods=["POST"]),
    Route("/jwks.json", jwks, methods=["GET"]),
    Route("/config/canvas.json", canvas, methods=["GET"]),
]


def max_score(assignment: str) -> float:
    """The assignment's maximum score (the sum of its cases' points)."""
    return float(all_assignments()[assignment].max_score())


def canvas_config(base: str) -> dict:
    """A Canvas developer key (LTI key, "Paste JSON") for the tool at ``base``."""
    host = urlsplit(base).hostname or ""
    return {
        "title": SITE_TITLE, "description": "课程“评价二分类模型”的自动评分作业：提交、评分、成绩自动回传",
        "oidc_initiation_url": f"{base}/lti/login", "target_link_uri": f"{base}/lti/launch",
        "public_jwk_url": f"{base}/lti/jwks.json",
        "scopes": ["https://purl.imsglobal.org/spec/lti-ags/scope/lineitem",
                   "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem.readonly",
                   "https://purl.imsglobal.org/spec/lti-ags/scope/score",
                   "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly"],
        "extensions": [{"domain": host, "tool_id": "autograder", "platform": "canvas.instructure.com", "privacy_level": "public",
                        "settings": {"text": SITE_TITLE, "placements": [
                            {"placement": "assignment_selection", "message_type": "LtiDeepLinkingRequest",
                             "target_link_uri": f"{base}/lti/launch"},
                            {"placement": "link_selection", "message_type": "LtiDeepLinkingRequest",
                             "target_link_uri": f"{base}/lti/launch"}]}}],
        "custom_fields": {},
    }
