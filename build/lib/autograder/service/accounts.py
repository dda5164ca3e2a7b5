"""Signing in and the people of the course: access codes, sessions' accounts, failed sign-ins, the roster.

:meth:`Accounts.sign_in` is the one way from an access code to an :class:`~.codes.Account`, for the API's
``Bearer`` header, its session endpoint and the sign-in page alike.  Its rate limit is atomic: in one serialized
transaction a sign-in is admitted (or refused) and recorded as a failure, which it stays unless the code proves
right (:meth:`Accounts._admit`), so concurrent attempts cannot all pass one check.  Failures count per client
address (``login_max_failures`` in the window) and per account (``login_max_per_account``, for codes whose first
part names the account).  A right code is judged before the address's budget: once an address has used its
budget, a code naming a real account is still checked (and signs in if right), while codes naming none are
refused unchecked - so a classmate behind the same NAT cannot lock anyone out, and guessing stays bounded by the
per-account budget (130 secret bits, ``login_max_per_account`` guesses per window).  Each check costs an argon2
hash; at most :data:`~.codes.HASH_SLOTS` run at once.

:meth:`Accounts.enroll` is the one way students join the course (``autograder roster import``, the roster page,
the demo course): accounts with new codes for new students, names and e-mails updated for known ones, and the
nbgrader gradebook's student list kept in step.
"""

from __future__ import annotations

from typing import Any, Callable

import sqlalchemy as sa

from . import codes
from .codes import Account
from .database import ACCOUNTS, COURSE_ACCOUNTS, AccountTables, Database
from .errors import NotFound, NotSignedIn, TooMany
from .lms_tables import USERS
from .policy import CoursePolicy
from .roles import Role
from .roster import Student, import_students, reset_code

UNAUTHORIZED = "缺少访问码或访问码无效（请求头 Authorization: Bearer <访问码>）"
EXPIRED = "登录已失效，请重新输入访问码"
MAX_LISTED = 2000


class _Unchecked(Exception):
    """A sign-in refused without checking its code (the address's budget is used up and no account is named)."""

    def __init__(self, error: TooMany) -> None:
        super().__init__(error.message)
        self.error = error


def _account(row) -> Account:
    return Account(row.id, row.role, row.login, row.name, row.code_id)


