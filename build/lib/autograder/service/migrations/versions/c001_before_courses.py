"""A course's tables as they were before one service hosted several courses.

Revision ID: c001
Revises:
"""

import sqlalchemy as sa
from alembic import op

revision = "c001"
down_revision = None
branch_labels = ("course",)
depends_on = None


def upgrade() -> None:
    """A database of any earlier version gets the tables it lacks; older versions' leftovers go."""
    from autograder.service.database import META
    from autograder.service import lms_tables as lti

    con = op.get_bind()
    # tables unchanged since: created where missing (a database from before they existed)
    for table in [*META.sorted_tables, lti.CONTEXTS, lti.LINEITEMS, lti.PASSBACK]:
        table.create(con, checkfirst=True)
    op.execute("DROP TABLE IF EXISTS service_login_failures")  # per-address failures of older versions (transient)
    columns = {c["name"] for c in sa.inspect(con).get_columns("service_counting")}
    copies = [name for name in ("score", "max_score") if name in columns]  # the counting score stored twice
    if copies:
        with op.batch_alter_table("service_counting") as batch:
            for name in copies:
                batch.drop_column(name)
    if "finished_at" not in {c["name"] for c in sa.inspect(con).get_columns("service_submissions")}:
        op.add_column("service_submissions", sa.Column("finished_at", sa.Float))
        op.execute("UPDATE service_submissions SET finished_at = graded_at")  # what graded_at meant then
