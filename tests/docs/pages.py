"""The guides' sources as the tests read them: code blocks with their captions, labels, and the built site."""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
TUTORIAL = DOCS / "instructors" / "tutorial.md"
#: Where ``make guide`` writes the guides: beside the book's pages, so that each links to the other.
GUIDE_HTML = REPO / "_build" / "html" / "guide"

FENCE = re.compile(r"^(?P<fence>`{3,})\{code-block\}\s+(?P<language>\S+)\s*$")
OPTION = re.compile(r"^:(?P<name>[\w-]+):\s*(?P<value>.*)$")
LABEL = re.compile(r"^\((?P<label>[\w-]+)\)=\s*$")


@dataclass(frozen=True)
class Block:
    """A ``{code-block}`` of a page: its language, caption, text (exactly as written) and first line."""

    language: str
    caption: str
    text: str
    line: int


def code_blocks(path: Path) -> list[Block]:
    """Every ``{code-block}`` directive of a MyST page, in page order (options, then a blank line, then the code)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        start = FENCE.match(lines[i])
        if not start:
            i += 1
            continue
        options: dict[str, str] = {}
        j = i + 1
        while j < len(lines) and (option := OPTION.match(lines[j])):
            options[option["name"]] = option["value"].strip()
            j += 1
        if j < len(lines) and not lines[j].strip():
            j += 1
        end = next(k for k in range(j, len(lines)) if lines[k].strip() == start["fence"])
        blocks.append(Block(start["language"], options.get("caption", ""), "\n".join(lines[j:end]) + "\n", i + 1))
        i = end + 1
    return blocks


def label_line(path: Path, label: str) -> int:
    """The line of the target ``(label)=`` in a MyST page."""
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        found = LABEL.match(line)
        if found and found["label"] == label:
            return number
    raise AssertionError(f"{path.name} has no target ({label})=")


def build_guide(out: Path, doctrees: Path) -> subprocess.CompletedProcess:
    """The guides built as ``make guide`` builds them (warnings are errors, nitpicky) into ``out``."""
    return subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-n", "-q", "-b", "html",
                           "-d", str(doctrees), str(DOCS), str(out)],
                          cwd=REPO, capture_output=True, text=True, timeout=900)
