"""A course's tables of graded quizzes and timed exams (:mod:`.quizzes`), in the course's database.

* ``quiz_attempts`` - one row per attempt of a student at a quiz: open while answers are saved, then ``submitted``
  (by the student, or closed by the server's clock: ``closed_by``); a submitted attempt is also a row of
  ``service_submissions`` (``submission_id``), so the counting attempt, ``grades.csv``, the dashboard and the LMS
  passback treat it like a programming assignment's;
* ``quiz_items`` - one row per question of an attempt: the template, form and seed it was issued with (the seed is
  derived on the server, never taken from a client), the template's fingerprint and the variant as the student saw
  it (``shown_json``, never changed), the saved answer, and once graded the variant it was graded against
  (``graded_json``: after a regrade, the corrected one), the verdict and the points;
* ``quiz_grants`` - a member of staff's exceptions for one student at one quiz: a later deadline, more attempts,
  extra minutes for a timed exam (accommodations);
* ``quiz_regrades`` - each regrade of a quiz after a template was fixed: when, by whom, what it changed.

Seeds are 64-bit unsigned integers, more than PostgreSQL's ``BIGINT`` holds: stored as decimal text.
"""

from __future__ import annotations

import sqlalchemy as sa

COURSE = sa.MetaData()

ATTEMPTS = sa.Table(
    "quiz_attempts", COURSE,
    sa.Column("id", sa.String(32), primary_key=True),  # 128 random bits, URL-safe
    sa.Column("quiz", sa.String(128), nullable=False),
    sa.Column("student_id", sa.String(128), nullable=False),
    sa.Column("number", sa.Integer, nullable=False),  # 1, 2, ... per student and quiz
    sa.Column("status", sa.String(16), nullable=False),  # an AttemptStatus value
    sa.Column("started_at", sa.Float, nullable=False),
    sa.Column("answered_at", sa.Float),  # the latest saved answer
    sa.Column("submitted_at", sa.Float),  # the moment that decides lateness (see quizzes.Quizzes._close)
    sa.Column("closed_by", sa.String(16)),  # a ClosedBy value
    sa.Column("late", sa.Boolean, nullable=False, default=False),
    sa.Column("penalty", sa.Float, nullable=False, default=1.0),
    sa.Column("score", sa.Float),  # raw, before the penalty (the submission row holds the same)
    sa.Column("max_score", sa.Float),
    sa.Column("submission_id", sa.String(32)),
    sa.Column("previous_score", sa.Float),  # raw, before the latest regrade that changed it
    sa.Column("regraded_at", sa.Float),
    sa.UniqueConstraint("quiz", "student_id", "number", name="uq_quiz_attempts_number"),
    sa.Index("ix_quiz_attempts_owner", "student_id", "quiz"),
    sa.Index("ix_quiz_attempts_status", "status"),
    sa.Index("ix_quiz_attempts_submission", "submission_id"),
)

ITEMS = sa.Table(
    "quiz_items", COURSE,
    sa.Column("attempt_id", sa.String(32), primary_key=True),
    sa.Column("position", sa.Integer, primary_key=True),  # 1, 2, ... in the quiz's order
    sa.Column("template", sa.String(64), nullable=False),
    sa.Column("form", sa.String(16), nullable=False),
    sa.Column("points", sa.Float, nullable=False),
    sa.Column("seed", sa.String(20), nullable=False),
    sa.Column("fingerprint", sa.String(64), nullable=False),  # the template's when the variant was issued
    sa.Column("shown_json", sa.Text, nullable=False),  # Variant.to_json() as issued: what the student saw
    sa.Column("answer_json", sa.Text),  # Answer.to_json() of the latest saved answer
    sa.Column("answer_seq", sa.BigInteger),  # the client's sequence number of that save (a replay carries an older one)
    sa.Column("answered_at", sa.Float),
    sa.Column("graded_json", sa.Text),  # the variant the answer was graded against
    sa.Column("graded_fingerprint", sa.String(64)),
    sa.Column("verdict_json", sa.Text),  # Verdict.to_json(), with the note of a changed option (quizzes._verdict)
    sa.Column("score", sa.Float),  # points x the verdict's score
    sa.Column("previous_score", sa.Float),  # before the latest regrade that changed it
    sa.Column("regraded_at", sa.Float),
)

GRANTS = sa.Table(
    "quiz_grants", COURSE,
    sa.Column("student_id", sa.String(128), primary_key=True),
    sa.Column("quiz", sa.String(128), primary_key=True),
    sa.Column("deadline", sa.Float),  # epoch seconds; None: the quiz's own
    sa.Column("extra_attempts", sa.Integer, nullable=False, default=0),
    sa.Column("extra_minutes", sa.Integer, nullable=False, default=0),  # a timed exam's extra time
    sa.Column("updated_at", sa.Float, nullable=False),
    sa.Column("updated_by", sa.String(128), nullable=False),
)

REGRADES = sa.Table(
    "quiz_regrades", COURSE,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("quiz", sa.String(128), nullable=False),
    sa.Column("requested_at", sa.Float, nullable=False),
    sa.Column("requested_by", sa.String(128), nullable=False),
    sa.Column("templates", sa.Text, nullable=False),  # JSON: the templates whose variants changed
    sa.Column("items", sa.Integer, nullable=False),  # answers graded again
    sa.Column("attempts", sa.Integer, nullable=False),  # attempts whose score changed
)
