"""Submission downloads built the way each LMS names them (used by test_collect.py and test_lms_layouts.py).

* Canvas: ``<name>_<userid>_<submissionid>_<file>``, ``<name>_late_<userid>_<submissionid>_<file>``, a re-upload
  renamed ``<stem>-1.ipynb``;
* Moodle: ``<Full Name>_<participantid>_assignsubmission_file/<file>`` (``..._file_/`` before Moodle 4) or flat
  ``<Full Name>_<participantid>_assignsubmission_file_<file>``;
* Blackboard: ``<Assignment>_<username>_attempt_<YYYY-MM-DD-HH-MM-SS>_<file>`` plus the attempt's ``.txt`` receipt.
"""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
A1, NB1 = "ps1_threshold_metrics", "threshold_metrics.ipynb"
A2, NB2 = "ps2_roc_auc", "roc_auc.ipynb"


def solution(assignment: str = A1) -> bytes:
    """The instructor's notebook: full marks."""
    name = NB1 if assignment == A1 else NB2
    return (ROOT / "solutions" / assignment / name).read_bytes()


def untouched(assignment: str = A1) -> bytes:
    """The student version as released: no hidden points."""
    name = NB1 if assignment == A1 else NB2
    return (ROOT / "exercises" / assignment / name).read_bytes()


def variant(data: bytes, tag: str) -> bytes:
    """The same notebook with different bytes (a trailing newline and a tag in the JSON whitespace)."""
    return data.rstrip() + b"\n" + b" " * (1 + len(tag)) + b"\n"


def write_zip(path: Path, entries: dict[str, bytes | tuple[bytes, tuple]]) -> Path:
    """A zip with these entries in this order; a value ``(data, date_time)`` sets the entry's time."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, value in entries.items():
            data, when = value if isinstance(value, tuple) else (value, (2026, 5, 1, 12, 0, 0))
            zf.writestr(zipfile.ZipInfo(name, date_time=when), data)
    return path


def zip_symlink(path: Path, name: str, target: str) -> None:
    """Append a symbolic-link entry (as ``zip --symlinks`` stores it) to the zip at ``path``."""
    info = zipfile.ZipInfo(name, date_time=(2026, 5, 1, 12, 0, 0))
    info.create_system = 3
    info.external_attr = (0o120777 << 16)
    with zipfile.ZipFile(path, "a") as zf:
        zf.writestr(info, target)


def blackboard_receipt(name: str, user: str, assignment: str, when: str, files: list[tuple[str, str]]) -> bytes:
    """The text file Blackboard writes next to each attempt's files."""
    lines = [f"Name: {name} ({user})", f"Assignment: {assignment}", f"Date Submitted: {when}",
             "Current Mark: Needs Marking", "", "Submission Field:", "There is no student submission text data for this assignment.",
             "", "Comments:", "There are no student comments for this assignment.", "", "Files:"]
    for original, stored in files:
        lines += [f"\tOriginal filename: {original}", f"\tFilename: {stored}"]
    return ("\n".join(lines) + "\n").encode()


def write_file(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def symlink(path: Path, target: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, path)
