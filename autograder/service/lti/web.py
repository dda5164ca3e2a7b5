"""The LTI 1.3 web module: a Starlette Router the app mounts at ``/lti`` (thin: the work is in the core modules).

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
``SameSite=None; Secure; Partitioned; HttpOnly``, path ``/lti/``, ten minutes) and keeps only its hash with the
state on the server.  ``Partitioned`` (CHIPS) keeps the cookie working inside the LMS's iframe where browsers
block third-party cookies.  The session itself is never a third-party cookie: the launch gives a one-time
ticket, redeemed on the tool's own site (at once in a top-level launch; in a frame, through "open in a new
window"), where the ordinary ``SameSite=Strict`` session cookie of :mod:`..sessions` is set.

Framing: the LTI pages carry ``frame-ancestors`` with the registered platforms' origins (the launching
platform's for a launch); every other page of the service keeps ``frame-ancestors 'none'``.
"""

from __future__ import annotations

import secrets
from urllib.parse import urlencode, urlsplit

import httpx
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route, Router

from ...check.specs import all_assignments
from .. import pages, sessions
from ..pages import SITE_TITLE, PageError, environment, read_form, render, root_of
from ..uploads import UploadError
from . import deeplink, enroll, launch, nrps, passback, registry
from . import status as lti_status
from .ags import AgsError, Tokens
from .keys import ToolKeys

BROWSER_COOKIE = "lti_browser"
BROWSER_SECONDS = 600
MAX_FORM = 80 * 1024  # an id_token with many claims (Canvas sends a few KiB)


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


