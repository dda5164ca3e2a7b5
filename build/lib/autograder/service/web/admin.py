"""The service administrators' pages (``/admin/``): the courses, the LMS bindings of every course, the platforms.

=======  ==================  =========================================================================
GET      /admin/             overview: courses, bindings (requests first), registered platforms
GET      /admin/login        sign in with an administrator's access code (``autograder admin add``)
POST     /admin/login
POST     /admin/logout
POST     /admin/bind         bind an LMS course (platform, deployment, context id) to a course, active
POST     /admin/confirm      confirm a teacher's binding request
POST     /admin/unbind       remove a binding or refuse a request
POST     /admin/authority    say whether a bound LMS course speaks for its course's roster
=======  ==================  =========================================================================

Mounted as an app of its own whose people are the site's administrators (:class:`.auth.People`): their sessions
and codes are never a course's.  Courses are added with ``autograder course add`` (a course needs its policy
file and data folder, which belong on the server); their instructors' codes with ``autograder roster instructor``.
"""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from .. import sessions
from ..errors import Invalid, NotFound, NotSignedIn, TooMany
from ..lti import bindings, enroll, registry
from ..roles import ADMIN
from . import auth
from .forms import read_form
from .lms import binding_key
from .render import redirect, render

WRONG = "名字或访问码不正确"


def _site(request: Request):
    return request.app.state.site


def _admin(request: Request) -> auth.Caller:
    who = auth.page_caller(request)
    if who.account.role != ADMIN:  # cannot happen (only administrators are in this table); a guard
        raise NotSignedIn(WRONG)
    return who


def _page(request: Request, who: auth.Caller, message: str = "", status: int = 200) -> Response:
    site = _site(request)
    platforms = registry.all_platforms(site.db)
    names = {p.id: p.name for p in platforms}
    rows = [{"b": b, "platform": names.get(b.platform_id, "（已移除）"),
             "course": site.courses[b.course_id].course.title if b.course_id in site.courses else f"（没有课程 {b.course_id}）"}
            for b in bindings.everything(site.db)]
    courses = [{"c": s.course, "url": site.course_url(s.course.id), "students": s.accounts.roster_size()}
               for s in site.courses.values()]
    return render(request, "admin/home.html", status, account=who.account, csrf=auth.csrf_token(request, who),
                  message=message, courses=courses, bindings=rows, platforms=platforms)


def home(request: Request) -> Response:
    return _page(request, _admin(request))


def login_form(request: Request, error: str | None = None, status: int = 200) -> Response:
    signer = auth.people_of(request).signer
    value, session = signer.issue(0, "login")
    response = render(request, "admin/login.html", status, account=None, csrf="", error=error,
                      login_csrf=signer.csrf_token(session))
    auth.set_cookie(request, response, auth.login_cookie(request), value, 3600)
    return response


def login_page(request: Request) -> Response:
    return login_form(request)


async def login(request: Request) -> Response:
    people = auth.people_of(request)
    form = await read_form(request)
    anonymous = people.signer.read(auth.read_cookie(request, auth.login_cookie(request)))
    origin = request.headers.get("origin")
    if (origin is not None and origin != auth.own_origin(request)) or anonymous is None \
            or not people.signer.check_csrf(anonymous, form.get(sessions.CSRF_FIELD)):
        return login_form(request, "登录表单已过期，请重新输入", 403)
    name, code = form.get("login", "").strip(), form.get("code", "").strip()
    try:
        account = await run_in_threadpool(people.accounts.sign_in, code, auth.client_address(request), login=name)
    except NotSignedIn:
        return login_form(request, WRONG, 401)
    except TooMany as exc:
        response = login_form(request, exc.message, 429)
        response.headers["Retry-After"] = str(exc.retry_after)
        return response
    cookie, _ = auth.new_session(request, account)
    response = redirect(request, "")
    response.headers.append("Set-Cookie", cookie)
    auth.set_cookie(request, response, auth.login_cookie(request), "", 0)
    return response


