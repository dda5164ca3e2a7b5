"""The site's tables: the courses it hosts, its administrators, LTI registrations and bindings.

Revision ID: s001
Revises:

A database that held one course (the service before it hosted several) becomes the site's database with that
course in place, as the course ``default`` whose data folder is the site's own: its accounts, submissions and
grades stay where they are (its tables are the ``course`` branch's, in the same database).  The LMS courses it
had seen a launch from are bound to it, none of them an authority on its roster (a student's first launch after
the upgrade is linked to a roster entry by that student's access code, never by a claimed SIS id):

* active, where students launched or grades went (the class's own LMS courses: nothing that worked stops);
* requested, waiting for the course's instructor or an administrator to confirm, where only teachers had
  launched - such as a sandbox a student teaches, whose launch made her an instructor of the one course; after
  the upgrade it grants nothing until someone who may decides.
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
    used = _where_students_were(con, had)
    for r in con.execute(sa.text("SELECT platform_id, context_id, deployment_id, title FROM lti_contexts")).all():
        active = (r.platform_id, r.context_id) in used
        con.execute(sa.insert(lti.BINDINGS).values(
            platform_id=r.platform_id, deployment_id=r.deployment_id, context_id=r.context_id, course_id=UPGRADED_COURSE,
            status="active" if active else "requested", roster_authority=False, context_title=r.title or "",
            requested_by="升级：单课程服务已见过的课程" if active else "升级：只见过教师从这门课打开本工具（没有学生，没有成绩），请确认",
            created_at=now, confirmed_by="升级" if active else None, confirmed_at=now if active else None))


def _where_students_were(con, had: set[str]) -> set[tuple[int, str]]:
    """(platform, LMS course) pairs where students launched or grades went (the ``course`` branch may have run first)."""
    queries = []
    if "lti_users" in had and "context_id" in {c["name"] for c in sa.inspect(con).get_columns("lti_users")}:
        queries.append("SELECT platform_id, context_id FROM lti_users WHERE role = 'student' AND context_id IS NOT NULL")
    if "lti_memberships" in had:
        queries.append("SELECT platform_id, context_id FROM lti_memberships WHERE role = 'student'")
    queries += [f"SELECT platform_id, context_id FROM {table}" for table in ("lti_lineitems", "lti_passback") if table in had]
    return {(r.platform_id, r.context_id) for q in queries for r in con.execute(sa.text(q)).all()}
