"""The site's own pages: its front page, listing the courses it hosts (each course's pages are its own app)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from .render import redirect, render


def home(request: Request) -> Response:
    site = request.app.state.site
    courses = [s.course for s in site.courses.values()]
    return render(request, "site.html", account=None, csrf="", courses=courses)


def to_admin(request: Request) -> Response:
    return redirect(request, "admin/")


ROUTES = [Route("/", home, methods=["GET"])]
