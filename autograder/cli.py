"""Command line: ``autograder grade``, ``generate``, ``check-exercises``, ``serve``, ``course``, ``admin``, ``roster``,
``lti``, ``export-public`` and ``scan-public``."""

from __future__ import annotations

import argparse
import os
import sys

from .commands.grading import add_grading_options, add_sandbox_options


def build_parser() -> argparse.ArgumentParser:
    """The command line of every subcommand."""
    parser = argparse.ArgumentParser(prog="autograder", description="课程作业的生成与评分（基于 nbgrader）")
    sub = parser.add_subparsers(dest="command", required=True)

    g = sub.add_parser("grade", help="评分整个班级的提交")
    g.add_argument("submissions", help="SUBMISSIONS/<学号>/<作业>/<笔记本>.ipynb，Canvas/Moodle/Blackboard 的下载包"
                                        "（zip 文件，或含 zip 的目录），或两者混合")
    g.add_argument("--out", required=True, help="输出目录：grades.csv、feedback/、summary.html、gradebook.db")
    add_grading_options(g, folder="OUT")
    g.add_argument("--force", action="store_true", help="重新评分全部提交，即使没有变化")
    g.add_argument("--assignment", action="append", help="只评分这些作业（可重复）")
    g.add_argument("--student", action="append", help="只评分这些学生（可重复）；与 --force 一起用于重新评分一部分")
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

    add_service_commands(sub)
    from .commands import lti, public_export, public_scan

    lti.add_parser(sub)
    public_export.add_parser(sub)
    public_scan.add_parser(sub)

    from .commands import quiz_bank

    quiz_bank.add_parser(sub)

    sb = sub.add_parser("sandbox", help="沙箱：准备 cgroup 委派，查看生效的限制")
    sbs = sb.add_subparsers(dest="sandbox_command", required=True)
    su = sbs.add_parser("setup", help="以 root 运行一次（每次开机）：把 cgroup 子树交给评分用户，使无特权的评分程序也能限制每个沙箱")
    su.add_argument("--user", required=True, help="运行评分程序的用户（例如 course）")
    sc = sbs.add_parser("check", help="自检沙箱并打印生效的限制")
    add_sandbox_options(sc)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    # imported here, not at the top: the grading workers re-import this module
    from .commands import exercises, grade

    if args.command == "quiz-bank":
        from .commands import quiz_bank

        return quiz_bank.run(args)
    if args.command in ("serve", "roster"):
        return run_service_command(args)
    if args.command in ("course", "admin"):
        from .commands import course

        return course.main(args)
    if args.command == "sandbox":
        from .commands import sandbox_setup

        return sandbox_setup.run(args)
    if args.command == "lti":
        from .commands import lti

        return lti.main(args)
    if args.command in ("export-public", "scan-public"):
        from .commands import public_export, public_scan

        return (public_export if args.command == "export-public" else public_scan).main(args)
    try:
        if args.command == "grade":
            return grade.grade(args)
        if args.command == "generate":
            return exercises.generate(args)
        return exercises.check_exercises(args)
    except grade.CannotGrade as exc:
        print(f"autograder: 无法评分：{exc}", file=sys.stderr)
        return 2


