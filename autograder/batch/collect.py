"""Which notebook is each student's answer to each assignment, and why every other file is not graded.

Layouts (any mix of them, in a folder, in ``*.zip`` files at its top, or in one zip given directly):

* ``<student_id>/<assignment>/<notebook>.ipynb`` (exactly that depth from the top of the folder or archive);
* the downloads of Canvas, Moodle and Blackboard, and generic ``<id>_<file>`` names (:mod:`.lms`).

Rules:

* a student's id comes only from what the instructor or the LMS wrote: the top-level folder name of the
  folder layout, the id part of a Moodle folder or of an LMS file name; never from deeper paths;
* within one submission (an assignment folder, a Moodle folder, an LMS attempt) the notebook named exactly
  ``<notebook>.ipynb`` is the answer; else one whose name differs only by a copy suffix (``roc_auc (1).ipynb``,
  ``ROC_AUC.ipynb``); else the submission's only notebook, whatever its name (in the folder layout, or when one
  assignment is graded); the feedback then says which file was graded;
* of several submissions of one student for one assignment the latest counts: by the time in the LMS name
  (Blackboard, ``attempt_<date>``), else by Canvas's submission id; a submission without such information
  never overrides one with it; two different notebooks that cannot be ordered are a collision: neither is
  graded, both are reported;
* symbolic links, devices, unsafe archive paths, invalid ids: refused and reported;
* every file that is not graded is returned with its reason: :attr:`NotGraded.problem` is False only for
  files set aside on purpose (an older attempt, an identical copy, files an operating system adds).
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass, field
from functools import cached_property
from datetime import datetime
from pathlib import Path

from ..check.specs import Assignment
from . import lms, sources
from .lms import DEFAULT_REGEXP, shown, valid_id

__all__ = ["Submission", "NotGraded", "Collection", "collect", "DEFAULT_REGEXP", "valid_id", "shown"]

JUNK_FOLDERS = {"__MACOSX", ".ipynb_checkpoints"}
JUNK_FILES = {".DS_Store", "Thumbs.db", "desktop.ini"}
_COPY_SUFFIX = re.compile(r"(?:\s*\(\d+\)|\s*-\s*(?:副本|copy)(?:\s*\(\d+\))?|\s+copy|_copy)+$", re.I)


@dataclass
class Submission:
    """One student's answer to one assignment (``notebook`` None: the assignment folder holds no notebook)."""

    student: str
    assignment: str
    notebook: Path | None
    file: str = ""                      # where the graded file was found (as in the download)
    notes: list[str] = field(default_factory=list)  # for the student's feedback
    display_name: str = ""              # the name the LMS gives the student
    submitted_at: datetime | None = None
    time_source: str = ""               # "lms_name", "zip_entry" or "file_mtime"
    late: bool | None = None


@dataclass(frozen=True)
class NotGraded:
    """A file that is not graded, and why; ``problem`` False: set aside on purpose."""

    file: str
    reason: str
    problem: bool = True

    def to_json(self) -> dict:
        return {"file": self.file, "reason": self.reason, "problem": self.problem}


@dataclass
class Collection:
    submissions: list[Submission]
    not_graded: list[NotGraded]

    @property
    def problems(self) -> list[NotGraded]:
        return [n for n in self.not_graded if n.problem]


@dataclass
class _File:
    item: sources.Item
    uploaded: str          # the file's name as the student uploaded it
    reupload: int = 0

    @cached_property
    def digest(self) -> str:
        return hashlib.sha256(self.item.path.read_bytes()).hexdigest() if self.item.path else ""


@dataclass
class _Attempt:
    """One submission as the download groups it."""

    student: str
    lms: str
    assignment: str | None = None      # the folder layout's assignment folder
    display_name: str = ""
    submitted: datetime | None = None
    sequence: int | None = None
    late: bool | None = None
    files: list[_File] = field(default_factory=list)

    def order(self) -> tuple:
        if self.submitted is not None:
            return (2, self.submitted)
        if self.sequence is not None:
            return (1, self.sequence)
        return (0, 0)


