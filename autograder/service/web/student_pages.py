"""The students' pages: sign in, the course, an assignment (upload, live status, attempts, feedback), one attempt.

The upload itself goes to the API (``POST api/v1/assignments/{name}/submissions`` with the session cookie and
the form's CSRF token), which checks everything again; the page refuses in the browser first what it can
(not a notebook, another assignment's notebook, too large, past the deadline, no attempts left) and then shows
the attempt moving from ``queued`` to ``graded`` by polling a fragment of itself (``.../live``).  Whatever a
student may see follows the API's rules: only their own submissions (another's answers 404, like one that does
not exist), never an instructor's page (403).
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import Route

from ...check import all_assignments
from .. import sessions
from ..errors import NotFound, NotSignedIn, TooMany
from ..submissions import Attempt
from . import auth
from .forms import read_form
from .render import page_headers, redirect, render

EXERCISES = Path(__file__).resolve().parents[3] / "exercises"  # the released student versions
WRONG_LOGIN = "学号或访问码不正确。请检查后重试（访问码只含小写字母和数字 2-9，没有容易看错的 i、l、o、0、1）"


def _takes_hub_users(request: Request) -> bool:
    """The site is registered in a JupyterHub and this course takes its users (:mod:`.hub`)."""
    return auth.service_of(request).policy.hub is not None and request.app.state.hub is not None


def login_form(request: Request, error: str | None = None, status: int = 200, login: str = "") -> Response:
    signer = auth.service_of(request).signer
    value, session = signer.issue(0, "login")
    response = render(request, "login.html", status, account=None, csrf="", error=error, login=login,
                      login_csrf=signer.csrf_token(session),
                      hub=_takes_hub_users(request))
    auth.set_cookie(request, response, auth.login_cookie(request), value, 3600)
    return response


def login_page(request: Request) -> Response:
    try:
        auth.page_caller(request)
        return redirect(request, "")
    except NotSignedIn:
        return login_form(request)


async def login(request: Request) -> Response:
    service = auth.service_of(request)
    form = await read_form(request)
    anonymous = service.signer.read(auth.read_cookie(request, auth.login_cookie(request)))
    origin = request.headers.get("origin")
    if (origin is not None and origin != auth.own_origin(request)) or anonymous is None \
            or not service.signer.check_csrf(anonymous, form.get(sessions.CSRF_FIELD)):
        return login_form(request, "登录表单已过期，请重新输入", 403, form.get("login", "")[:100])
    login_name, code = form.get("login", "").strip(), form.get("code", "").strip()
    if not login_name or not code:
        return login_form(request, "请填写学号和访问码", 400, login_name[:100])
    try:
        account = await run_in_threadpool(service.accounts.sign_in, code, auth.client_address(request), login=login_name)
    except NotSignedIn:
        return login_form(request, WRONG_LOGIN, 401, login_name[:100])
    except TooMany as exc:
        response = login_form(request, exc.message, 429, login_name[:100])
        response.headers["Retry-After"] = str(exc.retry_after)
        return response
    cookie, _ = auth.new_session(request, account)
    response = redirect(request, "instructor/" if account.is_staff else "")
    response.headers.append("Set-Cookie", cookie)
    auth.set_cookie(request, response, auth.login_cookie(request), "", 0)
    return response


async def logout(request: Request) -> Response:
    form = await read_form(request)
    who = await run_in_threadpool(auth.page_post, request, form)
    response = redirect(request, "login")
    await run_in_threadpool(auth.end_session, request, response, who)
    return response


def home(request: Request) -> Response:
    service = auth.service_of(request)
    who = auth.page_caller(request)
    if who.account.is_staff:
        return redirect(request, "instructor/")
    t = service.now()
    views = [service.submissions.view(who.account.login, n, t) for n in service.policy.assignments]
    quiz_cards = [service.quizzes.card(who.account.login, n) for n in service.policy.quizzes]
    return render(request, "course.html", account=who.account, csrf=auth.csrf_token(request, who), views=views,
                  now=datetime.fromtimestamp(t, timezone.utc), hub=_takes_hub_users(request), quiz_cards=quiz_cards)


def _assignment(request: Request) -> str:
    return auth.service_of(request).submissions.known(request.path_params["assignment"])


def assignment(request: Request) -> Response:
    service = auth.service_of(request)
    who = auth.student(auth.page_caller(request))
    name, t = _assignment(request), service.now()
    return render(request, "assignment.html", account=who.account, csrf=auth.csrf_token(request, who),
                  v=service.submissions.view(who.account.login, name, t), now=datetime.fromtimestamp(t, timezone.utc),
                  limit=service.policy.upload_limit_bytes, check=service.checks.panel(who.account.login, name, t))


def assignment_check(request: Request) -> Response:
    """The live fragment of the student's latest check before an attempt (:mod:`..checks`)."""
    service = auth.service_of(request)
    who = auth.student(auth.page_caller(request))
    return render(request, "_check.html", fragment=True,
                  check=service.checks.panel(who.account.login, _assignment(request), service.now()))


