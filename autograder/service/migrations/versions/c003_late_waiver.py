"""A late penalty an instructor waived for one student and assignment: ``service_overrides.waive_late``.

Revision ID: c003
Revises: c002

Every existing exception keeps its penalty (``false``).  Repeatable: a database that already has the column (an
upgrade interrupted after the change, before its version was recorded) is left as it is.
"""

import sqlalchemy as sa
from alembic import op

revision = "c003"
down_revision = "c002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    con = op.get_bind()
    if "waive_late" not in {c["name"] for c in sa.inspect(con).get_columns("service_overrides")}:
        op.add_column("service_overrides", sa.Column("waive_late", sa.Boolean, nullable=False, server_default=sa.false()))
