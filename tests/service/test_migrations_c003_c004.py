"""Migrations ``c003`` (``service_overrides.waive_late``, a waived late penalty) and ``c004`` (``service_checks``,
checks before an attempt) on SQLite and PostgreSQL: a course database recorded at ``c002`` gains the column, with
every existing exception unwaived, and the table; and the upgrade can run again from its start (an upgrade
interrupted after the change, before its version was recorded).
"""

from __future__ import annotations

import time

import pytest
import sqlalchemy as sa

from autograder.service.database import CHECKS, OVERRIDES, Database
from autograder.service.schema import VERSION_TABLE, head, prepare


def at_c002(db: Database, *, with_column: bool) -> None:
    """``db`` as the ``course`` branch left it at ``c002``, with one exception (``with_column``: and the column and
    the table already added, as an interrupted upgrade leaves them)."""
    prepare(db, "course")
    with db.write() as con:
        con.execute(sa.insert(OVERRIDES).values(student_id="s001", assignment="ps2_roc_auc", deadline=time.time() + 86400,
                                                extra_attempts=1, updated_at=time.time(), updated_by="王老师"))
        if not with_column:
            con.execute(sa.text("ALTER TABLE service_overrides DROP COLUMN waive_late"))
            con.execute(sa.text("DROP TABLE service_checks"))
        con.execute(sa.text(f"UPDATE {VERSION_TABLE} SET version_num = 'c002' WHERE version_num = :head"),
                    {"head": head("course")})


def check(db: Database) -> None:
    with db.read() as con:
        assert set(con.execute(sa.text(f"SELECT version_num FROM {VERSION_TABLE}")).scalars()) == {head("course")}
        assert "waive_late" in {c["name"] for c in sa.inspect(con).get_columns("service_overrides")}
        assert {c["name"] for c in sa.inspect(con).get_columns("service_checks")} == set(CHECKS.c.keys())
        assert con.execute(sa.select(OVERRIDES.c.student_id, OVERRIDES.c.extra_attempts, OVERRIDES.c.waive_late)).all() == \
            [("s001", 1, False)]
    with db.write() as con:  # a new exception without the column named gets the server's default
        con.execute(sa.text("INSERT INTO service_overrides (student_id, assignment, extra_attempts, updated_at, updated_by) "
                            "VALUES ('s002', 'ps2_roc_auc', 0, 0, 'x')"))
        assert con.execute(sa.select(OVERRIDES.c.waive_late).where(OVERRIDES.c.student_id == "s002")).scalar() is False


def run(url: str) -> None:
    for with_column in (False, True):
        db = Database(url)
        try:
            with db.write() as con:
                for table in reversed(sa.inspect(con).get_table_names()):
                    con.execute(sa.text(f'DROP TABLE "{table}" CASCADE' if not db.sqlite else f'DROP TABLE "{table}"'))
            at_c002(db, with_column=with_column)
            prepare(db, "course")
            check(db)
            prepare(db, "course")  # once more: nothing to do
        finally:
            db.dispose()


def test_c003_c004_add_the_waiver_and_the_checks_on_sqlite_and_can_run_again(tmp_path):
    run(f"sqlite:///{tmp_path / 'gradebook.db'}")


@pytest.mark.slow  # a PostgreSQL server
def test_c003_c004_add_the_waiver_and_the_checks_on_postgresql_and_can_run_again(postgres):
    run(postgres.url("migrations_c003_c004"))