def assignment_live(request: Request) -> Response:
    service = auth.service_of(request)
    who = auth.student(auth.page_caller(request))
    return render(request, "_live.html", fragment=True, v=service.submissions.view(who.account.login, _assignment(request), service.now()))


def notebook(request: Request) -> Response:
    auth.page_caller(request)
    nb = all_assignments()[_assignment(request)].notebook
    path = EXERCISES / request.path_params["assignment"] / f"{nb}.ipynb"
    if not path.is_file():
        raise NotFound(f"找不到作业笔记本 {nb}.ipynb")
    return FileResponse(path, media_type="application/x-ipynb+json", filename=f"{nb}.ipynb", headers=page_headers())


def _quiz_attempt(request: Request) -> Response | None:
    """A quiz attempt's submission (the LMS's grade comment links here): to its page, the student's or the staff's."""
    service = auth.service_of(request)
    who = auth.page_caller(request)
    row = service.submissions.get(who.account, request.path_params["id"])  # 404 for another student's
    attempt = service.quizzes.of_submission(row.id) if row.assignment in service.policy.quizzes else None
    if attempt is None:
        return None
    if who.account.is_staff:
        return redirect(request, f"instructor/quizzes/{attempt.quiz}/students/{attempt.student_id}")
    return redirect(request, f"quizzes/{attempt.quiz}/attempts/{attempt.number}")


def _one(request: Request) -> tuple[auth.Caller, Attempt]:
    submissions = auth.service_of(request).submissions
    who = auth.page_caller(request)
    row = submissions.get(who.account, request.path_params["id"])  # 404 for another student's, like an unknown id
    if row.assignment not in submissions.course.assignments:
        raise NotFound("没有这份提交")
    rows = submissions.attempts(row.student_id, row.assignment, who.account, submissions.clock())
    return who, next(a for a in rows if a.id == row.id)


def submission(request: Request) -> Response:
    quiz = _quiz_attempt(request)
    if quiz is not None:
        return quiz
    who, a = _one(request)
    return render(request, "submission.html", account=who.account, csrf=auth.csrf_token(request, who), a=a,
                  title=auth.service_of(request).submissions.title(a.assignment))


def submission_live(request: Request) -> Response:
    who, a = _one(request)
    return render(request, "_submission_live.html", fragment=True, account=who.account, csrf=auth.csrf_token(request, who), a=a)


ROUTES = [
    Route("/", home, methods=["GET"]),
    Route("/login", login_page, methods=["GET"]),
    Route("/login", login, methods=["POST"]),
    Route("/logout", logout, methods=["POST"]),
    Route("/assignments/{assignment}", assignment, methods=["GET"]),
    Route("/assignments/{assignment}/live", assignment_live, methods=["GET"]),
    Route("/assignments/{assignment}/check", assignment_check, methods=["GET"]),
    Route("/assignments/{assignment}/notebook", notebook, methods=["GET"]),
    Route("/submissions/{id}", submission, methods=["GET"]),
    Route("/submissions/{id}/live", submission_live, methods=["GET"]),
]
