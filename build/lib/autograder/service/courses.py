"""The courses one service hosts: their registry in the site's database, and where each keeps its data.

A course has an id (its URL path ``/c/<id>/`` and the ``--course`` of every command), a title, a data folder
(its ``course.yml``, submitted notebooks and, on SQLite, its database ``gradebook.db``) and a database of its
own: on SQLite the file in its data folder, on PostgreSQL a schema of the site's database (``course_<id>``),
so two courses never share an account, a submission or an nbgrader gradebook.

A service upgraded from one course keeps that course in place: id ``default``, data folder ``.`` (the site's),
its tables in the site's database.
"""

from __future__ import annotations

import re
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

import sqlalchemy as sa

from .database import COURSES, Database, with_schema
from .schema import prepare
from .errors import Invalid, NotFound

COURSE_ID = re.compile(r"[a-z0-9][a-z0-9-]{0,39}")
POLICY_FILE = "course.yml"
COURSES_DIR = "courses"


class CourseError(Invalid, ValueError):
    """A course cannot be added or found as asked (Chinese message naming the course)."""


@dataclass(frozen=True)
class Course:
    """One course of the site."""

    id: str
    title: str
    data_dir: str  # relative to the site's data folder
    db_schema: str | None  # PostgreSQL: the course's schema; None: the site database's own

    def data_root(self, site_data: Path) -> Path:
        return (site_data / self.data_dir).resolve()

    def db_url(self, site_url: str, site_data: Path) -> str:
        """The course's database: the site's own for an upgraded course, else its SQLite file or PostgreSQL schema."""
        if self.data_dir == "." and self.db_schema is None:
            return site_url
        if site_url.startswith("sqlite"):
            return f"sqlite:///{self.data_root(site_data) / 'gradebook.db'}"
        if self.db_schema is None:
            raise CourseError(f"课程 {self.id} 没有自己的数据库模式（schema）")
        return with_schema(site_url, self.db_schema)

    def policy_path(self, site_data: Path) -> Path:
        return self.data_root(site_data) / POLICY_FILE


#: The course a one-course service becomes (migration s001): its data folder and tables are the site's.
UPGRADED = Course("default", "评价二分类模型", ".", None)


def _course(row) -> Course:
    return Course(row.id, row.title, row.data_dir, row.db_schema)


def check_id(course_id: str) -> str:
    if not isinstance(course_id, str) or not COURSE_ID.fullmatch(course_id):
        raise CourseError(f"课程编号 {str(course_id)[:60]!r} 不合法：小写字母、数字和 -，以字母或数字开头，最长 40 个字符")
    return course_id


def all_courses(site: Database) -> list[Course]:
    with site.read() as con:
        return [_course(r) for r in con.execute(sa.select(COURSES).order_by(COURSES.c.id)).all()]


def get(site: Database, course_id: str) -> Course:
    with site.read() as con:
        row = con.execute(sa.select(COURSES).where(COURSES.c.id == course_id)).first()
    if row is None:
        raise NotFound(f"没有课程 {course_id[:60]}")
    return _course(row)


def pick(site: Database, course_id: str | None) -> Course:
    """The course a command acts on: ``course_id`` (``--course``), or the site's only course when none is given."""
    if course_id:
        try:
            return get(site, course_id)
        except NotFound:
            raise CourseError(f"没有课程 {course_id[:60]}（现有：{_names(site) or '无'}）") from None
    courses = all_courses(site)
    if len(courses) == 1:
        return courses[0]
    if not courses:
        raise CourseError("还没有课程：先用 autograder course add 添加一门")
    raise CourseError(f"服务中有多门课程（{_names(site)}），请用 --course 指明是哪一门")


def _names(site: Database) -> str:
    return "、".join(c.id for c in all_courses(site))


def add(site: Database, site_data: Path, course_id: str, title: str, policy: Path | None = None) -> Course:
    """A new course: its row, its data folder (with ``policy`` copied in as its ``course.yml``) and its tables."""
    check_id(course_id)
    title = title.strip()
    if not 0 < len(title) <= 200 or any(ord(ch) < 32 for ch in title):
        raise CourseError("课程名称不能为空、不能超过 200 个字符，也不能含控制字符")
    course = Course(course_id, title, f"{COURSES_DIR}/{course_id}",
                    None if site.sqlite else f"course_{course_id.replace('-', '_')}")
    with site.write() as con:
        site.serialize(con, "courses")
        if con.execute(sa.select(COURSES.c.id).where(COURSES.c.id == course_id)).first() is not None:
            raise CourseError(f"课程 {course_id} 已经存在")
        root = course.data_root(site_data)
        root.mkdir(parents=True, exist_ok=True, mode=0o700)
        if policy is not None:
            shutil.copyfile(policy, root / POLICY_FILE)
        db = Database(course.db_url(site.url, site_data))
        try:
            prepare(db, "course")
        finally:
            db.dispose()
        con.execute(sa.insert(COURSES).values(id=course.id, title=title, data_dir=course.data_dir,
                                              db_schema=course.db_schema, created_at=time.time()))
    return course
