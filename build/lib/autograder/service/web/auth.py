"""Who is asking, in one place: access codes and session cookies, roles, CSRF tokens and the ``Origin``.

* :func:`caller` - the API's caller: ``Authorization: Bearer <access code>`` (checked by the core,
  :meth:`~autograder.service.accounts.Accounts.sign_in`, with its rate limit), else the session cookie;
* :func:`checked_caller` - the same for a state-changing request: with the cookie, the CSRF token (header
  ``X-CSRF-Token`` or the form field ``csrf_token``) and the ``Origin`` are checked (:func:`check_csrf`);
* :func:`page_caller` / :func:`page_post` - the pages' caller (the session cookie only; without one the error
  handler sends the browser to the sign-in page);
* :func:`permitted`, :func:`staff`, :func:`student` - the roles (:mod:`..roles` says who may do what);
* :func:`new_session`, :func:`end_session` - the cookie of a signed-in person (any way of signing in - the
  code form, the API, an LMS launch - ends here); :func:`read_cookie`, :func:`set_cookie` - every cookie under
  its name for the scheme (``__Host-`` and ``Secure`` over HTTPS, :func:`.sessions.cookie_name`) and the course
  (:meth:`.sessions.Signer.name`: a course's session is never another's);
* :func:`check_shown_account` - an upload from a page shown for another account than the one now signed in
  (the session cookie replaced meanwhile) is refused.
* :func:`slot_key` - whose share of the upload slots a body takes (an account of one course).

Everything refused is a core error (:class:`~autograder.service.errors.NotSignedIn`, ``Forbidden``), mapped to
its status by :mod:`.errors`.
"""

from __future__ import annotations

from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import Response

from .. import sessions
from ..accounts import UNAUTHORIZED, Accounts
from ..codes import Account
from ..errors import Forbidden, NotSignedIn
from ..roles import Permission
from ..service import Service


@dataclass(frozen=True)
class Caller:
    """A signed-in caller: the account, and the session when it came with the cookie (None: an access code)."""

    account: Account
    session: sessions.Session | None

    @property
    def by_cookie(self) -> bool:
        return self.session is not None


def service_of(request: Request) -> Service:
    """The course's core, as ``autograder serve`` (or a test) put it into the course app's state."""
    return request.app.state.service


@dataclass(frozen=True)
class People:
    """Whom an app signs in: a course's accounts with the course's signer, or the site's administrators."""

    accounts: Accounts
    signer: sessions.Signer


def people_of(request: Request) -> People:
    return request.app.state.people


def client_address(request: Request) -> str:
    return (request.client.host if request.client else "unknown")[:64]


def own_origin(request: Request) -> str:
    return f"{request.url.scheme}://{request.headers.get('host', '')}"


def check_origin(request: Request) -> None:
    """A request that says it comes from another site is refused (a missing ``Origin`` is not: old clients)."""
    origin = request.headers.get("origin")
    if origin is not None and origin != own_origin(request):
        raise Forbidden("请求来自其他网站，已拒绝")


def check_csrf(request: Request, session: sessions.Session, form_token: str | None) -> None:
    """The ``Origin``, then the session's CSRF token (header, or ``form_token`` from the form)."""
    check_origin(request)
    token = request.headers.get(sessions.CSRF_HEADER) or form_token
    if not people_of(request).signer.check_csrf(session, token):
        raise Forbidden("缺少或错误的 CSRF 令牌，请刷新页面后重试")


def is_https(request: Request) -> bool:
    """Served over HTTPS (by uvicorn's TLS, or a proxy trusted with ``--forwarded-allow-ips`` saying so)."""
    return request.url.scheme == "https"


def read_cookie(request: Request, name: str) -> str | None:
    """The value of cookie ``name`` under the name it has on this scheme (:func:`.sessions.cookie_name`): over
    HTTPS only the ``__Host-`` one, which no other host or plain-HTTP page can have set."""
    return request.cookies.get(sessions.cookie_name(name, secure=is_https(request)))


def set_cookie(request: Request, response: Response, name: str, value: str, max_age: int) -> None:
    response.headers.append("Set-Cookie", sessions.cookie_header(value, secure=is_https(request), max_age=max_age,
                                                                 name=name))


