"""The instructors' pages: overview, live dashboard per assignment, students, roster.

Every page answers 403 to a student.  Every state-changing form (regrade, extend a deadline, extra attempts,
roster import, code reset) carries the session's CSRF token and is checked with the ``Origin``.  A roster
import answers with the new codes as a CSV download (the only copy: the server keeps argon2 hashes only);
a reset shows the one new code on the answer page.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from . import dashboard, overrides, regrade, sessions
from .codes import Account
from .database import ACCOUNTS, COUNTING, SUBMISSIONS
from .overrides import OverrideError
from .pages import PageError, checked_post, page, page_headers, read_form, redirect, render, signed_in
from .roster import MAX_ROSTER_BYTES, codes_csv, import_students, parse_roster, reset_code
from .student_pages import assignment_view, attempts
from .times import course_zone
from .uploads import FORM_OVERHEAD, parse_form, read_capped

NOTICES = {
    "extended": "已为该生延期。", "attempts": "已增加该生的评分次数。", "regrade": "已放回队列重新评分，页面会显示进度。",
    "nothing": "名单中的学生都已有账号，没有新的访问码；姓名和邮箱已更新。",
}
MAX_LISTED = 2000


def routes(service) -> list:
    """The instructors' routes (under ``/instructor/``)."""

    def instructor(request: Request) -> tuple[Account, str]:
        account, csrf = signed_in(service, request)
        if not account.is_instructor:
            raise PageError(403, "只有教师可以查看这个页面")
        return account, csrf

    async def posted(request: Request) -> tuple[Account, dict[str, str]]:
        form = await read_form(request)
        account, _ = await run_in_threadpool(checked_post, service, request, form)
        if not account.is_instructor:
            raise PageError(403, "只有教师可以这样做")
        return account, form

    def assignment_of(name: str) -> str:
        if name not in service.policy.assignments:
            raise PageError(404, f"没有开放提交的作业 {name[:100]}")
        return name

    def student_row(login: str):
        with service.db.read() as con:
            row = con.execute(sa.select(ACCOUNTS).where((ACCOUNTS.c.role == "student") & (ACCOUNTS.c.login == login))).first()
        if row is None:
            raise PageError(404, f"名单中没有学生 {login[:100]}")
        return row

    @page
    def home(request: Request) -> Response:
        account, csrf = instructor(request)
        t = service.clock()
        figures = []
        for name, p in service.policy.assignments.items():
            f = dashboard.assignment_figures(service.db, name, service.titles.get(name, name), t)
            figures.append({**f, "deadline": p.deadline})
        return render(request, "instructor/home.html", account=account, csrf=csrf, figures=figures,
                      queue=dashboard.queue_length(service.db), roster=dashboard.roster_size(service.db))

    def figures_context(name: str) -> dict[str, Any]:
        return {"f": dashboard.assignment_figures(service.db, name, service.titles.get(name, name), service.clock()),
                "queue": dashboard.queue_length(service.db), "roster": dashboard.roster_size(service.db),
                "progress": regrade.latest(service.db, name)}

    @page
    def assignment(request: Request) -> Response:
        account, csrf = instructor(request)
        name = assignment_of(request.path_params["assignment"])
        return render(request, "instructor/dashboard.html", account=account, csrf=csrf,
                      deadline=service.policy.assignments[name].deadline, **figures_context(name))

    @page
    def assignment_live(request: Request) -> Response:
        instructor(request)
        name = assignment_of(request.path_params["assignment"])
        return render(request, "instructor/_dashboard.html", **figures_context(name))

    @page
    async def regrade_assignment(request: Request) -> Response:
        account, _ = await posted(request)
        name = assignment_of(request.path_params["assignment"])
        await run_in_threadpool(regrade.request, service.db, name, account.login)
        service.wake()
        return redirect(request, f"instructor/assignments/{name}")

    @page
    async def regrade_submission(request: Request) -> Response:
        account, _ = await posted(request)
        row = await run_in_threadpool(service.submission, account, request.path_params["id"])
        await run_in_threadpool(lambda: regrade.request(service.db, row.assignment, account.login, student=row.student_id,
                                                        submission_id=row.id))
        service.wake()
        return redirect(request, f"instructor/students/{row.student_id}?notice=regrade")

    @page
    def students(request: Request) -> Response:
        account, csrf = instructor(request)
        q = request.query_params.get("q", "").strip()[:100]
        cond = ACCOUNTS.c.role == "student"
        if q:
            like = "%" + q.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
            cond = cond & (ACCOUNTS.c.login.like(like, escape="\\") | ACCOUNTS.c.name.like(like, escape="\\"))
        with service.db.read() as con:
            accounts = con.execute(sa.select(ACCOUNTS.c.login, ACCOUNTS.c.name).where(cond).order_by(ACCOUNTS.c.login)
                                   .limit(MAX_LISTED + 1)).all()
            scores = con.execute(sa.select(COUNTING)).all()
            counts = con.execute(sa.select(SUBMISSIONS.c.student_id, SUBMISSIONS.c.assignment, sa.func.count())
                                 .group_by(SUBMISSIONS.c.student_id, SUBMISSIONS.c.assignment)).all()
        by_student: dict[str, dict] = {}
        for c in scores:
            by_student.setdefault(c.student_id, {})[c.assignment] = c
        tries: dict[str, dict] = {}
        for sid, a, n in counts:
            tries.setdefault(sid, {})[a] = n
        rows = [{"login": a.login, "name": a.name, "scores": by_student.get(a.login, {}), "attempts": tries.get(a.login, {})}
                for a in accounts[:MAX_LISTED]]
        return render(request, "instructor/students.html", account=account, csrf=csrf, rows=rows, q=q,
                      truncated=len(accounts) > MAX_LISTED, assignments=list(service.policy.assignments))

    def student_context(login: str) -> dict[str, Any]:
        row = student_row(login)
        person = Account(row.id, "student", row.login, row.name, row.code_id)
        t = service.clock()
        tz = course_zone(service.policy)  # the form reads and writes in the zone every page shows
        views = []
        for name in service.policy.assignments:
            v = assignment_view(service, person, name, t)
            v["attempts"] = attempts(service, login, name, v["policy"], True, t)  # instructors see everything
            v["counting"] = next((a for a in v["attempts"] if a.counting), None)
            override = overrides.get(service.db, login, name)
            course = service.policy.assignments[name]
            v["extra"] = override.extra_attempts if override is not None else 0
            v["course_deadline"] = course.deadline
            base = v["policy"].deadline
            v["suggested_deadline"] = (base + timedelta(days=2)).astimezone(tz).strftime("%Y-%m-%dT%H:%M") if base else ""
            views.append(v)
        return {"s": row, "views": views, "pending": any(v["pending"] for v in views)}

    @page
    def student(request: Request) -> Response:
        account, csrf = instructor(request)
        notice = NOTICES.get(request.query_params.get("notice", ""))
        return render(request, "instructor/student.html", account=account, csrf=csrf, notice=notice,
                      **student_context(request.path_params["login"]))

    @page
    def student_live(request: Request) -> Response:
        account, csrf = instructor(request)
        return render(request, "instructor/_student.html", account=account, csrf=csrf, **student_context(request.path_params["login"]))

    @page
    async def extend(request: Request) -> Response:
        account, form = await posted(request)
        login = request.path_params["login"]
        await run_in_threadpool(student_row, login)
        name = assignment_of(form.get("assignment", ""))
        policy = service.policy.assignments[name]
        if policy.deadline is None:
            raise OverrideError(f"作业 {name} 没有截止时间，无需延期")
        try:
            naive = datetime.strptime(form.get("deadline", "").strip()[:16], "%Y-%m-%dT%H:%M")
        except ValueError:
            raise PageError(400, "新的截止时间格式应为 YYYY-MM-DDTHH:MM") from None
        deadline = naive.replace(tzinfo=course_zone(service.policy))  # in the course's zone, as the form says
        await run_in_threadpool(overrides.extend_deadline, service.db, policy, login, deadline, account.login)
        return redirect(request, f"instructor/students/{login}?notice=extended")

    @page
    async def more_attempts(request: Request) -> Response:
        account, form = await posted(request)
        login = request.path_params["login"]
        await run_in_threadpool(student_row, login)
        name = assignment_of(form.get("assignment", ""))
        try:
            extra = int(form.get("extra", ""))
        except ValueError:
            raise PageError(400, "增加的次数应为 1 到 100 之间的整数") from None
        await run_in_threadpool(overrides.add_attempts, service.db, service.policy.assignments[name], login, extra, account.login)
        return redirect(request, f"instructor/students/{login}?notice=attempts")

    def roster_context() -> dict[str, Any]:
        with service.db.read() as con:
            rows = con.execute(sa.select(ACCOUNTS.c.login, ACCOUNTS.c.name, ACCOUNTS.c.email)
                               .where(ACCOUNTS.c.role == "student").order_by(ACCOUNTS.c.login)).all()
        return {"students": rows}

    @page
    def roster(request: Request) -> Response:
        account, csrf = instructor(request)
        return render(request, "instructor/roster.html", account=account, csrf=csrf, notice=None, **roster_context())

    @page
    async def roster_import(request: Request) -> Response:
        body = await read_capped(request, MAX_ROSTER_BYTES + FORM_OVERHEAD)
        form = parse_form(body, request.headers.get("content-type", ""), MAX_ROSTER_BYTES)
        del body
        token = form.get(sessions.CSRF_FIELD)
        account, csrf = await run_in_threadpool(checked_post, service, request,
                                                {sessions.CSRF_FIELD: bytes(token.data).decode("utf-8", "replace") if token else ""})
        if not account.is_instructor:
            raise PageError(403, "只有教师可以导入名单")
        part = form.get("roster")
        if part is None or not part.data:
            raise PageError(400, "请选择名单 CSV 文件")
        students = parse_roster(bytes(part.data), part.filename or "名单")
        if not students:
            raise PageError(400, "名单里没有学生")

        def run() -> list:
            from ..store import gradebook  # nbgrader: imported only when needed

            issued = import_students(service.db, students)
            gradebook.update_students(service.db.url, [(s.student_id, s.name, s.email) for s in students])
            return issued

        issued = await run_in_threadpool(run)
        if not issued:
            return render(request, "instructor/roster.html", account=account, csrf=csrf, notice=NOTICES["nothing"],
                          **await run_in_threadpool(roster_context))
        stamp = datetime.fromtimestamp(service.clock(), course_zone(service.policy)).strftime("%Y%m%d-%H%M%S")
        return Response(codes_csv(issued), media_type="text/csv; charset=utf-8", headers={
            **page_headers(), "Content-Disposition": f'attachment; filename="codes-{stamp}.csv"',
            "X-Roster-Created": str(len(issued)), "X-Roster-Total": str(len(students))})

    @page
    async def reset(request: Request) -> Response:
        account, form = await posted(request)
        login = request.path_params["login"]
        await run_in_threadpool(student_row, login)
        code = await run_in_threadpool(reset_code, service.db, "student", login)
        csrf = service.signer.csrf_token(service.signer.read(request.cookies.get(sessions.COOKIE)))
        return render(request, "instructor/code.html", account=account, csrf=csrf, login=login, code=code)

    def bare(request: Request) -> Response:
        return redirect(request, "instructor/")

    return [
        Route("/instructor", bare, methods=["GET"]),
        Route("/instructor/", home, methods=["GET"]),
        Route("/instructor/assignments/{assignment}", assignment, methods=["GET"]),
        Route("/instructor/assignments/{assignment}/live", assignment_live, methods=["GET"]),
        Route("/instructor/assignments/{assignment}/regrade", regrade_assignment, methods=["POST"]),
        Route("/instructor/submissions/{id}/regrade", regrade_submission, methods=["POST"]),
        Route("/instructor/students", students, methods=["GET"]),
        Route("/instructor/students/{login}", student, methods=["GET"]),
        Route("/instructor/students/{login}/live", student_live, methods=["GET"]),
        Route("/instructor/students/{login}/extend", extend, methods=["POST"]),
        Route("/instructor/students/{login}/attempts", more_attempts, methods=["POST"]),
        Route("/instructor/roster", roster, methods=["GET"]),
        Route("/instructor/roster/import", roster_import, methods=["POST"]),
        Route("/instructor/roster/{login}/reset", reset, methods=["POST"]),
    ]
