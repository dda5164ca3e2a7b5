"""The service's tables and how to reach them safely.

A course's tables (:data:`META`) live in the course's database, next to its nbgrader gradebook:

* ``service_accounts`` - students (``login`` = student id) and instructors, each with the public part of its
  access code (``code_id``) and a slow (argon2id) hash of the secret part; never the code itself;
* ``service_submissions`` - the durable queue: one row per accepted attempt, its state
  (``queued`` -> ``grading`` -> ``graded`` | ``failed``), the claim (who, until when, how many tries),
  the stored file and the result;
* ``service_counting`` - per student and assignment, which attempt counts (chosen in the transaction that
  records a result; the nbgrader gradebook holds a copy); its score is that submission's
  (:func:`.counting.effective_score`), never stored a second time;
* ``service_sign_in_failures`` - failed sign-ins (and sign-ins being checked), per client address and, when the
  code's first part names an account, per account (the rate limit, :mod:`.accounts`);
* ``service_ended_sessions`` - sessions signed out before their expiry (their nonce), refused from then on;
* ``service_overrides`` - an instructor's exceptions for one student and assignment: a later deadline, extra attempts,
  a waived late penalty;
* ``service_regrades`` - regrades an instructor asked for (which submissions, when), for their progress;
* ``service_checks`` - a student's checks of the visible tests before an attempt (:mod:`.checks`): a queue of its
  own, never an attempt, never counted;
* ``service_meta`` - small settings (the policy digest the gradebook was settled with).

The site's tables (:data:`SITE_META`) live in the site's database (``DATA/gradebook.db`` or ``--db``):

* ``site_courses`` - the courses this service hosts (:mod:`.courses`);
* ``site_admins``, ``site_sign_in_failures``, ``site_ended_sessions`` - the service's administrators, their failed
  sign-ins and signed-out sessions (the same columns as a course's: :class:`.accounts.Accounts` serves both).

How each is created or brought up to date: :func:`.schema.prepare`.

SQLite (the embedded default) runs in WAL mode and write transactions start with ``BEGIN IMMEDIATE``, so
two writers never interleave a read and a write; PostgreSQL uses row locks (``FOR UPDATE``, ``SKIP
LOCKED`` for the queue) and session advisory locks (:meth:`Database.pair_lock`).
"""

from __future__ import annotations

import os
import re
import threading
import zlib
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import sqlalchemy as sa

from ..store.urls import engine_url
from .failures import COLUMN_TYPE as FAILURE

META = sa.MetaData()
SITE_META = sa.MetaData()

ACCOUNTS = sa.Table(
    "service_accounts", META,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("role", sa.String(16), nullable=False),  # a roles.Role value
    sa.Column("login", sa.String(128), nullable=False),
    sa.Column("name", sa.String(200), nullable=False, default=""),
    sa.Column("email", sa.String(200), nullable=False, default=""),
    sa.Column("code_id", sa.String(32), nullable=False, unique=True),
    sa.Column("code_hash", sa.String(200), nullable=False),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.UniqueConstraint("role", "login", name="uq_service_accounts_role_login"),
)

SUBMISSIONS = sa.Table(
    "service_submissions", META,
    sa.Column("id", sa.String(32), primary_key=True),  # 128 random bits, URL-safe
    sa.Column("student_id", sa.String(128), nullable=False),
    sa.Column("assignment", sa.String(128), nullable=False),
    sa.Column("status", sa.String(16), nullable=False),  # queued | grading | graded | failed
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("filename", sa.String(255), nullable=False),
    sa.Column("path", sa.String(400), nullable=False),  # relative to the data folder
    sa.Column("sha256", sa.String(64), nullable=False),
    sa.Column("size", sa.Integer, nullable=False),
    sa.Column("late", sa.Boolean, nullable=False, default=False),
    sa.Column("penalty", sa.Float, nullable=False, default=1.0),  # factor applied to the score
    sa.Column("claimed_by", sa.String(64)),
    sa.Column("lease_until", sa.Float),
    sa.Column("tries", sa.Integer, nullable=False, default=0),
    sa.Column("started_at", sa.Float),
    sa.Column("graded_at", sa.Float),  # when the result it holds was recorded (or, failed, when it failed)
    sa.Column("finished_at", sa.Float),  # when its latest grading ended: a result, or a failure (a regrade's too)
    sa.Column("graded_by", sa.String(64)),  # the service process that recorded the result
    sa.Column("score", sa.Float),  # raw score; what counts is score * penalty
    sa.Column("max_score", sa.Float),
    sa.Column("fingerprint", sa.String(64)),
    sa.Column("result_json", sa.Text),
    sa.Column("error", sa.Text),  # the failure's detail (:class:`.failures.Failure`)
    sa.Column("failure", FAILURE),  # why its grading ended without a result; graded: kept its previous one
    sa.Column("settled", sa.Boolean, nullable=False, default=True),  # False: graded, the gradebook's copy not yet written
    sa.Index("ix_service_submissions_queue", "status", "created_at"),
    sa.Index("ix_service_submissions_owner", "student_id", "assignment", "created_at"),
)

