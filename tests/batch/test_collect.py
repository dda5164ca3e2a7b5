"""Collection without the sandbox: LMS naming, the latest attempt, odd file names, collisions, path traversal,
symbolic links, student ids, names printed to a terminal, grades.csv cells, scratch folders, the output lock."""

from __future__ import annotations

import csv
import os
import subprocess
import tempfile
import time
from datetime import datetime
from pathlib import Path

import pytest

from autograder.batch import jobs
from autograder.batch.collect import collect, shown, valid_id
from autograder.check import all_assignments
from autograder.commands import grade as grade_command
from autograder.commands import grading
from autograder.store.grades import GradeRow, write_grades_csv
from .lms_downloads import (A1, A2, NB1, NB2, blackboard_receipt, solution, symlink, untouched, variant,
                                 write_file, write_zip, zip_symlink)

A = all_assignments()


def run(root: Path, tmp_path: Path, **kw):
    c = collect(root, A, tmp_path / "work", **kw)
    subs = {(s.student, s.assignment): s for s in c.submissions}
    return subs, {n.file: n for n in c.not_graded}


def content(sub) -> bytes:
    return sub.notebook.read_bytes()


# -- Canvas ---------------------------------------------------------------------------------------------

def test_canvas_ids_late_mark_and_reupload_suffix(tmp_path):
    z = write_zip(tmp_path / "submissions.zip", {
        # later submission (larger id) listed first; Canvas renamed the re-uploaded file roc_auc-1.ipynb
        f"smithjohn_late_101_5002_{NB2[:-6]}-1.ipynb": solution(A2),
        f"smithjohn_101_5001_{NB2}": untouched(A2),
        f"张三_102_5003_{NB2}": solution(A2),
        "smithjohn_late_101_5002_notes.pdf": b"%PDF",
    })
    subs, ng = run(z, tmp_path)
    assert set(subs) == {("101", A2), ("102", A2)}
    s101 = subs["101", A2]
    assert content(s101) == solution(A2) and s101.late is True and s101.notes == []
    assert s101.display_name == "smithjohn" and s101.time_source == "zip_entry"
    assert subs["102", A2].display_name == "张三" and subs["102", A2].late is False
    assert not ng[f"submissions.zip:smithjohn_101_5001_{NB2}"].problem  # the older submission, set aside
    assert ng["submissions.zip:smithjohn_late_101_5002_notes.pdf"].problem
    assert "不是 .ipynb" in ng["submissions.zip:smithjohn_late_101_5002_notes.pdf"].reason


def test_canvas_reupload_within_one_submission_takes_the_newest(tmp_path):
    z = write_zip(tmp_path / "s.zip", {f"lili_7_900_{NB2}": untouched(A2), f"lili_7_900_{NB2[:-6]}-2.ipynb": solution(A2),
                                       f"lili_7_900_{NB2[:-6]}-1.ipynb": variant(untouched(A2), "x")})
    subs, ng = run(z, tmp_path)
    assert content(subs["7", A2]) == solution(A2)
    assert len(ng) == 2


# -- Moodle ---------------------------------------------------------------------------------------------

def test_moodle_folders_old_and_new_and_flat(tmp_path):
    z = write_zip(tmp_path / "COURSE-PS1-42.zip", {
        f"Li Si_201_assignsubmission_file/{NB1}": solution(),
        f"Wang Wu_202_assignsubmission_file_/{NB1}": untouched(),       # Moodle 3.x folder name
        f"Zhao Liu_203_assignsubmission_file_{NB1}": solution(),         # "download submissions in folders" off
        "Zhao Liu_203_assignsubmission_onlinetext_onlinetext.html": b"<p>hi</p>",
    })
    subs, ng = run(z, tmp_path)
    assert {k: content(v) for k, v in subs.items()} == {("201", A1): solution(), ("202", A1): untouched(),
                                                         ("203", A1): solution()}
    assert subs["201", A1].display_name == "Li Si"
    assert ng["COURSE-PS1-42.zip:Zhao Liu_203_assignsubmission_onlinetext_onlinetext.html"].problem


