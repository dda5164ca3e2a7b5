"""Command line: ``autograder grade``, ``autograder generate``, ``autograder check-exercises``."""

from __future__ import annotations

import argparse
import os
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="autograder", description="课程作业的生成与评分（基于 nbgrader）")
    sub = parser.add_subparsers(dest="command", required=True)

    g = sub.add_parser("grade", help="评分整个班级的提交")
    g.add_argument("submissions", help="SUBMISSIONS/<学号>/<作业>/<笔记本>.ipynb，Canvas/Moodle/Blackboard 的下载包"
                                        "（zip 文件，或含 zip 的目录），或两者混合")
    g.add_argument("--out", required=True, help="输出目录：grades.csv、feedback/、summary.html、gradebook.db")
    g.add_argument("--db", help="nbgrader 成绩库的 SQLAlchemy URL（默认 sqlite:///OUT/gradebook.db）")
    g.add_argument("--force", action="store_true", help="重新评分全部提交，即使没有变化")
    g.add_argument("--no-sandbox", action="store_true", help="不用 bubblewrap 隔离学生代码（不安全，只用于调试）")
    g.add_argument("--jobs", type=int, default=0, help="本机评分工作进程数（默认 CPU 核数）")
    g.add_argument("--assignment", action="append", help="只评分这些作业（可重复）")
    g.add_argument("--student", action="append", help="只评分这些学生（可重复）；与 --force 一起用于重新评分一部分")
    g.add_argument("--scheduler", metavar="ADDRESS", help="在 Dask distributed 集群上评分（调度器地址，如 tcp://10.0.0.5:8786）")
    g.add_argument("--scratch", metavar="DIR", help="工作进程存放临时文件的目录（默认系统临时目录）")
    g.add_argument("--db-wait", type=float, default=120.0, help="成绩库暂时不可用时最多等待的秒数（默认 120）")
    g.add_argument("--solutions", help="教师源目录（默认仓库中的 solutions/）")
    g.add_argument("--call-timeout", type=float, default=4.0, help="每次函数调用的墙钟时限（秒）")
    g.add_argument("--memory-mib", type=int, default=1024, help="学生进程的地址空间上限（MiB）")
    g.add_argument("--submission-timeout", type=float, default=180.0,
                   help="每份提交的评分总时限（秒，含所有重启与用例；超时后其余用例计 0 分）")
    g.add_argument("--feedback", choices=["full", "cases", "score"], default="full",
                   help="反馈页显示的内容：full 每个用例的输入、结果与回溯（默认）；cases 只显示每个用例是否通过"
                        "（截止前使用，隐藏用例的输入无法经由反馈读出）；score 只显示得分")
    g.add_argument("--collect-regexp", help="自定义的下载包文件名正则（命名组 student_id，可选 file_id、timestamp）；"
                                            "Canvas、Moodle、Blackboard 的命名无需设置")
    g.add_argument("--due", action="append", metavar="[作业=]时间",
                   help="截止时间，如 2026-05-01T23:59 或 ps2_roc_auc=2026-05-01T23:59（可重复）：grades.csv 据此标出迟交")
    g.add_argument("--quiet", action="store_true", help="不显示进度")

    gen = sub.add_parser("generate", help="用 nbgrader generate_assignment 由 solutions/ 重新生成 exercises/")
    gen.add_argument("names", nargs="*", help="作业名（默认全部）")
    gen.add_argument("--solutions")
    gen.add_argument("--exercises")

    chk = sub.add_parser("check-exercises", help="检查 exercises/ 是否与 solutions/ 生成的结果一致")
    chk.add_argument("--solutions")
    chk.add_argument("--exercises")

    args = parser.parse_args(argv)
    # imported here, not at the top: the grading workers re-import this module
    from .commands import exercises, grade

    try:
        if args.command == "grade":
            return grade.grade(args)
        if args.command == "generate":
            return exercises.generate(args)
        return exercises.check_exercises(args)
    except grade.CannotGrade as exc:
        print(f"autograder: 无法评分：{exc}", file=sys.stderr)
        return 2


def run() -> None:
    """Console entry point: ``main`` and a fast exit.

    Everything has been written and closed when ``main`` returns (results atomically, the gradebook
    committed and closed); tearing down the ~2000 modules that nbgrader pulls in would take another
    0.6 s, so the process ends with ``os._exit`` after flushing its output.
    """
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    run()
