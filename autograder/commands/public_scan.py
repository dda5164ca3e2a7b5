"""``autograder scan-public PATH...``: fail when a public artefact holds private material.

Every file under each ``PATH`` (or the file itself; each file of a zip archive such as a wheel) is read by
:func:`.artefact_text.artefact_texts` and searched, whitespace removed, for every fingerprint of
:func:`.private_material.private_fingerprints` (:class:`Scanner`).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .artefact_text import Unreadable, artefact_texts
from .private_material import CATEGORY_NAMES, Category, Fingerprint, private_fingerprints, squeeze

#: Characters of the pieces of fingerprints that the scan looks up.
GRAM = 8
#: Characters of the scanned text shown around a leak.
EXCERPT = 60


@dataclass(frozen=True)
class Leak:
    """Private text found in a public file."""

    artefact: str
    category: Category
    source: str
    excerpt: str

    def describe(self) -> str:
        return f"{self.artefact}：{CATEGORY_NAMES[self.category]}（来自 {self.source}）：…{self.excerpt}…"


@dataclass(frozen=True)
class Unscanned:
    """A public file that could not be read, so it cannot be published as checked."""

    artefact: str
    reason: str

    def describe(self) -> str:
        return f"{self.artefact}：无法检查：{self.reason}"


@dataclass(frozen=True)
class ScanReport:
    """The result of a scan: files read by kind, leaks and unreadable files."""

    kinds: Counter = field(default_factory=Counter)
    leaks: tuple[Leak, ...] = ()
    unscanned: tuple[Unscanned, ...] = ()

    @property
    def clean(self) -> bool:
        return not self.leaks and not self.unscanned

    def summary(self) -> str:
        kinds = "、".join(f"{kind} {n}" for kind, n in sorted(self.kinds.items()))
        return f"检查了 {sum(self.kinds.values())} 个文件（{kinds}）"


class Scanner:
    """Searches texts for a fixed set of fingerprints.

    A text is looked up only at every :attr:`step`-th position: each fingerprint's :data:`GRAM`-character pieces
    at its first ``step`` offsets are indexed, and an occurrence of a fingerprint always covers one looked-up
    position at one of those offsets (``step`` is the shortest fingerprint's length less ``GRAM - 1``).  Each hit
    of a piece is then compared with the whole fingerprint.
    """

    def __init__(self, fingerprints: Sequence[Fingerprint]) -> None:
        if not fingerprints:
            raise ValueError("没有任何私有材料的指纹：检查的对象不存在（solutions/、autograder/reference/ …）")
        shortest = min(len(f.text) for f in fingerprints)
        if shortest < GRAM:
            raise ValueError(f"指纹不得短于 {GRAM} 个字符")
        self.step = shortest - GRAM + 1
        self._pieces: dict[str, list[tuple[Fingerprint, int]]] = {}
        for f in fingerprints:
            for offset in range(self.step):
                self._pieces.setdefault(f.text[offset:offset + GRAM], []).append((f, offset))

    def find(self, text: str) -> list[tuple[Fingerprint, str]]:
        """The fingerprints found in ``text`` (each once), each with the squeezed text around it."""
        squeezed = squeeze(text)
        found: dict[str, tuple[Fingerprint, str]] = {}
        pieces = self._pieces
        for position in range(0, len(squeezed) - GRAM + 1, self.step):
            for f, offset in pieces.get(squeezed[position:position + GRAM], ()):
                start = position - offset
                if start >= 0 and f.text not in found and squeezed.startswith(f.text, start):
                    found[f.text] = (f, squeezed[max(0, start - 10):start + EXCERPT])
        return list(found.values())


def _files(paths: Iterable[Path]) -> Iterable[tuple[Path, str]]:
    for path in paths:
        if path.is_dir():
            for file in sorted(p for p in path.rglob("*") if p.is_file() or p.is_symlink()):
                yield file, str(file.relative_to(path.parent))
        else:
            yield path, path.name


def scan(paths: Iterable[Path], scanner: Scanner | None = None) -> ScanReport:
    """Scan every file under ``paths`` for the private material of this repository."""
    scanner = scanner or Scanner(private_fingerprints())
    kinds: Counter = Counter()
    leaks: list[Leak] = []
    unscanned: list[Unscanned] = []
    for path, name in _files(paths):
        if path.is_symlink():
            unscanned.append(Unscanned(name, "符号链接（公开的目录里只放普通文件）"))
            continue
        for artefact, text in artefact_texts(path, name):
            if isinstance(text, Unreadable):
                unscanned.append(Unscanned(artefact, text.reason))
            elif text is None:
                kinds["media"] += 1
            else:
                kinds[text.kind] += 1
                leaks += [Leak(artefact, f.category, f.source, excerpt) for f, excerpt in scanner.find(text.text)]
    return ScanReport(kinds, tuple(leaks), tuple(unscanned))


def print_report(report: ScanReport, out=None, limit: int = 50) -> None:
    """The report in Chinese (to ``out``, default standard output): what was read, then each leak and each unreadable file."""
    out = out or sys.stdout
    print(report.summary(), file=out)
    problems = [x.describe() for x in report.leaks] + [x.describe() for x in report.unscanned]
    for line in problems[:limit]:
        print("  " + line, file=out)
    if len(problems) > limit:
        print(f"  ……另有 {len(problems) - limit} 处", file=out)
    if report.clean:
        print("没有发现私有材料。", file=out)
    else:
        by_category = Counter(CATEGORY_NAMES[x.category] for x in report.leaks)
        what = "、".join(f"{name} {n} 处" for name, n in by_category.items())
        print(f"autograder: 公开材料中发现私有内容：{what or '无'}；无法检查的文件 {len(report.unscanned)} 个", file=out)


def add_parser(sub) -> None:
    """``autograder scan-public``."""
    p = sub.add_parser("scan-public", help="检查要公开的文件（网站、笔记本、PDF、仓库目录）中是否含有解答、隐藏测试、常见错误清单、"
                                           "参考实现源码或教师版内容；发现时退出码为 1")
    p.add_argument("paths", nargs="+", metavar="PATH", help="要检查的目录或文件")


def main(args: argparse.Namespace) -> int:
    missing = [p for p in args.paths if not Path(p).exists()]
    if missing:
        print(f"autograder: 找不到要检查的路径：{'、'.join(missing)}", file=sys.stderr)
        return 2
    report = scan([Path(p) for p in args.paths])
    print_report(report)
    return 0 if report.clean else 1
