"""Accounts: the class roster (students with personal access codes) and instructors.

``ROSTER.csv`` has a header row with ``student_id`` and optionally ``name`` and ``email``.  A student id is
also a folder name in the data folder and in nbgrader's gradebook, so it must match :data:`STUDENT_ID`
(the rule ``autograder grade`` applies to submission folders).
"""

from __future__ import annotations

import csv
import io
import re
import time
from dataclasses import dataclass
from pathlib import Path

import sqlalchemy as sa

from ..store.grades import spreadsheet_text
from . import codes
from .database import ACCOUNTS, Database
from .roles import LABELS, Role
from .errors import Invalid

STUDENT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.@-]{0,99}")
INSTRUCTOR_NAME = re.compile(r"[^\x00-\x1f\x7f]{1,100}")
MAX_ROSTER_BYTES = 10 << 20


class RosterError(Invalid, ValueError):
    """The roster file or an argument is not valid (Chinese message naming the line or the value)."""


@dataclass(frozen=True)
class Student:
    student_id: str
    name: str = ""
    email: str = ""


def read_roster(path: Path) -> list[Student]:
    """The students of ``ROSTER.csv`` (UTF-8, with or without BOM), in file order."""
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise RosterError(f"无法读取名单 {path}：{exc.strerror}") from None
    return parse_roster(raw, str(path))


def parse_roster(raw: bytes, path: str = "ROSTER.csv") -> list[Student]:
    """The students of a roster file's bytes (``path`` names it in messages)."""
    if len(raw) > MAX_ROSTER_BYTES:
        raise RosterError(f"名单 {path} 超过 {MAX_ROSTER_BYTES >> 20} MiB")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise RosterError(f"名单 {path} 不是 UTF-8 编码（请另存为 UTF-8 的 CSV）") from None
    reader = csv.DictReader(io.StringIO(text))
    fields = [f.strip() for f in reader.fieldnames or []]
    if "student_id" not in fields:
        raise RosterError(f"名单 {path} 的第一行必须是列名，且包含 student_id（可选 name、email）")
    reader.fieldnames = fields
    out: list[Student] = []
    seen: set[str] = set()
    for row in reader:
        line = reader.line_num
        sid = (row.get("student_id") or "").strip()
        if not STUDENT_ID.fullmatch(sid):
            raise RosterError(f"名单 {path} 第 {line} 行：学号 {sid!r} 不合法（字母或数字开头，只含字母、数字和 _ . @ -，最长 100 个字符）")
        if sid in seen:
            raise RosterError(f"名单 {path} 第 {line} 行：学号 {sid} 重复")
        seen.add(sid)
        name, email = (row.get("name") or "").strip(), (row.get("email") or "").strip()
        if len(name) > 200 or len(email) > 200 or any(ord(ch) < 32 for ch in name + email):
            raise RosterError(f"名单 {path} 第 {line} 行：姓名或邮箱过长或含控制字符")
        out.append(Student(sid, name, email))
    return out


def _account(con: sa.Connection, role: str, login: str, table: sa.Table = ACCOUNTS):
    return con.execute(sa.select(table).where((table.c.role == role) & (table.c.login == login))).first()


def import_students(db: Database, students: list[Student]) -> list[tuple[Student, str]]:
    """Create the students not yet known (returning each with its new code); update names and emails of the others."""
    issued = []
    for s in students:
        with db.write() as con:
            row = _account(con, "student", s.student_id)
            if row is not None:
                if (row.name, row.email) != (s.name, s.email) and (s.name or s.email):
                    con.execute(sa.update(ACCOUNTS).where(ACCOUNTS.c.id == row.id).values(name=s.name, email=s.email))
                continue
            code, code_id, code_hash = codes.new_code()
            con.execute(sa.insert(ACCOUNTS).values(role="student", login=s.student_id, name=s.name, email=s.email,
                                                   code_id=code_id, code_hash=code_hash, created_at=time.time()))
        issued.append((s, code))
    return issued


def reset_code(db: Database, role: str, login: str, table: sa.Table = ACCOUNTS) -> str:
    """A new code for an existing account; the old code stops working."""
    code, code_id, code_hash = codes.new_code()
    with db.write() as con:
        row = _account(con, role, login, table)
        if row is None:
            raise RosterError(f"没有{LABELS.get(role, role)} {login}")
        con.execute(sa.update(table).where(table.c.id == row.id).values(code_id=code_id, code_hash=code_hash))
    return code


def staff_code(db: Database, name: str, role: str = Role.INSTRUCTOR, table: sa.Table = ACCOUNTS) -> str:
    """A code for ``name`` in ``role`` (an instructor or teaching assistant of the course; with ``table``
    :data:`~.database.ADMINS`, a site administrator): a new account, or a new code for an existing one (the old
    code stops working)."""
    if not INSTRUCTOR_NAME.fullmatch(name):
        raise RosterError(f"{LABELS.get(role, role)}的名字不能为空、不能超过 100 个字符，也不能含控制字符")
    with db.read() as con:
        exists = _account(con, role, name, table) is not None
    if exists:
        return reset_code(db, role, name, table)
    code, code_id, code_hash = codes.new_code()
    with db.write() as con:
        con.execute(sa.insert(table).values(role=role, login=name, name=name, email="", code_id=code_id,
                                            code_hash=code_hash, created_at=time.time()))
    return code


def instructor_code(db: Database, name: str) -> str:
    """A code for instructor ``name`` (:func:`staff_code`)."""
    return staff_code(db, name, Role.INSTRUCTOR)


def write_codes(path: Path, issued: list[tuple[Student, str]]) -> None:
    """``CODES.csv`` (student_id, name, email, code), readable only by its owner; never overwrites a file."""
    import os

    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
        f.write(codes_csv(issued))


def codes_csv(issued: list[tuple[Student, str]]) -> str:
    """The text of ``CODES.csv``: a header and one row per new code (text cells neutralised for spreadsheets)."""
    out = io.StringIO()
    w = csv.writer(out)
    w.writerow(["student_id", "name", "email", "code"])
    for s, code in issued:
        w.writerow([spreadsheet_text(v) for v in (s.student_id, s.name, s.email, code)])
    return out.getvalue()