COUNTING = sa.Table(
    "service_counting", META,
    sa.Column("student_id", sa.String(128), primary_key=True),
    sa.Column("assignment", sa.String(128), primary_key=True),
    sa.Column("submission_id", sa.String(32), nullable=False),
    sa.Column("updated_at", sa.Float, nullable=False),
)

SIGN_IN_FAILURES = sa.Table(
    "service_sign_in_failures", META,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("address", sa.String(64), nullable=False),
    sa.Column("account_id", sa.Integer),  # the account the code's first part names; None: no such account
    sa.Column("at", sa.Float, nullable=False),
    sa.Index("ix_service_sign_in_failures_address", "address", "at"),
    sa.Index("ix_service_sign_in_failures_account", "account_id", "at"),
)

ENDED_SESSIONS = sa.Table(
    "service_ended_sessions", META,
    sa.Column("nonce", sa.String(64), primary_key=True),
    sa.Column("expires", sa.Float, nullable=False, index=True),  # forgotten once the cookie would have expired
)

OVERRIDES = sa.Table(
    "service_overrides", META,
    sa.Column("student_id", sa.String(128), primary_key=True),
    sa.Column("assignment", sa.String(128), primary_key=True),
    sa.Column("deadline", sa.Float),  # epoch seconds; None: the course's deadline
    sa.Column("extra_attempts", sa.Integer, nullable=False, default=0),  # added to attempts_per_24h
    sa.Column("waive_late", sa.Boolean, nullable=False, default=False, server_default=sa.false()),  # late work counts whole
    sa.Column("updated_at", sa.Float, nullable=False),
    sa.Column("updated_by", sa.String(128), nullable=False),
)

CHECKS = sa.Table(
    "service_checks", META,  # checks of the visible tests before an attempt (:mod:`.checks`): never an attempt
    sa.Column("id", sa.String(32), primary_key=True),
    sa.Column("student_id", sa.String(128), nullable=False),
    sa.Column("assignment", sa.String(128), nullable=False),
    sa.Column("status", sa.String(16), nullable=False),  # queued | grading | graded | failed (the queue's states)
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("filename", sa.String(255), nullable=False),
    sa.Column("path", sa.String(400), nullable=False),  # relative to the data folder; removed once checked
    sa.Column("sha256", sa.String(64), nullable=False),
    sa.Column("size", sa.Integer, nullable=False),
    sa.Column("claimed_by", sa.String(64)),
    sa.Column("lease_until", sa.Float),
    sa.Column("tries", sa.Integer, nullable=False, default=0),
    sa.Column("started_at", sa.Float),
    sa.Column("graded_at", sa.Float),
    sa.Column("finished_at", sa.Float),
    sa.Column("result_json", sa.Text),  # the visible cases' results only
    sa.Column("error", sa.Text),  # the failure's detail
    sa.Column("failure", FAILURE),
    sa.Index("ix_service_checks_queue", "status", "created_at"),
    sa.Index("ix_service_checks_owner", "student_id", "created_at"),
)

REGRADES = sa.Table(
    "service_regrades", META,
    sa.Column("id", sa.String(32), primary_key=True),
    sa.Column("assignment", sa.String(128), nullable=False),
    sa.Column("student_id", sa.String(128)),  # None: the whole assignment
    sa.Column("submission_ids", sa.Text, nullable=False),  # JSON list
    sa.Column("requested_at", sa.Float, nullable=False),
    sa.Column("requested_by", sa.String(128), nullable=False),
)

