"""Creating a database's tables, or bringing an older version's up to date, with alembic.

Each kind of database has a branch of the migrations in ``migrations/`` (see its ``env.py``): ``site`` and
``course``.  :func:`prepare` decides, for one kind, in one transaction (serialized across processes on
PostgreSQL by an advisory lock, by ``BEGIN IMMEDIATE`` on SQLite):

* the branch is recorded in the version table: upgrade it to its head;
* the database holds that kind's tables from before the migrations existed (an older version of the service):
  run the branch from its start (every revision checks what is there before it changes it);
* a new database: create the current tables and record the branch's head.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory

from .database import META, SITE_META, Database
from . import lms_tables as lti
from . import quiz_tables

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
VERSION_TABLE = "autograder_schema_version"
KINDS = ("site", "course")
TABLES = {"site": (SITE_META, lti.SITE), "course": (META, lti.COURSE, quiz_tables.COURSE)}
#: A database with no recorded branch but one of these tables is an older version's: a course's (for ``site``: a
#: one-course service's, which becomes the site's with its course in place).
LEGACY = {"course": ("service_accounts", "service_submissions", "service_counting"), "site": ("service_accounts",)}
SCHEMA_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")


def _config(con: sa.Connection) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.attributes["connection"] = con
    return cfg


@lru_cache(maxsize=None)
def _revisions(kind: str) -> frozenset[str]:
    """The revision ids of ``kind``'s branch."""
    script = ScriptDirectory(str(MIGRATIONS))
    return frozenset(r.revision for r in script.walk_revisions(base="base", head=f"{kind}@head"))


def head(kind: str) -> str:
    """The revision id of ``kind``'s newest migration."""
    return ScriptDirectory(str(MIGRATIONS)).get_revision(f"{kind}@head").revision


def recorded(con: sa.Connection) -> set[str]:
    """The heads the version table of ``con``'s database records."""
    return set(MigrationContext.configure(con, opts={"version_table": VERSION_TABLE}).get_current_heads())


def prepare(db: Database, kind: str = "course") -> None:
    """Make ``db``'s tables of ``kind`` current (see the module's docstring)."""
    if kind not in KINDS:
        raise ValueError(f"unknown kind of database {kind!r}")
    with db.write() as con:
        if not db.sqlite:
            con.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": db.key("prepare-tables")})
            if db.schema is not None:
                if not SCHEMA_NAME.fullmatch(db.schema):
                    raise ValueError(f"not a schema name: {db.schema!r}")
                con.execute(sa.text(f'CREATE SCHEMA IF NOT EXISTS "{db.schema}"'))
        cfg = _config(con)
        present = set(sa.inspect(con).get_table_names())
        if recorded(con) & _revisions(kind) or present.intersection(LEGACY[kind]):
            command.upgrade(cfg, f"{kind}@head")
        else:
            for metadata in TABLES[kind]:
                metadata.create_all(con, checkfirst=True)
            command.stamp(cfg, f"{kind}@head")
