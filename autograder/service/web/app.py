"""The ASGI application: one factory composing the site's web modules and one app per course.

=====================  ===============================  ==============================================
mounted at             module                           what
=====================  ===============================  ==============================================
``/``                  :mod:`.site_pages`                the courses of the site
``/c/<id>``            :func:`course_app`               one course (below)
``/lti``               :mod:`.lti`                      LTI 1.3: launch, deep linking, key set, bindings
``/jupyterhub``        :mod:`.hub`                      JupyterHub: sign-in, uploads from JupyterLab
``/admin``             :mod:`.admin`                    the service administrators' pages
``/static``            Starlette's ``StaticFiles``       the pages' only scripts and styles
``/healthz``           :func:`.api.health`              liveness (no authentication)
=====================  ===============================  ==============================================

A course's app:

=====================  ===============================  ==============================================
``/c/<id>/api/v1``     :mod:`.api`, :mod:`.quiz_api`     the JSON API
``/c/<id>/instructor`` :mod:`.instructor_pages`         the staff's pages (and :mod:`.quiz_pages`' of quizzes)
``/c/<id>/lti``        :mod:`.lms`                      the course's LMS page (bindings, sync, passback)
``/c/<id>/jupyterhub`` :mod:`.hub`                      the links that open its assignments in JupyterLab
``/c/<id>/``           :mod:`.student_pages`            sign-in and the students' pages (and
                       :mod:`.quiz_pages`                quizzes and timed exams)
=====================  ===============================  ==============================================

Handlers are module-level functions that find their core in ``request.app.state`` (a course's
``service``, the ``site``); authentication, roles, CSRF and ``Origin`` are :mod:`.auth`'s, the refusals'
statuses and pages :mod:`.errors`'.  Requests whose ``Host`` is not the configured public address's (or a
loopback name on a trial) are refused (Starlette's ``TrustedHostMiddleware``): nothing the service writes or
links to is built from a request's ``Host``.  Every response carries the security headers of
:class:`SecurityHeaders` (the pages replace the Content-Security-Policy and the referrer policy with their own,
:func:`.render.page_headers`).
"""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.routing import Mount, Route, Router
from starlette.staticfiles import StaticFiles

from ..service import Service
from ..site import Site, allowed_hosts
from . import admin, api, errors, hub, instructor_pages, lms, lti, quiz_api, quiz_pages, site_pages, student_pages
from .auth import People
from .forms import BodyTime
from .render import STATIC, favicon
from .slots import BodySlots

SECURITY_HEADERS = [
    (b"content-security-policy", b"default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; "
                                 b"form-action 'self'; frame-ancestors 'none'"),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (b"cache-control", b"no-store"),
    (b"cross-origin-resource-policy", b"same-origin"),
]
UPLOAD_SLOTS = 8  # bodies of uploads read and checked at once, over all courses; one more is refused (503)
UPLOAD_SLOTS_PER_ACCOUNT = 2  # of them, at most this many for one account

COURSE_ROUTES = [
    # the bare prefix answers 404 like any unknown address (not a redirect to "/api/v1/", as a Mount alone would)
    Route("/api/v1", api.no_such_address, methods=["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"]),
    Mount("/api/v1", routes=[*api.ROUTES, *quiz_api.ROUTES]),
    Route("/instructor", instructor_pages.bare, methods=["GET"]),
    Mount("/instructor", routes=[*instructor_pages.ROUTES, *quiz_pages.INSTRUCTOR_ROUTES]),
    Mount("/lti", routes=lms.ROUTES),
    Mount("/jupyterhub", routes=hub.COURSE_ROUTES),
    *quiz_pages.ROUTES,
    *student_pages.ROUTES,
]


def _no_redirects(app: Starlette) -> None:
    """Starlette's slash redirects copy the request's ``Host`` into ``Location``; ours are relative."""
    for router in [app.router, *(r.app for r in app.router.routes if isinstance(r, Mount) and isinstance(r.app, Router))]:
        router.redirect_slashes = False


def course_app(service: Service, shared) -> Starlette:
    """One course's app (``shared``: the site app's state, whose LTI tool, upload slots and body timing it uses)."""
    app = Starlette(routes=COURSE_ROUTES, exception_handlers=errors.HANDLERS)
    _no_redirects(app)
    app.state.service = service
    app.state.people = People(service.accounts, service.signer)
    app.state.root_depth = 2  # c/<id>
    app.state.login_path = "login"
    for name in ("site", "lti", "upload_slots", "body_time", "hub"):
        setattr(app.state, name, getattr(shared, name))
    return app


def admin_app(site: Site, shared) -> Starlette:
    app = Starlette(routes=admin.ROUTES, exception_handlers=errors.HANDLERS)
    _no_redirects(app)
    app.state.people = People(site.admins, site.admin_signer)
    app.state.root_depth = 1  # admin
    app.state.login_path = "login"
    for name in ("site", "lti", "upload_slots", "body_time"):
        setattr(app.state, name, getattr(shared, name))
    return app


def make_app(site: Site, *, lifespan=None, body_time: BodyTime | None = None,
             extra_hosts: list[str] = ()) -> "SecurityHeaders":
    """The ASGI application of ``site`` (``lifespan``: Starlette's, e.g. to start and stop the grading;
    ``body_time``: how long a request body may take, :class:`.forms.BodyTime`; ``extra_hosts``: ``Host`` names
    accepted beside the public address's)."""
    app = Starlette(exception_handlers=errors.HANDLERS, lifespan=lifespan)
    app.state.site = site
    app.state.lti = lti.Tool(site.data_root)  # the tool's keys and outbound client, once per site
    app.state.upload_slots = BodySlots(UPLOAD_SLOTS, UPLOAD_SLOTS_PER_ACCOUNT)  # memory and fairness
    app.state.body_time = body_time or BodyTime()
    app.state.hub = hub.connect(site)  # the JupyterHub of DATA/jupyterhub.yml, or None
    app.state.root_depth = 0
    app.state.login_path = "admin/login"
    routes = [
        Route("/healthz", api.health, methods=["GET"]),
        Mount("/lti", routes=lti.ROUTES),
        Mount("/jupyterhub", routes=hub.ROUTES),
        Route("/admin", site_pages.to_admin, methods=["GET"]),
        Mount("/admin", app=admin_app(site, app.state)),
        Mount("/static", app=StaticFiles(directory=str(STATIC)), name="static"),
        Route("/favicon.ico", favicon, methods=["GET"]),  # asked for by browsers on their own
        *(Mount(f"/c/{cid}", app=course_app(service, app.state)) for cid, service in site.courses.items()),
        *site_pages.ROUTES,
    ]
    app.router.routes.extend(routes)
    _no_redirects(app)
    hosts = allowed_hosts(site.public_url, list(extra_hosts))
    return SecurityHeaders(TrustedHostMiddleware(app, allowed_hosts=hosts, www_redirect=False), app)


class SecurityHeaders:
    """ASGI middleware: the security headers on every HTTP response."""

    def __init__(self, inner, app: Starlette) -> None:
        self.inner, self.app = inner, app

    @property
    def state(self):
        return self.app.state

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.inner(scope, receive, send)
            return

        async def with_headers(message) -> None:
            if message["type"] == "http.response.start":
                names = {k.lower() for k, _ in message.get("headers", [])}
                message["headers"] = list(message.get("headers", [])) + [h for h in SECURITY_HEADERS if h[0] not in names]
            await send(message)

        await self.inner(scope, receive, with_headers)