SETTINGS = sa.Table(
    "service_meta", META,
    sa.Column("key", sa.String(64), primary_key=True),
    sa.Column("value", sa.Text, nullable=False),
)

COURSES = sa.Table(
    "site_courses", SITE_META,
    sa.Column("id", sa.String(40), primary_key=True),
    sa.Column("title", sa.String(200), nullable=False),
    sa.Column("data_dir", sa.String(200), nullable=False),  # relative to the site's data folder; "." for an upgraded one
    sa.Column("db_schema", sa.String(63)),  # PostgreSQL: the course's schema (None: the site's own tables' schema)
    sa.Column("created_at", sa.Float, nullable=False),
)


def _account_columns() -> list[sa.Column]:
    return [sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
            sa.Column("role", sa.String(16), nullable=False),
            sa.Column("login", sa.String(128), nullable=False),
            sa.Column("name", sa.String(200), nullable=False, default=""),
            sa.Column("email", sa.String(200), nullable=False, default=""),
            sa.Column("code_id", sa.String(32), nullable=False, unique=True),
            sa.Column("code_hash", sa.String(200), nullable=False),
            sa.Column("created_at", sa.Float, nullable=False)]


ADMINS = sa.Table("site_admins", SITE_META, *_account_columns(),
                  sa.UniqueConstraint("role", "login", name="uq_site_admins_role_login"))

ADMIN_SIGN_IN_FAILURES = sa.Table(
    "site_sign_in_failures", SITE_META,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("address", sa.String(64), nullable=False),
    sa.Column("account_id", sa.Integer),
    sa.Column("at", sa.Float, nullable=False),
    sa.Index("ix_site_sign_in_failures_address", "address", "at"),
    sa.Index("ix_site_sign_in_failures_account", "account_id", "at"),
)

ADMIN_ENDED_SESSIONS = sa.Table(
    "site_ended_sessions", SITE_META,
    sa.Column("nonce", sa.String(64), primary_key=True),
    sa.Column("expires", sa.Float, nullable=False, index=True),
)


@dataclass(frozen=True)
class AccountTables:
    """The tables of one kind of account: a course's people, or the site's administrators."""

    accounts: sa.Table
    failures: sa.Table
    ended: sa.Table


COURSE_ACCOUNTS = AccountTables(ACCOUNTS, SIGN_IN_FAILURES, ENDED_SESSIONS)
SITE_ADMINS = AccountTables(ADMINS, ADMIN_SIGN_IN_FAILURES, ADMIN_ENDED_SESSIONS)


DB_FILES = ("gradebook.db", "gradebook.db-wal", "gradebook.db-shm", "gradebook.db-journal")


def keep_private(data: Path) -> None:
    """Make the data folder private to the service's user, from now on and for what is already there.

    The process's umask becomes 077 (every file and folder the service creates from now on - the SQLite
    database and its ``-wal``/``-shm`` files, submissions, keys - is the user's only); the folder is created
    or set to 0700 and existing database files to 0600 (a folder made by an older version).
    """
    os.umask(0o077)
    data.mkdir(parents=True, exist_ok=True, mode=0o700)
    data.chmod(0o700)
    for name in DB_FILES:
        if (data / name).is_file():
            (data / name).chmod(0o600)


