"""A course's LMS page (``/c/<id>/lti/admin``, 课程平台): its bound LMS courses, binding requests, roster sync and
grade passback.  Instructors only (:data:`~autograder.service.roles.Permission.MANAGE_LMS`).

=======  ========================  ===========================================================================
GET      /lti/admin                the page
POST     /lti/admin/retry          put every failed passback back into the queue
POST     /lti/admin/sync           pull the members of one bound LMS course (NRPS)
POST     /lti/admin/confirm        confirm a teacher's request to bind their LMS course to this course
POST     /lti/admin/unbind         remove a binding (or refuse a request)
POST     /lti/admin/authority      say whether a bound LMS course speaks for this course's roster
=======  ========================  ===========================================================================

Every form names the LMS course by (platform, deployment, context); the core acts only on a binding of this
course (:mod:`autograder.service.lti.bindings`), so a form cannot reach another course's binding.
"""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ..errors import Invalid, NotFound
from ..lti import bindings, enroll, nrps, passback
from ..lti import status as lti_status
from ..lti.ags import AgsError
from ..roles import Permission
from . import auth
from .forms import read_form
from .render import render

DENIED = "只有教师可以管理课程平台的绑定、名单同步和成绩回传"


def _page(request: Request, who: auth.Caller, message: str = "", status: int = 200) -> Response:
    service = auth.service_of(request)
    return render(request, "lti/admin.html", status, account=who.account, csrf=auth.csrf_token(request, who),
                  message=message, summary=passback.summary(service.db), open=lti_status.open_passbacks(service.db),
                  lms=lti_status.lms_courses(service.db, service.site, service.course.id))


def admin(request: Request) -> Response:
    return _page(request, auth.permitted(auth.page_caller(request), Permission.MANAGE_LMS, DENIED))


async def _posted(request: Request) -> tuple[auth.Caller, dict[str, str]]:
    form = await read_form(request)
    return auth.permitted(await run_in_threadpool(auth.page_post, request, form), Permission.MANAGE_LMS, DENIED), form


def binding_key(form: dict[str, str]) -> tuple[int, str, str]:
    """The LMS course a form names: (platform, deployment, context)."""
    try:
        platform = int(form.get("platform", ""))
    except ValueError:
        raise Invalid("表单不正确") from None
    deployment, context = form.get("deployment", ""), form.get("context", "")
    if not deployment or not context or len(deployment) > 255 or len(context) > 255:
        raise Invalid("表单不正确")
    return platform, deployment, context


def _binding(request: Request, form: dict[str, str]) -> bindings.Binding:
    """This course's binding the form names (NotFound for anything else, another course's included)."""
    service = auth.service_of(request)
    found = bindings.find(service.site, *binding_key(form))
    if found is None or found.course_id != service.course.id:
        raise NotFound("没有这项绑定")
    return found


async def retry(request: Request) -> Response:
    who, _ = await _posted(request)
    n = await run_in_threadpool(passback.retry_failed, auth.service_of(request).db)
    return await run_in_threadpool(_page, request, who, f"已重新排队 {n} 条回传失败的成绩")


def _sync(request: Request, who: auth.Caller, form: dict[str, str]) -> Response:
    service, tool = auth.service_of(request), request.app.state.lti
    found = _binding(request, form)
    if not found.active:
        raise Invalid("这项绑定还没有确认，不能同步名单")
    try:
        result = nrps.sync(service.db, service.site, tool.tokens, tool.http, found)
    except AgsError as exc:
        return _page(request, who, f"同步名单失败：{exc.message}", 502)
    return _page(request, who, f"名单已同步：课程平台上有 {result.members} 名学生，新加入 {result.enrolled} 名，"
                               f"新退课 {result.departed} 名")


async def sync(request: Request) -> Response:
    who, form = await _posted(request)
    return await run_in_threadpool(_sync, request, who, form)


def _confirm(request: Request, who: auth.Caller, form: dict[str, str]) -> Response:
    service = auth.service_of(request)
    found = _binding(request, form)
    bindings.confirm(service.site, found.key, service.course.id, by=f"{who.account.name or who.account.login}（教师）",
                     roster_authority=form.get("authority") == "1")
    return _page(request, who, f"已确认：课程平台上的“{found.context_title or found.context_id}”绑定到本课程")


async def confirm(request: Request) -> Response:
    who, form = await _posted(request)
    return await run_in_threadpool(_confirm, request, who, form)


def _unbind(request: Request, who: auth.Caller, form: dict[str, str]) -> Response:
    service = auth.service_of(request)
    found = _binding(request, form)
    bindings.unbind(service.site, found.key, service.course.id)
    enroll.end_staff_sessions(service.db, found.platform_id, found.context_id)  # the roles it gave end now
    what = "已拒绝绑定申请" if not found.active else "已解除绑定"
    return _page(request, who, f"{what}：“{found.context_title or found.context_id}”")


async def unbind(request: Request) -> Response:
    who, form = await _posted(request)
    return await run_in_threadpool(_unbind, request, who, form)


def _authority(request: Request, who: auth.Caller, form: dict[str, str]) -> Response:
    service = auth.service_of(request)
    found = _binding(request, form)
    on = form.get("authority") == "1"
    bindings.set_authority(service.site, found.key, service.course.id, on)
    return _page(request, who, f"“{found.context_title or found.context_id}”" + (
        "现在按课程平台给出的学号关联名单中的学生" if on else "不再按课程平台给出的学号关联名单；学生首次打开时用访问码确认"))


async def authority(request: Request) -> Response:
    who, form = await _posted(request)
    return await run_in_threadpool(_authority, request, who, form)


ROUTES = [  # mounted at /lti of a course
    Route("/admin", admin, methods=["GET"]),
    Route("/admin/retry", retry, methods=["POST"]),
    Route("/admin/sync", sync, methods=["POST"]),
    Route("/admin/confirm", confirm, methods=["POST"]),
    Route("/admin/unbind", unbind, methods=["POST"]),
    Route("/admin/authority", authority, methods=["POST"]),
]
