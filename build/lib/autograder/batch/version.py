"""What a grade depends on: the grader's version and a submission's fingerprint.

Used by ``autograder grade`` and by the grading service alike, so the gradebook's ledger means the same thing whichever of
the two wrote it.  A fingerprint hashes the grader version, the assignment source and the submitted bytes.
"""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1]


def grade_deciding_files() -> list[Path]:
    """The reference, the trusted checks (not how values are rendered as text) and the sandbox."""
    files = [f for d in ("reference", "check", "sandbox") for f in (PACKAGE / d).rglob("*.py")]
    return sorted(f for f in files if f != PACKAGE / "check" / "render.py")


@lru_cache(maxsize=1)
def grader_version() -> str:
    """Hash of :func:`grade_deciding_files` (paths and contents), computed once per process."""
    h = hashlib.sha256()
    for f in grade_deciding_files():
        h.update(f.relative_to(PACKAGE).as_posix().encode() + b"\0" + f.read_bytes())
    return h.hexdigest()[:16]


def fingerprint(source: bytes, notebook: bytes | None, version: str | None = None, notes: list[str] | None = None) -> str:
    """SHA-256 of the grader version, the assignment source, the submitted notebook's bytes and what collection
    tells the student about it (``notes``, e.g. an unexpected file name: part of the result)."""
    h = hashlib.sha256((version or grader_version()).encode())
    h.update(source)
    h.update(notebook if notebook is not None else b"<none>")
    if notes:
        h.update(json.dumps(notes, ensure_ascii=False).encode())
    return h.hexdigest()