def test_moodle_folder_cannot_overwrite_another_students_submission(tmp_path):
    """A path inside one student's folder that looks like another student's never becomes that student's."""
    z = write_zip(tmp_path / "d.zip", {
        f"Bob_202_assignsubmission_file/{NB1}": solution(),
        f"Alice_201_assignsubmission_file/{NB1}": variant(solution(), "a"),
        f"Alice_201_assignsubmission_file/202/{A1}/{NB1}": untouched(),
        f"Carol_203_assignsubmission_file/202/{A1}/{NB1}": untouched(),
    })
    subs, ng = run(z, tmp_path)
    assert content(subs["202", A1]) == solution()  # Bob's own
    assert ("201", A1) not in subs  # two different candidates in Alice's folder: a collision, refused
    assert all("冲突" in ng[f"d.zip:Alice_201_assignsubmission_file/{p}"].reason for p in (NB1, f"202/{A1}/{NB1}"))
    assert content(subs["203", A1]) == untouched()  # Carol's only notebook is Carol's


def test_moodle_download_extracted_into_folders(tmp_path):
    """An extracted Moodle tree (the folder mode): a planted path naming another participant, a Moodle 3.x folder
    holding a notebook of any name, a flat file; times come from the files."""
    subs_dir = tmp_path / "COURSE-PS1-77"
    write_file(subs_dir / "Bob Li_202_assignsubmission_file" / NB1, solution())
    write_file(subs_dir / "Alice Wang_201_assignsubmission_file" / NB1, solution())
    write_file(subs_dir / "Alice Wang_201_assignsubmission_file" / "202" / A1 / NB1, untouched())
    write_file(subs_dir / "陈晨_203_assignsubmission_file_" / "我的作业.ipynb", solution())
    write_file(subs_dir / f"Dan Zhou_204_assignsubmission_file_{NB1}", untouched())
    subs, ng = run(subs_dir, tmp_path, selected={A1})
    assert {k: content(v) for k, v in subs.items()} == {("202", A1): solution(), ("203", A1): solution(), ("204", A1): untouched()}
    assert subs["202", A1].time_source == "file_mtime" and subs["204", A1].display_name == "Dan Zhou"
    assert "我的作业.ipynb" in subs["203", A1].notes[0]
    assert "冲突" in ng[f"Alice Wang_201_assignsubmission_file/202/{A1}/{NB1}"].reason


# -- Blackboard -----------------------------------------------------------------------------------------

def test_blackboard_latest_attempt_by_its_time_and_the_receipt(tmp_path):
    early, late = "2026-05-01-09-30-00", "2026-05-02-08-00-00"
    z = write_zip(tmp_path / "gradebook_PS1.zip", {
        # the newer attempt first in the archive, and its entry time older: only the name's time counts
        f"PS1 Threshold_j_doe_attempt_{late}_{NB1}": (solution(), (2020, 1, 1, 0, 0, 0)),
        f"PS1 Threshold_j_doe_attempt_{late}.txt": blackboard_receipt("Jane Doe", "j_doe", "PS1 Threshold", "x",
                                                                       [(NB1, f"PS1 Threshold_j_doe_attempt_{late}_{NB1}")]),
        f"PS1 Threshold_j_doe_attempt_{early}_{NB1}": untouched(),
        f"PS1 Threshold_j_doe_attempt_{early}.txt": blackboard_receipt("Jane Doe", "j_doe", "PS1 Threshold", "x", []),
    })
    subs, ng = run(z, tmp_path)
    s = subs["j_doe", A1]  # the username from the receipt (it contains "_")
    assert content(s) == solution() and s.submitted_at == datetime(2026, 5, 2, 8) and s.time_source == "lms_name"
    assert s.display_name == "Jane Doe"
    assert list(ng) == [f"gradebook_PS1.zip:PS1 Threshold_j_doe_attempt_{early}_{NB1}"]
    assert not ng[f"gradebook_PS1.zip:PS1 Threshold_j_doe_attempt_{early}_{NB1}"].problem


def test_blackboard_lateness_is_the_attempt_time_in_the_name_against_the_due_time(tmp_path):
    z = write_zip(tmp_path / "gradebook_PS1.zip", {
        f"PS1 Threshold metrics_jdoe_attempt_2026-05-02-08-00-00_{NB1}": solution(),
        f"PS1 Threshold metrics_mlee_attempt_2026-04-30-22-15-00_{NB1}": (solution(), (2026, 5, 9, 0, 0, 0)),
    })
    subs, ng = run(z, tmp_path, due={A1: datetime(2026, 5, 1, 23, 59)})
    assert subs["jdoe", A1].late is True and subs["mlee", A1].late is False  # the name's time, not the entry's
    assert subs["mlee", A1].time_source == "lms_name" and not ng


