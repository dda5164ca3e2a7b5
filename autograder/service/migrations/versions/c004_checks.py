"""Checks of the visible tests before an attempt: the table ``service_checks`` (:mod:`autograder.service.checks`).

Revision ID: c004
Revises: c003

A new table only; repeatable (created where missing).
"""

from alembic import op

revision = "c004"
down_revision = "c003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    from autograder.service.database import CHECKS

    CHECKS.create(op.get_bind(), checkfirst=True)