@dataclass
class _Pick:
    attempt: _Attempt
    file: _File | None
    note: str = ""


def _stem_key(name: str) -> str | None:
    """A notebook file name without copy suffixes, case folded; None for other files."""
    norm = unicodedata.normalize("NFKC", name).strip()
    if not norm.lower().endswith(".ipynb"):
        return None
    return _COPY_SUFFIX.sub("", norm[:-6].strip()).strip().casefold()


def is_late(submitted_at: datetime, deadline: datetime) -> bool:
    """The lateness rule (batch and service alike): a submission is on time up to and including its deadline."""
    return submitted_at > deadline


def collect(root: Path, assignments: dict[str, Assignment], work: Path, *, selected: set[str] | None = None,
            regexp: str | None = None, due: dict[str, datetime] | None = None) -> Collection:
    """Every submission under ``root`` and every file that is not graded, with its reason.

    Parameters
    ----------
    root : Path
        The submissions folder, or one zip file.
    assignments : dict
        Every assignment the grader knows (names are recognised even when not graded this time).
    work : Path
        Scratch folder for notebooks read from archives (emptied first).
    selected : set of str, optional
        The assignments graded in this run (default all); submissions of others are left out silently.
    regexp : str, optional
        The instructor's own file-name pattern (named groups ``student_id``, ``file_id``, ``timestamp``).
    due : dict, optional
        Deadline per assignment: a submission after it is late (Canvas's own "late" mark wins).
    """
    selected = set(assignments) if selected is None else set(selected)
    pattern = re.compile(regexp) if regexp else None
    not_graded: list[NotGraded] = []
    items: list[sources.Item] = []
    for found in sources.walk(root, work):
        if isinstance(found, sources.Refused):
            not_graded.append(NotGraded(found.shown, found.reason))
        else:
            items.append(found)
    receipts = lms.Receipts()
    for it in items:
        m = lms.BLACKBOARD.fullmatch(it.name) if len(it.parts) == 1 and it.path else None
        if m and m["receipt"]:
            receipts.read(f"{m['prefix']}_attempt_{m['time']}", it.path.read_text(encoding="utf-8", errors="replace"))
    attempts: dict[tuple, _Attempt] = {}
    for it in items:
        _classify(it, assignments, pattern, receipts, attempts, not_graded)

    by_key: dict[tuple[str, str], list[_Pick]] = {}
    for att in attempts.values():
        for name, pick in _resolve(att, assignments, selected, not_graded).items():
            by_key.setdefault((att.student, name), []).append(pick)
    subs = []
    for (student, name), picks in sorted(by_key.items()):
        if name not in selected:
            continue
        sub = _latest(student, name, picks, assignments[name], not_graded)
        if sub is not None:
            if sub.late is None and due and name in due and sub.submitted_at is not None:
                sub.late = is_late(sub.submitted_at, due[name])
            subs.append(sub)
    return Collection(subs, not_graded)


