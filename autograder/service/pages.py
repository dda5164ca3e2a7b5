"""The service's web pages for people (Chinese, server-rendered Jinja2 with autoescape), next to the JSON API.

* :mod:`.student_pages` - sign-in, the course page, an assignment's page (upload, live status, attempts and
  feedback) and one attempt's feedback;
* :mod:`.instructor_pages` - the overview, each assignment's live dashboard, students (attempts, regrades,
  deadline extensions, extra attempts), the roster (import, new codes once, resets).

This module holds what both share: the template environment, responses with a strict Content-Security-Policy
(scripts and styles only from ``/static/``, nothing inline), relative links (every link is relative to the page,
so the pages work under any path prefix, such as ``/submit/`` behind the reverse proxy of ``deploy/nginx``),
forms (each with the session's CSRF token, checked with the ``Origin`` by :meth:`.app.Service.authenticate`)
and error pages.  Whatever a person may see follows the API's rules: a student sees only their own submissions
(another's answers 404, like one that does not exist) and never an instructor's page (403).
"""

from __future__ import annotations

import functools
import inspect
from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable
from urllib.parse import parse_qs

import jinja2
from markupsafe import Markup
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, RedirectResponse, Response

from ..store import report
from . import sessions
from .codes import Account
from .overrides import OverrideError
from .roster import RosterError
from .times import as_datetime, stamp, utc_offset  # noqa: F401 - utc_offset: the pages' label of the zone
from .uploads import UploadError, read_capped

TEMPLATES = Path(__file__).resolve().parent / "templates"
STATIC = Path(__file__).resolve().parent / "static"
PAGE_CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
            "form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
LOGIN_COOKIE = "autograder_login"  # a signed anonymous session: the login form's CSRF token is tied to it
FORM_LIMIT = 8192
SITE_TITLE = "评价二分类模型 · 作业提交"


