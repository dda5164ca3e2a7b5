"""The whole service in one object: its courses (a :class:`~.service.Service` each), its administrators, the
site's database and the address it is reached at.  What ``autograder serve`` builds and the web layer's site app
mounts (:mod:`.web.app`); it never sees an HTTP request.

The public address is configured (``--public-url``), never read from a request: every link the service gives
away - in an LMS grade comment, a deep link, the LTI configuration - is built from it, and requests naming
another host are refused (:func:`allowed_hosts`).  So is the book's address (``--book-url``, :func:`book_url`),
which the pages link into (a diagnosis's section, the assignments page); without it they name the book's
sections as plain text.
"""

from __future__ import annotations

import ipaddress
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable
from urllib.parse import urlsplit

from . import codes, sessions
from .accounts import Accounts
from .database import SITE_ADMINS, Database
from .errors import NotFound
from .policy import CoursePolicy
from .service import Service

#: The administrators' session scope: never a course's id (:data:`.courses.COURSE_ID` has no ``_``), so a course
#: called ``admin`` has cookies and sessions of its own.
ADMIN_SCOPE = "_admin"
LOOPBACK = ("127.0.0.1", "localhost", "::1")
#: The book's page on the assignments (requirements, scoring, the mistakes the grader names), below its root.
BOOK_ASSIGNMENTS = "book/assignments/index.html"
#: A section of the book as the grader's catalogue names it (``book/binary/roc.html#binary-roc-construction``):
#: only such a path is made a link (a result's text is data, never an address of its own).
BOOK_SECTION = re.compile(r"book/[a-z0-9_]+(?:/[a-z0-9_]+)*\.html(?:#[a-z0-9][a-z0-9-]*)?")


class SiteError(ValueError):
    """The site cannot be set up as asked (Chinese message naming the setting)."""


def public_url(given: str | None, host: str, port: int, https: bool) -> str:
    """The service's public address (no trailing slash): ``given`` (``--public-url``), checked, or for a service
    listening on loopback only, its own address there (a trial on one's own machine)."""
    if given:
        parts = urlsplit(given.strip())
        if parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment:
            raise SiteError(f"--public-url {given[:200]!r} 不是合法的地址（例如 https://grader.example.edu 或 https://example.edu/submit）")
        if parts.scheme == "http" and parts.hostname not in LOOPBACK:
            raise SiteError("--public-url 必须是 https:// 地址（http:// 只用于本机回环地址上的试用）")
        return f"{parts.scheme}://{parts.netloc}{parts.path.rstrip('/')}"
    if not _loopback(host):
        raise SiteError(f"服务监听 {host}，不只在本机：请用 --public-url 给出学生和课程平台访问本服务的地址")
    shown = f"[{host}]" if ":" in host else host
    return f"{'https' if https else 'http'}://{shown}:{port}"


def book_url(given: str | None) -> str:
    """The book's address with a trailing slash (``--book-url``, checked), or ``""`` when none is configured (the pages
    then name the book's sections without a link)."""
    if not given:
        return ""
    parts = urlsplit(given.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment or parts.username:
        raise SiteError(f"--book-url {given[:200]!r} 不是合法的地址（例如 https://course.example.edu/ 或 http://127.0.0.1:8000/）")
    return f"{parts.scheme}://{parts.netloc}{parts.path.rstrip('/')}/"


def book_link(base: str, section: str) -> str:
    """The address of ``section`` (:data:`BOOK_SECTION`) in the book at ``base`` (:func:`book_url`); ``""`` without a
    book or for anything that is not such a section."""
    return base + section if base and BOOK_SECTION.fullmatch(section) else ""


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def allowed_hosts(url: str, extra: list[str] = ()) -> list[str]:
    """The ``Host`` names a request may carry: the public address's, ``extra`` (``--allowed-host``), and on a
    loopback trial the loopback names (a browser may say ``localhost`` for ``127.0.0.1``)."""
    host = urlsplit(url).hostname or ""
    names = [host, *extra]
    if host in LOOPBACK:
        names += [h for h in ("127.0.0.1", "localhost", "[::1]") if h not in names]
    return names


@dataclass
class Site:
    """What the site app needs; built by ``autograder serve`` (and by the in-process tests)."""

    db: Database
    data_root: Path
    public_url: str
    courses: dict[str, Service]
    secret: bytes
    clock: Callable[[], float] = time.time
    cache: codes.CodeCache = field(default_factory=codes.CodeCache)
    book_url: str = ""  # :func:`book_url`: the book's address, or "" (no links into the book)

    def __post_init__(self) -> None:
        self.admins = Accounts(self.db, CoursePolicy({}), lambda: self.clock(), self.cache, SITE_ADMINS)
        self.admin_signer = sessions.Signer(self.secret, scope=ADMIN_SCOPE)

    def course(self, course_id: str) -> Service:
        try:
            return self.courses[course_id]
        except KeyError:
            raise NotFound(f"没有课程 {course_id[:60]}") from None

    def course_url(self, course_id: str) -> str:
        """The public address of a course's pages (no trailing slash)."""
        return f"{self.public_url}/c/{course_id}"
