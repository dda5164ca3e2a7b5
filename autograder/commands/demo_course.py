"""Two small demo courses for ``make serve``, in a throwaway data folder, and optionally a fake LMS that opens them.

``python -m autograder.commands.demo_course --port 8060 [--lti-port 8070]`` makes a new data folder under the
system's temporary directory with two courses:

* ``bin-2026`` 评价二分类模型（2026 秋季）: students s001-s003, instructor 王老师, teaching assistant 赵助教, the
  book's five assignments with deadlines around today (open ones, one with late work accepted, one in its late
  period, one under ``counts: last``), a graded quiz (three attempts, every answer's feedback at once) and a short
  timed exam (ten minutes, the total score only until its deadline);
* ``ml-lab`` 机器学习实践（演示）: students s101-s102, instructor 周老师, and 李四 - a student of ``bin-2026`` - as its
  teaching assistant (one person, a student in one course and a TA in the other);

and a service administrator. With ``--hub-port`` a JupyterHub runs beside it (:mod:`.hub_demo`, the documented
configuration with the dummy authenticator): both courses take hub users (the hub usernames s001-s003, s101-s102
are the students; wang, zhao and zhou the staff; s002 is 李四, a student of ``bin-2026`` and the TA of ``ml-lab``)
and link their assignments from a git repository of the released notebooks. It prints every access code and runs
``autograder serve`` on it until Ctrl-C / SIGTERM, then removes the folder. With ``--lti-port`` a fake LMS runs
beside it (:mod:`.lti_demo`), registered once, with four LMS courses: ``BIN101`` and its section ``BIN101-2``
bound to ``bin-2026``, ``ML-LAB`` bound to ``ml-lab``, and 李四's own sandbox course, bound to nothing (a teacher
there is nobody here: the launch shows how to ask for a binding). Nothing of it is meant to be kept: a real
service uses ``autograder course add``, ``autograder roster`` and ``autograder serve`` (docs/instructors/tutorial.md).
"""

from __future__ import annotations

import argparse
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Callable

import yaml

CHINA = timezone(timedelta(hours=8))
ADMIN = "管理员"


@dataclass(frozen=True)
class DemoCourse:
    id: str
    title: str
    students: list[tuple[str, str]]  # (student id, name)
    staff: list[tuple[str, str]]  # (name, role)


COURSES = [
    DemoCourse("bin-2026", "评价二分类模型（2026 秋季）", [("s001", "张三"), ("s002", "李四"), ("s003", "王五")],
               [("王老师", "instructor"), ("赵助教", "ta")]),
    DemoCourse("ml-lab", "机器学习实践（演示）", [("s101", "陈一"), ("s102", "刘二")], [("周老师", "instructor"), ("李四", "ta")]),
]


#: The hub usernames of each demo course's staff (``--hub-port``): username -> the account's name.
HUB_STAFF = {"bin-2026": {"wang": "王老师", "zhao": "赵助教"}, "ml-lab": {"zhou": "周老师", "s002": "李四"}}


def course_config(now: datetime, course_id: str, repository: str | None = None) -> dict:
    """A demo course's ``course.yml``: deadlines relative to ``now`` (at 23:59 China time); with ``repository`` (the
    released notebooks' git repository) the course takes JupyterHub users and links its assignments there."""
    config = _course_config(now, course_id)
    if repository is not None:
        config["hub"] = {"staff": HUB_STAFF[course_id], "repository": repository}
    return config


def _course_config(now: datetime, course_id: str) -> dict:
    def day(n: int) -> str:
        return (now.astimezone(CHINA) + timedelta(days=n)).replace(hour=23, minute=59, second=0, microsecond=0).isoformat()

    if course_id == "ml-lab":
        return {"assignments": {
            "ps1_threshold_metrics": {"deadline": day(10), "attempts_per_24h": 5, "feedback_before_deadline": "full", "counts": "best"},
            "ps2_roc_auc": {"deadline": day(17), "attempts_per_24h": 5, "feedback_before_deadline": "cases", "counts": "best"},
        }}
    return {"login_failures": {"max": 20, "window_minutes": 15}, "assignments": {
        "ps1_threshold_metrics": {"deadline": day(7), "attempts_per_24h": 5, "feedback_before_deadline": "cases", "counts": "best"},
        "ps2_roc_auc": {"deadline": day(3), "late": {"penalty": 0.8, "until": day(10)}, "attempts_per_24h": 5,
                        "feedback_before_deadline": "full", "counts": "last"},
        "ps3_pr_ap": {"deadline": day(-1), "late": {"penalty": 0.5, "until": day(5)}, "attempts_per_24h": 3,
                      "feedback_before_deadline": "score", "counts": "best"},
        "ps4_calibration": {"deadline": day(14), "attempts_per_24h": 5, "feedback_before_deadline": "cases", "counts": "best"},
        "ps5_testing": {"deadline": day(21), "late": {"penalty": 0.8, "until": day(24)}, "attempts_per_24h": 5,
                        "feedback_before_deadline": "cases", "counts": "best"},
    }, "quizzes": demo_quizzes(day)}


