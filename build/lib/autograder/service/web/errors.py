"""The one mapping from the core's refusals to HTTP: a status per kind, JSON for the API, a page for people.

=====================  ======  ==================================================================
domain error           status  how it looks
=====================  ======  ==================================================================
``Invalid``            400     API: ``{"error": message}``; pages: the error page
``NotSignedIn``        401     API: the same, with ``WWW-Authenticate: Bearer``; pages: to sign-in
``Forbidden``          403
``NotFound``           404
``NotReady``           409
``TooLarge``           413
``Unsupported``        415
``TooSlow``            408     a body slower than its time limit
``TooMany``            429     with ``Retry-After``
``Busy``               503     with ``Retry-After`` (no upload slot free)
``LaunchRefused``      its     an LTI login or launch refused: the LTI refusal page, framable by the
                       own     platforms (:func:`.lti.refused_page`); a malformed form's has its cause's
=====================  ======  ==================================================================

Starlette's own errors (no such route, wrong method) answer in the same shapes; anything else is a 500
without details.
"""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from ..errors import (Busy, Forbidden, Invalid, NotFound, NotReady, NotSignedIn, ServiceError, TooLarge, TooMany,
                      TooSlow, Unsupported)
from ..lti.launch import LaunchRefused
from . import render
from .lti import refused_page

STATUS: dict[type[ServiceError], int] = {
    Invalid: 400, NotSignedIn: 401, Forbidden: 403, NotFound: 404, NotReady: 409, TooLarge: 413, Unsupported: 415,
    TooMany: 429, TooSlow: 408, Busy: 503,
}
HTTP_MESSAGES = {404: "没有这个地址", 405: "不支持这个请求方法"}


def status_of(exc: ServiceError) -> int:
    """The HTTP status of a domain error (its nearest mapped class)."""
    return next(STATUS[k] for k in type(exc).__mro__ if k in STATUS)


def headers_of(exc: ServiceError, *, api: bool) -> dict[str, str]:
    headers = {}
    if exc.retry_after is not None:
        headers["Retry-After"] = str(exc.retry_after)
    if api and isinstance(exc, NotSignedIn):
        headers["WWW-Authenticate"] = "Bearer"
    return headers


def is_api(request: Request) -> bool:
    return render.route_path(request).startswith("/api/")


def json_error(message: str, status: int, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status, headers=headers)


def error_page(request: Request, status: int, message: str, headers: dict[str, str] | None = None) -> Response:
    response = render.render(request, "error.html", status, error_status=status, message=message, account=None, csrf="")
    response.headers.update(headers or {})
    return response


async def service_error(request: Request, exc: Exception) -> Response:
    """A :class:`ServiceError`: JSON under ``/api/``; elsewhere the sign-in page (401) or the error page."""
    assert isinstance(exc, ServiceError)
    status, api = status_of(exc), is_api(request)
    if api:
        return json_error(exc.message, status, headers_of(exc, api=True))
    if isinstance(exc, NotSignedIn):  # the sign-in page of the app (a course's, or the administrators')
        return render.redirect(request, getattr(request.app.state, "login_path", "login"))
    return error_page(request, status, exc.message, headers_of(exc, api=False))


async def http_error(request: Request, exc: Exception) -> Response:
    """Starlette's own: the pages' 404 outside the API, JSON otherwise."""
    assert isinstance(exc, HTTPException)
    if not is_api(request) and exc.status_code == 404:
        return render.not_found(request)
    return json_error(HTTP_MESSAGES.get(exc.status_code, "请求无法处理"), exc.status_code)


async def server_error(request: Request, exc: Exception) -> Response:
    return json_error("服务器内部错误，请稍后再试", 500)


async def launch_refused(request: Request, exc: Exception) -> Response:
    """An LTI refusal: the refusal page (inside the platform's frame), with the status of its cause if it has one."""
    assert isinstance(exc, LaunchRefused)
    cause = exc.__cause__
    return refused_page(request, exc.message, status_of(cause) if isinstance(cause, ServiceError) else exc.status)


HANDLERS = {LaunchRefused: launch_refused, ServiceError: service_error, HTTPException: http_error, 500: server_error}
