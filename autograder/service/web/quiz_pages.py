"""The pages of graded quizzes and timed exams: the students' (a quiz, an attempt) and the staff's (the class, one
student's attempts as they saw them, regrades, extra time).

Students (mounted at the course's root):

=======  =======================================  ===============================================================
GET      /quizzes/{quiz}                          the rules, the attempts and their scores, start or resume
POST     /quizzes/{quiz}/start                    start the next attempt (or resume the open one)
GET      /quizzes/{quiz}/attempts/{n}             answer (open; saved as given by ``static/quiz.js``) or results
POST     /quizzes/{quiz}/attempts/{n}             the form without the script: save every answer, and submit
=======  =======================================  ===============================================================

Staff (mounted at ``/instructor``):

=======  =============================================  =========================================================
GET      /instructor/quizzes/{quiz}                      item statistics, the class, the latest regrade
POST     /instructor/quizzes/{quiz}/regrade              grade again after a template was fixed (REGRADE)
GET      /instructor/quizzes/{quiz}/students?login=ID    to that student's page (the class page's search)
GET      /instructor/quizzes/{quiz}/students/{login}     a student's attempts, every variant as they saw it
POST     /instructor/quizzes/{quiz}/students/{login}     a later deadline, more attempts, extra minutes (GRANT)
=======  =============================================  =========================================================

Every rule is the core's (:class:`~autograder.service.quizzes.Quizzes`); a page only shows and translates.  Forms
carry the session's CSRF token (:mod:`.auth`).
"""

from __future__ import annotations

from datetime import datetime, timezone
from urllib.parse import quote

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ...quiz import ALL_MISTAKES, TEMPLATES
from ..errors import Forbidden, Invalid
from ..policy import MAX_QUESTIONS
from ..roles import Permission
from . import auth
from .forms import read_form
from .render import redirect, render

NOTICES = {"saved": "答案已保存。", "regraded": "重新评分已完成。", "granted": "已为该生记录例外。"}



def _now(request: Request) -> datetime:
    return datetime.fromtimestamp(auth.service_of(request).now(), timezone.utc)


# ---- students


def quiz(request: Request) -> Response:
    service = auth.service_of(request)
    who = auth.student(auth.page_caller(request))
    name = request.path_params["quiz"]
    service.quizzes.known(name)
    return render(request, "quiz/quiz.html", account=who.account, csrf=auth.csrf_token(request, who),
                  q=service.quizzes.card(who.account.login, name), now=_now(request))


async def start(request: Request) -> Response:
    service = auth.service_of(request)
    form = await read_form(request)
    who = auth.student(await run_in_threadpool(auth.page_post, request, form))
    name = request.path_params["quiz"]
    attempt_id = await run_in_threadpool(service.quizzes.start, who.account, name)
    view = await run_in_threadpool(service.quizzes.attempt, who.account, attempt_id)
    return redirect(request, f"quizzes/{name}/attempts/{view.number}")


def _attempt(request: Request, who: auth.Caller):
    service = auth.service_of(request)
    name, number = request.path_params["quiz"], request.path_params["number"]
    service.quizzes.known(name)
    return service.quizzes.attempt(who.account, service.quizzes.attempt_id(who.account.login, name, number))


def _attempt_page(request: Request, who: auth.Caller, a, status: int = 200, errors: dict[int, str] | None = None,
                  typed: dict[int, str] | None = None) -> Response:
    service = auth.service_of(request)
    return render(request, "quiz/attempt.html", status, account=who.account, csrf=auth.csrf_token(request, who), a=a,
                  q=service.quizzes.card(who.account.login, a.quiz), now=_now(request), t=service.now(),
                  errors=errors or {}, typed=typed or {}, notice=NOTICES.get(request.query_params.get("notice", "")))


def attempt(request: Request) -> Response:
    who = auth.student(auth.page_caller(request))
    return _attempt_page(request, who, _attempt(request, who))


async def attempt_post(request: Request) -> Response:
    """The attempt's form as a whole (a browser without the script): every answer saved, then submitted if asked."""
    service = auth.service_of(request)
    form = await read_form(request)
    who = auth.student(await run_in_threadpool(auth.page_post, request, form))
    a = await run_in_threadpool(_attempt, request, who)
    errors: dict[int, str] = {}
    for item in a.items[:MAX_QUESTIONS]:
        try:
            await run_in_threadpool(service.quizzes.save, who.account, a.id, item.position,
                                    {"answer": form.get(f"q{item.position}", "").strip()})
        except Invalid as exc:
            errors[item.position] = exc.message
    if errors:
        typed = {i.position: form.get(f"q{i.position}", "") for i in a.items}
        return _attempt_page(request, who, await run_in_threadpool(_attempt, request, who), 400, errors, typed)
    if form.get("action") == "submit":
        await run_in_threadpool(service.quizzes.submit, who.account, a.id)
        return redirect(request, f"quizzes/{a.quiz}/attempts/{a.number}")
    return redirect(request, f"quizzes/{a.quiz}/attempts/{a.number}?notice=saved")