def _session(request: Request) -> sessions.Session | None:
    signer = people_of(request).signer
    return signer.read(read_cookie(request, signer.name(sessions.COOKIE)))


def login_cookie(request: Request) -> str:
    """The name of the sign-in form's anonymous cookie in this course."""
    return people_of(request).signer.name(sessions.LOGIN_COOKIE)


def caller(request: Request) -> Caller:
    """The caller of an API request: an access code in the ``Authorization`` header, else the session cookie."""
    people = people_of(request)
    header = request.headers.get("authorization")
    if header is not None:
        scheme, _, code = header.partition(" ")
        if scheme.lower() != "bearer" or not code.strip():
            raise NotSignedIn(UNAUTHORIZED)
        return Caller(people.accounts.sign_in(code.strip(), client_address(request)), None)
    session = _session(request)
    if session is None:
        raise NotSignedIn(UNAUTHORIZED)
    return Caller(people.accounts.of_session(session.account_id, session.code_id, session.nonce), session)


def checked_caller(request: Request, form_token: str | None = None) -> Caller:
    """:func:`caller` of a state-changing request: with the cookie, the CSRF token and the ``Origin`` are checked."""
    who = caller(request)
    if who.session is not None:
        check_csrf(request, who.session, form_token)
    return who


def csrf_token(request: Request, who: Caller) -> str:
    return people_of(request).signer.csrf_token(who.session) if who.session is not None else ""


def page_caller(request: Request) -> Caller:
    """The caller of a page: the session cookie (:class:`NotSignedIn`, shown as the sign-in page, without one)."""
    session = _session(request)
    if session is None:
        raise NotSignedIn(UNAUTHORIZED)
    return Caller(people_of(request).accounts.of_session(session.account_id, session.code_id, session.nonce),
                  session)


def page_post(request: Request, form: dict[str, str]) -> Caller:
    """The caller of a page's form, after its CSRF token and ``Origin`` are checked."""
    who = page_caller(request)
    check_csrf(request, who.session, form.get(sessions.CSRF_FIELD))
    return who


def slot_key(request: Request, who: Caller) -> str:
    """Whose share of the upload slots (:class:`.slots.BodySlots`) a body takes: the account in its course
    (accounts of two courses share ids, and one course's student must not hold another's slots)."""
    return f"{service_of(request).course.id}:account:{who.account.id}"


def check_shown_account(who: Caller, shown: str | None) -> None:
    """A form carries the account it was shown for (``shown``: its login); a request with a session of another
    account (the cookie replaced since the page was shown: another tab signed in, or a cookie set by another
    site) is refused, so nothing lands in an account the person did not see."""
    if shown is not None and shown != who.account.login:
        raise Forbidden(f"这个页面是为 {shown[:100]} 打开的，但你现在已作为 {who.account.login} 登录；"
                        "为免提交到别人的账号，已拒绝。请刷新页面，确认账号后再上传")


def permitted(who: Caller, permission: Permission, message: str = "你在这门课程中没有这项权限") -> Caller:
    if not who.account.can(permission):
        raise Forbidden(message)
    return who


def staff(who: Caller, message: str = "只有教师和助教可以查看这个页面") -> Caller:
    return permitted(who, Permission.VIEW_CLASS, message)


def student(who: Caller) -> Caller:
    if who.account.is_staff:
        raise Forbidden("这是学生的页面；教师和助教请用“总览”")
    return who


def new_session(request: Request, account: Account, signer: sessions.Signer | None = None) -> tuple[str, sessions.Session]:
    """Sign ``account`` in (``signer``: its course's, default the request's app's): the ``Set-Cookie`` value of a
    new session cookie, and the session (for its CSRF token)."""
    signer = signer or people_of(request).signer
    value, session = signer.issue(account.id, account.code_id)
    return sessions.cookie_header(value, secure=is_https(request), name=signer.name(sessions.COOKIE)), session


def end_session(request: Request, response: Response, who: Caller | None = None) -> None:
    """Sign out: the session of ``who`` is ended on the server (its cookie refused from now on, wherever it was
    copied to) and the browser told to drop the cookie."""
    if who is not None and who.session is not None:
        people_of(request).accounts.end_session(who.session.nonce, who.session.expires)
    set_cookie(request, response, people_of(request).signer.name(sessions.COOKIE), "", 0)
