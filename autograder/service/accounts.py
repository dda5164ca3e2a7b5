"""Signing in and the people of the course: access codes, sessions' accounts, failed sign-ins, the roster.

:meth:`Accounts.sign_in` is the one way from an access code to an :class:`~.codes.Account`, for the API's
``Bearer`` header, its session endpoint and the sign-in page alike.  Every failure (a wrong code, or a right
code typed with another student's id on the sign-in page) is recorded by :meth:`Accounts.record_failure`, which
also removes the rows older than the window; an address with ``login_max_failures`` failures in the window is
refused (:class:`~.errors.TooMany`, with the seconds to wait) before its code is even checked.

:meth:`Accounts.enroll` is the one way students join the course (``autograder roster import``, the roster page,
the demo course): accounts with new codes for new students, names and e-mails updated for known ones, and the
nbgrader gradebook's student list kept in step.
"""

from __future__ import annotations

from typing import Callable

import sqlalchemy as sa

from . import codes
from .codes import Account
from .database import ACCOUNTS, ENDED_SESSIONS, LOGIN_FAILURES, Database
from .errors import NotFound, NotSignedIn, TooMany
from .policy import CoursePolicy
from .roster import Student, import_students, reset_code

UNAUTHORIZED = "缺少访问码或访问码无效（请求头 Authorization: Bearer <访问码>）"
EXPIRED = "登录已失效，请重新输入访问码"
MAX_LISTED = 2000


def _account(row) -> Account:
    return Account(row.id, row.role, row.login, row.name, row.code_id)


