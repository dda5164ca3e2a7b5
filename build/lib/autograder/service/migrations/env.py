"""Alembic's environment for the service's schema: run on the connection :mod:`autograder.service.schema` passes.

Two branches share this script folder and one version table: ``site`` (the site's tables: courses,
administrators, the LTI registrations and bindings) and ``course`` (a course's tables: accounts, submissions,
the course's LTI links and passback queue).  A course's database holds the ``course`` branch only; the site's
database holds ``site`` (and also ``course`` when it was upgraded from a one-course service, whose course
stayed in place).

A new revision: ``alembic -c autograder/service/migrations/alembic.ini revision -m "what" --head course@head``
(or ``site@head``), then write its ``upgrade()`` with ``op`` and checks of what is there (the upgrade must
be repeatable: a migration interrupted by a crash runs again from its start).
"""

from alembic import context

connection = context.config.attributes["connection"]
context.configure(connection=connection, version_table="autograder_schema_version", render_as_batch=True,
                  transaction_per_migration=False)
with context.begin_transaction():
    context.run_migrations()
