"""``autograder quiz-bank``: the question bank as an HTML page for instructors (:mod:`autograder.quiz.bank`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..quiz.bank import write_bank


def add_parser(sub) -> None:
    q = sub.add_parser("quiz-bank", help="生成题库页面：每个题目模板、样例变式与答案、常见错误的对应关系（HTML）")
    q.add_argument("--out", required=True, help="输出目录（写入 OUT/index.html）")
    q.add_argument("--samples", type=int, default=4, help="每个模板每种作答方式的样例变式数（默认 4）")
    q.add_argument("--course", default="bank", help="样例变式所用的课程名（种子的一部分；默认 bank）")
    q.add_argument("--book-url", default="", help="课本的网址前缀，用于指向小节的链接（默认：相对于课本根目录）")
    q.add_argument("--statistics", type=int, default=200, help="统计常见错误出现比例所用的学生数（默认 200）")


def run(args: argparse.Namespace) -> int:
    if args.samples < 1 or args.statistics < 1:
        raise SystemExit("autograder quiz-bank: --samples 与 --statistics 至少为 1")
    book_url = args.book_url if not args.book_url or args.book_url.endswith("/") else args.book_url + "/"
    path = write_bank(Path(args.out), course=args.course, samples=args.samples, book_url=book_url,
                      statistics=args.statistics)
    print(f"题库：{path}")
    return 0