def add_service_commands(sub) -> None:
    """``autograder serve`` and ``autograder roster`` (the online grading service)."""
    from .commands.course import add_parsers, data_options

    s = sub.add_parser("serve", help="运行在线评分服务：数据目录中的每门课程（HTTP API、持久队列、评分工作进程）")
    s.add_argument("--data", required=True, help="数据目录：站点数据库 gradebook.db、服务器密钥、每门课程的数据目录 courses/编号/")
    add_grading_options(s, folder="DATA")
    s.add_argument("--host", default="127.0.0.1", help="监听地址（默认 127.0.0.1）")
    s.add_argument("--port", type=int, default=8080, help="端口（默认 8080）")
    s.add_argument("--public-url", help="学生和课程平台访问本服务的地址，如 https://grader.example.edu 或 https://example.edu/submit；"
                                        "本服务给出的一切链接都由它构成，其他 Host 的请求被拒绝（只在本机回环地址上试用时可省略）")
    s.add_argument("--allowed-host", action="append", help="除 --public-url 的主机名外也接受的 Host（可重复）")
    s.add_argument("--book-url", help="课本网站的地址，如 https://course.example.edu/；页面据此链接到课本（错误诊断对应的小节、"
                                      "编程作业一页）。省略时不链接，只写出小节的名称")
    s.add_argument("--allow-weak-limits", action="store_true",
                   help="没有每个沙箱的 cgroup 限制（CPU 时间、内存、进程数）时也启动；此时成绩取决于机器负载，"
                        "一名学生的程序可能改变其他学生的成绩")
    s.add_argument("--lease", type=float, default=30.0, help="评分认领的租约秒数：进程被杀后，其他进程在租约到期后接手（默认 30）")
    s.add_argument("--ssl-certfile", help="直接以 HTTPS 提供服务：证书（PEM）；与 --ssl-keyfile 同用（会话 Cookie 此时名为 __Host-…，带 Secure）")
    s.add_argument("--ssl-keyfile", help="直接以 HTTPS 提供服务：私钥（PEM）")
    s.add_argument("--forwarded-allow-ips", help="在反向代理之后：信任这些地址发来的 X-Forwarded-For（逗号分隔）")
    s.add_argument("--max-connections", type=int, default=1000, help="同时处理的最大连接数，超出时回答 503（默认 1000）")
    s.add_argument("--access-log", action="store_true", help="打印每个请求")
    s.add_argument("--body-grace", type=float, default=10.0,
                   help="读请求体的宽限秒数：请求体须在此时间加上按最低速率所需的时间内到达，否则回答 408（默认 10）")
    s.add_argument("--body-min-rate", type=float, default=16.0, help="读请求体的最低速率，KiB/秒（默认 16）")

    add_parsers(sub)
    r = sub.add_parser("roster", help="在线评分服务中一门课程的名单与访问码")
    rs = r.add_subparsers(dest="roster_command", required=True)
    imp = rs.add_parser("import", help="导入名单（student_id，可选 name、email），为新学生生成访问码")
    imp.add_argument("roster", nargs="?", help="ROSTER.csv")
    data_options(imp)
    imp.add_argument("--codes", required=True, help="把新访问码写入这个 CSV 文件（不得已存在；只有这一份）")
    imp.add_argument("--reset", action="append", metavar="STUDENT_ID", help="为这名学生换发访问码，旧码立即失效（可重复）")
    ins = rs.add_parser("instructor", help="生成（或换发）教师或助教的访问码并打印")
    ins.add_argument("name", help="教师或助教的名字")
    ins.add_argument("--role", choices=["instructor", "ta"], default="instructor",
                     help="instructor 教师（默认）；ta 助教：查看全部提交与反馈、重新评分、延期与加次数，不能管理名单、访问码和课程平台")
    data_options(ins)


def run_service_command(args: argparse.Namespace) -> int:
    from .commands import roster, serve

    try:
        return serve.serve(args) if args.command == "serve" else roster.roster(args)
    except (serve.CannotServe, roster.CannotRoster) as exc:
        print(f"autograder: {exc}", file=sys.stderr)
        return 2


def run() -> None:
    """Console entry point: ``main`` and a fast exit.

    Everything has been written and closed when ``main`` returns (results atomically, the gradebook
    committed and closed); tearing down the ~2000 modules that nbgrader pulls in would take another
    0.6 s, so the process ends with ``os._exit`` after flushing its output, and after destroying the idle warm
    sandboxes it kept (their processes would die with it, their cgroups would stay behind: ``atexit`` is skipped).
    """
    code = main()
    warm = sys.modules.get("autograder.sandbox.warm")
    if warm is not None:  # its idle zygotes (the sandbox's self-test leaves one): atexit would have destroyed them
        warm.discard_all()  # with their cgroups, which outlive their processes
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    run()