def _classify(it: sources.Item, assignments, pattern, receipts, attempts, not_graded) -> None:
    """Put one file into the submission (attempt) it belongs to, or report it."""
    parts = it.parts
    if any(p in JUNK_FOLDERS for p in parts[:-1]) or parts[-1] in JUNK_FILES or (it.is_dir and parts[-1] in JUNK_FOLDERS):
        if not it.is_dir:
            not_graded.append(NotGraded(it.shown, "操作系统或 Jupyter 自动生成的文件", problem=False))
        return
    if it.is_dir:
        if len(parts) == 2 and valid_id(parts[0]) and parts[1] in assignments:
            attempts.setdefault((it.tree, "folder", parts[0], parts[1]), _Attempt(parts[0], "folder", parts[1]))
        return
    if len(parts) == 1:
        naming = lms.read_name(parts[0], pattern, receipts)
        if naming is None:
            not_graded.append(NotGraded(it.shown, "无法从文件名识别学生（不是 Canvas、Moodle 或 Blackboard 的命名，"
                                                  "也不符合 --collect-regexp）"))
            return
        if naming.receipt:
            return
        if not valid_id(naming.student):
            not_graded.append(NotGraded(it.shown, f"文件名中的学生编号 {shown(naming.student)} 不合法"))
            return
        att = attempts.setdefault((it.tree, naming.submission), _Attempt(
            naming.student, naming.lms, display_name=naming.display_name, submitted=naming.submitted,
            sequence=naming.sequence, late=naming.late))
        att.files.append(_File(it, naming.file, naming.reupload))
        return
    top = lms.moodle_folder(parts[0])
    if top:
        att = attempts.setdefault((it.tree, "moodle", parts[0]), _Attempt(top["id"], "moodle", display_name=top["name"]))
        att.files.append(_File(it, parts[-1]))
        return
    if not valid_id(parts[0]):
        not_graded.append(NotGraded(it.shown, f"所在文件夹 {shown(parts[0])} 既不是合法的学号，也不是 Moodle 的提交文件夹"))
    elif parts[1] not in assignments:
        not_graded.append(NotGraded(it.shown, f"{shown(parts[1])} 不是作业文件夹（应为 {'、'.join(assignments)} 之一）"))
    elif len(parts) == 2:
        not_graded.append(NotGraded(it.shown, "直接放在学生文件夹中，不在作业文件夹里"))
    elif len(parts) > 3:
        not_graded.append(NotGraded(it.shown, "在作业文件夹的子文件夹中（只评直接放在作业文件夹中的笔记本）"))
    else:
        att = attempts.setdefault((it.tree, "folder", parts[0], parts[1]), _Attempt(parts[0], "folder", parts[1]))
        att.files.append(_File(it, parts[-1]))


def _resolve(att: _Attempt, assignments: dict[str, Assignment], selected: set[str],
             not_graded: list[NotGraded]) -> dict[str, _Pick]:
    """The answer to each assignment within one submission; reports the other files of the submission."""
    candidates, unmatched = _candidates(att, assignments, selected, not_graded)
    picks: dict[str, _Pick] = {}
    for target, cands in candidates.items():
        pick = _pick(att, f"{assignments[target].notebook}.ipynb", cands, not_graded)
        if pick is not None:
            picks[target] = pick
    for f in unmatched:
        known = "、".join(f"{a.notebook}.ipynb" for a in assignments.values())
        if att.assignment is not None:
            why = f"作业文件夹中另有笔记本，但都不叫 {assignments[att.assignment].notebook}.ipynb，无法判断哪个是答案"
        elif len(selected) == 1 and att.lms != "regexp":
            why = "这份提交中有多个笔记本，文件名都不是本次作业的笔记本名，无法判断哪个是答案"
        else:
            why = f"文件名不对应任何作业的笔记本（{known}）；只评一次作业时可用 --assignment 指定"
        not_graded.append(NotGraded(f.item.shown, why))
    if att.assignment is not None and not any(_stem_key(f.uploaded) for f in att.files):
        picks[att.assignment] = _Pick(att, None)  # graded as "nothing submitted", with that feedback
    return picks


def _candidates(att: _Attempt, assignments: dict[str, Assignment], selected: set[str],
                not_graded: list[NotGraded]) -> tuple[dict[str, list[tuple[int, _File]]], list[_File]]:
    """The submission's notebooks that may answer each assignment, with how well their names fit (2: exactly the
    assignment's notebook name, 1: the same apart from copy suffixes and case, 0: the only notebook where one
    assignment is asked for), and the notebooks that fit none; files that are no notebook are reported."""
    by_stem = {a.notebook.casefold(): name for name, a in assignments.items()}
    candidates: dict[str, list[tuple[int, _File]]] = {}
    unmatched: list[_File] = []
    for f in att.files:
        key = _stem_key(f.uploaded)
        if key is None:
            why = "学生上传的压缩包不会被解开" if f.uploaded.lower().endswith(".zip") else "不是 .ipynb 笔记本"
            not_graded.append(NotGraded(f.item.shown, why))
            continue
        target = att.assignment if att.assignment is not None else by_stem.get(key)
        if target is None or key != assignments[target].notebook.casefold():
            unmatched.append(f)
            continue
        quality = 2 if f.uploaded == f"{assignments[target].notebook}.ipynb" else 1
        candidates.setdefault(target, []).append((quality, f))
    if att.assignment is not None and not candidates.get(att.assignment) and len(unmatched) == 1:
        candidates[att.assignment] = [(0, unmatched.pop())]
    elif att.assignment is None and att.lms != "regexp" and not candidates and len(unmatched) == 1 and len(selected) == 1:
        candidates[next(iter(selected))] = [(0, unmatched.pop())]
    return candidates, unmatched