def demo_quizzes(day: Callable[[int], str]) -> dict:
    """The ``quizzes:`` section of ``bin-2026``: a quiz of the first chapter and a short exam of the second (deadlines
    ``day(n)``: n days from today)."""
    return {
        "quiz1_confusion": {"title": "小测 1：混淆矩阵与固定阈值指标",
                            "questions": ["confusion-cells", "fixed-metrics", {"template": "fpr-fdr", "form": "choice"},
                                          "roc-area"],
                            "deadline": day(7), "attempts": 3, "feedback_before_deadline": "full", "counts": "best"},
        "exam1_ranking": {"title": "限时测验：排序与 AP（10 分钟）", "questions": ["auc-pairs", "ap-ranking", "pr-baseline"],
                          "time_limit_minutes": 10, "deadline": day(5), "feedback_before_deadline": "score"},
    }


def make_site(data: Path, now: datetime, repository: str | None = None) -> dict[str, dict[str, str]]:
    """The two courses, their people and an administrator in ``data`` (``repository``: see :func:`course_config`);
    the access codes: course id (or ``"admin"``) -> name -> code."""
    from ..service import courses
    from ..service.accounts import enroll
    from ..service.database import ADMINS, Database
    from ..service.roles import ADMIN as ADMIN_ROLE
    from ..service.roster import Student, staff_code
    from ..service.schema import prepare

    site = Database(f"sqlite:///{data / 'gradebook.db'}")
    prepare(site, "site")
    out: dict[str, dict[str, str]] = {"admin": {ADMIN: staff_code(site, ADMIN, ADMIN_ROLE, ADMINS)}}
    for c in COURSES:
        config = data / f"{c.id}.yml"
        config.write_text("# 演示课程（make serve），数据目录用后即删\n" + yaml.safe_dump(course_config(now, c.id, repository), allow_unicode=True,
                                                                                  sort_keys=False), encoding="utf-8")
        made = courses.add(site, data, c.id, c.title, config)
        db = Database(made.db_url(site.url, data))
        codes = {s.student_id: code for s, code in enroll(db, [Student(sid, name) for sid, name in c.students])}
        codes.update({name: staff_code(db, name, role) for name, role in c.staff})
        db.dispose()
        out[c.id] = codes
    site.dispose()
    return out


def banner(url: str, codes: dict[str, dict[str, str]]) -> str:
    lines = [f"作业提交（两门演示课程）：{url}", "登录用的学号（或名字）和访问码（只在这里显示；演示数据在退出时删除）："]
    for c in COURSES:
        lines.append(f"  课程 {c.title}：{url}c/{c.id}/")
        names = dict(c.students)
        lines += [f"    学生 {sid}（{names[sid]}）  访问码 {codes[c.id][sid]}" for sid, _ in c.students]
        lines += [f"    {'助教' if role == 'ta' else '教师'} {name}        访问码 {codes[c.id][name]}" for name, role in c.staff]
    lines.append(f"  管理员 {ADMIN}：{url}admin/  访问码 {codes['admin'][ADMIN]}")
    return "\n".join(lines)


