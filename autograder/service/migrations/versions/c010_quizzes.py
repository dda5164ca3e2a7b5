"""Graded quizzes and timed exams: attempts, their questions as issued, grants, regrades (:mod:`..quiz_tables`).

Revision ID: c010
Revises: c004

New tables only; created when missing, so the upgrade can run again after a crash.
"""

import sqlalchemy as sa
from alembic import op

revision = "c010"
down_revision = "c004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    from autograder.service import quiz_tables

    con = op.get_bind()
    present = set(sa.inspect(con).get_table_names())
    for table in quiz_tables.COURSE.sorted_tables:
        if table.name not in present:
            table.create(con)
