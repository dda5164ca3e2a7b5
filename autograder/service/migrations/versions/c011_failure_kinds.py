"""A failure's kind as data: ``failure`` in ``service_submissions`` and ``service_checks`` (:class:`..failures.Failure`).

Revision ID: c011
Revises: c010

Until c010 the ``error`` column kept a failure's whole text, and the service decided from that text whether an
attempt was free and what its student could read.  Here every finished row with a failure gets its kind and
``error`` keeps only the kind's detail.  A row is read as the service read it then, so that every reader sees
what they saw before: a reason written for the student (given up, file lost, assignment no longer configured),
else the grading system's own failure, whose detail is its text after the system's prefix (the whole text when it
has none).  A ``graded`` row with a text kept its previous result after a regrade failed; its note wrapped the
reason (a note cut at 2,000 characters was the grading system's).

The only place the stored texts are ever matched; they are copied below as the service wrote them up to c010 (a
later change of the shown texts must not change how these rows read).  Repeatable: only rows without a kind are
classified, and the column is added where missing.
"""

from __future__ import annotations

import re

import sqlalchemy as sa
from alembic import op

revision = "c011"
down_revision = "c010"
branch_labels = None
depends_on = None

TABLES = ("service_submissions", "service_checks")
GAVE_UP = re.compile(r"评分在完成之前反复中断（服务进程在评分这份提交时退出了 (.+) 次），已放弃；请联系教师", re.DOTALL)
FILE_LOST = "提交的文件在服务器上丢失或已损坏，请重新提交"
NOT_CONFIGURED = re.compile(r"作业 (.+) 已不在课程配置中，无法评分", re.DOTALL)
SYSTEM_FAILED = "评分系统未能完成评分："
REGRADE_HEAD, REGRADE_TAIL = "重新评分没有完成（", "），这次提交保留并沿用上一次的评分结果"


def kind_of(status: str, text: str | None) -> tuple[str, str | None]:
    """The kind (its stored value) and detail of a finished row's failure, from its ``status`` and stored ``text``."""
    reason = text or ""
    if status == "graded" and reason.startswith(REGRADE_HEAD):
        reason = reason[len(REGRADE_HEAD):]
        if not reason.endswith(REGRADE_TAIL):  # cut at 2,000 characters: read as the grading system's
            return "system", reason.removeprefix(SYSTEM_FAILED)
        reason = reason[:-len(REGRADE_TAIL)]
    if (m := GAVE_UP.fullmatch(reason)) is not None:
        return "gave_up", m.group(1)
    if reason == FILE_LOST:
        return "file_lost", None
    if (m := NOT_CONFIGURED.fullmatch(reason)) is not None:
        return "not_configured", m.group(1)
    return "system", reason.removeprefix(SYSTEM_FAILED) if text is not None else None


def upgrade() -> None:
    con = op.get_bind()
    for name in TABLES:
        if "failure" not in {c["name"] for c in sa.inspect(con).get_columns(name)}:
            op.add_column(name, sa.Column("failure", sa.String(16)))
        table = sa.table(name, sa.column("id"), sa.column("status"), sa.column("error"), sa.column("failure"))
        rows = con.execute(sa.select(table.c.id, table.c.status, table.c.error).where(
            table.c.failure.is_(None) & ((table.c.status == "failed") | ((table.c.status == "graded") & table.c.error.isnot(None))))).all()
        for row in rows:
            kind, detail = kind_of(row.status, row.error)
            con.execute(sa.update(table).where(table.c.id == row.id).values(failure=kind, error=detail))