class Database:
    """A connection to one database of the service (``url``: SQLAlchemy URL, SQLite or PostgreSQL).

    A course on a PostgreSQL site has a schema of its own: its URL carries ``options=-csearch_path=SCHEMA``
    (:func:`with_schema`), so that every connection - the service's and nbgrader's - sees only that course's
    tables; advisory locks are named within the schema.
    """

    def __init__(self, url: str) -> None:
        self.url = engine_url(url)
        self.sqlite = self.url.startswith("sqlite")
        self.schema = schema_of(self.url)
        if self.sqlite:
            # enough connections that requests waiting for the write lock never starve the readers
            self.engine = sa.create_engine(self.url, connect_args={"timeout": 30}, pool_size=20, max_overflow=40)
            sa.event.listen(self.engine, "connect", _sqlite_connect)
            sa.event.listen(self.engine, "begin", _sqlite_begin)
        else:
            self.engine = sa.create_engine(self.url, pool_size=10, max_overflow=30, pool_pre_ping=True)
        self._local_locks: dict[str, threading.Lock] = {}
        self._locks_guard = threading.Lock()

    def key(self, name: str) -> int:
        """The advisory lock key of ``name`` within this database's schema."""
        return _key(f"{self.schema or ''}/{name}")

    @contextmanager
    def write(self) -> Iterator[sa.Connection]:
        """A write transaction (``BEGIN IMMEDIATE`` on SQLite), committed on success, rolled back on error."""
        with self.engine.connect() as con:
            if self.sqlite:
                con.execution_options(immediate=True)
            with con.begin():
                yield con

    @contextmanager
    def read(self) -> Iterator[sa.Connection]:
        with self.engine.connect() as con:
            yield con

    def serialize(self, con: sa.Connection, name: str) -> None:
        """Serialize the transaction of ``con`` with every other that calls this with ``name``, until it ends
        (PostgreSQL: a transaction advisory lock; SQLite: ``BEGIN IMMEDIATE`` of :meth:`write` already does)."""
        if not self.sqlite:
            con.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": self.key(name)})

    def lock_for_update(self, con: sa.Connection, table: sa.Table, where) -> None:
        """Lock the matching rows until the transaction ends (PostgreSQL; SQLite's write lock already serializes)."""
        if not self.sqlite:
            con.execute(sa.select(table.c[list(table.c.keys())[0]]).where(where).with_for_update())

    @contextmanager
    def pair_lock(self, name: str) -> Iterator[None]:
        """Mutual exclusion on ``name`` across threads and (PostgreSQL) across service processes.

        PostgreSQL: a session advisory lock, released when the holder's connection ends (also if the process is
        killed).  SQLite: a lock of this process (only one service process uses a SQLite file: see serve.py).
        """
        with self._locks_guard:
            local = self._local_locks.setdefault(name, threading.Lock())
        with local:
            if self.sqlite:
                yield
                return
            with self.engine.connect() as con:
                con.execute(sa.text("SELECT pg_advisory_lock(:k)"), {"k": self.key(name)})
                con.commit()
                try:
                    yield
                finally:
                    con.execute(sa.text("SELECT pg_advisory_unlock(:k)"), {"k": self.key(name)})
                    con.commit()

    def get_setting(self, key: str) -> str | None:
        with self.read() as con:
            return con.execute(sa.select(SETTINGS.c.value).where(SETTINGS.c.key == key)).scalar()

    def set_setting(self, key: str, value: str) -> None:
        with self.write() as con:
            con.execute(sa.delete(SETTINGS).where(SETTINGS.c.key == key))
            con.execute(sa.insert(SETTINGS).values(key=key, value=value))

    def dispose(self) -> None:
        self.engine.dispose()


_SEARCH_PATH = re.compile(r"-c\s*search_path=([a-z_][a-z0-9_]*)")


def with_schema(url: str, schema: str) -> str:
    """``url`` (PostgreSQL) with every connection's ``search_path`` set to ``schema`` alone."""
    return sa.engine.make_url(url).update_query_dict({"options": f"-csearch_path={schema}"}).render_as_string(
        hide_password=False)


def schema_of(url: str) -> str | None:
    """The schema a URL made by :func:`with_schema` names (None: the database's default)."""
    if url.startswith("sqlite"):
        return None
    found = _SEARCH_PATH.fullmatch(str(sa.engine.make_url(url).query.get("options", "")).strip())
    return found.group(1) if found else None


def _key(name: str) -> int:
    """A 63-bit advisory lock key for ``name`` (stable across processes)."""
    return zlib.crc32(name.encode()) | (zlib.adler32(name.encode()) << 32) & 0x7FFFFFFFFFFFFFFF


def _sqlite_connect(dbapi_con, _record) -> None:
    dbapi_con.isolation_level = None  # SQLAlchemy's "begin" event emits BEGIN itself
    cur = dbapi_con.cursor()
    cur.execute("PRAGMA busy_timeout=30000")
    cur.execute("PRAGMA journal_mode=WAL")  # persistent; readers never block the writer
    cur.close()


def _sqlite_begin(con: sa.Connection) -> None:
    con.exec_driver_sql("BEGIN IMMEDIATE" if con.get_execution_options().get("immediate") else "BEGIN")