def test_one_assignment_graded_takes_a_submissions_only_notebook_whatever_its_name(tmp_path):
    z = write_zip(tmp_path / "bb.zip", {"PS2_wli_attempt_2026-05-01-10-00-00_作业二 王力.ipynb": solution(A2)})
    subs, ng = run(z, tmp_path, selected={A2})
    assert content(subs["wli", A2]) == solution(A2) and "作业二 王力.ipynb" in subs["wli", A2].notes[0]
    subs, ng = run(z, tmp_path)  # all assignments: the name does not say which one
    assert not subs and ng["bb.zip:PS2_wli_attempt_2026-05-01-10-00-00_作业二 王力.ipynb"].problem


# -- generic names, folders and zips together -----------------------------------------------------------

def test_attempt_reupload_beats_a_plain_first_upload(tmp_path):
    z = write_zip(tmp_path / "d.zip", {f"s002_attempt_2026-05-01T10-00-00_{NB1}": solution(),
                                       f"s002_{NB1}": untouched()})  # plain name sorts last (old code: last wins)
    subs, ng = run(z, tmp_path)
    assert content(subs["s002", A1]) == solution()
    assert not ng[f"d.zip:s002_{NB1}"].problem and "较早" in ng[f"d.zip:s002_{NB1}"].reason


def test_folder_layout_next_to_a_zip_is_collected_too(tmp_path):
    write_file(tmp_path / "subs" / "s001" / A1 / NB1, solution())
    write_zip(tmp_path / "subs" / "lms.zip", {f"s002_{NB1}": solution()})
    subs, ng = run(tmp_path / "subs", tmp_path)
    assert set(subs) == {("s001", A1), ("s002", A1)} and not ng


def test_browser_renamed_notebook_is_the_answer_with_a_note(tmp_path):
    write_file(tmp_path / "s" / "s001" / A2 / "roc_auc (1).ipynb", solution(A2))
    write_file(tmp_path / "s" / "s002" / A2 / "我的作业.ipynb", solution(A2))
    write_file(tmp_path / "s" / "s003" / A2 / "a.ipynb", solution(A2))
    write_file(tmp_path / "s" / "s003" / A2 / "b.ipynb", untouched(A2))
    write_file(tmp_path / "s" / "s004" / A2 / "answer.py", b"print(1)")
    subs, ng = run(tmp_path / "s", tmp_path)
    assert content(subs["s001", A2]) == solution(A2) and "'roc_auc (1).ipynb'" in subs["s001", A2].notes[0]
    assert content(subs["s002", A2]) == solution(A2) and "唯一的笔记本" in subs["s002", A2].notes[0]
    assert ("s003", A2) not in subs and ng[f"s003/{A2}/a.ipynb"].problem and ng[f"s003/{A2}/b.ipynb"].problem
    assert subs["s004", A2].notebook is None and ng[f"s004/{A2}/answer.py"].problem  # graded 0, file reported


def test_copies_that_cannot_be_ordered_are_a_collision(tmp_path):
    write_file(tmp_path / "s" / "s001" / A1 / NB1, solution())
    write_zip(tmp_path / "s" / "more.zip", {f"s001/{A1}/{NB1}": untouched(), f"s002/{A1}/{NB1}": solution()})
    write_file(tmp_path / "s" / "s002" / A1 / NB1, solution())  # the same bytes: not a collision
    subs, ng = run(tmp_path / "s", tmp_path)
    assert ("s001", A1) not in subs
    assert "冲突" in ng[f"s001/{A1}/{NB1}"].reason and "冲突" in ng[f"more.zip:s001/{A1}/{NB1}"].reason
    assert content(subs["s002", A1]) == solution()
    copies = [ng[k] for k in (f"more.zip:s002/{A1}/{NB1}", f"s002/{A1}/{NB1}") if k in ng]
    assert len(copies) == 1 and not copies[0].problem and "内容相同" in copies[0].reason


def test_laid_out_only_at_the_top(tmp_path):
    write_file(tmp_path / "s" / "inbox" / "s009" / A1 / NB1, solution())
    write_file(tmp_path / "s" / "s001" / A1 / "old" / NB1, solution())
    subs, ng = run(tmp_path / "s", tmp_path)
    assert list(subs) == [("s001", A1)] and subs["s001", A1].notebook is None  # graded as "nothing submitted"
    assert ng[f"inbox/s009/{A1}/{NB1}"].problem and ng[f"s001/{A1}/old/{NB1}"].problem


