"""The service's tables, in the same database as the nbgrader gradebook, and how to reach them safely.

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
* ``service_overrides`` - an instructor's exceptions for one student and assignment: a later deadline, extra attempts;
* ``service_regrades`` - regrades an instructor asked for (which submissions, when), for their progress;
* ``service_meta`` - small settings (the policy digest the gradebook was settled with).

SQLite (the embedded default) runs in WAL mode and write transactions start with ``BEGIN IMMEDIATE``, so
two writers never interleave a read and a write; PostgreSQL uses row locks (``FOR UPDATE``, ``SKIP
LOCKED`` for the queue) and session advisory locks (:meth:`Database.pair_lock`).
"""

from __future__ import annotations

import os
import threading
import zlib
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import sqlalchemy as sa

from ..store.urls import engine_url
from .lti.tables import META as LTI_META

META = sa.MetaData()

ACCOUNTS = sa.Table(
    "service_accounts", META,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("role", sa.String(16), nullable=False),  # "student" | "instructor"
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
    sa.Column("error", sa.Text),
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
OLD_TABLES = ("service_login_failures",)  # the per-address failures of older versions (transient: dropped)

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
    sa.Column("updated_at", sa.Float, nullable=False),
    sa.Column("updated_by", sa.String(128), nullable=False),
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
    """The service's connection to the gradebook database (``url``: SQLAlchemy URL, SQLite or PostgreSQL)."""

    def __init__(self, url: str) -> None:
        self.url = engine_url(url)
        self.sqlite = self.url.startswith("sqlite")
        if self.sqlite:
            # enough connections that requests waiting for the write lock never starve the readers
            self.engine = sa.create_engine(self.url, connect_args={"timeout": 30}, pool_size=20, max_overflow=40)
            sa.event.listen(self.engine, "connect", _sqlite_connect)
            sa.event.listen(self.engine, "begin", _sqlite_begin)
        else:
            self.engine = sa.create_engine(self.url, pool_size=10, max_overflow=30, pool_pre_ping=True)
        self._local_locks: dict[str, threading.Lock] = {}
        self._locks_guard = threading.Lock()

    def create(self) -> None:
        """Create the service's tables if they are missing and bring an older version's up to date (:func:`_upgrade`)."""
        if not self.sqlite:  # two processes starting at once: one creates, the other waits
            with self.engine.begin() as con:
                con.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": _key("create-tables")})
                META.create_all(con, checkfirst=True)
                LTI_META.create_all(con, checkfirst=True)
                _upgrade(con)
        else:
            META.create_all(self.engine, checkfirst=True)
            LTI_META.create_all(self.engine, checkfirst=True)
            with self.engine.begin() as con:
                _upgrade(con)

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
            con.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": _key(name)})

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
                con.execute(sa.text("SELECT pg_advisory_lock(:k)"), {"k": _key(name)})
                con.commit()
                try:
                    yield
                finally:
                    con.execute(sa.text("SELECT pg_advisory_unlock(:k)"), {"k": _key(name)})
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


def _upgrade(con: sa.Connection) -> None:
    """Bring the tables of an older version up to date: :func:`_drop_copies`, :func:`_add_finished_at`."""
    _drop_copies(con)
    _add_finished_at(con)


def _add_finished_at(con: sa.Connection) -> None:
    """Older databases had no ``finished_at``: add it, each row's from its ``graded_at`` (what it meant then)."""
    if "finished_at" not in {c["name"] for c in sa.inspect(con).get_columns(SUBMISSIONS.name)}:
        con.execute(sa.text(f"ALTER TABLE {SUBMISSIONS.name} ADD COLUMN finished_at FLOAT"))
        con.execute(sa.text(f"UPDATE {SUBMISSIONS.name} SET finished_at = graded_at"))


def _drop_copies(con: sa.Connection) -> None:
    """Older databases stored the counting score in ``service_counting`` too: drop those columns (the score is
    the counting submission's, see :mod:`.counting`); and the tables older versions used (:data:`OLD_TABLES`)."""
    for table in OLD_TABLES:
        con.execute(sa.text(f"DROP TABLE IF EXISTS {table}"))
    columns = {c["name"] for c in sa.inspect(con).get_columns(COUNTING.name)}
    for name in ("score", "max_score"):
        if name in columns:
            con.execute(sa.text(f"ALTER TABLE {COUNTING.name} DROP COLUMN {name}"))


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

