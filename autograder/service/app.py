"""The HTTP API (Starlette), under ``/api/v1``; JSON in and out, errors as ``{"error": "<Chinese message>"}``.

=======  ==========================================  =====================================================
method   path                                        what
=======  ==========================================  =====================================================
POST     /api/v1/assignments/{assignment}/submissions  upload (multipart field ``notebook``) -> 202 ``{"id", "status"}``
GET      /api/v1/submissions/{id}                    one submission (its owner or an instructor)
GET      /api/v1/submissions/{id}/feedback           the feedback page (HTML), cut to the policy before the deadline
GET      /api/v1/submissions?assignment=NAME         the caller's submissions (an instructor: everyone's)
GET      /api/v1/assignments                         the open assignments and their rules
GET      /api/v1/grades.csv                          counting attempts (instructors only)
POST     /api/v1/session                             sign in with a code -> session cookie + CSRF token
GET      /api/v1/session                             who is signed in
DELETE   /api/v1/session                             sign out
GET      /healthz                                    liveness (no authentication)
=======  ==========================================  =====================================================

Authentication: ``Authorization: Bearer <access code>``, or the session cookie (then every state-changing
request also needs the CSRF token, in the ``X-CSRF-Token`` header or the ``csrf_token`` form field, and a
foreign ``Origin`` is refused).  Another student's submission answers exactly like one that does not exist.
Every response carries a Content-Security-Policy (no scripts, no framing), ``X-Content-Type-Options:
nosniff`` and ``Cache-Control: no-store``.
"""

from __future__ import annotations

import asyncio
import csv
import io
import json
import secrets
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

import sqlalchemy as sa
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Mount, Route

from ..model import SubmissionResult
from ..store import report
from . import codes, overrides, pages, sessions
from .codes import Account
from .counting import with_penalty
from .database import ACCOUNTS, COUNTING, LOGIN_FAILURES, SUBMISSIONS, Database
from .lti.web import router as lti_router
from .policy import DAY, AssignmentPolicy, CoursePolicy, retry_after
from .uploads import FORM_OVERHEAD, NotebookRules, UploadError, check_filename, check_notebook, parse_form, read_capped, store_file

SECURITY_HEADERS = [
    (b"content-security-policy", b"default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; "
                                 b"form-action 'self'; frame-ancestors 'none'"),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (b"cache-control", b"no-store"),
    (b"cross-origin-resource-policy", b"same-origin"),
]
SMALL_BODY = 4096
UPLOAD_SLOTS = 8  # uploads read and checked at once; the others wait unread (the kernel's buffers hold them)
UNAUTHORIZED = "缺少访问码或访问码无效（请求头 Authorization: Bearer <访问码>）"
NOT_FOUND = "没有这份提交"


