"""The staff's pages (mounted at ``/instructor`` of a course): overview, live dashboard per assignment, students,
roster.

Every page answers 403 to a student; each action asks for its permission (:mod:`..roles`: a teaching assistant
regrades and grants exceptions, only an instructor changes the roster and its codes).  Every state-changing form
(regrade, extend a deadline, extra attempts, waive a late penalty, roster import, code reset) carries the session's CSRF token and is
checked with the ``Origin`` (:mod:`.auth`).
A roster import answers with the new codes as a CSV download (the only copy: the server keeps argon2 hashes
only); a reset shows the one new code on the answer page.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from .. import sessions
from ..accounts import MAX_LISTED
from ..errors import Forbidden, Invalid
from ..roles import Permission
from ..roster import MAX_ROSTER_BYTES, codes_csv, parse_roster
from ..service import Service
from . import auth
from .forms import FORM_OVERHEAD, parse_form, read_capped, read_form
from .render import page_headers, redirect, render

DENIED = {
    Permission.VIEW_CLASS: "只有教师和助教可以查看这个页面", Permission.REGRADE: "只有教师和助教可以重新评分",
    Permission.GRANT: "只有教师和助教可以为学生延期、增加次数或免除迟交扣分", Permission.MANAGE_ROSTER: "只有教师可以管理名单和访问码",
}
NOTICES = {
    "extended": "已为该生延期；该生已有的提交按新的截止时间重新判定是否迟交，计入的得分随之更新。",
    "attempts": "已增加该生的评分次数。", "regrade": "已放回队列重新评分，页面会显示进度。",
    "waived": "已免除该生这项作业的迟交扣分；已有的和以后的迟交提交都按原始得分计入。",
    "unwaived": "已恢复该生这项作业的迟交扣分；已有的迟交提交重新乘以迟交系数。",
    "nothing": "名单中的学生都已有账号，没有新的访问码；姓名和邮箱已更新。",
}


def _instructor(request: Request, permission: Permission = Permission.VIEW_CLASS) -> tuple[Service, auth.Caller, str]:
    who = auth.permitted(auth.page_caller(request), permission, DENIED[permission])
    return auth.service_of(request), who, auth.csrf_token(request, who)


async def _posted(request: Request, permission: Permission) -> tuple[Service, auth.Caller, dict[str, str]]:
    form = await read_form(request)
    who = auth.permitted(await run_in_threadpool(auth.page_post, request, form), permission, DENIED[permission])
    return auth.service_of(request), who, form


def home(request: Request) -> Response:
    service, who, csrf = _instructor(request)
    return render(request, "instructor/home.html", account=who.account, csrf=csrf, **service.overview(),
                  quizzes=list(service.policy.quizzes.values()))


def _assignment(service: Service, request: Request) -> str:
    return service.submissions.known(request.path_params["assignment"])


def assignment(request: Request) -> Response:
    service, who, csrf = _instructor(request)
    name = _assignment(service, request)
    return render(request, "instructor/dashboard.html", account=who.account, csrf=csrf,
                  deadline=service.policy.assignments[name].deadline, **service.figures(name))


def assignment_live(request: Request) -> Response:
    service, _, _ = _instructor(request)
    return render(request, "instructor/_dashboard.html", fragment=True, **service.figures(_assignment(service, request)))


async def regrade_assignment(request: Request) -> Response:
    service, who, _ = await _posted(request, Permission.REGRADE)
    name = _assignment(service, request)
    await run_in_threadpool(service.regrade, who.account, name)
    return redirect(request, f"instructor/assignments/{name}")


async def regrade_submission(request: Request) -> Response:
    service, who, _ = await _posted(request, Permission.REGRADE)
    student = await run_in_threadpool(lambda: service.regrade(who.account, "", submission_id=request.path_params["id"]))
    return redirect(request, f"instructor/students/{student}?notice=regrade")


def students(request: Request) -> Response:
    service, who, csrf = _instructor(request)
    q = request.query_params.get("q", "").strip()[:100]
    accounts = service.accounts.students(q)
    scores, tries = service.submissions.counting_scores(), service.submissions.attempt_counts()
    rows = [{"login": a.login, "name": a.name, "scores": scores.get(a.login, {}), "attempts": tries.get(a.login, {})}
            for a in accounts[:MAX_LISTED]]
    return render(request, "instructor/students.html", account=who.account, csrf=csrf, rows=rows, q=q,
                  truncated=len(accounts) > MAX_LISTED, assignments=service.policy.gradable)


def _student_context(service: Service, login: str, viewer) -> dict[str, Any]:
    person = service.accounts.student(login)
    t, tz = service.now(), service.course_tz()
    views = []
    for name in service.policy.assignments:
        v = service.submissions.view(login, name, t, viewer=viewer)  # instructors see everything
        course = service.policy.assignments[name]
        v["extra"] = service.extra_attempts(login, name)
        v["course_deadline"] = course.deadline
        base = v["policy"].deadline  # the form reads and writes in the zone every page shows
        v["suggested_deadline"] = (base + timedelta(days=2)).astimezone(tz).strftime("%Y-%m-%dT%H:%M") if base else ""
        views.append(v)
    return {"s": person, "views": views, "pending": any(v["pending"] for v in views)}


def student(request: Request) -> Response:
    service, who, csrf = _instructor(request)
    notice = NOTICES.get(request.query_params.get("notice", ""))
    return render(request, "instructor/student.html", account=who.account, csrf=csrf, notice=notice,
                  **_student_context(service, request.path_params["login"], who.account))


def student_live(request: Request) -> Response:
    service, who, csrf = _instructor(request)
    return render(request, "instructor/_student.html", fragment=True, account=who.account, csrf=csrf,
                  **_student_context(service, request.path_params["login"], who.account))


async def _grant(request: Request, field: str) -> tuple[str, str]:
    """An exception for one student (a later deadline, extra attempts, a waived late penalty): the core checks and
    records it; the student's login and the form's ``field``."""
    service, who, form = await _posted(request, Permission.GRANT)
    login = request.path_params["login"]
    if await run_in_threadpool(service.accounts.same_person, who.account.id, login):
        raise Forbidden("这是你自己在课程平台上的另一个账号（学生账号）：不能为自己延期、免除扣分或增加次数，请请教师处理")
    grant = {"deadline": service.extend_deadline, "extra": service.add_attempts, "waive": service.waive_late}[field]
    await run_in_threadpool(grant, login, form.get("assignment", ""), form.get(field, ""), who.account.login)
    return login, form.get(field, "")


async def extend(request: Request) -> Response:
    login, _ = await _grant(request, "deadline")
    return redirect(request, f"instructor/students/{login}?notice=extended")


async def more_attempts(request: Request) -> Response:
    login, _ = await _grant(request, "extra")
    return redirect(request, f"instructor/students/{login}?notice=attempts")


async def waive(request: Request) -> Response:
    login, value = await _grant(request, "waive")
    return redirect(request, f"instructor/students/{login}?notice={'waived' if value == '1' else 'unwaived'}")


def roster(request: Request) -> Response:
    service, who, csrf = _instructor(request, Permission.MANAGE_ROSTER)
    return render(request, "instructor/roster.html", account=who.account, csrf=csrf, notice=None,
                  students=service.accounts.students(limit=None))


async def roster_import(request: Request) -> Response:
    """A roster upload: the instructor's session, the role and the CSRF token (the form's address
    ``?csrf_token=`` or the header) are checked, and an upload slot taken, before the body is read."""
    service = auth.service_of(request)
    who = auth.permitted(await run_in_threadpool(auth.page_caller, request), Permission.MANAGE_ROSTER, "只有教师可以导入名单")
    auth.check_csrf(request, who.session, request.query_params.get(sessions.CSRF_FIELD))
    with request.app.state.upload_slots.take(auth.slot_key(request, who)):
        body = await read_capped(request, MAX_ROSTER_BYTES + FORM_OVERHEAD)
        form = parse_form(body, request.headers.get("content-type", ""), MAX_ROSTER_BYTES)
        del body
    part = form.get("roster")
    if part is None or not part.data:
        raise Invalid("请选择名单 CSV 文件")
    students = parse_roster(bytes(part.data), part.filename or "名单")
    if not students:
        raise Invalid("名单里没有学生")
    issued = await run_in_threadpool(service.accounts.enroll, students)
    if not issued:
        return render(request, "instructor/roster.html", account=who.account, csrf=auth.csrf_token(request, who),
                      notice=NOTICES["nothing"], students=await run_in_threadpool(service.accounts.students, "", None))
    stamp = datetime.fromtimestamp(service.now(), service.course_tz()).strftime("%Y%m%d-%H%M%S")
    return Response(codes_csv(issued), media_type="text/csv; charset=utf-8", headers={
        **page_headers(), "Content-Disposition": f'attachment; filename="codes-{stamp}.csv"',
        "X-Roster-Created": str(len(issued)), "X-Roster-Total": str(len(students))})


async def reset(request: Request) -> Response:
    service, who, _ = await _posted(request, Permission.MANAGE_ROSTER)
    login = request.path_params["login"]
    code = await run_in_threadpool(service.accounts.reset_code, login)
    return render(request, "instructor/code.html", account=who.account, csrf=auth.csrf_token(request, who),
                  login=login, code=code)


def bare(request: Request) -> Response:
    return redirect(request, "instructor/")


ROUTES = [  # mounted at /instructor (the bare /instructor is the app's own route)
    Route("/", home, methods=["GET"]),
    Route("/assignments/{assignment}", assignment, methods=["GET"]),
    Route("/assignments/{assignment}/live", assignment_live, methods=["GET"]),
    Route("/assignments/{assignment}/regrade", regrade_assignment, methods=["POST"]),
    Route("/submissions/{id}/regrade", regrade_submission, methods=["POST"]),
    Route("/students", students, methods=["GET"]),
    Route("/students/{login}", student, methods=["GET"]),
    Route("/students/{login}/live", student_live, methods=["GET"]),
    Route("/students/{login}/extend", extend, methods=["POST"]),
    Route("/students/{login}/attempts", more_attempts, methods=["POST"]),
    Route("/students/{login}/waive", waive, methods=["POST"]),
    Route("/roster", roster, methods=["GET"]),
    Route("/roster/import", roster_import, methods=["POST"]),
    Route("/roster/{login}/reset", reset, methods=["POST"]),
]