def router(service) -> Router:
    """The ``/lti`` routes over ``service`` (:class:`..app.Service`)."""
    keys = ToolKeys(service.data_root)
    platform_keys = registry.PlatformKeys()

    def all_origins() -> list[str]:
        return sorted({o for p in registry.all_platforms(service.db) for o in p.origins()})

    def page(request: Request, name: str, status: int = 200, frame: list[str] | None = None,
             forms: list[str] = (), **context) -> HTMLResponse:
        html = environment().get_template(name).render(root=root_of(request), site_title=SITE_TITLE, account=None, csrf="", **context)
        return HTMLResponse(html, status_code=status, headers={
            "Content-Security-Policy": csp(all_origins() if frame is None else frame, list(forms)), "Referrer-Policy": "same-origin"})

    def refused(request: Request, exc: launch.LaunchRefused) -> HTMLResponse:
        return page(request, "lti/refused.html", exc.status, message=exc.message)

    def base(request: Request) -> str:
        return str(request.base_url).rstrip("/")

    def secure_cookie(name: str, value: str, max_age: int) -> str:
        return f"{name}={value}; Path=/lti/; Max-Age={max_age}; HttpOnly; Secure; SameSite=None; Partitioned"

    async def form_of(request: Request, limit: int = MAX_FORM) -> dict[str, str] | HTMLResponse:
        """The posted form, or the refusal page for a malformed or too large one."""
        try:
            return await read_form(request, limit)
        except (PageError, UploadError) as exc:
            return refused(request, launch.LaunchRefused(f"表单不正确：{exc.message}", exc.status))

    async def login(request: Request) -> Response:
        if request.method == "POST":
            params = await form_of(request)
            if isinstance(params, Response):
                return params
        else:
            params = {k: v for k, v in request.query_params.items()}
        browser = request.cookies.get(BROWSER_COOKIE)
        if not browser or len(browser) > 64:
            browser = secrets.token_urlsafe(32)
        try:
            out = await run_in_threadpool(launch.begin, service.db, params, base(request) + "/lti/launch", browser)
        except launch.LaunchRefused as exc:
            return refused(request, exc)
        response = RedirectResponse(f"{out.url}{'&' if '?' in out.url else '?'}{urlencode(out.params)}", status_code=302,
                                    headers={"Content-Security-Policy": csp(out.platform.origins())})
        response.headers.append("Set-Cookie", secure_cookie(BROWSER_COOKIE, browser, BROWSER_SECONDS))
        return response

    def do_launch(form: dict[str, str], browser: str | None, request: Request) -> Response:
        try:
            verified = launch.validate(service.db, platform_keys, form.get("id_token", ""), form.get("state", ""), browser)
        except launch.LaunchRefused as exc:
            return refused(request, exc)
        frame = verified.platform.origins()
        if verified.message_type == launch.DEEP_LINKING:
            return deep_linking_page(request, verified)
        account = enroll.sign_in(service.db, verified)
        service.db.set_setting("lti_base_url", base(request))
        assignment = enroll.assignment_of(verified, list(service.policy.assignments))
        if account.is_instructor:
            target = f"instructor/assignments/{assignment}" if assignment else "instructor/"
        else:
            target = f"assignments/{assignment}" if assignment else ""
        ticket = enroll.handoff(service.db, account, target)
        enter = f"{root_of(request)}lti/enter?{urlencode({'t': ticket})}"
        in_frame = framed(request)
        response = page(request, "lti/landing.html", frame=frame, person=account, enter=enter, framed=in_frame,
                        title=service.titles.get(assignment, assignment) if assignment else "")
        if not in_frame:
            response.headers["Refresh"] = f"0;url={enter}"
        return response

    async def launch_post(request: Request) -> Response:
        form = await form_of(request)
        if isinstance(form, Response):
            return form
        return await run_in_threadpool(do_launch, form, request.cookies.get(BROWSER_COOKIE), request)

    def enter(request: Request) -> Response:
        found = enroll.redeem(service.db, request.query_params.get("t", ""))
        if found is None:
            return refused(request, launch.LaunchRefused("这个链接已经用过或已过期：请回到课程平台重新打开作业"))
        account, target = found
        value, _ = service.signer.issue(account.id, account.code_id)
        response = RedirectResponse(root_of(request) + target, status_code=303)
        response.headers.append("Set-Cookie", sessions.cookie_header(value, secure=request.url.scheme == "https"))
        return response

    # ---- deep linking: the instructor's choice waits on the server (a ticket) until they pick an assignment

    def deep_linking_page(request: Request, verified: launch.Launch) -> Response:
        try:
            ticket = deeplink.hold(service.db, verified)
        except launch.LaunchRefused as exc:
            return refused(request, exc)
        items = [{"name": n, "title": service.titles.get(n, n), "max_score": max_score(n)} for n in service.policy.assignments]
        return page(request, "lti/deeplink.html", frame=verified.platform.origins(), ticket=ticket, assignments=items)

    def deep_link_choice(form: dict[str, str], request: Request) -> Response:
        name = form.get("assignment", "")
        try:
            held = deeplink.take(service.db, form.get("ticket", ""))
            if name not in service.policy.assignments:
                raise launch.LaunchRefused(f"没有作业 {name[:100]}")
        except launch.LaunchRefused as exc:
            return refused(request, exc)
        title = service.titles.get(name, name)
        item = deeplink.assignment_item(base(request) + "/lti/launch", name, title, max_score(name))
        token = deeplink.response_jwt(keys, held, [item])
        return page(request, "lti/deeplink_return.html", frame=held.platform.origins(), forms=[_origin(held.return_url)],
                    title=title, return_url=held.return_url, jwt=token)

    async def deep_link_post(request: Request) -> Response:
        form = await form_of(request, 8192)
        if isinstance(form, Response):
            return form
        return await run_in_threadpool(deep_link_choice, form, request)

    # ---- the instructor's page: passbacks (retry) and courses (roster sync, who never launched)

    http = httpx.Client(timeout=20.0)
    tokens = Tokens(keys, http)

    def admin_page(request: Request, account, csrf: str, message: str = "", status: int = 200) -> Response:
        if not account.is_instructor:
            raise PageError(403, "只有教师可以查看课程平台的设置")
        return render(request, "lti/admin.html", status, account=account, csrf=csrf, message=message,
                      summary=passback.summary(service.db), open=lti_status.open_passbacks(service.db),
                      courses=lti_status.courses(service.db))

    @pages.page
    def admin(request: Request) -> Response:
        account, csrf = pages.signed_in(service, request)
        return admin_page(request, account, csrf)

    @pages.page
    async def admin_retry(request: Request) -> Response:
        form = await read_form(request)
        account, csrf = await run_in_threadpool(pages.checked_post, service, request, form)
        if not account.is_instructor:
            raise PageError(403, "只有教师可以重试回传")
        n = await run_in_threadpool(passback.retry_failed, service.db)
        return await run_in_threadpool(admin_page, request, account, csrf, f"已重新排队 {n} 条回传失败的成绩")

    def sync(account, csrf: str, form: dict[str, str], request: Request) -> Response:
        if not account.is_instructor:
            raise PageError(403, "只有教师可以同步名单")
        try:
            result = nrps.sync(service.db, tokens, http, int(form.get("platform", "0")), form.get("context", ""))
        except ValueError:
            raise PageError(400, "表单不正确") from None
        except AgsError as exc:
            return admin_page(request, account, csrf, f"同步名单失败：{exc.message}", 502)
        return admin_page(request, account, csrf, f"名单已同步：课程平台上有 {result.members} 名学生，新加入 {result.enrolled} 名，"
                                                  f"新退课 {result.departed} 名")

    @pages.page
    async def admin_sync(request: Request) -> Response:
        form = await read_form(request)
        account, csrf = await run_in_threadpool(pages.checked_post, service, request, form)
        return await run_in_threadpool(sync, account, csrf, form, request)

    # ---- the tool's public configuration

    def jwks(request: Request) -> Response:
        return JSONResponse(keys.jwks(), headers={"Cache-Control": "max-age=300", "Cross-Origin-Resource-Policy": "cross-origin"})

    def canvas(request: Request) -> Response:
        b = base(request)
        return JSONResponse(canvas_config(b), headers={"Cross-Origin-Resource-Policy": "cross-origin"})

    return Router(routes=[
        Route("/login", login, methods=["GET", "POST"]),
        Route("/launch", launch_post, methods=["POST"]),
        Route("/enter", enter, methods=["GET"]),
        Route("/deeplink", deep_link_post, methods=["POST"]),
        Route("/admin", admin, methods=["GET"]),
        Route("/admin/retry", admin_retry, methods=["POST"]),
        Route("/admin/sync", admin_sync, methods=["POST"]),
        Route("/jwks.json", jwks, methods=["GET"]),
        Route("/config/canvas.json", canvas, methods=["GET"]),
    ])


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