async def logout(request: Request) -> Response:
    form = await read_form(request)
    who = await run_in_threadpool(auth.page_post, request, form)
    response = redirect(request, "login")
    await run_in_threadpool(auth.end_session, request, response, who)
    return response


async def _posted(request: Request) -> tuple[auth.Caller, dict[str, str]]:
    form = await read_form(request)
    who = await run_in_threadpool(auth.page_post, request, form)
    return who, form


def _course(request: Request, form: dict[str, str]) -> str:
    course_id = form.get("course", "")
    if course_id not in _site(request).courses:
        raise Invalid("请选择一门课程")
    return course_id


def _bind(request: Request, who: auth.Caller, form: dict[str, str]) -> Response:
    site = _site(request)
    key, course_id = binding_key(form), _course(request, form)
    platform = registry.get(site.db, key[0])
    if platform is None or key[1] not in platform.deployments:
        raise Invalid("没有这个平台或部署（autograder lti list）")
    before = bindings.find(site.db, *key)
    bindings.bind(site.db, *key, course_id, by=f"{who.account.login}（管理员）", roster_authority=form.get("authority") == "1",
                  title=form.get("title", "")[:400])
    if before is not None and before.course_id != course_id:  # bound elsewhere now: the old course's roles end
        _end_staff_sessions(request, before)
    return _page(request, who, f"已把课程平台上的课程 {key[2]} 绑定到 {site.courses[course_id].course.title}")


async def bind(request: Request) -> Response:
    who, form = await _posted(request)
    return await run_in_threadpool(_bind, request, who, form)


def _existing(request: Request, form: dict[str, str]) -> bindings.Binding:
    found = bindings.find(_site(request).db, *binding_key(form))
    if found is None:
        raise NotFound("没有这项绑定")
    return found


def _confirm(request: Request, who: auth.Caller, form: dict[str, str]) -> Response:
    found = _existing(request, form)
    bindings.confirm(_site(request).db, found.key, found.course_id, by=f"{who.account.login}（管理员）",
                     roster_authority=form.get("authority") == "1")
    return _page(request, who, f"已确认“{found.context_title or found.context_id}”的绑定")


async def confirm(request: Request) -> Response:
    who, form = await _posted(request)
    return await run_in_threadpool(_confirm, request, who, form)


def _end_staff_sessions(request: Request, found: bindings.Binding) -> None:
    """The staff sessions a binding gave end with it (its course's, when that course is served here)."""
    service = _site(request).courses.get(found.course_id)
    if service is not None:
        enroll.end_staff_sessions(service.db, found.platform_id, found.context_id)


def _unbind(request: Request, who: auth.Caller, form: dict[str, str]) -> Response:
    found = _existing(request, form)
    bindings.unbind(_site(request).db, found.key)
    _end_staff_sessions(request, found)
    return _page(request, who, f"已删除“{found.context_title or found.context_id}”的{'绑定' if found.active else '绑定申请'}")


async def unbind(request: Request) -> Response:
    who, form = await _posted(request)
    return await run_in_threadpool(_unbind, request, who, form)


def _authority(request: Request, who: auth.Caller, form: dict[str, str]) -> Response:
    found = _existing(request, form)
    bindings.set_authority(_site(request).db, found.key, found.course_id, form.get("authority") == "1")
    return _page(request, who, "已更新")


async def authority(request: Request) -> Response:
    who, form = await _posted(request)
    return await run_in_threadpool(_authority, request, who, form)


ROUTES = [
    Route("/", home, methods=["GET"]),
    Route("/login", login_page, methods=["GET"]),
    Route("/login", login, methods=["POST"]),
    Route("/logout", logout, methods=["POST"]),
    Route("/bind", bind, methods=["POST"]),
    Route("/confirm", confirm, methods=["POST"]),
    Route("/unbind", unbind, methods=["POST"]),
    Route("/authority", authority, methods=["POST"]),
]