class PageError(Exception):
    """An error page: HTTP ``status`` and a Chinese message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


class NeedLogin(Exception):
    """No valid session: the page redirects to the sign-in form."""


def _num(x: float) -> str:
    return f"{x:g}"


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    """Templates of the pages (``templates/``) and of the store (the feedback body is shared with feedback.html)."""
    env = jinja2.Environment(loader=jinja2.ChoiceLoader([jinja2.FileSystemLoader(str(TEMPLATES)),
                                                         jinja2.FileSystemLoader(str(report.TEMPLATES))]),
                             autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters["num"] = _num
    env.filters["when"] = jinja2.pass_context(lambda ctx, t: when(t, ctx["tz"]))  # the course's zone (render's context)
    env.filters["left"] = time_left
    env.filters["percent"] = lambda x: f"{100 * x:.0f}%"
    return env


# ---- times: all in the course's zone (:mod:`.times`), machine-readable too; the browser only counts down


def when(t: float | datetime | None, tz: Any = None) -> Markup:
    """``<time datetime=ISO>`` with the time in ``tz`` (the course's zone; else its own) as text, the zone said."""
    if t is None:
        return Markup("—")
    dt = as_datetime(t)
    text = stamp(dt, tz if tz is not None else (dt.tzinfo or timezone.utc))
    return Markup('<time datetime="{}">{}</time>').format(dt.isoformat(timespec="seconds"), text)


def time_left(deadline: datetime | None, now: datetime) -> Markup:
    """``还剩 3 天 4 小时`` (updated by the browser every half minute) or ``已截止``."""
    if deadline is None:
        return Markup("无截止时间")
    seconds = (deadline - now).total_seconds()
    return Markup('<span data-countdown="{}">{}</span>').format(deadline.isoformat(timespec="seconds"), duration_text(seconds))


def duration_text(seconds: float) -> str:
    if seconds <= 0:
        return "已截止"
    minutes = int(seconds // 60)
    days, hours, mins = minutes // 1440, minutes % 1440 // 60, minutes % 60
    if days:
        return f"还剩 {days} 天 {hours} 小时"
    if hours:
        return f"还剩 {hours} 小时 {mins} 分钟"
    return f"还剩 {max(mins, 1) if seconds >= 60 else 0} 分钟" if seconds >= 60 else "还剩不到 1 分钟"


# ---- requests and responses


def root_of(request: Request) -> str:
    """The relative path from the requested page to the service's root: ``./``, ``../``, ``../../`` ..."""
    depth = request.url.path.count("/") - 1
    return "../" * depth if depth > 0 else "./"


def page_headers() -> dict[str, str]:
    """The pages' CSP, and a referrer policy under which the browser still sends ``Origin`` on the pages' own
    POSTs (with the API's ``no-referrer`` it sends ``Origin: null``, which the CSRF check refuses)."""
    return {"Content-Security-Policy": PAGE_CSP, "Referrer-Policy": "same-origin"}


def render(request: Request, name: str, status: int = 200, **context: Any) -> HTMLResponse:
    """The page ``name`` with the shared context (``root``, ``site_title``, ``tz``: the course's zone) and the pages' CSP."""
    tz = getattr(request.app.state, "course_zone", timezone.utc) if "app" in request.scope else timezone.utc
    html = environment().get_template(name).render(root=root_of(request), site_title=SITE_TITLE, tz=tz,
                                                   tz_label=utc_offset(datetime.now(tz)), **context)
    return HTMLResponse(html, status_code=status, headers=page_headers())


def redirect(request: Request, target: str) -> RedirectResponse:
    """303 to ``target`` (a path below the service's root, without the leading slash), as a relative URL."""
    return RedirectResponse(root_of(request) + target, status_code=303, headers=page_headers())


async def read_form(request: Request, limit: int = FORM_LIMIT) -> dict[str, str]:
    """A small ``application/x-www-form-urlencoded`` form (first value of each field)."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/x-www-form-urlencoded":
        raise PageError(400, "表单格式不正确")
    body = await read_capped(request, limit)
    try:
        fields = parse_qs(body.decode("utf-8"), keep_blank_values=True, max_num_fields=20)
    except (ValueError, UnicodeDecodeError):
        raise PageError(400, "表单格式不正确") from None
    return {k: v[0] for k, v in fields.items()}


def signed_in(service, request: Request) -> tuple[Account, str]:
    """The account of the session cookie and its CSRF token (:class:`NeedLogin` without a valid session)."""
    session = service.signer.read(request.cookies.get(sessions.COOKIE))
    if session is None:
        raise NeedLogin()
    account, _ = service.authenticate(request)
    return account, service.signer.csrf_token(session)


def checked_post(service, request: Request, form: dict[str, str]) -> tuple[Account, str]:
    """The account of a form POST, after its CSRF token and Origin are checked."""
    session = service.signer.read(request.cookies.get(sessions.COOKIE))
    if session is None:
        raise NeedLogin()
    account, _ = service.authenticate(request, csrf=form.get(sessions.CSRF_FIELD), unsafe=True)
    return account, service.signer.csrf_token(session)


def page(handler: Callable) -> Callable:
    """Wrap a page handler: errors become Chinese error pages, a missing session the sign-in page."""
    from .app import ApiError

    def failed(request: Request, exc: Exception) -> Response:
        if isinstance(exc, NeedLogin) or (isinstance(exc, ApiError) and exc.status == 401):
            return redirect(request, "login")
        status, message = exc.status, exc.message  # type: ignore[attr-defined]
        return render(request, "error.html", status, error_status=status, message=message, account=None, csrf="")

    errors = (PageError, NeedLogin, ApiError, UploadError)

    if inspect.iscoroutinefunction(handler):
        @functools.wraps(handler)
        async def run_async(request: Request) -> Response:
            try:
                return await handler(request)
            except errors as exc:
                return failed(request, exc)
            except (OverrideError, RosterError) as exc:
                return failed(request, PageError(400, str(exc)))
        return run_async

    @functools.wraps(handler)
    async def run_sync(request: Request) -> Response:
        try:
            return await run_in_threadpool(handler, request)
        except errors as exc:
            return failed(request, exc)
        except (OverrideError, RosterError) as exc:
            return failed(request, PageError(400, str(exc)))
    return run_sync


def not_found(request: Request, message: str = "没有这个页面") -> HTMLResponse:
    return render(request, "error.html", 404, error_status=404, message=message, account=None, csrf="")


def routes(service) -> list:
    """Every page route, and ``/static/`` (the pages' only scripts and styles)."""
    from starlette.routing import Mount, Route
    from starlette.staticfiles import StaticFiles

    from . import instructor_pages, student_pages

    def favicon(request: Request) -> Response:  # what a browser asks for on its own, before any page names an icon
        return FileResponse(STATIC / "favicon.svg", media_type="image/svg+xml", headers={"Cache-Control": "max-age=86400"})

    return [*student_pages.routes(service), *instructor_pages.routes(service), Route("/favicon.ico", favicon, methods=["GET"]),
            Mount("/static", app=StaticFiles(directory=str(STATIC)), name="static")]
