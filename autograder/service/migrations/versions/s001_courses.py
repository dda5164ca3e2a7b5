"""The site's tables: the courses it hosts, its administrators, LTI registrations and bindings.

Revision ID: s001
Revises:

A database that held one course (the service before it hosted several) becomes the site's database with that
course in place, as the course ``default`` whose data folder is the site's own: its accounts, submissions and
grades stay where they are (its tables are the ``course`` branch's, in the same database).  Every LMS course it
had seen a launch from is bound to it, active, but not an authority on its roster (a student's first launch
after the upgrade is linked to a roster entry by that student's access code, never by a claimed SIS id or
e-mail): nothing that worked stops, and the bindings are listed for the administrator to review.
"""

import time

import sqlalchemy as sa
from alembic import op

revision = "s001"
down_revision = None
branch_labels = ("site",)
depends_on = None

UPGRADED_COURSE = "default"
UPGRADED_TITLE = "评价二分类模型"


def upgrade() -> None:
    from autograder.service.database import SITE_META
    from autograder.service import lms_tables as lti

    con = op.get_bind()
    had = set(sa.inspect(con).get_table_names())
    # one-time tickets of the one-course service (two minutes, one hour): their shape changed, nothing in them lasts
    op.execute("DROP TABLE IF EXISTS lti_handoffs")
    op.execute("DROP TABLE IF EXISTS lti_deep_links")
    SITE_META.create_all(con, checkfirst=True)
    lti.SITE.create_all(con, checkfirst=True)
    courses = SITE_META.tables["site_courses"]
    if "service_accounts" not in had or con.execute(sa.select(courses.c.id)).first() is not None:
        return
    now = time.time()
    con.execute(sa.insert(courses).values(id=UPGRADED_COURSE, title=UPGRADED_TITLE, data_dir=".", db_schema=None,
                                          created_at=now))
    if "lti_contexts" not in had:
        return
    for r in con.execute(sa.text("SELECT platform_id, context_id, deployment_id, title FROM lti_contexts")).all():
        con.execute(sa.insert(lti.BINDINGS).values(
            platform_id=r.platform_id, deployment_id=r.deployment_id, context_id=r.context_id, course_id=UPGRADED_COURSE,
            status="active", roster_authority=False, context_title=r.title or "", requested_by="升级：单课程服务已见过的课程",
            created_at=now, confirmed_by="升级", confirmed_at=now))