class ApiError(Exception):
    """An error answer: HTTP ``status``, a Chinese message and optional headers."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.headers = status, message, headers or {}


@dataclass
class Service:
    """What the request handlers need; built by ``autograder serve``."""

    db: Database
    policy: CoursePolicy
    data_root: Path
    signer: sessions.Signer
    rules: dict[str, NotebookRules]
    titles: dict[str, str]
    wake: Callable[[], None] = lambda: None
    cache: codes.CodeCache = field(default_factory=codes.CodeCache)
    clock: Callable[[], float] = time.time

    # ---- authentication

    def _account(self, con: sa.Connection, where):
        row = con.execute(sa.select(ACCOUNTS.c.id, ACCOUNTS.c.role, ACCOUNTS.c.login, ACCOUNTS.c.name,
                                    ACCOUNTS.c.code_id, ACCOUNTS.c.code_hash).where(where)).first()
        return row

    def account_for_code(self, code: str, address: str) -> Account:
        """The account of an access code; 401 if wrong, 429 while ``address`` has too many recent failures."""
        hit = self.cache.get(code)
        if hit is not None:
            with self.db.read() as con:
                row = self._account(con, ACCOUNTS.c.id == hit[0])
            if row is not None and row.code_id == hit[1]:
                return Account(row.id, row.role, row.login, row.name, row.code_id)
            self.cache.drop(code)
        self._check_rate(address)
        parts = codes.split(code)
        with self.db.read() as con:
            row = self._account(con, ACCOUNTS.c.code_id == parts[0]) if parts else None
        # a well-formed code pays for argon2 whether or not its id exists (an id cannot be confirmed by timing);
        # a malformed one (the format is public) is refused without it
        if parts is None or not codes.verify(parts[1], row.code_hash if row is not None else None):
            with self.db.write() as con:
                now = self.clock()
                con.execute(sa.insert(LOGIN_FAILURES).values(address=address, at=now))
                con.execute(sa.delete(LOGIN_FAILURES).where(LOGIN_FAILURES.c.at < now - self.policy.login_window_seconds))
            raise ApiError(401, UNAUTHORIZED, {"WWW-Authenticate": "Bearer"})
        self.cache.put(code, row.id, row.code_id)
        return Account(row.id, row.role, row.login, row.name, row.code_id)

    def _check_rate(self, address: str) -> None:
        now = self.clock()
        window = self.policy.login_window_seconds
        with self.db.read() as con:
            times = con.execute(sa.select(LOGIN_FAILURES.c.at).where(
                (LOGIN_FAILURES.c.address == address) & (LOGIN_FAILURES.c.at > now - window))
                .order_by(LOGIN_FAILURES.c.at.desc()).limit(self.policy.login_max_failures)).scalars().all()
        if len(times) >= self.policy.login_max_failures:
            wait = max(1, int(min(times) + window - now + 0.999))
            raise ApiError(429, f"错误的访问码尝试过多，请 {wait} 秒后再试", {"Retry-After": str(wait)})

    def authenticate(self, request: Request, *, csrf: str | None = None, unsafe: bool = False) -> tuple[Account, bool]:
        """The caller's account and whether it came from the session cookie (401 otherwise).

        With ``unsafe`` and a cookie, the CSRF token (header, or ``csrf`` from the form) and the Origin are checked.
        """
        header = request.headers.get("authorization")
        if header is not None:
            scheme, _, code = header.partition(" ")
            if scheme.lower() != "bearer" or not code.strip():
                raise ApiError(401, UNAUTHORIZED, {"WWW-Authenticate": "Bearer"})
            return self.account_for_code(code.strip(), client_address(request)), False
        session = self.signer.read(request.cookies.get(sessions.COOKIE))
        if session is None:
            raise ApiError(401, UNAUTHORIZED, {"WWW-Authenticate": "Bearer"})
        with self.db.read() as con:
            row = self._account(con, ACCOUNTS.c.id == session.account_id)
        if row is None or row.code_id != session.code_id:
            raise ApiError(401, "登录已失效，请重新输入访问码")
        if unsafe:
            self.check_csrf(request, session, csrf)
        return Account(row.id, row.role, row.login, row.name, row.code_id), True

    def check_csrf(self, request: Request, session: sessions.Session, form_token: str | None) -> None:
        origin = request.headers.get("origin")
        if origin is not None and origin != own_origin(request):
            raise ApiError(403, "请求来自其他网站，已拒绝")
        token = request.headers.get(sessions.CSRF_HEADER) or form_token
        if not self.signer.check_csrf(session, token):
            raise ApiError(403, "缺少或错误的 CSRF 令牌，请刷新页面后重试")

    # ---- submissions

    def policy_for(self, student: str, assignment: str) -> AssignmentPolicy:
        """The policy of ``assignment`` as it applies to ``student`` (with the instructor's exceptions)."""
        return overrides.personal_policy(self.policy.assignments[assignment], overrides.get(self.db, student, assignment))

    def accept(self, account: Account, assignment: str, arrived: float, filename: str | None, data: bytes) -> str:
        """Check and store an uploaded notebook; the new submission's id (raises :class:`UploadError`)."""
        name = check_filename(filename)
        check_notebook(data, self.rules[assignment])
        policy = self.policy_for(account.login, assignment)
        late = policy.lateness(datetime.fromtimestamp(arrived, timezone.utc))
        if late == "closed":
            raise UploadError(403, closed_message(policy))
        penalty = policy.late_penalty if late == "late" else 1.0
        sid = secrets.token_urlsafe(16)
        owner = (SUBMISSIONS.c.student_id == account.login) & (SUBMISSIONS.c.assignment == assignment)
        # the file first, outside the transaction (its fsync must not hold up other writers); a refusal or a
        # crash before the commit leaves a file no row points to, which is removed or never read
        path, digest = store_file(self.data_root, assignment, account.login, sid, data)
        try:
            with self.db.write() as con:
                self.db.lock_for_update(con, ACCOUNTS, ACCOUNTS.c.id == account.id)  # one upload of a student at a time
                self._check_attempts(con, owner, policy, arrived)
                con.execute(sa.insert(SUBMISSIONS).values(
                    id=sid, student_id=account.login, assignment=assignment, status="queued", created_at=arrived,
                    filename=name, path=path, sha256=digest, size=len(data), late=late == "late", penalty=penalty,
                    tries=0, settled=True))
        except BaseException:
            (self.data_root / path).unlink(missing_ok=True)
            raise
        self.wake()
        return sid

    def _check_attempts(self, con: sa.Connection, owner, policy: AssignmentPolicy, now: float) -> None:
        assignment, limit = policy.name, policy.attempts_per_24h
        recent = con.execute(sa.select(SUBMISSIONS.c.created_at).where(owner & (SUBMISSIONS.c.created_at > now - DAY))
                             .order_by(SUBMISSIONS.c.created_at.desc()).limit(limit)).scalars().all()
        if len(recent) >= limit:
            wait = retry_after(min(recent), now)
            raise UploadError(429, f"作业 {assignment} 在 24 小时内最多评分 {limit} 次，已用完；"
                                   f"请 {wait} 秒（约 {wait / 3600:.1f} 小时）后再提交", {"Retry-After": str(wait)})

    def attempts_pre_check(self, account: Account, assignment: str, now: float) -> None:
        owner = (SUBMISSIONS.c.student_id == account.login) & (SUBMISSIONS.c.assignment == assignment)
        with self.db.read() as con:
            self._check_attempts(con, owner, self.policy_for(account.login, assignment), now)

    def submission(self, account: Account, submission_id: str):
        """The row of a submission the caller may see (404 for everything else, existing or not)."""
        if not (0 < len(submission_id) <= 64):
            raise ApiError(404, NOT_FOUND)
        with self.db.read() as con:
            row = con.execute(sa.select(SUBMISSIONS).where(SUBMISSIONS.c.id == submission_id)).first()
        if row is None or (not account.is_instructor and row.student_id != account.login):
            raise ApiError(404, NOT_FOUND)
        return row

    def feedback_page(self, account: Account, row) -> str:
        if row.status != "graded":
            raise ApiError(409, "这份提交还没有评分完成" if row.status in ("queued", "grading") else
                           f"这份提交未能评分：{row.error or ''}")
        result = with_penalty(SubmissionResult.from_json(json.loads(row.result_json)), row.penalty)
        policy = self.policy_for(row.student_id, row.assignment) if row.assignment in self.policy.assignments else None
        shown = "full" if account.is_instructor or policy is None else policy.feedback(now_utc(self.clock()))
        return report.feedback_html(self.titles.get(row.assignment, row.assignment), result, shown)

    def listing(self, account: Account, assignment: str | None, student: str | None) -> list:
        q = sa.select(SUBMISSIONS).order_by(SUBMISSIONS.c.created_at.desc()).limit(5000)
        if assignment:
            q = q.where(SUBMISSIONS.c.assignment == assignment)
        if not account.is_instructor:
            q = q.where(SUBMISSIONS.c.student_id == account.login)
        elif student:
            q = q.where(SUBMISSIONS.c.student_id == student)
        with self.db.read() as con:
            return con.execute(q).all()

    def grades_csv(self) -> str:
        with self.db.read() as con:
            rows = con.execute(sa.select(COUNTING.c.student_id, COUNTING.c.assignment, COUNTING.c.score,
                                         COUNTING.c.max_score).order_by(COUNTING.c.student_id, COUNTING.c.assignment)).all()
        out = io.StringIO()
        w = csv.writer(out, lineterminator="\n")
        w.writerow(["student_id", "assignment", "score", "max_score"])
        for r in rows:
            w.writerow([r.student_id, r.assignment, f"{r.score:g}", f"{r.max_score:g}"])
        return out.getvalue()


def now_utc(t: float) -> datetime:
    return datetime.fromtimestamp(t, timezone.utc)


def iso(t: float | None) -> str | None:
    return None if t is None else datetime.fromtimestamp(t, timezone.utc).isoformat(timespec="seconds")


def closed_message(p) -> str:
    end = p.last_moment()
    return f"作业 {p.name} 已于 {end.isoformat()} 截止，不再接受提交" + ("（迟交期也已结束）" if p.late_penalty is not None else "")


def client_address(request: Request) -> str:
    return (request.client.host if request.client else "unknown")[:64]


def own_origin(request: Request) -> str:
    return f"{request.url.scheme}://{request.headers.get('host', '')}"


def submission_json(row) -> dict[str, Any]:
    graded = row.status == "graded"
    return {"id": row.id, "student_id": row.student_id, "assignment": row.assignment, "status": row.status,
            "score": row.score * row.penalty if graded else None, "max_score": row.max_score if graded else None,
            "raw_score": row.score if graded else None, "late": bool(row.late), "penalty": row.penalty,
            "created_at": iso(row.created_at), "graded_at": iso(row.graded_at) if row.status in ("graded", "failed") else None,
            "feedback_url": f"/api/v1/submissions/{row.id}/feedback" if graded else None,
            "error": row.error if row.status == "failed" else None, "filename": row.filename}


# ---- handlers


def _json(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse(data, status_code=status, headers=headers)


def make_app(service: Service, *, lifespan=None) -> SecurityHeaders:
    """The ASGI application of ``service`` (``lifespan``: Starlette's, e.g. to start and stop the grading)."""
    slots = asyncio.Semaphore(UPLOAD_SLOTS)  # memory: at most UPLOAD_SLOTS bodies (each <= the limit) at a time

    async def submit(request: Request) -> Response:
        arrived = service.clock()
        account, by_cookie = await run_in_threadpool(service.authenticate, request)
        assignment = request.path_params["assignment"]
        if assignment not in service.policy.assignments:
            raise ApiError(404, f"没有开放提交的作业 {assignment[:100]}")
        if account.is_instructor:
            raise ApiError(403, "教师账号不能提交作业；请用学生的访问码")
        p = await run_in_threadpool(service.policy_for, account.login, assignment)
        if p.lateness(now_utc(arrived)) == "closed":
            raise ApiError(403, closed_message(p))
        await run_in_threadpool(service.attempts_pre_check, account, assignment, arrived)
        limit = service.policy.upload_limit_bytes
        async with slots:
            body = await read_capped(request, limit + FORM_OVERHEAD)
            form = parse_form(body, request.headers.get("content-type", ""), limit)
            del body
            if by_cookie:
                token = form.get(sessions.CSRF_FIELD)
                session = service.signer.read(request.cookies.get(sessions.COOKIE))
                service.check_csrf(request, session, bytes(token.data).decode("utf-8", "replace") if token else None)
            part = form.get("notebook")
            if part is None or part.filename is None:
                raise UploadError(400, "缺少文件：请在表单字段 notebook 中上传 .ipynb 文件")
            sid = await run_in_threadpool(service.accept, account, assignment, arrived, part.filename, bytes(part.data))
        return _json({"id": sid, "status": "queued"}, 202, {"Location": f"/api/v1/submissions/{sid}"})

    def status(request: Request) -> Response:
        account, _ = service.authenticate(request)
        return _json(submission_json(service.submission(account, request.path_params["id"])))

    def feedback(request: Request) -> Response:
        account, _ = service.authenticate(request)
        row = service.submission(account, request.path_params["id"])
        return HTMLResponse(service.feedback_page(account, row))

    def listing(request: Request) -> Response:
        account, _ = service.authenticate(request)
        assignment = request.query_params.get("assignment")
        if assignment is not None and assignment not in service.policy.assignments:
            raise ApiError(404, f"没有开放提交的作业 {assignment[:100]}")
        rows = service.listing(account, assignment, request.query_params.get("student"))
        return _json({"submissions": [submission_json(r) for r in rows]})

    def assignments(request: Request) -> Response:
        account, _ = service.authenticate(request)
        now = now_utc(service.clock())
        policies = {n: service.policy_for(account.login, n) if not account.is_instructor else p
                    for n, p in service.policy.assignments.items()}  # a student's own exceptions included
        return _json({"assignments": [{**p.to_json(), "title": service.titles.get(n, n), "open": p.lateness(now) != "closed",
                                       "feedback_now": p.feedback(now)} for n, p in policies.items()]})

    def grades(request: Request) -> Response:
        account, _ = service.authenticate(request)
        if not account.is_instructor:
            raise ApiError(403, "只有教师可以下载成绩")
        return Response(service.grades_csv(), media_type="text/csv; charset=utf-8",
                        headers={"Content-Disposition": 'attachment; filename="grades.csv"'})

    async def login(request: Request) -> Response:
        body = await read_capped(request, SMALL_BODY)
        kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
        code = None
        if kind == "application/json":
            try:
                data = json.loads(body.decode("utf-8"))
            except (ValueError, UnicodeDecodeError, RecursionError):
                raise ApiError(400, "请求体不是合法的 JSON") from None
            code = data.get("code") if isinstance(data, dict) else None
        elif kind == "application/x-www-form-urlencoded":
            from urllib.parse import parse_qs

            try:
                code = (parse_qs(body.decode("utf-8"), max_num_fields=4).get("code") or [None])[0]
            except (ValueError, UnicodeDecodeError):
                raise ApiError(400, "表单格式不正确") from None
        if not isinstance(code, str) or not code.strip():
            raise ApiError(400, "请提供访问码（JSON {\"code\": ...} 或表单字段 code）")
        origin = request.headers.get("origin")
        if origin is not None and origin != own_origin(request):
            raise ApiError(403, "请求来自其他网站，已拒绝")
        account = await run_in_threadpool(service.account_for_code, code.strip(), client_address(request))
        value, session = service.signer.issue(account.id, account.code_id)
        response = _json({"role": account.role, "login": account.login, "name": account.name,
                          "csrf_token": service.signer.csrf_token(session)})
        response.headers.append("Set-Cookie", sessions.cookie_header(value, secure=request.url.scheme == "https"))
        return response

    def whoami(request: Request) -> Response:
        account, by_cookie = service.authenticate(request)
        data = {"role": account.role, "login": account.login, "name": account.name}
        if by_cookie:
            data["csrf_token"] = service.signer.csrf_token(service.signer.read(request.cookies.get(sessions.COOKIE)))
        return _json(data)

    def logout(request: Request) -> Response:
        service.authenticate(request, unsafe=True)
        response = _json({"ok": True})
        response.headers.append("Set-Cookie", sessions.cookie_header("", secure=request.url.scheme == "https", max_age=0))
        return response

    def health(request: Request) -> Response:
        return _json({"ok": True})

    async def api_error(request: Request, exc: Exception) -> Response:
        if not request.url.path.startswith("/api/") and isinstance(exc, HTTPException) and exc.status_code == 404:
            return pages.not_found(request)
        if isinstance(exc, (ApiError, UploadError)):
            return _json({"error": exc.message}, exc.status, exc.headers)
        assert isinstance(exc, HTTPException)
        message = {404: "没有这个地址", 405: "不支持这个请求方法"}.get(exc.status_code, "请求无法处理")
        return _json({"error": message}, exc.status_code)

    async def server_error(request: Request, exc: Exception) -> Response:
        return _json({"error": "服务器内部错误，请稍后再试"}, 500)

    routes = [
        Route("/api/v1/assignments/{assignment}/submissions", submit, methods=["POST"]),
        Route("/api/v1/submissions/{id}", status, methods=["GET"]),
        Route("/api/v1/submissions/{id}/feedback", feedback, methods=["GET"]),
        Route("/api/v1/submissions", listing, methods=["GET"]),
        Route("/api/v1/assignments", assignments, methods=["GET"]),
        Route("/api/v1/grades.csv", grades, methods=["GET"]),
        Route("/api/v1/session", login, methods=["POST"]),
        Route("/api/v1/session", whoami, methods=["GET"]),
        Route("/api/v1/session", logout, methods=["DELETE"]),
        Route("/healthz", health, methods=["GET"]),
        *pages.routes(service),  # the pages for people (student_pages, instructor_pages)
        Mount("/lti", app=lti_router(service)),  # LTI 1.3 (launch, deep linking, key set): service/lti/web.py
    ]
    app = Starlette(routes=routes, exception_handlers={ApiError: api_error, UploadError: api_error,
                                                       HTTPException: api_error, 500: server_error},
                    lifespan=lifespan)
    return SecurityHeaders(app)


class SecurityHeaders:
    """ASGI middleware: the security headers on every HTTP response."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message) -> None:
            if message["type"] == "http.response.start":
                names = {k.lower() for k, _ in message.get("headers", [])}
                message["headers"] = list(message.get("headers", [])) + [h for h in SECURITY_HEADERS if h[0] not in names]
            await send(message)

        await self.app(scope, receive, with_headers)