class Accounts:
    """Accounts, codes and sign-in failures in ``db`` under the course's limits, at ``clock()`` (epoch seconds)."""

    def __init__(self, db: Database, course: CoursePolicy, clock: Callable[[], float],
                 cache: codes.CodeCache | None = None) -> None:
        self.db, self.course, self.clock = db, course, clock
        self.cache = cache if cache is not None else codes.CodeCache()

    def _row(self, con: sa.Connection, where):
        return con.execute(sa.select(ACCOUNTS.c.id, ACCOUNTS.c.role, ACCOUNTS.c.login, ACCOUNTS.c.name,
                                     ACCOUNTS.c.code_id, ACCOUNTS.c.code_hash).where(where)).first()

    # ---- signing in

    def sign_in(self, code: str, address: str, *, login: str | None = None) -> Account:
        """The account of an access code sent from ``address`` (and, on the sign-in page, typed with ``login``).

        Raises :class:`NotSignedIn` for a wrong code (or a code of someone other than ``login``), and
        :class:`TooMany` while ``address`` has too many recent failures.
        """
        account = self._by_code(code, address)
        if login is not None and account.login != login:  # someone else's code: a failure like a wrong code
            self.record_failure(address)
            raise NotSignedIn(UNAUTHORIZED)
        return account

    def _by_code(self, code: str, address: str) -> Account:
        hit = self.cache.get(code)
        if hit is not None:
            with self.db.read() as con:
                row = self._row(con, ACCOUNTS.c.id == hit[0])
            if row is not None and row.code_id == hit[1]:
                return _account(row)
            self.cache.drop(code)
        self.check_rate(address)
        parts = codes.split(code)
        with self.db.read() as con:
            row = self._row(con, ACCOUNTS.c.code_id == parts[0]) if parts else None
        # a well-formed code pays for argon2 whether or not its id exists (an id cannot be confirmed by timing);
        # a malformed one (the format is public) is refused without it
        if parts is None or not codes.verify(parts[1], row.code_hash if row is not None else None):
            self.record_failure(address)
            raise NotSignedIn(UNAUTHORIZED)
        self.cache.put(code, row.id, row.code_id)
        return _account(row)

    def record_failure(self, address: str) -> None:
        """Count a failed sign-in of ``address`` and forget the failures older than the window."""
        with self.db.write() as con:
            now = self.clock()
            con.execute(sa.insert(LOGIN_FAILURES).values(address=address, at=now))
            con.execute(sa.delete(LOGIN_FAILURES).where(LOGIN_FAILURES.c.at < now - self.course.login_window_seconds))

    def check_rate(self, address: str) -> None:
        """:class:`TooMany` (with the seconds to wait) while ``address`` has too many failures in the window."""
        now = self.clock()
        window = self.course.login_window_seconds
        with self.db.read() as con:
            times = con.execute(sa.select(LOGIN_FAILURES.c.at).where(
                (LOGIN_FAILURES.c.address == address) & (LOGIN_FAILURES.c.at > now - window))
                .order_by(LOGIN_FAILURES.c.at.desc()).limit(self.course.login_max_failures)).scalars().all()
        if len(times) >= self.course.login_max_failures:
            wait = max(1, int(min(times) + window - now + 0.999))
            raise TooMany(f"错误的访问码尝试过多，请 {wait} 秒后再试", retry_after=wait)

    def of_session(self, account_id: int, code_id: str, nonce: str | None = None) -> Account:
        """The account of a session made with code ``code_id`` (:class:`NotSignedIn` once the code was replaced,
        or once the session ``nonce`` was signed out, :meth:`end_session`)."""
        with self.db.read() as con:
            row = self._row(con, ACCOUNTS.c.id == account_id)
            ended = nonce is not None and con.execute(
                sa.select(ENDED_SESSIONS.c.nonce).where(ENDED_SESSIONS.c.nonce == nonce)).first() is not None
        if row is None or row.code_id != code_id or ended:
            raise NotSignedIn(EXPIRED)
        return _account(row)

    def end_session(self, nonce: str, expires: float) -> None:
        """Sign a session out on the server: its cookie (kept or copied) is refused from now on.  Rows are kept
        until the cookie would have expired anyway."""
        with self.db.write() as con:
            con.execute(sa.delete(ENDED_SESSIONS).where(ENDED_SESSIONS.c.expires < self.clock()))
            known = con.execute(sa.select(ENDED_SESSIONS.c.nonce).where(ENDED_SESSIONS.c.nonce == nonce)).first()
            if known is None:
                con.execute(sa.insert(ENDED_SESSIONS).values(nonce=nonce, expires=expires))

    # ---- the roster

    def student(self, login: str) -> Account:
        """The student ``login`` (:class:`NotFound` if the roster has no such student)."""
        with self.db.read() as con:
            row = self._row(con, (ACCOUNTS.c.role == "student") & (ACCOUNTS.c.login == login))
        if row is None:
            raise NotFound(f"名单中没有学生 {login[:100]}")
        return _account(row)

    def students(self, query: str = "", limit: int | None = MAX_LISTED) -> list:
        """Students (``login``, ``name``, ``email``) whose id or name contains ``query``, by id; at most ``limit`` + 1
        (None: all)."""
        cond = ACCOUNTS.c.role == "student"
        if query:
            like = "%" + query.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
            cond = cond & (ACCOUNTS.c.login.like(like, escape="\\") | ACCOUNTS.c.name.like(like, escape="\\"))
        q = sa.select(ACCOUNTS.c.login, ACCOUNTS.c.name, ACCOUNTS.c.email).where(cond).order_by(ACCOUNTS.c.login)
        with self.db.read() as con:
            return con.execute(q if limit is None else q.limit(limit + 1)).all()

    def roster_size(self) -> int:
        with self.db.read() as con:
            return con.execute(sa.select(sa.func.count()).where(ACCOUNTS.c.role == "student")).scalar() or 0

    def enroll(self, students: list[Student]) -> list[tuple[Student, str]]:
        """Enroll ``students``: see :func:`enroll`."""
        return enroll(self.db, students)

    def reset_code(self, login: str) -> str:
        """A new code for student ``login``; the old code and its sessions stop working."""
        self.student(login)
        return reset_code(self.db, "student", login)


def enroll(db: Database, students: list[Student]) -> list[tuple[Student, str]]:
    """New accounts (with their new codes, returned) for new students; names and e-mails of known ones updated;
    the nbgrader gradebook's students updated too - first, so that a failure there issues no code that could be
    lost (the codes exist only in what this returns)."""
    from ..store import gradebook  # nbgrader: imported only when needed (~1.5 s)

    if students:
        gradebook.update_students(db.url, [(s.student_id, s.name, s.email) for s in students])
    return import_students(db, students)

