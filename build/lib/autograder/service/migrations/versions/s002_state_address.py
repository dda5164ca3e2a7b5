"""Login initiations remember their client's address (a bound on how many one address may have waiting).

Revision ID: s002
Revises: s001
"""

import sqlalchemy as sa
from alembic import op

revision = "s002"
down_revision = "s001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    from autograder.service import lms_tables as lti

    con = op.get_bind()
    if "address" not in {c["name"] for c in sa.inspect(con).get_columns("lti_states")}:
        # ten-minute login states: nothing in them outlives the upgrade's restart
        op.execute("DROP TABLE lti_states")
        lti.STATES.create(con)
