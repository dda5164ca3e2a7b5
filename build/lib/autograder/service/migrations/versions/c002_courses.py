"""A course's LTI people per bound LMS course: memberships and linked assignments.

Revision ID: c002
Revises: c001

``lti_users`` kept one LMS course per person (the latest launch's) beside the account; memberships now say
every bound LMS course a person was seen in, and ``lti_links`` the assignments linked in each, where grades go.
The assignments a course's LMS already has a column of (a known line item, or a score passed back) count as
linked there: nothing that was passed back before stops being passed back.
"""

import sqlalchemy as sa
from alembic import op

revision = "c002"
down_revision = "c001"
branch_labels = None
depends_on = None

OLD_COLUMNS = ("context_id", "first_launch", "last_launch", "active")


def upgrade() -> None:
    from autograder.service import lms_tables as lti

    con = op.get_bind()
    lti.MEMBERSHIPS.create(con, checkfirst=True)
    lti.LINKS.create(con, checkfirst=True)
    if not sa.inspect(con).has_table("lti_users"):
        lti.USERS.create(con)
    elif "context_id" in {c["name"] for c in sa.inspect(con).get_columns("lti_users")}:
        rows = con.execute(sa.text("SELECT platform_id, sub, role, name, context_id, first_launch, last_launch, active "
                                   "FROM lti_users WHERE context_id IS NOT NULL")).all()
        for r in rows:
            key = dict(platform_id=r.platform_id, context_id=r.context_id, sub=r.sub, role=r.role)
            if con.execute(sa.select(lti.MEMBERSHIPS.c.sub).filter_by(**key)).first() is None:
                con.execute(sa.insert(lti.MEMBERSHIPS).values(**key, name=r.name or "", first_launch=r.first_launch,
                                                             last_launch=r.last_launch, active=bool(r.active)))
        with op.batch_alter_table("lti_users") as batch:
            for name in OLD_COLUMNS:
                batch.drop_column(name)
    known = con.execute(sa.text("SELECT platform_id, context_id, assignment FROM lti_lineitems UNION "
                                "SELECT platform_id, context_id, assignment FROM lti_passback")).all()
    for r in known:
        key = dict(platform_id=r.platform_id, context_id=r.context_id, assignment=r.assignment)
        if con.execute(sa.select(lti.LINKS.c.assignment).filter_by(**key)).first() is None:
            con.execute(sa.insert(lti.LINKS).values(**key, created_at=0.0))
