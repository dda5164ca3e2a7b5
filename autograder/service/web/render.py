"""How the pages look: the shared Jinja2 environment, times, relative links, responses with the pages' policy.

* the templates (``autograder/service/templates/``) are rendered by the store's environment
  (:func:`autograder.store.report.environment`: autoescape, strict undefined, the ``num`` filter), overlaid with
  this folder's loader and the pages' filters - the feedback body is one template for ``feedback.html`` and the
  pages;
* every response carries a strict Content-Security-Policy (scripts and styles only from ``/static/``, nothing
  inline) and every link is relative to the page, so the pages work under any path prefix (such as ``/submit/``
  behind the reverse proxy of ``deploy/nginx``): ``root`` leads to the app's root (a course's pages: the course's,
  ``c/<id>/``), ``site_root`` to the site's (its static files);
* the book's address, when the site has one (``--book-url``): ``book_url``, ``book_assignments`` and the
  ``book_link`` filter (a diagnosis's section), else ``""`` and the pages name the sections as text.
"""

from __future__ import annotations

from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, RedirectResponse, Response

from ...store import report
from ..site import BOOK_ASSIGNMENTS, book_link
from ..times import as_datetime, stamp, utc_offset

TEMPLATES = Path(__file__).resolve().parents[1] / "templates"
STATIC = Path(__file__).resolve().parents[1] / "static"
PAGE_CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
            "form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
SITE_TITLE = "评价二分类模型 · 作业提交"


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    """The store's environment with the pages' templates first (the feedback body is shared with feedback.html)."""
    store = report.environment()
    env = store.overlay(loader=jinja2.ChoiceLoader([jinja2.FileSystemLoader(str(TEMPLATES)), store.loader]))
    env.filters = dict(store.filters)  # the pages' filters are added to a copy: the store's pages stay as they are
    env.filters["when"] = jinja2.pass_context(lambda ctx, t: when(t, ctx["tz"]))  # the course's zone (render's context)
    env.filters["left"] = time_left
    env.filters["percent"] = lambda x: f"{100 * x:.0f}%"
    env.filters["book_link"] = jinja2.pass_context(lambda ctx, section: book_link(ctx.get("book_url") or "", section))
    return env


# ---- times: all in the course's zone (:mod:`..times`), machine-readable too; the browser only counts down


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


def _depth(request: Request) -> int:
    """How many path segments the current app is mounted below the site's root (a course's: ``c/<id>``, 2)."""
    return getattr(request.app.state, "root_depth", 0) if "app" in request.scope else 0


def root_of(request: Request, *, fragment: bool = False) -> str:
    """The relative path from the requested page to its app's root (a course's pages: the course's, ``/c/<id>/``;
    the site's own pages: the site's): ``./``, ``../``, ``../../`` ...  A ``fragment`` (``<page>/live``) is
    inserted into its page, so its links are relative to the page's address, one level up."""
    depth = request.url.path.count("/") - 1 - _depth(request) - (1 if fragment else 0)
    return "../" * depth if depth > 0 else "./"


def site_root_of(request: Request, *, fragment: bool = False) -> str:
    """The relative path from the requested page to the site's root (its static files, the LTI pages)."""
    root = root_of(request, fragment=fragment)
    return (root if root != "./" else "") + "../" * _depth(request) or "./"


def route_path(request: Request) -> str:
    """The request's path within its app (``/api/v1/...`` of ``/c/<id>/api/v1/...``)."""
    parts = request.url.path.split("/")
    return "/" + "/".join(parts[1 + _depth(request):])


def page_headers() -> dict[str, str]:
    """The pages' CSP, and a referrer policy under which the browser still sends ``Origin`` on the pages' own
    POSTs (with the API's ``no-referrer`` it sends ``Origin: null``, which the CSRF check refuses)."""
    return {"Content-Security-Policy": PAGE_CSP, "Referrer-Policy": "same-origin"}


def render(request: Request, name: str, status: int = 200, *, fragment: bool = False, **context: Any) -> HTMLResponse:
    """The page ``name`` with the shared context (``root``, ``site_title``, ``tz``: the course's zone, ``tz_label``)
    and the pages' CSP; a ``fragment`` is a part of a page fetched at ``<page>/live`` (:func:`root_of`)."""
    service = getattr(request.app.state, "service", None) if "app" in request.scope else None
    tz = service.course_tz() if service is not None else timezone.utc
    course = service.course if service is not None else None
    book = book_of(request)
    html = environment().get_template(name).render(root=root_of(request, fragment=fragment),
                                                   site_root=site_root_of(request, fragment=fragment),
                                                   site_title=SITE_TITLE, course=course, tz=tz,
                                                   tz_label=utc_offset(datetime.now(tz)), book_url=book,
                                                   book_assignments=book + BOOK_ASSIGNMENTS if book else "", **context)
    return HTMLResponse(html, status_code=status, headers=page_headers())


def book_of(request: Request) -> str:
    """The book's address as configured for the site (``--book-url``), or ``""``; never from the request."""
    site = getattr(request.app.state, "site", None) if "app" in request.scope else None
    return getattr(site, "book_url", "") or ""


def redirect(request: Request, target: str) -> RedirectResponse:
    """303 to ``target`` (a path below the service's root, without the leading slash), as a relative URL."""
    return RedirectResponse(root_of(request) + target, status_code=303, headers=page_headers())


def favicon(request: Request) -> Response:
    """The course's icon (``static/favicon.svg``): what a browser asks for on its own, before any page names one."""
    return FileResponse(STATIC / "favicon.svg", media_type="image/svg+xml", headers={"Cache-Control": "max-age=86400"})


def not_found(request: Request, message: str = "没有这个页面") -> HTMLResponse:
    return render(request, "error.html", 404, error_status=404, message=message, account=None, csrf="")
