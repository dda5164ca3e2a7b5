"""``make book``: ``jupyter-book build`` with a closing note that sends the reader to the right address.

Jupyter Book ends a build with a box that suggests opening ``_build/html/index.html`` or pasting a
``file://`` address into the browser.  Opened that way the course half works (a browser keeps scripts
from reading the search index from a file): it is served over HTTP, by ``make serve``.  This command runs
the build as it is, passes everything it prints through except that box, and ends with where the site is
and how to open it.  The build's exit status is the command's.

``python -m coursebook.book_build [jupyter-book build options...]``
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from .deployment import ROOT

#: The lines of Jupyter Book's closing box: its ruler (coloured) and the first line of its text.
RULER = re.compile(r"^(?:\x1b\[[0-9;]*m)?={20,}(?:\x1b\[[0-9;]*m)?\s*$")
BOX_START = "Finished generating HTML for book"


def _without_closing_box(lines) -> bool:
    """Pass lines through, dropping the box that starts with :data:`BOX_START`; True if it was there."""
    held: list[str] = []
    skipping = dropped = False
    for line in lines:
        if skipping:
            if RULER.match(line):
                skipping = False
            continue
        if held:
            if not line.strip():
                held.append(line)
                continue
            if line.startswith(BOX_START):
                held, skipping, dropped = [], True, True
                continue
            sys.stdout.writelines(held)
            held = []
        if RULER.match(line):
            held = [line]
            continue
        sys.stdout.write(line)
    sys.stdout.writelines(held)
    return dropped


def main(argv: list[str] | None = None) -> int:
    """Run the build; return its exit status."""
    args = sys.argv[1:] if argv is None else argv
    jupyter_book = Path(sys.executable).parent / "jupyter-book"
    proc = subprocess.Popen([str(jupyter_book), "build", ".", *args], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, errors="replace", bufsize=1)
    assert proc.stdout is not None
    dropped = _without_closing_box(proc.stdout)
    code = proc.wait()
    sys.stdout.flush()
    if code == 0 and dropped:
        print("\n构建完成。请用 make serve 经由 HTTP 打开课本（直接打开 HTML 文件时，搜索等功能不可用）。")
    return code


if __name__ == "__main__":
    sys.exit(main())
