"""The HTTP API (mounted at ``/api/v1``); JSON in and out, errors as ``{"error": "<Chinese message>"}``.

=======  ==========================================  =====================================================
method   path                                        what
=======  ==========================================  =====================================================
POST     /api/v1/assignments/{assignment}/submissions  upload (multipart field ``notebook``) -> 202 ``{"id", "status"}``
POST     /api/v1/assignments/{assignment}/checks       a check of the visible tests, no attempt used -> 202 ``{"id", "status"}``
GET      /api/v1/submissions/{id}                    one submission (its owner or an instructor)
GET      /api/v1/submissions/{id}/feedback           the feedback page (HTML), cut to the policy before the deadline
GET      /api/v1/submissions?assignment=NAME         the caller's submissions (an instructor: everyone's)
GET      /api/v1/assignments                         the open assignments and their rules
GET      /api/v1/grades.csv[?format=wide]            counting attempts (staff only; UTF-8 with a BOM)
POST     /api/v1/session                             sign in with a code -> session cookie + CSRF token
GET      /api/v1/session                             who is signed in
DELETE   /api/v1/session                             sign out
=======  ==========================================  =====================================================

Authentication (:mod:`.auth`): ``Authorization: Bearer <access code>``, or the session cookie (then every
state-changing request also needs the CSRF token - in the ``X-CSRF-Token`` header, or for an upload in the
address's ``?csrf_token=``, checked before the body is read - and a foreign ``Origin`` is refused).  An upload
whose address says ``?account=LOGIN`` (the upload form's: the account the page was shown for) is refused when
another account is signed in.
Another student's submission answers exactly like one that does not exist.  The handlers only translate:
every rule is the core's (:class:`~autograder.service.service.Service`).
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any
from urllib.parse import parse_qs

from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from ...store import report
from .. import grade_sheet, sessions
from ..errors import Invalid
from ..codes import Account
from ..submissions import error_shown, scores
from . import auth
from .forms import read_capped, read_upload
from .render import book_of

SMALL_BODY = 4096


def iso(t: float | None) -> str | None:
    return None if t is None else datetime.fromtimestamp(t, timezone.utc).isoformat(timespec="seconds")


def api_base(request: Request) -> str:
    """The API's public address in this course (configured, never the request's ``Host``)."""
    return f"{request.app.state.site.course_url(auth.service_of(request).course.id)}/api/v1"


def submission_json(row, viewer: Account, base: str) -> dict[str, Any]:
    """A submission as the API shows it to ``viewer`` (its score: :func:`~autograder.service.submissions.scores`;
    why it failed: :func:`~autograder.service.submissions.error_shown`, whole only for the staff; ``base``: the
    API's address, :func:`api_base`)."""
    graded = row.status == "graded"
    s = scores(row)
    return {"id": row.id, "student_id": row.student_id, "assignment": row.assignment, "status": row.status,
            "score": s.score, "max_score": s.max_score, "raw_score": s.raw_score, "late": bool(row.late),
            "penalty": row.penalty, "created_at": iso(row.created_at),
            "graded_at": iso(row.graded_at) if row.status in ("graded", "failed") else None,
            "feedback_url": f"{base}/submissions/{row.id}/feedback" if graded else None,
            "error": error_shown(row, viewer),  # graded: its regrade failed
            "filename": row.filename}


def _json(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse(data, status_code=status, headers=headers)


async def _receive(request: Request, may_send, accept) -> str | Response:
    """A notebook upload (an attempt or a check).  Before a byte of the body is read: the caller, the CSRF token (with
    the cookie: the header or the form's address ``?csrf_token=``), ``may_send(account, assignment, now)`` (raises the
    refusal) and a free upload slot (else 503 at once).  The core's ``accept(account, assignment, completed, filename,
    data)`` judges again by the server's clock when the body is complete; an upload whose client has gone away by then
    is not stored (499).  The new id, or the 499."""
    service = auth.service_of(request)
    who = await run_in_threadpool(auth.caller, request)
    auth.check_shown_account(who, request.query_params.get("account"))  # the page's form says whom it was shown for
    if who.by_cookie:
        auth.check_csrf(request, who.session, request.query_params.get(sessions.CSRF_FIELD))
    assignment = request.path_params["assignment"]
    await run_in_threadpool(may_send, who.account, assignment, service.now())
    limit = service.policy.upload_limit_bytes
    with request.app.state.upload_slots.take(auth.slot_key(request, who)):  # memory and fairness: bounded slots
        part = (await read_upload(request, limit))["notebook"]
        completed = service.now()  # the moment the upload is complete decides lateness and attempts
        if await request.is_disconnected():
            return Response(status_code=499)  # nobody is waiting for the answer: nothing stored, no attempt used
        return await run_in_threadpool(accept, who.account, assignment, completed, part.filename, bytes(part.data))


async def submit(request: Request) -> Response:
    """An upload: refused before its body is read when the assignment is unknown, the caller is staff, the
    assignment is closed or no attempts are left."""
    submissions = auth.service_of(request).submissions
    sid = await _receive(request, submissions.check_can_submit, submissions.accept)
    if isinstance(sid, Response):
        return sid
    return _json({"id": sid, "status": "queued"}, 202, {"Location": f"{api_base(request)}/submissions/{sid}"})


async def check(request: Request) -> Response:
    """A check before an attempt (:mod:`..checks`): the visible tests only, no attempt used; refused before its body is
    read when the assignment is closed, checks are off, the student's previous check still runs or the hour's checks
    are used up.  Its result shows on the assignment's page."""
    checks = auth.service_of(request).checks
    cid = await _receive(request, checks.check_can_check, checks.accept)
    if isinstance(cid, Response):
        return cid
    return _json({"id": cid, "status": "queued"}, 202)


def status(request: Request) -> Response:
    who = auth.caller(request)
    return _json(submission_json(auth.service_of(request).submissions.get(who.account, request.path_params["id"]),
                                 who.account, api_base(request)))


def feedback(request: Request) -> Response:
    submissions = auth.service_of(request).submissions
    who = auth.caller(request)
    title, result, shown, named = submissions.feedback(who.account, submissions.get(who.account, request.path_params["id"]))
    return HTMLResponse(report.feedback_html(title, result, shown, diagnoses=named, book_url=book_of(request)))


def listing(request: Request) -> Response:
    submissions = auth.service_of(request).submissions
    who = auth.caller(request)
    assignment = request.query_params.get("assignment")
    if assignment is not None:
        submissions.known(assignment)
    rows = submissions.listing(who.account, assignment, request.query_params.get("student"))
    base = api_base(request)
    return _json({"submissions": [submission_json(r, who.account, base) for r in rows]})


def assignments(request: Request) -> Response:
    service = auth.service_of(request)
    account = auth.caller(request).account
    now = datetime.fromtimestamp(service.now(), timezone.utc)
    policies = {n: service.submissions.policy_for(account.login, n) if not account.is_staff else p
                for n, p in service.policy.assignments.items()}  # a student's own exceptions included
    return _json({"assignments": [{**p.to_json(), "title": service.submissions.title(n), "open": p.lateness(now) != "closed",
                                   "feedback_now": p.feedback(now)} for n, p in policies.items()]})


def grades(request: Request) -> Response:
    """``grades.csv`` (:mod:`..grade_sheet`): long, or ``?format=wide``; UTF-8 with a byte order mark."""
    auth.staff(auth.caller(request), "只有教师和助教可以下载成绩")
    shape = request.query_params.get("format", "long")
    text = auth.service_of(request).submissions.grades_csv(shape)
    name = "grades.csv" if shape == "long" else "grades-wide.csv"
    return Response(grade_sheet.encoded(text), media_type="text/csv; charset=utf-8",
                    headers={"Content-Disposition": f'attachment; filename="{name}"'})


async def login(request: Request) -> Response:
    body = await read_capped(request, SMALL_BODY)
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    code = None
    if kind == "application/json":
        try:
            data = json.loads(body.decode("utf-8"))
        except (ValueError, UnicodeDecodeError, RecursionError):
            raise Invalid("请求体不是合法的 JSON") from None
        code = data.get("code") if isinstance(data, dict) else None
    elif kind == "application/x-www-form-urlencoded":
        try:
            code = (parse_qs(body.decode("utf-8"), max_num_fields=4).get("code") or [None])[0]
        except (ValueError, UnicodeDecodeError):
            raise Invalid("表单格式不正确") from None
    if not isinstance(code, str) or not code.strip():
        raise Invalid("请提供访问码（JSON {\"code\": ...} 或表单字段 code）")
    auth.check_origin(request)
    service = auth.service_of(request)
    account = await run_in_threadpool(service.accounts.sign_in, code.strip(), auth.client_address(request))
    cookie, session = auth.new_session(request, account)
    response = _json({"role": account.role, "login": account.login, "name": account.name,
                      "csrf_token": service.signer.csrf_token(session)})
    response.headers.append("Set-Cookie", cookie)
    return response


def whoami(request: Request) -> Response:
    who = auth.caller(request)
    account = who.account
    data = {"role": account.role, "login": account.login, "name": account.name}
    if who.by_cookie:
        data["csrf_token"] = auth.csrf_token(request, who)
    return _json(data)


def logout(request: Request) -> Response:
    who = auth.checked_caller(request)
    response = _json({"ok": True})
    auth.end_session(request, response, who)
    return response


def no_such_address(request: Request) -> Response:
    raise HTTPException(404)


def health(request: Request) -> Response:
    return _json({"ok": True})


ROUTES = [
    Route("/assignments/{assignment}/submissions", submit, methods=["POST"]),
    Route("/assignments/{assignment}/checks", check, methods=["POST"]),
    Route("/submissions/{id}", status, methods=["GET"]),
    Route("/submissions/{id}/feedback", feedback, methods=["GET"]),
    Route("/submissions", listing, methods=["GET"]),
    Route("/assignments", assignments, methods=["GET"]),
    Route("/grades.csv", grades, methods=["GET"]),
    Route("/session", login, methods=["POST"]),
    Route("/session", whoami, methods=["GET"]),
    Route("/session", logout, methods=["DELETE"]),
]
