"""The LTI 1.3 web module of the site, mounted at ``/lti`` by :mod:`.app` (thin: the work is in :mod:`autograder.service.lti`).

=======  ========================  =============================================================================
GET      /lti/login                third-party initiated login (also POST): state + nonce, redirect to the platform
POST     /lti/login
POST     /lti/launch               the redirect URI: validate the id_token, find the LMS course's binding, sign in
GET      /lti/enter?t=TICKET       redeem the launch's one-time ticket: a session of the course, then its page
POST     /lti/enter                the same, confirmed by the person on the tool's own page (another browser)
POST     /lti/deeplink             the instructor's choice on the deep-linking page -> signed response to the LMS
POST     /lti/bind-request         a teacher of an unbound LMS course asks to bind it to a course here
POST     /lti/link                 a student's first launch linked to their roster entry (access code), or not
GET      /lti/jwks.json            the tool's public keys
GET      /lti/config/canvas.json   a Canvas developer-key configuration (JSON)
=======  ========================  =============================================================================

One registration per platform serves every course: a launch's role holds only in the course its LMS course is
bound to (:mod:`..lti.bindings`); from an unbound LMS course it grants nothing (its teachers see how to ask for
the binding).  Every address the tool gives away is the configured public one (``site.public_url``), never the
request's ``Host``.

Browser binding without third-party cookies: ``/lti/login`` sets a launch-only cookie (random value,
``SameSite=None; Secure; Partitioned; HttpOnly``, ten minutes) and keeps only its hash with the state on the
server.  Over HTTPS it is ``__Host-lti_browser`` (path ``/``, no ``Domain``), so a sibling host cannot plant a
value it knows; a plain ``lti_browser`` is then ignored.  Over plain HTTP (a trial on loopback) it keeps the plain
name and path ``/lti/``.  ``Partitioned`` (CHIPS) keeps the cookie working inside the LMS's iframe.  The session
itself is never a third-party cookie: the launch gives a one-time ticket, bound to that launch cookie
(:mod:`..lti.tickets`), redeemed on the tool's own site - at once in the browser that launched, where no other
account of the course is signed in; otherwise only after the person confirms, on a page that names the account,
that they want to be signed in as it (the new window of a framed launch, whose browser keeps the frame's cookie
partitioned under the LMS's site; or a ticket someone else sent, a login CSRF).

Framing: the LTI pages carry ``frame-ancestors`` with the registered platforms' origins (the launching
platform's for a launch); every other page of the service keeps ``frame-ancestors 'none'``.  Refusals raise
:class:`~autograder.service.lti.launch.LaunchRefused`, shown by :mod:`.errors` through :func:`refused_page`.
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
from .. import hub, sessions
from ..errors import Forbidden, NotSignedIn, ServiceError, TooMany
from ..lti import bindings, deeplink, enroll, launch, registry, tickets
from ..lti.ags import Tokens
from ..lti.keys import ToolKeys
from ..lti.launch import Launch, LaunchRefused
from ..lti.tickets import PendingKind
from ..roles import Role
from ..service import Service
from ..site import Site
from . import auth
from .forms import read_form
from .render import SITE_TITLE, environment, root_of, site_root_of

BROWSER_COOKIE = "lti_browser"
ENTER_COOKIE = "lti_enter"  # the confirmation form's anonymous session (its CSRF token is tied to it)
BROWSER_SECONDS = 600
MAX_FORM = 80 * 1024  # an id_token with many claims (Canvas sends a few KiB)


class Tool:
    """The tool's side of LTI for one site: its keys, the platforms' cached key sets, the outbound client."""

    def __init__(self, data_root) -> None:
        self.keys = ToolKeys(data_root)
        self.platform_keys = registry.PlatformKeys()
        self.http = httpx.Client(timeout=20.0)
        self.tokens = Tokens(self.keys, self.http)


def tool_of(request: Request) -> Tool:
    return request.app.state.lti


def site_of(request: Request) -> Site:
    return request.app.state.site


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
    return sorted({o for p in registry.all_platforms(site_of(request).db) for o in p.origins()})


def page(request: Request, name: str, status: int = 200, frame: list[str] | None = None,
         forms: list[str] = (), **context) -> HTMLResponse:
    """An LTI page: framable by the platforms (``frame``: these origins; default every registered platform's)."""
    context = {"course": None, "account": None, "csrf": "", **context}
    html = environment().get_template(name).render(root=root_of(request), site_root=site_root_of(request),
                                                   site_title=SITE_TITLE, **context)
    return HTMLResponse(html, status_code=status, headers={
        "Content-Security-Policy": csp(_all_origins(request) if frame is None else frame, list(forms)),
        "Referrer-Policy": "same-origin"})


def refused_page(request: Request, message: str, status: int) -> HTMLResponse:
    """The refusal of a login or launch (:mod:`.errors` shows every ``LaunchRefused`` with it)."""
    return page(request, "lti/refused.html", status, message=message)


def _browser_cookie(request: Request, value: str, max_age: int) -> str:
    """The launch cookie's ``Set-Cookie`` value: ``__Host-`` with path ``/`` over HTTPS, plain under ``/lti/``
    over HTTP (:func:`.auth.read_cookie` reads it under the same name)."""
    secure = auth.is_https(request)
    name, path = sessions.cookie_name(BROWSER_COOKIE, secure=secure), "/" if secure else "/lti/"
    return f"{name}={value}; Path={path}; Max-Age={max_age}; HttpOnly; Secure; SameSite=None; Partitioned"


def _browser(request: Request) -> str | None:
    value = auth.read_cookie(request, BROWSER_COOKIE)
    return value if value and len(value) <= 64 else None


async def _form(request: Request, limit: int = MAX_FORM) -> dict[str, str]:
    """The posted form; a malformed or too large one is a launch refusal (shown inside the platform's frame)."""
    try:
        return await read_form(request, limit)
    except ServiceError as exc:  # its status is the cause's (:func:`.errors.launch_refused`)
        raise LaunchRefused(f"表单不正确：{exc.message}") from exc


def _course_of(request: Request, verified: Launch) -> tuple[Service, bindings.Binding]:
    """The course the launch's LMS course is bound to, and the binding (LaunchRefused when there is none now)."""
    site = site_of(request)
    found = bindings.find(site.db, verified.platform.id, verified.deployment_id, verified.context_id) \
        if verified.context_id else None
    if found is None or not found.active or found.course_id not in site.courses:
        raise LaunchRefused("这门课程平台上的课程没有绑定到本服务的课程（或绑定已被撤销）：请回到课程平台重新打开", 403)
    return site.courses[found.course_id], found


# ---- launch: login initiation, the launch itself, the one-time ticket


async def login(request: Request) -> Response:
    site = site_of(request)
    params = await _form(request) if request.method == "POST" else dict(request.query_params.items())
    browser = _browser(request) or secrets.token_urlsafe(32)
    out = await run_in_threadpool(lambda: launch.begin(site.db, params, site.public_url + "/lti/launch", browser,
                                                       address=auth.client_address(request)))
    response = RedirectResponse(f"{out.url}{'&' if '?' in out.url else '?'}{urlencode(out.params)}", status_code=302,
                                headers={"Content-Security-Policy": csp(out.platform.origins())})
    response.headers.append("Set-Cookie", _browser_cookie(request, browser, BROWSER_SECONDS))
    return response


def _launch(request: Request, form: dict[str, str], browser: str | None) -> Response:
    site, tool = site_of(request), tool_of(request)
    verified = launch.validate(site.db, tool.platform_keys, form.get("id_token", ""), form.get("state", ""), browser)
    found = bindings.find(site.db, verified.platform.id, verified.deployment_id, verified.context_id) \
        if verified.context_id else None
    if found is None or not found.active or found.course_id not in site.courses:
        return _unbound(request, verified, found, browser)
    service = site.courses[found.course_id]
    if verified.role is None:
        raise LaunchRefused("你在课程平台上这门课中的角色（例如旁听者、观察者）不能使用本服务；如有疑问请联系任课教师", 403)
    if verified.message_type == launch.DEEP_LINKING:
        return _deep_linking_page(request, service, verified, browser)
    outcome = enroll.sign_in(service.db, verified, found, service.policy.gradable)
    if isinstance(outcome, enroll.NeedsCode):
        return _link_page(request, service, verified, tickets.hold(site.db, PendingKind.LINK_ACCOUNT, verified, browser),
                          hint=outcome.hint)
    return _landing(request, service, outcome, verified, browser)


def _landing(request: Request, service: Service, account, verified: Launch, browser: str | None) -> Response:
    """The page after a launch: at once to the course (top level), or a button to open it in a new window (frame)."""
    assignment = enroll.assignment_of(verified, service.policy.gradable)
    kind = "quizzes" if assignment in service.policy.quizzes else "assignments"
    if account.is_staff:
        target = f"instructor/{kind}/{assignment}" if assignment else "instructor/"
    else:
        target = f"{kind}/{assignment}" if assignment else ""
    ticket = tickets.handoff(site_of(request).db, service.course.id, account.id, target, browser)
    enter_url = f"{root_of(request)}lti/enter?{urlencode({'t': ticket})}"
    in_frame = framed(request)
    response = page(request, "lti/landing.html", frame=verified.platform.origins(), person=account, enter=enter_url,
                    framed=in_frame, course=service.course,
                    title=service.titles.get(assignment, assignment) if assignment else "")
    if not in_frame:
        response.headers["Refresh"] = f"0;url={enter_url}"
    return response


async def launch_post(request: Request) -> Response:
    form = await _form(request)
    return await run_in_threadpool(_launch, request, form, _browser(request))


def _current_login(request: Request, service: Service) -> str | None:
    """The login of the account signed in to ``service``'s course in this browser, if any."""
    session = service.signer.read(auth.read_cookie(request, service.signer.name(sessions.COOKIE)))
    if session is None:
        return None
    try:
        return service.accounts.of_session(session.account_id, session.code_id, session.nonce).login
    except NotSignedIn:
        return None


def _signed_in(request: Request, service: Service, account, target: str) -> Response:
    cookie, _ = auth.new_session(request, account, service.signer)
    response = RedirectResponse(f"{site_root_of(request)}c/{service.course.id}/{target}", status_code=303)
    response.headers.append("Set-Cookie", cookie)
    auth.set_cookie(request, response, ENTER_COOKIE, "", 0)
    return response


def enter(request: Request) -> Response:
    """Redeem the ticket at once where it is safe (see the module's docstring), else ask the person to confirm."""
    site = site_of(request)
    ticket, browser = request.query_params.get("t", ""), _browser(request)
    found = tickets.peek(site.db, ticket, browser)
    service = site.course(found.course_id)
    account = enroll.account_of(service.db, found.account_id)
    current = _current_login(request, service)
    if found.same_browser and current in (None, account.login):
        tickets.take(site.db, ticket, browser)
        return _signed_in(request, service, account, found.target)
    value, anonymous = site.admin_signer.issue(0, "lti-enter")
    response = page(request, "lti/enter.html", 200, frame=[], person=account, course=service.course, ticket=ticket,
                    current=current if current != account.login else None, csrf=site.admin_signer.csrf_token(anonymous))
    auth.set_cookie(request, response, ENTER_COOKIE, value, 600)
    return response


async def enter_post(request: Request) -> Response:
    """The person confirmed, on the page :func:`enter` showed, that they want to be signed in as the named account."""
    site = site_of(request)
    form = await read_form(request)
    auth.check_origin(request)
    anonymous = site.admin_signer.read(auth.read_cookie(request, ENTER_COOKIE))
    if anonymous is None or anonymous.code_id != "lti-enter" or not site.admin_signer.check_csrf(anonymous, form.get(sessions.CSRF_FIELD)):
        raise Forbidden("确认页面已过期，请回到课程平台重新打开作业")
    found = await run_in_threadpool(tickets.take, site.db, form.get("t", ""), _browser(request))
    service = site.course(found.course_id)
    account = await run_in_threadpool(enroll.account_of, service.db, found.account_id)
    return _signed_in(request, service, account, found.target)


# ---- a launch from an LMS course that is not bound: its teachers may ask for the binding


def _unbound(request: Request, verified: Launch, found: bindings.Binding | None, browser: str | None) -> Response:
    site = site_of(request)
    if verified.role != Role.INSTRUCTOR or not verified.context_id:
        raise LaunchRefused("这门课程平台上的课程还没有接入本服务，所以不能从这里打开作业。请告诉任课教师："
                            "教师从课程平台打开本工具时，可以申请把课程绑定到本服务的课程。", 403)
    ticket = tickets.hold(site.db, PendingKind.BIND_REQUEST, verified, browser)
    courses = [{"id": s.course.id, "title": s.course.title} for s in site.courses.values()]
    requested = found.course_id if found is not None else None
    return page(request, "lti/unbound.html", 403, frame=verified.platform.origins(), ticket=ticket, courses=courses,
                requested=site.courses[requested].course if requested in site.courses else None,
                context_title=verified.context_title or verified.context_id, platform=verified.platform.name)


def _bind_request(request: Request, form: dict[str, str]) -> Response:
    site = site_of(request)
    verified = tickets.held(site.db, form.get("ticket", ""), PendingKind.BIND_REQUEST, _browser(request))
    course_id = form.get("course", "")
    if verified.role != Role.INSTRUCTOR or course_id not in site.courses:
        raise LaunchRefused("请选择本服务中的一门课程")
    who = " ".join(x for x in (verified.name, f"<{verified.email}>" if verified.email else "") if x) or verified.sub
    bindings.request(site.db, verified.platform.id, verified.deployment_id, verified.context_id, course_id,
                     by=f"{who}（{verified.platform.name}）"[:400], title=verified.context_title or verified.context_id)
    return page(request, "lti/requested.html", frame=verified.platform.origins(), course=site.courses[course_id].course,
                context_title=verified.context_title or verified.context_id)


async def bind_request_post(request: Request) -> Response:
    form = await _form(request, 8192)
    return await run_in_threadpool(_bind_request, request, form)


# ---- a student's first launch, linked to their roster entry with their access code


def _link_page(request: Request, service: Service, verified: Launch, ticket: str, *, hint: str = "", error: str = "",
               status: int = 200) -> Response:
    return page(request, "lti/link.html", status, frame=verified.platform.origins(), ticket=ticket, course=service.course,
                hint=hint, error=error, person_name=verified.name)


def _link(request: Request, form: dict[str, str]) -> Response:
    site = site_of(request)
    ticket, browser = form.get("ticket", ""), _browser(request)
    verified = tickets.held(site.db, ticket, PendingKind.LINK_ACCOUNT, browser, use=False)
    service, found = _course_of(request, verified)
    assignments = service.policy.gradable
    if form.get("choice") == "new":
        account = enroll.sign_in(service.db, verified, found, assignments, new_account=True)
    else:
        login_name, code = form.get("login", "").strip()[:100], form.get("code", "").strip()
        try:
            by_code = service.accounts.sign_in(code, auth.client_address(request), login=login_name)
        except NotSignedIn:
            return _link_page(request, service, verified, ticket, hint=login_name, status=401,
                              error="学号或访问码不正确。请检查后重试；如果没有访问码，请选择“我没有访问码”。")
        except TooMany as exc:
            return _link_page(request, service, verified, ticket, hint=login_name, error=exc.message, status=429)
        account = enroll.link(service.db, verified, by_code, assignments)
    tickets.held(site.db, ticket, PendingKind.LINK_ACCOUNT, browser)  # used: the person is linked now
    return _landing(request, service, account, verified, browser)


async def link_post(request: Request) -> Response:
    form = await _form(request, 8192)
    return await run_in_threadpool(_link, request, form)


# ---- deep linking: the instructor's choice waits on the server (a ticket) until they pick an assignment


def _deep_linking_page(request: Request, service: Service, verified: Launch, browser: str | None) -> Response:
    if verified.role != Role.INSTRUCTOR:
        raise LaunchRefused("只有课程的教师可以添加作业", 403)
    deeplink.return_url(verified)
    deeplink.check_accepts(verified)
    deeplink.check_data(verified)
    ticket = tickets.hold(site_of(request).db, PendingKind.DEEP_LINK, verified, browser)
    items = [{"name": n, "title": service.titles.get(n, n), "max_score": max_score(service, n)} for n in service.policy.gradable]
    return page(request, "lti/deeplink.html", frame=verified.platform.origins(), ticket=ticket, assignments=items,
                course=service.course, hub_links=_hub_links(request, service, verified.deep_linking.get("accept_types")))


def _hub_links(request: Request, service: Service, accept_types) -> list[dict[str, str]]:
    """The course's JupyterHub links a deep link may add instead (:func:`..hub.deep_link_choices`)."""
    found = getattr(request.app.state, "hub", None)
    known = all_assignments()
    return hub.deep_link_choices(found.site.url if found else None, service.policy.hub, service.course.id,
                                 {n: (service.titles.get(n, n), known[n].notebook) for n in service.policy.assignments},
                                 accept_types)


def _deep_link_choice(request: Request, form: dict[str, str]) -> Response:
    site = site_of(request)
    verified = tickets.held(site.db, form.get("ticket", ""), PendingKind.DEEP_LINK, _browser(request))
    service, _ = _course_of(request, verified)
    name = form.get("assignment", "")
    offered = _hub_links(request, service, verified.deep_linking.get("accept_types"))
    linked = next((c for c in offered if c["value"] == name), None)  # a JupyterHub link
    if linked is None and name not in service.policy.gradable:
        raise LaunchRefused(f"课程 {service.course.title} 没有作业 {name[:100]}")
    if linked is None:  # a plain link has no launch and no gradebook column: the assignment is not linked here
        with service.db.write() as con:
            enroll.mark_linked(con, verified.platform.id, verified.context_id, name, service.now())
    title = linked["title"] if linked else service.titles.get(name, name)
    item = deeplink.link_item(linked["url"], f"{title}（在 JupyterHub 中打开）") if linked \
        else deeplink.assignment_item(site.public_url + "/lti/launch", name, title, max_score(service, name))
    token = deeplink.response_jwt(tool_of(request).keys, verified, [item])
    url = deeplink.return_url(verified)
    return page(request, "lti/deeplink_return.html", frame=verified.platform.origins(), forms=[_origin(url)],
                title=title, return_url=url, jwt=token)


async def deep_link_post(request: Request) -> Response:
    form = await _form(request, 8192)
    return await run_in_threadpool(_deep_link_choice, request, form)


# ---- the tool's public configuration


def jwks(request: Request) -> Response:
    return JSONResponse(tool_of(request).keys.jwks(),
                        headers={"Cache-Control": "max-age=300", "Cross-Origin-Resource-Policy": "cross-origin"})


def canvas(request: Request) -> Response:
    return JSONResponse(canvas_config(site_of(request).public_url), headers={"Cross-Origin-Resource-Policy": "cross-origin"})


ROUTES = [
    Route("/login", login, methods=["GET", "POST"]),
    Route("/launch", launch_post, methods=["POST"]),
    Route("/enter", enter, methods=["GET"]),
    Route("/enter", enter_post, methods=["POST"]),
    Route("/deeplink", deep_link_post, methods=["POST"]),
    Route("/bind-request", bind_request_post, methods=["POST"]),
    Route("/link", link_post, methods=["POST"]),
    Route("/jwks.json", jwks, methods=["GET"]),
    Route("/config/canvas.json", canvas, methods=["GET"]),
]


def max_score(service: Service, assignment: str) -> float:
    """The maximum score of an assignment (the sum of its cases' points) or a quiz (of its questions')."""
    if assignment in service.policy.quizzes:
        return service.policy.quizzes[assignment].max_score
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
