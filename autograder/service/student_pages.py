"""The students' pages: sign in, the course, an assignment (upload, live status, attempts, feedback), one attempt.

The upload itself goes to the API (``POST api/v1/assignments/{name}/submissions`` with the session cookie and
the form's CSRF token), which checks everything again; the page refuses in the browser first what it can
(not a notebook, another assignment's notebook, too large, past the deadline, no attempts left) and then shows
the attempt moving from ``queued`` to ``graded`` by polling a fragment of itself (``.../live``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, Response

from ..check import all_assignments
from ..model import SubmissionResult
from ..store.report import FEEDBACK_POLICIES
from . import overrides, sessions
from .codes import Account
from .counting import with_penalty
from .database import COUNTING, LOGIN_FAILURES, SUBMISSIONS
from .pages import LOGIN_COOKIE, NeedLogin, PageError, checked_post, page, page_headers, read_form, redirect, render, signed_in
from .policy import DAY, AssignmentPolicy, retry_after

EXERCISES = Path(__file__).resolve().parents[2] / "exercises"  # the released student versions
WRONG_LOGIN = "学号或访问码不正确。请检查后重试（访问码只含小写字母和数字 2-9，没有容易看错的 i、l、o、0、1）"
COUNTS_TEXT = {
    "best": ("计入成绩的是得分最高的一次提交（迟交的得分先乘以迟交系数再比较；同分时取较早的一次）", "按得分最高的一次计"),
    "last": ("计入成绩的是最后一次评分完成的提交（无论高低）", "按最后一次提交计"),
}


@dataclass
class Attempt:
    """One submission as a page shows it."""

    id: str
    number: int
    student_id: str
    assignment: str
    status: str
    created_at: float
    graded_at: float | None
    filename: str
    late: bool
    penalty: float
    score: float | None
    raw_score: float | None
    max_score: float | None
    error: str | None
    position: int | None
    counting: bool
    result: SubmissionResult | None
    shown: str
    policy_text: str
    show_diagnoses: bool = True


def wait_text(seconds: float) -> str:
    """``约 3 小时 20 分钟`` / ``约 12 分钟``: how long until the next attempt is possible."""
    minutes = max(1, int(seconds // 60))
    return f"约 {minutes // 60} 小时 {minutes % 60} 分钟" if minutes >= 60 else f"约 {minutes} 分钟"


def late_text(p: AssignmentPolicy) -> str:
    if p.deadline is None:
        return "无截止时间，随时可以提交"
    if p.late_penalty is None:
        return "截止后不再接受提交"
    until = p.late_until.strftime("%Y-%m-%d %H:%M") + f"（{p.late_until.strftime('%z')[:3]}:{p.late_until.strftime('%z')[3:]}）"
    return f"截止后到 {until} 仍可提交，得分乘以 {p.late_penalty:g}"


def attempts(service, account_login: str, assignment: str, policy: AssignmentPolicy, viewer_is_instructor: bool,
             now: float) -> list[Attempt]:
    """The attempts of a student at ``assignment``, newest first, with feedback cut to what the viewer may see."""
    S = SUBMISSIONS
    with service.db.read() as con:
        rows = con.execute(sa.select(S).where((S.c.student_id == account_login) & (S.c.assignment == assignment))
                           .order_by(S.c.created_at)).all()
        counting = con.execute(sa.select(COUNTING.c.submission_id).where(
            (COUNTING.c.student_id == account_login) & (COUNTING.c.assignment == assignment))).scalar()
        queued = con.execute(sa.select(S.c.created_at).where(S.c.status == "queued").order_by(S.c.created_at)).scalars().all()
    shown = "full" if viewer_is_instructor else policy.feedback(datetime.fromtimestamp(now, timezone.utc))
    named = shown == "full" or policy.shows_diagnoses(datetime.fromtimestamp(now, timezone.utc))
    out = []
    for number, row in enumerate(rows, 1):
        graded = row.status == "graded"
        result = with_penalty(SubmissionResult.from_json(json.loads(row.result_json)), row.penalty) if graded and row.result_json else None
        position = 1 + sum(1 for t in queued if t < row.created_at) if row.status == "queued" else None
        out.append(Attempt(row.id, number, row.student_id, row.assignment, row.status, row.created_at,
                           row.graded_at if row.status in ("graded", "failed") else None, row.filename, bool(row.late),
                           row.penalty, row.score * row.penalty if graded else None, row.score if graded else None,
                           row.max_score if graded else None, row.error if row.status == "failed" else None, position,
                           row.id == counting, result, shown, FEEDBACK_POLICIES[shown], named))
    out.reverse()
    return out


def assignment_view(service, account: Account, name: str, now: float) -> dict[str, Any]:
    """What the course page and the assignment page show about one assignment to one student."""
    policy = service.policy_for(account.login, name)
    override = overrides.get(service.db, account.login, name)
    rows = attempts(service, account.login, name, policy, False, now)
    recent = sorted(a.created_at for a in rows if a.created_at > now - DAY)
    left = max(0, policy.attempts_per_24h - len(recent))
    if left:
        attempts_text = f"24 小时内还可提交 {left} 次（共 {policy.attempts_per_24h} 次）"
    else:
        wait = retry_after(recent[-policy.attempts_per_24h], now)
        attempts_text = f"24 小时内的 {policy.attempts_per_24h} 次已用完，{wait_text(wait)}后恢复 1 次"
    lateness = policy.lateness(datetime.fromtimestamp(now, timezone.utc))
    refusal = None
    if lateness == "closed":
        end = policy.last_moment()
        refusal = f"本作业已于 {end:%Y-%m-%d %H:%M}（{end:%z}）截止，不再接受提交。"
    elif not left:
        refusal = f"你在 24 小时内的 {policy.attempts_per_24h} 次评分已用完，{wait_text(wait)}后可以再提交 1 次。"
    rules = service.rules[name]
    counting = next((a for a in rows if a.counting), None)
    feedback = policy.feedback_before_deadline
    return {
        "name": name, "title": service.titles.get(name, name), "policy": policy, "notebook": all_assignments()[name].notebook,
        "extended": override is not None and override.deadline is not None,
        "late_text": late_text(policy), "attempts_left": left, "attempts_text": attempts_text, "refusal": refusal,
        "late_now": lateness == "late",
        "feedback_text": f"{FEEDBACK_POLICIES[feedback]}；{'截止' if policy.late_penalty is None else '迟交期结束'}后显示全部",
        "counts_text": COUNTS_TEXT[policy.counts][0], "counts_short": COUNTS_TEXT[policy.counts][1],
        "attempts": rows, "counting": counting, "pending": any(a.status in ("queued", "grading") for a in rows),
        "grade_ids": sorted(rules.grade_ids), "functions": list(rules.functions),
        "owners": json.dumps(rules.owners, ensure_ascii=False, sort_keys=True),
    }


def routes(service) -> list:
    """The students' routes (and sign-in / sign-out, shared with instructors)."""
    from starlette.routing import Route

    from .app import ApiError, client_address, own_origin

    def now() -> float:
        return service.clock()

    def login_form(request: Request, error: str | None = None, status: int = 200, login: str = "") -> Response:
        value, session = service.signer.issue(0, "login")
        response = render(request, "login.html", status, account=None, csrf="", error=error, login=login,
                          login_csrf=service.signer.csrf_token(session))
        response.headers.append("Set-Cookie", f"{LOGIN_COOKIE}={value}; Path=/; Max-Age=3600; HttpOnly; SameSite=Strict"
                                + ("; Secure" if request.url.scheme == "https" else ""))
        return response

    @page
    def login_page(request: Request) -> Response:
        try:
            signed_in(service, request)
            return redirect(request, "")
        except (NeedLogin, ApiError):
            return login_form(request)

    def record_failure(address: str) -> None:
        with service.db.write() as con:
            con.execute(sa.insert(LOGIN_FAILURES).values(address=address, at=service.clock()))

    @page
    async def login(request: Request) -> Response:
        form = await read_form(request)
        origin = request.headers.get("origin")
        anonymous = service.signer.read(request.cookies.get(LOGIN_COOKIE))
        if (origin is not None and origin != own_origin(request)) or anonymous is None \
                or not service.signer.check_csrf(anonymous, form.get(sessions.CSRF_FIELD)):
            return login_form(request, "登录表单已过期，请重新输入", 403, form.get("login", "")[:100])
        login_name, code = form.get("login", "").strip(), form.get("code", "").strip()
        if not login_name or not code:
            return login_form(request, "请填写学号和访问码", 400, login_name[:100])
        try:
            account = await run_in_threadpool(service.account_for_code, code, client_address(request))
        except ApiError as exc:
            message = WRONG_LOGIN if exc.status == 401 else exc.message
            response = login_form(request, message, exc.status, login_name[:100])
            if "Retry-After" in exc.headers:
                response.headers["Retry-After"] = exc.headers["Retry-After"]
            return response
        if account.login != login_name:  # the code belongs to someone else: a failure like a wrong code
            await run_in_threadpool(record_failure, client_address(request))
            return login_form(request, WRONG_LOGIN, 401, login_name[:100])
        value, _ = service.signer.issue(account.id, account.code_id)
        response = redirect(request, "instructor/" if account.is_instructor else "")
        secure = request.url.scheme == "https"
        response.headers.append("Set-Cookie", sessions.cookie_header(value, secure=secure))
        response.headers.append("Set-Cookie", f"{LOGIN_COOKIE}=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict")
        return response

    @page
    async def logout(request: Request) -> Response:
        form = await read_form(request)
        await run_in_threadpool(checked_post, service, request, form)
        response = redirect(request, "login")
        response.headers.append("Set-Cookie", sessions.cookie_header("", secure=request.url.scheme == "https", max_age=0))
        return response

    def student(request: Request) -> tuple[Account, str]:
        account, csrf = signed_in(service, request)
        if account.is_instructor:
            raise PageError(403, "这是学生的页面；教师请用“总览”")
        return account, csrf

    @page
    def home(request: Request) -> Response:
        account, csrf = signed_in(service, request)
        if account.is_instructor:
            return redirect(request, "instructor/")
        t = now()
        views = [assignment_view(service, account, n, t) for n in service.policy.assignments]
        return render(request, "course.html", account=account, csrf=csrf, views=views,
                      now=datetime.fromtimestamp(t, timezone.utc))

    def known(request: Request) -> str:
        name = request.path_params["assignment"]
        if name not in service.policy.assignments:
            raise PageError(404, f"没有开放提交的作业 {name[:100]}")
        return name

    @page
    def assignment(request: Request) -> Response:
        account, csrf = student(request)
        name, t = known(request), now()
        return render(request, "assignment.html", account=account, csrf=csrf, v=assignment_view(service, account, name, t),
                      now=datetime.fromtimestamp(t, timezone.utc), limit=service.policy.upload_limit_bytes)

    @page
    def assignment_live(request: Request) -> Response:
        account, _ = student(request)
        name = known(request)
        return render(request, "_live.html", v=assignment_view(service, account, name, now()))

    @page
    def notebook(request: Request) -> Response:
        signed_in(service, request)
        name = known(request)
        nb = all_assignments()[name].notebook
        path = EXERCISES / name / f"{nb}.ipynb"
        if not path.is_file():
            raise PageError(404, f"找不到作业笔记本 {nb}.ipynb")
        return FileResponse(path, media_type="application/x-ipynb+json", filename=f"{nb}.ipynb", headers=page_headers())

    def one(request: Request) -> tuple[Account, str, Attempt]:
        account, csrf = signed_in(service, request)
        row = service.submission(account, request.path_params["id"])  # 404 for another student's, like an unknown id
        policy = service.policy_for(row.student_id, row.assignment) if row.assignment in service.policy.assignments else None
        if policy is None:
            raise PageError(404, "没有这份提交")
        rows = attempts(service, row.student_id, row.assignment, policy, account.is_instructor, now())
        return account, csrf, next(a for a in rows if a.id == row.id)

    @page
    def submission(request: Request) -> Response:
        account, csrf, a = one(request)
        return render(request, "submission.html", account=account, csrf=csrf, a=a, title=service.titles.get(a.assignment, a.assignment))

    @page
    def submission_live(request: Request) -> Response:
        account, csrf, a = one(request)
        return render(request, "_submission_live.html", account=account, csrf=csrf, a=a)

    return [
        Route("/", home, methods=["GET"]),
        Route("/login", login_page, methods=["GET"]),
        Route("/login", login, methods=["POST"]),
        Route("/logout", logout, methods=["POST"]),
        Route("/assignments/{assignment}", assignment, methods=["GET"]),
        Route("/assignments/{assignment}/live", assignment_live, methods=["GET"]),
        Route("/assignments/{assignment}/notebook", notebook, methods=["GET"]),
        Route("/submissions/{id}", submission, methods=["GET"]),
        Route("/submissions/{id}/live", submission_live, methods=["GET"]),
    ]
