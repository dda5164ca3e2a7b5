"""How learning-management systems name the files of a "download all submissions" archive.

Each rule reads the student's id from the part of the name the LMS wrote (never from a path or name the
student chose) and, where the LMS records it, when and in which order the file was submitted:

* Canvas: ``<name>_<userid>_<submissionid>_<file>``, ``<name>_late_<userid>_<submissionid>_<file>`` for a late
  submission; Canvas renames a re-uploaded file ``<stem>-1.ipynb``, ``<stem>-2.ipynb`` ...
* Moodle ("Download all submissions"): a folder ``<Full Name>_<participantid>_assignsubmission_file`` (older
  versions end it with ``_``) holding the student's files, or flat names
  ``<Full Name>_<participantid>_assignsubmission_file_<file>``;
* Blackboard: ``<Assignment>_<username>_attempt_<YYYY-MM-DD-HH-MM-SS>_<file>``, with a receipt
  ``<Assignment>_<username>_attempt_<YYYY-MM-DD-HH-MM-SS>.txt`` per attempt (``Name: Full Name (username)``,
  ``Original filename:`` / ``Filename:`` lines);
* generic names ``<id>_<file>`` and ``<id>_attempt_<date>_<file>`` (nbgrader's ``zip_collect`` style), or the
  instructor's own ``--collect-regexp`` with the named groups ``student_id``, ``file_id`` and ``timestamp``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime

SAFE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.@-]{0,99}")
DEFAULT_REGEXP = r"(?P<student_id>[A-Za-z0-9.@-]+)_(?:attempt_(?P<timestamp>[0-9][0-9T:\-]*[0-9])_)?(?P<file_id>.+)"

MOODLE_FOLDER = re.compile(r"(?P<name>[^_/]*)_(?P<id>\d+)_assignsubmission_(?P<plugin>[a-z]+)_?")
MOODLE_FLAT = re.compile(r"(?P<name>[^_/]*)_(?P<id>\d+)_assignsubmission_(?P<plugin>[a-z]+)_(?P<file>.+)")
CANVAS = re.compile(r"(?P<name>[^_]+?)_(?:(?P<late>[Ll][Aa][Tt][Ee])_)?(?P<id>\d+)_(?P<sub>\d+)_(?P<file>.+)")
CANVAS_REUPLOAD = re.compile(r"(?P<stem>.+)-(?P<n>\d+)(?P<ext>\.[^.]+)")
BLACKBOARD = re.compile(r"(?P<prefix>.+)_attempt_(?P<time>\d{4}-\d{2}-\d{2}-\d{2}-\d{2}-\d{2})(?:_(?P<file>.+)|(?P<receipt>\.txt))")
_DATE = re.compile(r"(\d{4})-?(\d{2})-?(\d{2})(?:[T_\- ](\d{2})[-:]?(\d{2})(?:[-:]?(\d{2}))?)?")


def valid_id(text: str) -> bool:
    """A student id that is safe as a folder name and a CSV cell (the whole string, no trailing newline)."""
    return SAFE_ID.fullmatch(text) is not None


def shown(text: str) -> str:
    """A file or folder name as it may be printed: quoted, control and escape characters escaped."""
    return repr(text)


def parse_time(text: str | None) -> datetime | None:
    """``2026-05-01-10-00-00``, ``2026-05-01T10-00-00``, ``2026-05-01`` ... as a (naive, local) datetime."""
    m = _DATE.fullmatch(text or "")
    if not m:
        return None
    try:
        return datetime(*(int(g) for g in m.groups() if g is not None))
    except ValueError:
        return None


@dataclass
class Naming:
    """What one file's name says: whose it is, the file's own name, and the LMS's order information."""

    lms: str                     # "canvas", "moodle", "blackboard", "regexp"
    student: str
    file: str                    # the file name the student uploaded (the LMS's renaming undone)
    submission: str              # files with the same value belong to one LMS submission (attempt)
    display_name: str = ""
    submitted: datetime | None = None   # from the name
    sequence: int | None = None         # Canvas submission id: later submissions have larger ids
    reupload: int = 0                   # Canvas "-N" suffix: a later upload within one submission
    late: bool | None = None
    receipt: bool = False               # Blackboard's .txt receipt: read, never graded


@dataclass
class Receipts:
    """Blackboard receipts, by ``<prefix>_attempt_<time>``: the username and original file names."""

    users: dict[str, str] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)
    originals: dict[str, str] = field(default_factory=dict)  # name in the archive -> original file name

    def read(self, key: str, text: str) -> None:
        m = re.search(r"^Name:\s*(.*?)\s*\(([^()\r\n]+)\)\s*$", text, re.M)
        if m:
            self.names[key], self.users[key] = m.group(1), m.group(2).strip()
        for orig, stored in re.findall(r"Original filename:\s*(.+?)\s*\r?\n\s*Filename:\s*(.+?)\s*$", text, re.M):
            self.originals[stored] = orig


def moodle_folder(name: str) -> re.Match | None:
    """A Moodle submission folder ``<Full Name>_<participantid>_assignsubmission_<plugin>[_]``."""
    return MOODLE_FOLDER.fullmatch(name)


def read_name(name: str, regexp: re.Pattern | None, receipts: Receipts) -> Naming | None:
    """What the LMS naming of a file at the top of a download says, or None when no rule fits."""
    if regexp is not None:
        got = _custom(name, regexp)
        if got:
            return got
    m = MOODLE_FLAT.fullmatch(name)
    if m:
        return Naming("moodle", m["id"], m["file"], f"moodle:{m['id']}", display_name=m["name"])
    m = BLACKBOARD.fullmatch(name)
    if m:
        key = f"{m['prefix']}_attempt_{m['time']}"
        user = receipts.users.get(key)
        if not (user and m["prefix"].endswith("_" + user)):
            user = m["prefix"].rsplit("_", 1)[-1] if "_" in m["prefix"] else ""
        file = receipts.originals.get(name, m["file"] or "")
        return Naming("blackboard", user, file, f"blackboard:{key}", display_name=receipts.names.get(key, user),
                      submitted=parse_time(m["time"]), receipt=bool(m["receipt"]))
    m = CANVAS.fullmatch(name)
    if m:
        file, reupload = m["file"], 0
        r = CANVAS_REUPLOAD.fullmatch(file)
        if r:
            file, reupload = r["stem"] + r["ext"], int(r["n"])
        return Naming("canvas", m["id"], file, f"canvas:{m['id']}:{m['sub']}", display_name=m["name"],
                      sequence=int(m["sub"]), reupload=reupload, late=bool(m["late"]))
    return _custom(name, re.compile(DEFAULT_REGEXP))


def _custom(name: str, regexp: re.Pattern) -> Naming | None:
    m = regexp.match(name)
    if not m or not m.groupdict().get("student_id"):
        return None
    groups = m.groupdict()
    file = groups.get("file_id") or name
    stamp = groups.get("timestamp")
    return Naming("regexp", groups["student_id"], file, f"regexp:{groups['student_id']}:{stamp or ''}:{file}",
                  submitted=parse_time(stamp))