def test_unselected_assignments_are_left_out_silently(tmp_path):
    write_file(tmp_path / "s" / "s001" / A1 / NB1, solution())
    write_file(tmp_path / "s" / "s001" / A2 / NB2, solution(A2))
    subs, ng = run(tmp_path / "s", tmp_path, selected={A2})
    assert set(subs) == {("s001", A2)} and not ng


# -- unsafe input ---------------------------------------------------------------------------------------

def test_zip_paths_outside_the_scratch_folder_are_refused(tmp_path):
    z = write_zip(tmp_path / "evil.zip", {f"../{NB1}": solution(), f"/tmp/{NB1}": solution(),
                                          f"s001/../../{NB1}": solution(), f"C:/x/{NB1}": solution(),
                                          f"..\\..\\s001_{NB1}": solution(), f"s002_{NB1}": solution()})
    zip_symlink(z, f"s003_{NB1}", "/etc/passwd")
    subs, ng = run(z, tmp_path)
    assert set(subs) == {("s002", A1)}
    assert sum(n.problem for n in ng.values()) == 6
    assert "符号链接" in ng[f"evil.zip:s003_{NB1}"].reason and "不安全的路径" in ng[f"evil.zip:../{NB1}"].reason
    assert {p.name for p in tmp_path.iterdir()} == {"evil.zip", "work"}
    assert all(p.parent == tmp_path / "work" for p in (tmp_path / "work").rglob("*"))


def test_a_file_named_for_no_student_is_reported_as_such(tmp_path):
    z = write_zip(tmp_path / "downloads.zip", {"readme.txt": b"not a notebook", f"s001_{NB1}": solution()})
    subs, ng = run(z, tmp_path)
    assert set(subs) == {("s001", A1)}
    assert ng["downloads.zip:readme.txt"].problem and ng["downloads.zip:readme.txt"].reason.startswith("无法从文件名识别学生")


def test_symlinks_are_never_followed(tmp_path):
    subs_dir = tmp_path / "s"
    write_file(subs_dir / "s001" / A1 / NB1, untouched())
    symlink(subs_dir / "s002", subs_dir / "s001")                         # a classmate's folder
    symlink(subs_dir / "s003" / A1, Path(__file__).resolve().parents[2] / "solutions" / A1)  # the solutions
    symlink(subs_dir / "s004" / A1 / NB1, subs_dir / "s001" / A1 / NB1)  # a file
    subs, ng = run(subs_dir, tmp_path)
    assert set(subs) == {("s001", A1), ("s004", A1)}
    assert subs["s004", A1].notebook is None  # its folder holds nothing gradable: "nothing submitted", and the link reported
    for link in ("s002", f"s003/{A1}", f"s004/{A1}/{NB1}"):
        assert "符号链接" in ng[link].reason and ng[link].problem


def test_student_ids_are_checked_whole(tmp_path):
    assert valid_id("s001") and valid_id("a.b@c-d_1")
    for bad in ("s001\n", "s001\r", "\ns001", "s001 ", "../s001", "-s001", "", "x" * 101, "张三"):
        assert not valid_id(bad), repr(bad)
    write_file(tmp_path / "s" / "s001\n" / A1 / NB1, solution())
    subs, ng = run(tmp_path / "s", tmp_path)
    assert not subs and ng[f"s001\n/{A1}/{NB1}"].problem


def test_names_are_escaped_for_the_terminal():
    evil = "s001_\x1b]0;owned\x07\x1b[2J\u202e.ipynb\n[1/1] fake"
    text = shown(evil)
    assert all(ch not in text for ch in "\x1b\x07\n\u202e")
    assert "\\x1b" in text and "\\n" in text and shown("张三 (1).ipynb") == "'张三 (1).ipynb'"