class Accounts:
    """Accounts, codes and sign-in failures in ``db`` under the course's limits, at ``clock()`` (epoch seconds).

    ``tables``: a course's people (default), or the site's administrators (:data:`.database.SITE_ADMINS`, with the
    default limits of a course): the same rules sign both in."""

    def __init__(self, db: Database, course: CoursePolicy, clock: Callable[[], float],
                 cache: codes.CodeCache | None = None, tables: AccountTables = COURSE_ACCOUNTS) -> None:
        self.db, self.course, self.clock, self.t = db, course, clock, tables
        self.cache = cache if cache is not None else codes.CodeCache()

    def _row(self, con: sa.Connection, where):
        return con.execute(sa.select(self.t.accounts.c.id, self.t.accounts.c.role, self.t.accounts.c.login, self.t.accounts.c.name,
                                     self.t.accounts.c.code_id, self.t.accounts.c.code_hash).where(where)).first()

    # ---- signing in

    def sign_in(self, code: str, address: str, *, login: str | None = None) -> Account:
        """The account of an access code sent from ``address`` (and, on the sign-in page, typed with ``login``).

        Raises :class:`NotSignedIn` for a wrong code (or a code of someone other than ``login``), and
        :class:`TooMany` while the code's account, or (for a code that is not right) ``address``, has too many
        recent failures: see :meth:`_admit`.
        """
        hit = self.cache.get(code)
        if hit is not None:
            with self.db.read() as con:
                row = self._row(con, self.t.accounts.c.id == hit[0])
            if row is not None and row.code_id == hit[1]:
                if login is not None and row.login != login:  # someone else's code: a failure like a wrong code
                    self._record(address, row.id)
                    raise NotSignedIn(UNAUTHORIZED)
                return _account(row)
            self.cache.drop(code)
        parts = codes.split(code)
        try:
            row, ticket, over = self._admit(address, parts[0] if parts else None)
        except _Unchecked as refused:
            codes.pause_like_verify()  # as long as a check would take: an unknown first part is not confirmed by time
            raise refused.error from None
        # a well-formed code pays for argon2 whether or not its id exists (an id cannot be confirmed by timing);
        # a malformed one (the format is public) is refused without it
        right = parts is not None and codes.verify(parts[1], row.code_hash if row is not None else None)
        if right and (login is None or row.login == login):
            with self.db.write() as con:  # a right code is no failure: its reservation goes
                con.execute(sa.delete(self.t.failures).where(self.t.failures.c.id == ticket))
            self.cache.put(code, row.id, row.code_id)
            return _account(row)
        if over:
            raise over
        raise NotSignedIn(UNAUTHORIZED)

    def _admit(self, address: str, code_id: str | None) -> tuple[Any, int, TooMany | None]:
        """Decide, in one serialized transaction, whether a code may be checked, and record it as a failure
        until it proves right: ``(account row or None, the record's id, the refusal a wrong code gets)``.

        * the account the code's first part names has ``login_max_per_account`` failures in the window:
          :class:`TooMany`, unchecked (only someone who has seen the code knows its first part);
        * else, under ``login_max_failures`` failures from ``address``: checked (a wrong code gets 401);
        * else, over the address's budget: checked only if the first part names an account (a wrong code then
          gets 429), so a right code is never refused because others failed from the same address, and an
          address guessing without a real first part gets at most its budget of checks per window;
          :class:`_Unchecked` otherwise.
        """
        window = self.course.login_window_seconds
        with self.db.write() as con:
            self.db.serialize(con, "sign-in")
            now = self.clock()
            con.execute(sa.delete(self.t.failures).where(self.t.failures.c.at <= now - window))
            row = self._row(con, self.t.accounts.c.code_id == code_id) if code_id is not None else None
            if row is not None:
                refusal = self._budget(con, self.t.failures.c.account_id == row.id,
                                       self.course.login_max_per_account, now)
                if refusal is not None:
                    raise refusal
            over = self._budget(con, self.t.failures.c.address == address, self.course.login_max_failures, now)
            if over is not None and row is None:
                raise _Unchecked(over)
            ticket = con.execute(sa.insert(self.t.failures).values(
                address=address, account_id=row.id if row is not None else None, at=now)).inserted_primary_key[0]
        return row, ticket, over

    def _budget(self, con: sa.Connection, where, limit: int, now: float) -> TooMany | None:
        """The refusal (with the seconds to wait) when the failures ``where`` in the window reach ``limit``."""
        times = con.execute(sa.select(self.t.failures.c.at).where(where & (self.t.failures.c.at > now - self.course.login_window_seconds))
                            .order_by(self.t.failures.c.at.desc()).limit(limit)).scalars().all()
        if len(times) < limit:
            return None
        wait = max(1, int(min(times) + self.course.login_window_seconds - now + 0.999))
        return TooMany(f"错误的访问码尝试过多，请 {wait} 秒后再试", retry_after=wait)

    def _record(self, address: str, account_id: int | None) -> None:
        """Count a failed sign-in of ``address`` (against ``account_id`` too)."""
        with self.db.write() as con:
            con.execute(sa.insert(self.t.failures).values(address=address, account_id=account_id, at=self.clock()))

    def of_session(self, account_id: int, code_id: str, nonce: str | None = None) -> Account:
        """The account of a session made with code ``code_id`` (:class:`NotSignedIn` once the code was replaced,
        or once the session ``nonce`` was signed out, :meth:`end_session`)."""
        with self.db.read() as con:
            row = self._row(con, self.t.accounts.c.id == account_id)
            ended = nonce is not None and con.execute(
                sa.select(self.t.ended.c.nonce).where(self.t.ended.c.nonce == nonce)).first() is not None
        if row is None or row.code_id != code_id or ended:
            raise NotSignedIn(EXPIRED)
        return _account(row)

    def end_session(self, nonce: str, expires: float) -> None:
        """Sign a session out on the server: its cookie (kept or copied) is refused from now on.  Rows are kept
        until the cookie would have expired anyway."""
        with self.db.write() as con:
            con.execute(sa.delete(self.t.ended).where(self.t.ended.c.expires < self.clock()))
            known = con.execute(sa.select(self.t.ended.c.nonce).where(self.t.ended.c.nonce == nonce)).first()
            if known is None:
                con.execute(sa.insert(self.t.ended).values(nonce=nonce, expires=expires))

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

    def same_person(self, account_id: int, student: str) -> bool:
        """Whether the account ``account_id`` and the student account ``student`` are one LMS person (say a TA in
        one bound LMS course and a learner in another of the same course): nobody grants their own account anything."""
        mine = sa.select(USERS.c.platform_id, USERS.c.sub).where(USERS.c.account_id == account_id).subquery()
        theirs = sa.select(USERS.c.account_id).join(ACCOUNTS, ACCOUNTS.c.id == USERS.c.account_id).join(
            mine, (mine.c.platform_id == USERS.c.platform_id) & (mine.c.sub == USERS.c.sub)).where(
            (ACCOUNTS.c.login == student) & (ACCOUNTS.c.role == Role.STUDENT.value))
        with self.db.read() as con:
            return con.execute(theirs.limit(1)).first() is not None

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