# ---- staff


def _staff(request: Request, permission: Permission = Permission.VIEW_CLASS, message: str = "只有教师和助教可以查看这个页面"):
    who = auth.permitted(auth.page_caller(request), permission, message)
    return auth.service_of(request), who


def class_page(request: Request) -> Response:
    service, who = _staff(request)
    name = request.path_params["quiz"]
    quiz_policy = service.quizzes.known(name)
    rows = service.quizzes.class_rows(name)  # (closes the attempts whose end has passed, before the statistics)
    titles = {t.id: t.title for t in TEMPLATES}
    return render(request, "quiz/class.html", account=who.account, csrf=auth.csrf_token(request, who), quiz=quiz_policy,
                  stats=service.quizzes.statistics(name), titles=titles, rows=rows, roster=service.accounts.roster_size(),
                  regrade=service.quizzes.last_regrade(name), mistakes=ALL_MISTAKES,
                  notice=NOTICES.get(request.query_params.get("notice", "")))


async def regrade(request: Request) -> Response:
    service = auth.service_of(request)
    form = await read_form(request)
    who = auth.permitted(await run_in_threadpool(auth.page_post, request, form), Permission.REGRADE, "只有教师和助教可以重新评分")
    name = request.path_params["quiz"]
    await run_in_threadpool(service.quizzes.regrade, who.account.login, name)
    return redirect(request, f"instructor/quizzes/{name}?notice=regraded")


def student_page(request: Request) -> Response:
    service, who = _staff(request)
    name, login = request.path_params["quiz"], request.path_params["login"]
    quiz_policy = service.quizzes.known(name)
    person = service.accounts.student(login)
    service.quizzes.close_overdue(student=login, quiz=name)
    tz = service.course_tz()
    suggested = (quiz_policy.deadline.astimezone(tz).strftime("%Y-%m-%dT%H:%M") if quiz_policy.deadline else "")
    return render(request, "quiz/student.html", account=who.account, csrf=auth.csrf_token(request, who), quiz=quiz_policy,
                  s=person, attempts=service.quizzes.attempts(login, name, who.account), t=service.now(),
                  grant=service.quizzes.grant(login, name), suggested=suggested,
                  notice=NOTICES.get(request.query_params.get("notice", "")))


def find_student(request: Request) -> Response:
    """The class page's form: one student's page, named by their student id."""
    service, _ = _staff(request)
    name = request.path_params["quiz"]
    service.quizzes.known(name)
    login = service.accounts.student(request.query_params.get("login", "").strip()[:100]).login
    return redirect(request, f"instructor/quizzes/{name}/students/{quote(login, safe='')}")


def _int_field(form: dict[str, str], field: str) -> int:
    text = form.get(field, "").strip() or "0"
    try:
        return int(text)
    except ValueError:
        raise Invalid(f"“{text[:20]}”不是整数") from None


async def grant(request: Request) -> Response:
    service = auth.service_of(request)
    form = await read_form(request)
    who = auth.permitted(await run_in_threadpool(auth.page_post, request, form), Permission.GRANT,
                         "只有教师和助教可以为学生延期、增加次数或延长时间")
    name, login = request.path_params["quiz"], request.path_params["login"]
    if await run_in_threadpool(service.accounts.same_person, who.account.id, login):
        raise Forbidden("这是你自己在课程平台上的另一个账号（学生账号）：不能为自己记录例外，请请教师处理")
    await run_in_threadpool(service.accounts.student, login)
    deadline = None
    if form.get("deadline", "").strip():
        try:
            deadline = datetime.strptime(form["deadline"].strip()[:16], "%Y-%m-%dT%H:%M").replace(tzinfo=service.course_tz())
        except ValueError:
            raise Invalid("新的截止时间格式应为 YYYY-MM-DDTHH:MM") from None
    await run_in_threadpool(lambda: service.quizzes.grant_exception(
        login, name, by=who.account.login, deadline=deadline, extra_attempts=_int_field(form, "extra_attempts"),
        extra_minutes=_int_field(form, "extra_minutes")))
    return redirect(request, f"instructor/quizzes/{name}/students/{login}?notice=granted")


ROUTES = [
    Route("/quizzes/{quiz}", quiz, methods=["GET"]),
    Route("/quizzes/{quiz}/start", start, methods=["POST"]),
    Route("/quizzes/{quiz}/attempts/{number:int}", attempt, methods=["GET"]),
    Route("/quizzes/{quiz}/attempts/{number:int}", attempt_post, methods=["POST"]),
]

INSTRUCTOR_ROUTES = [  # mounted at /instructor
    Route("/quizzes/{quiz}", class_page, methods=["GET"]),
    Route("/quizzes/{quiz}/regrade", regrade, methods=["POST"]),
    Route("/quizzes/{quiz}/students", find_student, methods=["GET"]),
    Route("/quizzes/{quiz}/students/{login}", student_page, methods=["GET"]),
    Route("/quizzes/{quiz}/students/{login}", grant, methods=["POST"]),
]