def _pick(att: _Attempt, nb: str, cands: list[tuple[int, _File]], not_graded: list[NotGraded]) -> _Pick | None:
    """The candidate that answers the assignment whose notebook is ``nb``: the best fitting name, the newest re-upload;
    None when different notebooks tie (a conflict: none is graded).  The others are reported."""
    best = max(q for q, _ in cands)
    top = [f for q, f in cands if q == best]
    newest = max(f.reupload for f in top)
    chosen = [f for f in top if f.reupload == newest]
    if len({f.digest for f in chosen}) > 1:
        for f in chosen:
            not_graded.append(NotGraded(f.item.shown, f"冲突：同一份提交中有多个不同的笔记本都可能是 {nb}"
                                                      f"（{'、'.join(shown(g.item.shown) for g in chosen if g is not f)}），都不评分"))
        for q, f in cands:
            if all(f is not g for g in chosen):
                not_graded.append(NotGraded(f.item.shown, f"同一份提交中还有其他 {nb} 的候选（见冲突）"))
        return None
    winner = chosen[0]
    note = ""
    if best < 2:
        note = f"提交的文件名是 {shown(winner.uploaded)}，不是 {nb}"
        note += "；已按这个文件评分。" if best == 1 else "；它是这份提交中唯一的笔记本，已按它评分。"
    for q, f in cands:
        if f is not winner:
            same = f.digest == winner.digest
            why = (f"与同一份提交中的 {shown(winner.item.shown)} 内容相同" if same
                   else f"同一份提交中的 {shown(winner.item.shown)} 更符合作业笔记本名 {nb}，已按它评分")
            not_graded.append(NotGraded(f.item.shown, why, problem=not same))
    return _Pick(att, winner, note)


def _latest(student: str, name: str, picks: list[_Pick], assignment: Assignment,
            not_graded: list[NotGraded]) -> Submission | None:
    """The submission that counts among one student's submissions of one assignment."""
    real = [p for p in picks if p.file is not None]
    if not real:
        return Submission(student, name, None)
    best = max(p.attempt.order() for p in real)
    top = [p for p in real if p.attempt.order() == best]
    digests = {p.file.digest for p in top}
    if len(digests) > 1:
        for p in top:
            others = "、".join(shown(q.file.item.shown) for q in top if q is not p)
            not_graded.append(NotGraded(p.file.item.shown, f"冲突：学生 {student} 的 {name} 还有内容不同、无法判断先后的提交"
                                                          f"（{others}），都不评分"))
        for p in real:
            if all(p is not q for q in top):
                not_graded.append(NotGraded(p.file.item.shown, f"学生 {student} 的 {name} 较早的提交（更晚的提交有冲突）"))
        return None
    winner = top[0]
    for p in real:
        if p is winner:
            continue
        if any(p is q for q in top):
            why = f"与 {shown(winner.file.item.shown)} 内容相同"
        else:
            why = f"较早的提交：学生 {student} 的 {name} 按更晚的 {shown(winner.file.item.shown)} 评分"
        not_graded.append(NotGraded(p.file.item.shown, why, problem=False))
    att, item = winner.attempt, winner.file.item
    if att.submitted is not None:
        when, source = att.submitted, "lms_name"
    else:
        when, source = item.mtime, ("zip_entry" if item.in_zip else "file_mtime") if item.mtime else ""
    return Submission(student, name, item.path, file=item.shown, notes=[winner.note] if winner.note else [],
                      display_name=att.display_name, submitted_at=when, time_source=source, late=att.late)
