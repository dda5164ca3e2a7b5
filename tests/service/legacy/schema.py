"""The service's tables as the one-course service left them (commit 9c0f67a, 2026-12-06), frozen for the upgrade
tests: a database made from these, with rows, is what an existing deployment holds before it becomes a site."""

import sqlalchemy as sa

META = sa.MetaData()

ACCOUNTS = sa.Table(
    "service_accounts", META,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("role", sa.String(16), nullable=False),  # "student" | "instructor"
    sa.Column("login", sa.String(128), nullable=False),
    sa.Column("name", sa.String(200), nullable=False, default=""),
    sa.Column("email", sa.String(200), nullable=False, default=""),
    sa.Column("code_id", sa.String(32), nullable=False, unique=True),
    sa.Column("code_hash", sa.String(200), nullable=False),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.UniqueConstraint("role", "login", name="uq_service_accounts_role_login"),
)

SUBMISSIONS = sa.Table(
    "service_submissions", META,
    sa.Column("id", sa.String(32), primary_key=True),  # 128 random bits, URL-safe
    sa.Column("student_id", sa.String(128), nullable=False),
    sa.Column("assignment", sa.String(128), nullable=False),
    sa.Column("status", sa.String(16), nullable=False),  # queued | grading | graded | failed
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("filename", sa.String(255), nullable=False),
    sa.Column("path", sa.String(400), nullable=False),  # relative to the data folder
    sa.Column("sha256", sa.String(64), nullable=False),
    sa.Column("size", sa.Integer, nullable=False),
    sa.Column("late", sa.Boolean, nullable=False, default=False),
    sa.Column("penalty", sa.Float, nullable=False, default=1.0),  # factor applied to the score
    sa.Column("claimed_by", sa.String(64)),
    sa.Column("lease_until", sa.Float),
    sa.Column("tries", sa.Integer, nullable=False, default=0),
    sa.Column("started_at", sa.Float),
    sa.Column("graded_at", sa.Float),  # when the result it holds was recorded (or, failed, when it failed)
    sa.Column("finished_at", sa.Float),  # when its latest grading ended: a result, or a failure (a regrade's too)
    sa.Column("graded_by", sa.String(64)),  # the service process that recorded the result
    sa.Column("score", sa.Float),  # raw score; what counts is score * penalty
    sa.Column("max_score", sa.Float),
    sa.Column("fingerprint", sa.String(64)),
    sa.Column("result_json", sa.Text),
    sa.Column("error", sa.Text),
    sa.Column("settled", sa.Boolean, nullable=False, default=True),  # False: graded, the gradebook's copy not yet written
    sa.Index("ix_service_submissions_queue", "status", "created_at"),
    sa.Index("ix_service_submissions_owner", "student_id", "assignment", "created_at"),
)

COUNTING = sa.Table(
    "service_counting", META,
    sa.Column("student_id", sa.String(128), primary_key=True),
    sa.Column("assignment", sa.String(128), primary_key=True),
    sa.Column("submission_id", sa.String(32), nullable=False),
    sa.Column("updated_at", sa.Float, nullable=False),
)

SIGN_IN_FAILURES = sa.Table(
    "service_sign_in_failures", META,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("address", sa.String(64), nullable=False),
    sa.Column("account_id", sa.Integer),  # the account the code's first part names; None: no such account
    sa.Column("at", sa.Float, nullable=False),
    sa.Index("ix_service_sign_in_failures_address", "address", "at"),
    sa.Index("ix_service_sign_in_failures_account", "account_id", "at"),
)

ENDED_SESSIONS = sa.Table(
    "service_ended_sessions", META,
    sa.Column("nonce", sa.String(64), primary_key=True),
    sa.Column("expires", sa.Float, nullable=False, index=True),  # forgotten once the cookie would have expired
)

OVERRIDES = sa.Table(
    "service_overrides", META,
    sa.Column("student_id", sa.String(128), primary_key=True),
    sa.Column("assignment", sa.String(128), primary_key=True),
    sa.Column("deadline", sa.Float),  # epoch seconds; None: the course's deadline
    sa.Column("extra_attempts", sa.Integer, nullable=False, default=0),  # added to attempts_per_24h
    sa.Column("updated_at", sa.Float, nullable=False),
    sa.Column("updated_by", sa.String(128), nullable=False),
)

REGRADES = sa.Table(
    "service_regrades", META,
    sa.Column("id", sa.String(32), primary_key=True),
    sa.Column("assignment", sa.String(128), nullable=False),
    sa.Column("student_id", sa.String(128)),  # None: the whole assignment
    sa.Column("submission_ids", sa.Text, nullable=False),  # JSON list
    sa.Column("requested_at", sa.Float, nullable=False),
    sa.Column("requested_by", sa.String(128), nullable=False),
)

SETTINGS = sa.Table(
    "service_meta", META,
    sa.Column("key", sa.String(64), primary_key=True),
    sa.Column("value", sa.Text, nullable=False),
)

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
