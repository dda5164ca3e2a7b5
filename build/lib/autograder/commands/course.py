"""``autograder course`` and ``autograder admin``: the courses of a service's data folder and its administrators.

Every command of the service opens the site's database (``--data``, ``--db``; an older one-course folder is
upgraded in place on first use, its course becoming ``default``) and acts on one course: ``--course``, or the
only course when there is one (:func:`autograder.service.courses.pick`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..check import all_assignments
from ..service import courses
from ..service.courses import Course, CourseError
from ..service.database import ADMINS, Database, keep_private
from ..service.policy import PolicyError, load_policy
from ..service.roles import ADMIN
from ..service.roster import RosterError, staff_code
from ..service.schema import prepare
from ..store.urls import database_url


class CannotCourse(RuntimeError):
    """A course command cannot do what was asked (message in Chinese)."""


def data_options(parser: argparse.ArgumentParser, *, course: bool = True) -> None:
    """``--data`` and ``--db`` (and ``--course``) of every service command."""
    parser.add_argument("--data", required=True, help="服务的数据目录")
    parser.add_argument("--db", help="站点数据库的 SQLAlchemy URL（默认 sqlite:///DATA/gradebook.db；PostgreSQL 时每门课程一个 schema）")
    if course:
        parser.add_argument("--course", help="课程编号（服务中只有一门课程时可省略）")


def site_database(args: argparse.Namespace) -> Database:
    """The site's database of ``--data``/``--db``, its tables current."""
    data = Path(args.data).resolve()
    keep_private(data)  # 0700 folder, 0600 database files, umask 077
    db = Database(database_url(args.db, data))
    prepare(db, "site")
    return db


def course_database(args: argparse.Namespace) -> tuple[Database, Course]:
    """The database of the course ``--course`` names (or the only one), its tables current, and the course."""
    site = site_database(args)
    try:
        course = courses.pick(site, getattr(args, "course", None))
        db = Database(course.db_url(site.url, Path(args.data).resolve()))
    except CourseError as exc:
        raise CannotCourse(str(exc)) from None
    finally:
        site.dispose()
    prepare(db, "course")
    return db, course


def add_parsers(sub) -> None:
    c = sub.add_parser("course", help="在线评分服务的课程：添加、列出")
    cs = c.add_subparsers(dest="course_command", required=True)
    add = cs.add_parser("add", help="添加一门课程（数据目录 DATA/courses/编号/，自己的数据库）")
    add.add_argument("course_id", help="课程编号：小写字母、数字和 -（也是课程的网址 /c/编号/）")
    add.add_argument("--title", required=True, help="课程名称（页面上显示）")
    add.add_argument("--config", help="课程配置 course.yml（复制到课程的数据目录；没有时全部作业开放、无截止时间）")
    data_options(add, course=False)
    data_options(cs.add_parser("list", help="列出服务中的课程"), course=False)
    a = sub.add_parser("admin", help="在线评分服务的管理员（管理课程与课程平台的绑定）")
    a_s = a.add_subparsers(dest="admin_command", required=True)
    aa = a_s.add_parser("add", help="生成（或换发）管理员访问码并打印")
    aa.add_argument("name", help="管理员的名字")
    data_options(aa, course=False)


def course(args: argparse.Namespace) -> int:
    site = site_database(args)
    data = Path(args.data).resolve()
    try:
        if args.command == "admin":
            print(staff_code(site, args.name, ADMIN, ADMINS))
            print(f"管理员 {args.name} 的访问码如上（只显示这一次；重新运行本命令会换发新码，旧码随即失效）", file=sys.stderr)
        elif args.course_command == "add":
            config = Path(args.config) if args.config else None
            if config is not None:
                load_policy(config, list(all_assignments()))  # refused here, before the course exists
            made = courses.add(site, data, args.course_id, args.title, config)
            print(f"已添加课程 {made.id}（{made.title}），数据目录 {made.data_root(data)}，网址 /c/{made.id}/", file=sys.stderr)
        else:
            registered = courses.all_courses(site)
            if not registered:
                print("还没有课程（autograder course add）", file=sys.stderr)
            for c in registered:
                print(f"{c.id}\t{c.title}\t{c.data_root(data)}")
    except (CourseError, PolicyError, RosterError) as exc:
        raise CannotCourse(str(exc)) from None
    finally:
        site.dispose()
    return 0


def main(args: argparse.Namespace) -> int:
    try:
        return course(args)
    except CannotCourse as exc:
        print(f"autograder: {exc}", file=sys.stderr)
        return 2
