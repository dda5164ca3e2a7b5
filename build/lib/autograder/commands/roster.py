"""``autograder roster``: students and instructors of the grading service, with their access codes."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ..service.accounts import enroll
from ..service.roster import RosterError, Student, read_roster, reset_code, staff_code, write_codes
from .course import CannotCourse, course_database


class CannotRoster(RuntimeError):
    """The roster command cannot do what was asked (message in Chinese)."""


def roster(args: argparse.Namespace) -> int:
    """``autograder roster import`` and ``autograder roster instructor`` (of one course)."""
    try:
        if args.roster_command == "instructor":
            db, course = course_database(args)
            print(staff_code(db, args.name, args.role))
            label = "助教" if args.role == "ta" else "教师"
            print(f"课程 {course.id} 的{label} {args.name} 的访问码如上（只显示这一次；重新运行本命令会换发新码，旧码随即失效）",
                  file=sys.stderr)
            return 0
        return _import(args)
    except (RosterError, CannotCourse) as exc:
        raise CannotRoster(str(exc)) from None


def _import(args: argparse.Namespace) -> int:
    students = read_roster(Path(args.roster)) if args.roster else []
    if not students and not args.reset:
        raise CannotRoster("请给出名单 ROSTER.csv，或用 --reset 学号 换发访问码")
    codes_path = Path(args.codes)
    try:  # claimed before anything changes: codes are shown only once, so they must have a place to go
        fd = os.open(codes_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise CannotRoster(f"{codes_path} 已存在；为免覆盖尚未分发的访问码，请换一个文件名") from None
    except OSError as exc:
        raise CannotRoster(f"无法创建 {codes_path}：{exc.strerror}") from None
    os.close(fd)
    os.unlink(codes_path)
    db, course = course_database(args)
    resets = list(dict.fromkeys(args.reset or []))
    issued = enroll(db, students)
    try:
        for sid in resets:
            issued.append((Student(sid), reset_code(db, "student", sid)))
    finally:  # codes already issued are written even if a later --reset names an unknown student
        write_codes(codes_path, issued)
    created = len(issued) - len(resets)
    print(f"课程 {course.id} 的名单：{len(students)} 名学生，新建 {created} 个账号，{len(students) - created} 个已存在（访问码不变）；"
          f"换发 {len(resets)} 个访问码。新访问码已写入 {codes_path}（只有这一份，请妥善分发）", file=sys.stderr)
    return 0