def test_not_graded_list_is_printed_escaped(tmp_path, capsys):
    write_file(tmp_path / "s" / "s001\x1b[31m" / A1 / NB1, solution())
    c = collect(tmp_path / "s", A, tmp_path / "work")
    assert grade_command._report_not_graded(c) == 1
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\\x1b[31m" in err and "未评分的文件（1 个" in err


# -- grades.csv, scratch folders, the output lock --------------------------------------------------------

def test_grades_csv_columns_and_cells(tmp_path):
    rows = [GradeRow("s2", "=HYPERLINK(\"x\")", A1, 54.0, 54.0, datetime(2026, 5, 1, 9, 5), "lms_name", True, "a.zip:x"),
            GradeRow("s1", "", A1, 3.5, 54.0, None, "", None, "")]
    write_grades_csv(tmp_path / "grades.csv", rows)
    got = list(csv.DictReader((tmp_path / "grades.csv").open(encoding="utf-8")))
    assert [r["student_id"] for r in got] == ["s1", "s2"]
    assert got[0] == {"student_id": "s1", "student_name": "", "assignment": A1, "score": "3.5", "max_score": "54",
                      "submitted_at": "", "time_source": "", "late": "", "file": ""}
    assert got[1]["student_name"].startswith("'=") and got[1]["submitted_at"] == "2026-05-01 09:05:00"
    assert got[1]["late"] == "yes"


def test_scratch_sweep_removes_only_folders_of_dead_processes(tmp_path):
    live = Path(tempfile.mkdtemp(prefix=jobs.JOB_PREFIX, dir=tmp_path))
    fd = jobs._hold(live)
    dead = Path(tempfile.mkdtemp(prefix=jobs.JOB_PREFIX, dir=tmp_path))
    os.close(jobs._hold(dead))  # its process is gone: the lock is free
    (dead / "source.ipynb").write_text("{}")
    old = Path(tempfile.mkdtemp(prefix=jobs.JOB_PREFIX, dir=tmp_path))  # an older grader's folder, no lock file
    os.utime(old, (time.time() - 1000, time.time() - 1000))
    young = Path(tempfile.mkdtemp(prefix=jobs.JOB_PREFIX, dir=tmp_path))
    creating = Path(tempfile.mkdtemp(prefix=f"{jobs.JOB_PREFIX}{os.getpid()}-", dir=tmp_path))  # no lock yet
    dead_pid = _dead_pid()
    killed_early = Path(tempfile.mkdtemp(prefix=f"{jobs.JOB_PREFIX}{dead_pid}-", dir=tmp_path))  # died before locking
    other = tmp_path / "unrelated"
    other.mkdir()
    try:
        removed = jobs.sweep_scratch(str(tmp_path), max_age=300)
        assert sorted(removed) == sorted([dead.name, old.name, killed_early.name])
        assert live.is_dir() and young.is_dir() and creating.is_dir() and other.is_dir()
        assert (live.stat().st_mode & 0o777) == 0o700
    finally:
        os.close(fd)


def _dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def test_job_folder_is_private_while_grading_and_removed_after(tmp_path, monkeypatch):
    import autograder.check as check
    from autograder.model import SubmissionResult

    seen = {}

    def fake_grade(assignment, source, submission, student, **kw):
        seen["mode"] = source.parent.stat().st_mode & 0o777
        seen["files"] = sorted(p.name for p in source.parent.iterdir())
        return SubmissionResult(student, assignment.name, 0.0, 1.0, {}, []), 0.0

    monkeypatch.setattr(check, "grade_with_timing", fake_grade)
    monkeypatch.setattr(jobs, "_SWEPT", True)
    job = jobs.make_job("s001", A1, "threshold_metrics", None, Path(__file__), "fp", sandbox=False,
                        limits=jobs.Limits(), scratch=str(tmp_path))
    jobs.grade_job(job.to_json())
    assert seen == {"mode": 0o700, "files": [".lock", "source.ipynb"]}
    assert list(tmp_path.iterdir()) == []


def test_second_run_on_the_same_output_folder_is_refused(tmp_path):
    fd = grade_command.lock_output(tmp_path)
    try:
        with pytest.raises(grade_command.CannotGrade, match=f"进程 {os.getpid()}.*正在使用输出目录"):
            grade_command.lock_output(tmp_path)
    finally:
        os.close(fd)
    os.close(grade_command.lock_output(tmp_path))  # free again once the first run ended


def test_unreadable_generation_stamps_mean_generate_again(tmp_path):
    stamps = tmp_path / "generated.json"
    db = tmp_path / "gradebook.db"
    db.write_bytes(b"")
    stamps.write_text('{"ps1_threshold_metrics": "ab', encoding="utf-8")  # cut short by a kill
    assert grading.read_stamps(stamps, f"sqlite:///{db}") == {}
    stamps.write_text('{"ps1_threshold_metrics": "ab"}', encoding="utf-8")
    assert grading.read_stamps(stamps, f"sqlite:///{db}") == {"ps1_threshold_metrics": "ab"}
    db.unlink()  # the gradebook was deleted: nothing in it is generated
    assert grading.read_stamps(stamps, f"sqlite:///{db}") == {}
