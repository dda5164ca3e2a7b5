"""The ASGI application: one factory composing the web modules over one core.

=====================  ===============================  ==============================================
mounted at             module                           what
=====================  ===============================  ==============================================
``/api/v1``            :mod:`.api`                      the JSON API
``/instructor``        :mod:`.instructor_pages`         the instructors' pages
``/static``            Starlette's ``StaticFiles``       the pages' only scripts and styles
``/``                  :mod:`.student_pages`            sign-in and the students' pages
``/lti``               :mod:`.lti`                      LTI 1.3: launch, deep linking, key set, the LMS page
``/healthz``           :func:`.api.health`              liveness (no authentication)
=====================  ===============================  ==============================================

Handlers are module-level functions that find the core in ``request.app.state.service``; authentication,
roles, CSRF and ``Origin`` are :mod:`.auth`'s, the refusals' statuses and pages :mod:`.errors`'.  Another way in
(an LMS launch, say) is one more module with its routes, mounted here, calling the same core and
:func:`.auth.new_session`.  Every response carries the security headers of :class:`SecurityHeaders` (the pages
replace the Content-Security-Policy and the referrer policy with their own, :func:`.render.page_headers`).
"""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.routing import Mount, Route, Router
from starlette.staticfiles import StaticFiles

from ..service import Service
from . import api, errors, instructor_pages, lti, student_pages
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
UPLOAD_SLOTS = 8  # bodies of uploads read and checked at once; one more is refused at once (503, Retry-After)
UPLOAD_SLOTS_PER_ACCOUNT = 2  # of them, at most this many for one account

ROUTES = [
    Route("/healthz", api.health, methods=["GET"]),
    # the bare prefix answers 404 like any unknown address (not a redirect to "/api/v1/", as a Mount alone would)
    Route("/api/v1", api.no_such_address, methods=["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"]),
    Mount("/api/v1", routes=api.ROUTES),
    Route("/instructor", instructor_pages.bare, methods=["GET"]),
    Mount("/instructor", routes=instructor_pages.ROUTES),
    Mount("/lti", routes=lti.ROUTES),  # LTI 1.3 Advantage (autograder/service/lti: the core)
    Mount("/static", app=StaticFiles(directory=str(STATIC)), name="static"),
    Route("/favicon.ico", favicon, methods=["GET"]),  # asked for by browsers on their own
    *student_pages.ROUTES,
]


def make_app(service: Service, *, lifespan=None, body_time: BodyTime | None = None) -> "SecurityHeaders":
    """The ASGI application of ``service`` (``lifespan``: Starlette's, e.g. to start and stop the grading;
    ``body_time``: how long a request body may take, :class:`.forms.BodyTime`)."""
    app = Starlette(routes=ROUTES, exception_handlers=errors.HANDLERS, lifespan=lifespan)
    for router in [app.router, *(r.app for r in ROUTES if isinstance(r, Mount) and isinstance(r.app, Router))]:
        router.redirect_slashes = False  # Starlette's redirect copies the request's Host into Location; ours are relative
    app.state.service = service
    app.state.lti = lti.Tool(service.data_root)  # the tool's keys and outbound client, once per app
    app.state.upload_slots = BodySlots(UPLOAD_SLOTS, UPLOAD_SLOTS_PER_ACCOUNT)  # memory and fairness
    app.state.body_time = body_time or BodyTime()
    return SecurityHeaders(app)


class SecurityHeaders:
    """ASGI middleware: the security headers on every HTTP response."""

    def __init__(self, app: Starlette) -> None:
        self.app = app

    @property
    def state(self):
        return self.app.state

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
