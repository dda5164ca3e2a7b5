"""The LTI tables: those of the whole service (in the site's database) and those of one course (in its database).

The site's (:data:`SITE`), created with the site's tables (:mod:`..schema`):

* ``lti_platforms`` / ``lti_deployments`` - registered platforms (issuer + client id) and their deployment ids;
* ``lti_bindings`` - which course here each (platform, deployment, LMS course ``context_id``) is bound to, and
  whether that binding is active or waits for confirmation, and whether the LMS course is an authority on the
  course's roster (:mod:`.bindings`);
* ``lti_states`` - login initiations waiting for their launch: ``state``, ``nonce`` and the hash of the
  browser's launch cookie, used once;
* ``lti_nonces`` - nonces of accepted launches (a token is never accepted twice);
* ``lti_handoffs`` - one-time tickets from a launch to a first-party session of one course (two minutes), bound
  to the browser's launch cookie;
* ``lti_pending`` - a verified launch held on the server (one hour) while its person chooses: an instructor's
  deep-linking choice, a teacher's request to bind an LMS course, a student's confirmation with an access code.

A course's (:data:`COURSE`), in the course's own database next to its accounts:

* ``lti_users`` - a platform's person (``sub``) in one role and the course account it signs in as;
* ``lti_memberships`` - which bound LMS courses (contexts) a person was seen in, by a launch or a roster sync;
* ``lti_contexts`` - a bound LMS course's AGS line-items and NRPS memberships endpoints;
* ``lti_links`` - the assignments linked in an LMS course (a resource link launched or deep-linked there):
  grades go only to these, and a gradebook column is never created anywhere else;
* ``lti_lineitems`` - the line item of an assignment in a context, found or created once;
* ``lti_passback`` - the durable grade passback queue: ONE row per (platform, context, person, assignment)
  holding the latest counting score, its timestamp and a version; see :mod:`.passback`.
"""

from __future__ import annotations

import sqlalchemy as sa

SITE = sa.MetaData()
COURSE = sa.MetaData()

PLATFORMS = sa.Table(
    "lti_platforms", SITE,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("name", sa.String(200), nullable=False),
    sa.Column("issuer", sa.String(400), nullable=False),
    sa.Column("client_id", sa.String(200), nullable=False),
    sa.Column("auth_login_url", sa.String(1000), nullable=False),
    sa.Column("auth_token_url", sa.String(1000), nullable=False),
    sa.Column("jwks_url", sa.String(1000), nullable=False),
    sa.Column("auth_audience", sa.String(1000)),  # the client assertion's aud when not the token URL (Brightspace)
    sa.Column("created_at", sa.Float, nullable=False),
    sa.UniqueConstraint("issuer", "client_id", name="uq_lti_platforms_issuer_client"),
)

DEPLOYMENTS = sa.Table(
    "lti_deployments", SITE,
    sa.Column("platform_id", sa.Integer, primary_key=True),
    sa.Column("deployment_id", sa.String(255), primary_key=True),
)

STATES = sa.Table(
    "lti_states", SITE,
    sa.Column("state", sa.String(64), primary_key=True),
    sa.Column("nonce", sa.String(64), nullable=False),
    sa.Column("platform_id", sa.Integer, nullable=False),
    sa.Column("browser", sa.String(64), nullable=False),  # SHA-256 of the launch cookie's value
    sa.Column("address", sa.String(64), nullable=False, default=""),  # the client's (launch.STATES_PER_ADDRESS)
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Index("ix_lti_states_address", "address"),
)

NONCES = sa.Table(
    "lti_nonces", SITE,
    sa.Column("nonce", sa.String(64), primary_key=True),
    sa.Column("used_at", sa.Float, nullable=False),
)

USERS = sa.Table(
    "lti_users", COURSE,
    sa.Column("platform_id", sa.Integer, primary_key=True),
    sa.Column("sub", sa.String(255), primary_key=True),
    sa.Column("role", sa.String(16), primary_key=True),  # a Role value: one person's roles are never one account
    sa.Column("account_id", sa.Integer, nullable=False),
    sa.Column("name", sa.String(200), nullable=False, default=""),
    sa.Column("email", sa.String(200), nullable=False, default=""),
)

MEMBERSHIPS = sa.Table(
    "lti_memberships", COURSE,
    sa.Column("platform_id", sa.Integer, primary_key=True),
    sa.Column("context_id", sa.String(255), primary_key=True),
    sa.Column("sub", sa.String(255), primary_key=True),
    sa.Column("role", sa.String(16), primary_key=True),
    sa.Column("name", sa.String(200), nullable=False, default=""),
    sa.Column("first_launch", sa.Float),  # None: known from the roster sync only
    sa.Column("last_launch", sa.Float),
    sa.Column("active", sa.Boolean, nullable=False, default=True),  # False: left the LMS course (roster sync)
)

