"""The LTI tables, on their own metadata, created by :meth:`~autograder.service.database.Database.create` with the service's.

* ``lti_platforms`` / ``lti_deployments`` - registered platforms (issuer + client id) and their deployment ids;
* ``lti_states`` - login initiations waiting for their launch: ``state``, ``nonce`` and the hash of the
  browser's launch cookie, used once;
* ``lti_nonces`` - nonces of accepted launches (a token is never accepted twice);
* ``lti_users`` - a platform's person (``sub``) and the service account it signs in as;
* ``lti_contexts`` - a course on a platform (its AGS line-items and NRPS memberships endpoints);
* ``lti_lineitems`` - the line item of an assignment in a context, found or created once;
* ``lti_handoffs`` - one-time tickets from a launch to a first-party session (two minutes);
* ``lti_deep_links`` - an instructor's open deep-linking request (one hour), until they choose an assignment;
* ``lti_passback`` - the durable grade passback queue: ONE row per (platform, context, person, assignment)
  holding the latest counting score, its timestamp and a version; see :mod:`.passback`.
"""

from __future__ import annotations

import sqlalchemy as sa

META = sa.MetaData()  # created by Database.create with the service's own (no import back: no cycle)

PLATFORMS = sa.Table(
    "lti_platforms", META,
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
    "lti_deployments", META,
    sa.Column("platform_id", sa.Integer, primary_key=True),
    sa.Column("deployment_id", sa.String(255), primary_key=True),
)

STATES = sa.Table(
    "lti_states", META,
    sa.Column("state", sa.String(64), primary_key=True),
    sa.Column("nonce", sa.String(64), nullable=False),
    sa.Column("platform_id", sa.Integer, nullable=False),
    sa.Column("browser", sa.String(64), nullable=False),  # SHA-256 of the launch cookie's value
    sa.Column("created_at", sa.Float, nullable=False),
)

NONCES = sa.Table(
    "lti_nonces", META,
    sa.Column("nonce", sa.String(64), primary_key=True),
    sa.Column("used_at", sa.Float, nullable=False),
)

USERS = sa.Table(
    "lti_users", META,
    sa.Column("platform_id", sa.Integer, primary_key=True),
    sa.Column("sub", sa.String(255), primary_key=True),
    sa.Column("role", sa.String(16), primary_key=True),  # "student" | "instructor": never the same account
    sa.Column("account_id", sa.Integer, nullable=False),
    sa.Column("name", sa.String(200), nullable=False, default=""),
    sa.Column("email", sa.String(200), nullable=False, default=""),
    sa.Column("context_id", sa.String(255)),  # the course it was last seen in
    sa.Column("first_launch", sa.Float),  # None: known from the roster sync only
    sa.Column("last_launch", sa.Float),
    sa.Column("active", sa.Boolean, nullable=False, default=True),  # False: left the course (roster sync)
)

CONTEXTS = sa.Table(
    "lti_contexts", META,
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
    "lti_lineitems", META,
    sa.Column("platform_id", sa.Integer, primary_key=True),
    sa.Column("context_id", sa.String(255), primary_key=True),
    sa.Column("assignment", sa.String(128), primary_key=True),
    sa.Column("url", sa.String(1000), nullable=False),
)

HANDOFFS = sa.Table(
    "lti_handoffs", META,
    sa.Column("token", sa.String(64), primary_key=True),  # SHA-256 of the ticket
    sa.Column("account_id", sa.Integer, nullable=False),
    sa.Column("target", sa.String(300), nullable=False),
    sa.Column("expires", sa.Float, nullable=False),
)

DEEP_LINKS = sa.Table(
    "lti_deep_links", META,
    sa.Column("token", sa.String(64), primary_key=True),  # SHA-256 of the ticket in the selection form
    sa.Column("platform_id", sa.Integer, nullable=False),
    sa.Column("deployment_id", sa.String(255), nullable=False),
    sa.Column("return_url", sa.String(1000), nullable=False),
    sa.Column("data", sa.Text),  # the platform's opaque ``data``, echoed back
    sa.Column("expires", sa.Float, nullable=False),
)

PASSBACK = sa.Table(
    "lti_passback", META,
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