def demo_platform(data: Path, host: str, port: int, lti_port: int):
    """A fake LMS on ``lti_port`` (this process), registered in the demo's data folder, with the demo's people and
    LMS courses, three of them bound (see the module's docstring)."""
    from ..service.database import Database
    from ..service.lti import bindings, registry
    from .lti_demo import INSTRUCTOR as TEACHING
    from .lti_demo import LEARNER, TEACHING_ASSISTANT, DemoPlatform, User

    platform = DemoPlatform(host=host, port=lti_port)
    platform.tool = f"http://{host}:{port}"
    for c in COURSES:
        for sid, name in c.students:
            platform.users.setdefault(sid, User(f"demo-{sid}", name, f"{sid}@example.edu", LEARNER, sourcedid=sid))
    platform.users["teacher"] = User("demo-teacher", "王老师", "wang@example.edu", TEACHING)
    platform.users["ta"] = User("demo-ta", "赵助教", "zhao@example.edu", TEACHING_ASSISTANT)
    platform.users["zhou"] = User("demo-zhou", "周老师", "zhou@example.edu", TEACHING)
    bin_people = {"s001": LEARNER, "s002": LEARNER, "s003": LEARNER, "teacher": TEACHING, "ta": TEACHING_ASSISTANT}
    platform.contexts = {"course-1": "BIN101 评价二分类模型", "section-2": "BIN101 第 2 教学班",
                         "ml-lab-lms": "ML-LAB 机器学习实践", "li-sandbox": "李四的练习课程"}
    platform.enrolments = {"course-1": bin_people, "section-2": {"s003": LEARNER, "teacher": TEACHING},
                           "ml-lab-lms": {"s101": LEARNER, "s102": LEARNER, "zhou": TEACHING, "s002": TEACHING_ASSISTANT},
                           "li-sandbox": {"s002": TEACHING, "s001": LEARNER}}
    platform.custom = {"link-1": {"assignment": "ps1_threshold_metrics"}, "link-2": {"assignment": "quiz1_confusion"}}
    platform.links = {ctx: [("link-1", "作业 1：固定阈值指标")] for ctx in platform.contexts}
    platform.links["course-1"].append(("link-2", "小测 1：混淆矩阵与固定阈值指标"))  # a graded quiz, passed back alike
    db = Database(f"sqlite:///{data / 'gradebook.db'}")
    registered = registry.add(db, **platform.registration())
    for context, course, authority in (("course-1", "bin-2026", True), ("section-2", "bin-2026", False), ("ml-lab-lms", "ml-lab", True)):
        bindings.bind(db, registered.id, platform.deployment_id, context, course, by="演示", roster_authority=authority,
                      title=platform.contexts[context])
    db.dispose()
    return platform.start()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder.commands.demo_course", description="两门演示课程的在线评分服务")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8060)
    parser.add_argument("--jobs", type=int, default=0, help="评分进程数（默认 CPU 核数）")
    parser.add_argument("--lti-port", type=int, default=0, help="同时在这个端口启动一个假课程平台，试用 LTI 1.3（默认不启动）")
    parser.add_argument("--book-url", help="课本网站的地址（make serve 给出它自己的端口）；省略时页面不链接课本")
    parser.add_argument("--hub-port", type=int, default=0, help="同时在这个端口启动一个 JupyterHub，试用 JupyterHub 登录与提交（默认不启动）")
    args = parser.parse_args(argv)
    data = Path(tempfile.mkdtemp(prefix="autograder-demo-")) / "data"
    data.mkdir()
    hub = None
    try:
        if args.hub_port:
            from ..check import all_assignments
            from .hub_demo import LocalHub, release_repository
        repository = release_repository(data.parent / "release", list(all_assignments())) if args.hub_port else None
        codes = make_site(data, datetime.now(timezone.utc), repository)
        print(banner(f"http://{args.host}:{args.port}/", codes), file=sys.stderr, flush=True)
        if args.hub_port:
            hub = LocalHub(data.parent / "hub", f"http://{args.host}:{args.port}", port=args.hub_port, password="demo")
            hub.register(data)
            hub.start()
            print(f"JupyterHub（试用）：{hub.url}/  任意用户名、密码 demo 登录；学生 s001-s003、s101-s102，教师 wang、zhou，"
                  f"助教 zhao；s002 在“{COURSES[1].title}”中是助教", file=sys.stderr, flush=True)
        if args.lti_port:
            platform = demo_platform(data, args.host, args.port, args.lti_port)
            print(f"假课程平台（试用 LTI 1.3）：{platform.base}/", file=sys.stderr, flush=True)
        cmd = [str(Path(sys.executable).parent / "autograder"), "serve", "--data", str(data), "--host", args.host,
               "--port", str(args.port),
               # a throwaway demo on one's own machine: it starts (and prints which limits hold) without a delegated cgroup
               "--allow-weak-limits"] + (["--jobs", str(args.jobs)] if args.jobs else []) \
            + (["--book-url", args.book_url] if args.book_url else [])
        child = subprocess.Popen(cmd)
        signal.signal(signal.SIGTERM, lambda *_: child.terminate())
        try:
            return child.wait()
        except KeyboardInterrupt:  # Ctrl-C reaches the child too (same process group); wait for it to stop
            return child.wait()
    finally:
        if hub is not None:
            hub.stop()
        shutil.rmtree(data.parent, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
