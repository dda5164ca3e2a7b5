"""A small demo course for ``make serve``: three students, an instructor and the book's five assignments in a
throwaway data folder.

``python -m autograder.commands.demo_course --port 8060`` makes a new data folder under the system's temporary
directory, imports the roster (s001-s003) and an instructor, writes a ``course.yml`` whose deadlines lie
around today (open ones, one with late work accepted, one in its late period, one under ``counts: last``), prints the
access codes and runs ``autograder serve`` on it until Ctrl-C / SIGTERM, then removes the folder.
Nothing of it is meant to be kept: a real class uses ``autograder roster`` and ``autograder serve`` (docs/service.md).
"""

from __future__ import annotations

import argparse
import shutil
import signal
import subprocess
import sys
import tempfile
from datetime import datetime, timedelta, timezone
from pathlib import Path

import yaml

STUDENTS = [("s001", "张三"), ("s002", "李四"), ("s003", "王五")]
INSTRUCTOR = "王老师"
CHINA = timezone(timedelta(hours=8))


def course_config(now: datetime) -> dict:
    """The demo's ``course.yml``: deadlines relative to ``now`` (at 23:59 China time)."""
    def day(n: int) -> str:
        return (now.astimezone(CHINA) + timedelta(days=n)).replace(hour=23, minute=59, second=0, microsecond=0).isoformat()

    return {"login_failures": {"max": 20, "window_minutes": 15}, "assignments": {
        "ps1_threshold_metrics": {"deadline": day(7), "attempts_per_24h": 5, "feedback_before_deadline": "cases", "counts": "best"},
        "ps2_roc_auc": {"deadline": day(3), "late": {"penalty": 0.8, "until": day(10)}, "attempts_per_24h": 5,
                        "feedback_before_deadline": "full", "counts": "last"},
        "ps3_pr_ap": {"deadline": day(-1), "late": {"penalty": 0.5, "until": day(5)}, "attempts_per_24h": 3,
                      "feedback_before_deadline": "score", "counts": "best"},
        "ps4_calibration": {"deadline": day(14), "attempts_per_24h": 5, "feedback_before_deadline": "cases", "counts": "best"},
        "ps5_testing": {"deadline": day(21), "late": {"penalty": 0.8, "until": day(24)}, "attempts_per_24h": 5,
                        "feedback_before_deadline": "cases", "counts": "best"},
    }}


def make_course(data: Path, now: datetime) -> dict[str, str]:
    """Roster, instructor and ``course.yml`` in ``data``; the access codes by login."""
    from ..service.accounts import enroll
    from ..service.database import Database
    from ..service.roster import Student, instructor_code

    db = Database(f"sqlite:///{data / 'gradebook.db'}")
    db.create()
    issued = enroll(db, [Student(sid, name) for sid, name in STUDENTS])
    codes = {s.student_id: code for s, code in issued}
    codes[INSTRUCTOR] = instructor_code(db, INSTRUCTOR)
    db.dispose()
    (data / "course.yml").write_text("# 演示课程（make serve），数据目录用后即删\n" + yaml.safe_dump(course_config(now), allow_unicode=True,
                                                                                  sort_keys=False), encoding="utf-8")
    return codes


def banner(url: str, codes: dict[str, str]) -> str:
    names = dict(STUDENTS)
    lines = [f"作业提交（演示课程）：{url}", "登录用的学号和访问码（只在这里显示；演示数据在退出时删除）："]
    lines += [f"  学生 {sid}（{names[sid]}）  访问码 {codes[sid]}" for sid, _ in STUDENTS]
    lines.append(f"  教师 {INSTRUCTOR}        访问码 {codes[INSTRUCTOR]}")
    return "\n".join(lines)


def demo_platform(data: Path, host: str, port: int, lti_port: int):
    """A fake LMS on ``lti_port`` (this process), registered in the demo's data folder, knowing the demo's people."""
    from ..service.database import Database
    from ..service.lti import registry
    from .lti_demo import INSTRUCTOR as TEACHING, LEARNER, FakePlatform, User

    platform = FakePlatform(host=host, port=lti_port, flavour="canvas")
    platform.tool = f"http://{host}:{port}"
    platform.users = {sid: User(f"demo-{sid}", name, f"{sid}@example.edu", LEARNER, sourcedid=sid) for sid, name in STUDENTS}
    platform.users["teacher"] = User("demo-teacher", INSTRUCTOR, "teacher@example.edu", TEACHING)
    platform.custom = {"link-1": {"assignment": "ps1_threshold_metrics"}}
    db = Database(f"sqlite:///{data / 'gradebook.db'}")
    registry.add(db, **platform.registration())
    db.dispose()
    return platform.start()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder.commands.demo_course", description="演示课程的在线评分服务")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8060)
    parser.add_argument("--jobs", type=int, default=0, help="评分进程数（默认 CPU 核数）")
    parser.add_argument("--lti-port", type=int, default=0, help="同时在这个端口启动一个假课程平台，试用 LTI 1.3（默认不启动）")
    args = parser.parse_args(argv)
    data = Path(tempfile.mkdtemp(prefix="autograder-demo-")) / "data"
    data.mkdir()
    try:
        codes = make_course(data, datetime.now(timezone.utc))
        print(banner(f"http://{args.host}:{args.port}/", codes), file=sys.stderr, flush=True)
        if args.lti_port:
            platform = demo_platform(data, args.host, args.port, args.lti_port)
            print(f"假课程平台（试用 LTI 1.3）：{platform.base}/", file=sys.stderr, flush=True)
        cmd = [str(Path(sys.executable).parent / "autograder"), "serve", "--data", str(data), "--host", args.host,
               "--port", str(args.port),
               # a throwaway demo on one's own machine: it starts (and prints which limits hold) without a delegated cgroup
               "--allow-weak-limits"] + (["--jobs", str(args.jobs)] if args.jobs else [])
        child = subprocess.Popen(cmd)
        signal.signal(signal.SIGTERM, lambda *_: child.terminate())
        try:
            return child.wait()
        except KeyboardInterrupt:  # Ctrl-C reaches the child too (same process group); wait for it to stop
            return child.wait()
    finally:
        shutil.rmtree(data.parent, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