CONTEXTS = sa.Table(
    "lti_contexts", COURSE,
    sa.Column("platform_id", sa.Integer, primary_key=True),
    sa.Column("context_id", sa.String(255), primary_key=True),
    sa.Column("deployment_id", sa.String(255), nullable=False),
    sa.Column("title", sa.String(400), nullable=False, default=""),
    sa.Column("lineitems_url", sa.String(1000)),
    sa.Column("memberships_url", sa.String(1000)),
    sa.Column("scopes", sa.Text, nullable=False, default=""),  # space-separated AGS scopes granted
    sa.Column("updated_at", sa.Float, nullable=False),
)

LINEITEMS = sa.Table(
    "lti_lineitems", COURSE,
    sa.Column("platform_id", sa.Integer, primary_key=True),
    sa.Column("context_id", sa.String(255), primary_key=True),
    sa.Column("assignment", sa.String(128), primary_key=True),
    sa.Column("url", sa.String(1000), nullable=False),
)

LINKS = sa.Table(
    "lti_links", COURSE,
    sa.Column("platform_id", sa.Integer, primary_key=True),
    sa.Column("context_id", sa.String(255), primary_key=True),
    sa.Column("assignment", sa.String(128), primary_key=True),
    sa.Column("created_at", sa.Float, nullable=False),
)

BINDINGS = sa.Table(
    "lti_bindings", SITE,
    sa.Column("platform_id", sa.Integer, primary_key=True),
    sa.Column("deployment_id", sa.String(255), primary_key=True),
    sa.Column("context_id", sa.String(255), primary_key=True),
    sa.Column("course_id", sa.String(40), nullable=False),
    sa.Column("status", sa.String(16), nullable=False),  # a BindingStatus value: active | requested
    sa.Column("roster_authority", sa.Boolean, nullable=False, default=False),
    sa.Column("context_title", sa.String(400), nullable=False, default=""),
    sa.Column("requested_by", sa.String(400), nullable=False, default=""),  # who asked (a person of the LMS, or a command)
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("confirmed_by", sa.String(200)),
    sa.Column("confirmed_at", sa.Float),
)

HANDOFFS = sa.Table(
    "lti_handoffs", SITE,
    sa.Column("token", sa.String(64), primary_key=True),  # SHA-256 of the ticket
    sa.Column("course_id", sa.String(40), nullable=False),
    sa.Column("account_id", sa.Integer, nullable=False),
    sa.Column("browser", sa.String(64), nullable=False),  # SHA-256 of the launch cookie of the browser that launched
    sa.Column("target", sa.String(300), nullable=False),
    sa.Column("expires", sa.Float, nullable=False),
)

PENDING = sa.Table(
    "lti_pending", SITE,
    sa.Column("token", sa.String(64), primary_key=True),  # SHA-256 of the ticket in the page's form
    sa.Column("kind", sa.String(16), nullable=False),  # a PendingKind value
    sa.Column("platform_id", sa.Integer, nullable=False),
    sa.Column("claims", sa.Text, nullable=False),  # the verified launch's claims (JSON)
    sa.Column("browser", sa.String(64), nullable=False),
    sa.Column("expires", sa.Float, nullable=False),
)

PASSBACK = sa.Table(
    "lti_passback", COURSE,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("platform_id", sa.Integer, nullable=False),
    sa.Column("context_id", sa.String(255), nullable=False),
    sa.Column("sub", sa.String(255), nullable=False),
    sa.Column("student_id", sa.String(128), nullable=False),
    sa.Column("assignment", sa.String(128), nullable=False),
    sa.Column("submission_id", sa.String(32), nullable=False),
    sa.Column("score", sa.Float, nullable=False),
    sa.Column("max_score", sa.Float, nullable=False),
    sa.Column("timestamp", sa.String(40), nullable=False),  # ISO 8601 of the change: the post is idempotent
    sa.Column("version", sa.Integer, nullable=False, default=1),
    sa.Column("status", sa.String(16), nullable=False),  # pending | sent | failed
    sa.Column("tries", sa.Integer, nullable=False, default=0),
    sa.Column("next_at", sa.Float, nullable=False),
    sa.Column("claimed_by", sa.String(64)),
    sa.Column("lease_until", sa.Float),
    sa.Column("error", sa.Text),
    sa.Column("sent_at", sa.Float),
    sa.Column("sent_version", sa.Integer),
    sa.UniqueConstraint("platform_id", "context_id", "sub", "assignment", name="uq_lti_passback_line"),
    sa.Index("ix_lti_passback_due", "status", "next_at"),
)
