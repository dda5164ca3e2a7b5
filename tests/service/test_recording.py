"""Recording a result through the grading loop: one story at every moment.

The real :meth:`~autograder.service.dispatcher.Dispatcher._record` (the step of the grading loop that takes a
finished job) records stub results into the in-process site (:mod:`.inprocess`).  Its gradebook writer looks at
what the service shows at the moment the gradebook's copy is written - the step that came between the result
and the counting choice, when a submission was ``graded`` through the API while ``grades.csv`` still gave the
previous counting score (a clean-clone run of the LTI end-to-end test saw it for 116 ms).
"""

from __future__ import annotations

import csv
import io
import json

import pytest

from autograder.batch.jobs import Job
from autograder.model import Limits
from autograder.service import counting
from autograder.service.failures import Failure
from autograder.service.dispatcher import Dispatcher, Lane

from autograder.service.courses import UPGRADED

from .inprocess import REPO, A, GradebookStub, Site, solution_bytes, stub_result, upload

COURSE = UPGRADED.id

A1 = "ps1_threshold_metrics"


@pytest.fixture
def site(tmp_path):
    s = Site(tmp_path, {"assignments": {A1: {"attempts_per_24h": 10, "counts": "best"}}}, ["s001"], 1.8e9)
    yield s
    s.db.dispose()


class Observer(GradebookStub):
    """A gradebook writer that notes, when it is called, the submission's status and score through the API and
    the student's score in ``grades.csv`` (or fails, as a gradebook that is not reachable)."""

    def __init__(self, site: Site, submission_id: str, fail: bool = False) -> None:
        super().__init__()
        self.site, self.submission_id, self.fail = site, submission_id, fail
        self.seen: list[tuple[str, float | None, float | None]] = []

    def record(self, result, notebook, comment) -> None:
        doc = self.site.client("instructor").get(f"/api/v1/submissions/{self.submission_id}").json()
        self.seen.append((doc["status"], doc["score"], grades(self.site).get("s001")))
        if self.fail:
            raise RuntimeError("the gradebook is not reachable")
        super().record(result, notebook, comment)


def grades(site: Site) -> dict[str, float]:
    text = site.client("instructor").get("/api/v1/grades.csv").content.decode("utf-8-sig")
    return {r["student_id"]: float(r["score"]) for r in csv.DictReader(io.StringIO(text)) if r["score"]}


def loop(site: Site) -> Dispatcher:
    """The grading loop of a service process over the site's queue (its pool is never started here)."""
    source = REPO / "solutions" / A1 / f"{A[A1].notebook}.ipynb"
    lane = Lane(COURSE, site.queue, GradebookStub, site.service.data_root, {A1: (A[A1].notebook, source, "best")})
    return Dispatcher([lane], lambda: None, sandbox=False, limits=Limits(), scratch=None, log=lambda message: None)


def record(site: Site, store, score: float) -> str:
    """Claim the queued submission and let the grading loop record ``score`` (of 10) for it; its id."""
    claim = site.queue.claim(now=site.clock())
    result = stub_result(claim.student_id, claim.assignment, score)
    loop(site)._record(store, Job(claim.student_id, claim.assignment, "stub", tag=f"{COURSE}/{claim.id}"), {"result": result.to_json()}, None)
    return claim.id


def submit(site: Site) -> str:
    return upload(site.client("s001"), A1, solution_bytes(A1)).json()["id"]


def test_a_result_is_never_shown_beside_the_previous_counting_score(site):
    submit(site)
    record(site, site.gradebook, 4)
    assert grades(site) == {"s001": 4} and site.gradebook.scores[("s001", A1)] == 4
    second = submit(site)
    observer = Observer(site, second)
    record(site, observer, 9)
    assert observer.seen == [("graded", 9, 9)]  # graded and counting in one transaction, before the gradebook copy
    assert observer.scores[("s001", A1)] == 9 and counting.unsettled_pairs(site.db) == []


def test_a_regrade_that_hands_the_count_to_another_attempt_is_one_story(site):
    """Best counts: the counting attempt is graded again below an older one, which counts from the same moment."""
    best = submit(site)
    record(site, site.gradebook, 10)
    submit(site)
    record(site, site.gradebook, 6)
    teacher, token = site.signed_in("instructor")
    assert teacher.post(f"/instructor/submissions/{best}/regrade", data={"csrf_token": token},
                        follow_redirects=False).status_code == 303
    assert grades(site) == {"s001": 10}  # still counts with its last result while it is graded again
    observer = Observer(site, best)
    record(site, observer, 3)
    assert observer.seen == [("graded", 3, 6)] and observer.scores[("s001", A1)] == 6


def test_a_failed_gradebook_copy_leaves_the_result_with_its_counting_score_and_the_next_start_copies_it(site):
    submit(site)
    record(site, site.gradebook, 4)
    second = submit(site)
    with pytest.raises(RuntimeError, match="not reachable"):  # the grading loop logs it and starts again
        record(site, Observer(site, second, fail=True), 9)
    doc = site.client("instructor").get(f"/api/v1/submissions/{second}").json()
    assert (doc["status"], doc["score"]) == ("graded", 9) and grades(site) == {"s001": 9}
    assert site.gradebook.scores[("s001", A1)] == 4 and counting.unsettled_pairs(site.db) == [("s001", A1)]
    site.settle("s001", A1)  # what the next start does with unsettled pairs
    assert site.gradebook.scores[("s001", A1)] == 9 and counting.unsettled_pairs(site.db) == []


@pytest.mark.slow  # a PostgreSQL server
def test_two_processes_recording_one_students_attempts_at_once_on_postgresql(tmp_path, postgres):
    """Two service processes on one PostgreSQL record two attempts of one student at the same moment, five times:
    the choices are serialized per student and assignment (a transaction advisory lock), so the one that commits
    second sees the first's result, the best attempt counts and no transaction fails on the counting row."""
    import threading

    from autograder.service.queue import Queue

    site = Site(tmp_path, {"assignments": {A1: {"attempts_per_24h": 20, "counts": "best"}}}, ["s001"], 1.8e9,
                db_url=postgres.url("recording"))
    try:
        queues = [Queue(site.db, "one", 30), Queue(site.db, "two", 30)]
        best = 0.0
        for pair in [(1.0, 2.0), (4.0, 3.0), (5.0, 6.0), (8.0, 7.0), (10.0, 9.0)]:
            submit(site)
            submit(site)
            claims = [q.claim(now=site.clock()) for q in queues]
            together, errors = threading.Barrier(2), []

            def finish(k: int, score: float) -> None:
                result = stub_result("s001", A1, score)
                together.wait(timeout=30)
                try:
                    assert queues[k].graded(claims[k].id, score=score, max_score=10.0, fingerprint="stub",
                                            result_json=json.dumps(result.to_json()), counts="best")
                except Exception as exc:  # noqa: BLE001 - reported below with the round
                    errors.append(exc)

            threads = [threading.Thread(target=finish, args=(k, pair[k])) for k in (0, 1)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(timeout=60)
            best = max(best, *pair)
            assert errors == [] and grades(site) == {"s001": best}, (pair, errors)
    finally:
        site.db.dispose()


def _status(site: Site, submission_id: str) -> dict:
    return site.client("instructor").get(f"/api/v1/submissions/{submission_id}").json()


def test_a_regrade_graded_out_of_order_never_moves_the_count_away_and_back(site):
    """Best counts: both attempts are regraded; the other one's result comes first.  The counting attempt takes
    part in the choice with its previous result until its new one is recorded (the count moved to the 6, and
    its passback went out, for the moment between the two results)."""
    from autograder.service import regrade

    best = submit(site)
    record(site, site.gradebook, 10)
    other = submit(site)
    record(site, site.gradebook, 6)
    regrade.request(site.db, A1, "teacher")
    held = site.queue.claim(now=site.clock())  # the counting attempt, slower to grade
    assert held.id == best
    assert record(site, site.gradebook, 6) == other
    assert grades(site) == {"s001": 10} and _status(site, best)["status"] == "grading"
    result = stub_result("s001", A1, 9)
    loop(site)._record(site.gradebook, Job("s001", A1, "stub", tag=f"{COURSE}/{best}"), {"result": result.to_json()}, None)
    assert grades(site) == {"s001": 9} and site.gradebook.scores[("s001", A1)] == 9


def test_a_regrade_that_fails_keeps_the_previous_result_and_says_why(site):
    """The grading system fails on a regraded attempt: the attempt keeps its result, which keeps counting; the
    API, the student's page and the regrade's progress say that the regrade did not finish; the instructor's API
    says why (the student's page does not: :func:`test_a_student_never_reads_why_the_grading_system_failed`)."""
    from autograder.service import regrade
    from autograder.service.queue import REGRADE_FAILED, STUDENT_REGRADE_FAILED, SYSTEM_FAILED

    first = submit(site)
    record(site, site.gradebook, 7)
    regrade.request(site.db, A1, "teacher")
    claim = site.queue.claim(now=site.clock())
    assert site.queue.failed(claim.id, Failure.SYSTEM, "沙箱未能启动")
    doc = _status(site, first)
    assert (doc["status"], doc["score"]) == ("graded", 7)
    assert doc["error"] == REGRADE_FAILED.format(reason=SYSTEM_FAILED + "沙箱未能启动")
    assert grades(site) == {"s001": 7} and site.gradebook.scores[("s001", A1)] == 7
    student, _ = site.signed_in("s001")
    page = student.get(f"/assignments/{A1}").text
    assert STUDENT_REGRADE_FAILED in page and "沙箱未能启动" not in page and "计入成绩" in page
    progress = regrade.latest(site.db, A1)
    assert (progress.total, progress.done, progress.failed, progress.finished) == (1, 1, 1, True)
    regrade.request(site.db, A1, "teacher")  # a new regrade clears the note; its success removes it for good
    assert _status(site, first)["error"] is None
    record(site, site.gradebook, 8)
    assert grades(site) == {"s001": 8} and _status(site, first)["error"] is None


def test_a_regrade_that_keeps_being_interrupted_keeps_the_previous_result(site):
    """The service process grading a regraded attempt dies three times (its lease runs out): the attempt is given
    up as before, but keeps its previous result; a new attempt that is given up ends failed, with no score."""
    from autograder.service import regrade
    from autograder.service.queue import GAVE_UP, MAX_TRIES, REGRADE_FAILED

    first = submit(site)
    record(site, site.gradebook, 5)
    regrade.request(site.db, A1, "teacher")
    later = site.clock()
    for _ in range(MAX_TRIES):
        later += 3600  # each claim's lease has run out by the next
        assert site.queue.claim(now=later).id == first
    fresh = submit(site)
    for _ in range(MAX_TRIES):
        later += 3600
        assert site.queue.claim(now=later).id == fresh
    assert site.queue.claim(now=later + 3600) is None  # both given up
    doc = _status(site, first)
    assert (doc["status"], doc["score"]) == ("graded", 5)
    assert doc["error"] == REGRADE_FAILED.format(reason=GAVE_UP.format(n=MAX_TRIES))
    doc = _status(site, fresh)
    assert (doc["status"], doc["score"], doc["error"]) == ("failed", None, GAVE_UP.format(n=MAX_TRIES))
    assert grades(site) == {"s001": 5}
    student = site.client("s001")  # a reason written for the student: they read it as it is
    assert student.get(f"/api/v1/submissions/{first}").json()["error"] == REGRADE_FAILED.format(reason=GAVE_UP.format(n=MAX_TRIES))
    assert student.get(f"/api/v1/submissions/{fresh}").json()["error"] == GAVE_UP.format(n=MAX_TRIES)


def test_the_dashboard_counts_a_regrade_that_failed_as_its_progress_does(site):
    """One page, one story: the dashboard's figures name the attempt whose regrade did not finish (it is ``graded``
    with its previous result, which its histogram still shows) as the regrade's progress counts it (it said
    "已评分 1，未能评分 0" beside "1 份未能评分")."""
    from autograder.service import regrade

    first = submit(site)
    record(site, site.gradebook, 7)
    regrade.request(site.db, A1, "teacher")
    assert site.queue.failed(site.queue.claim(now=site.clock()).id, Failure.SYSTEM, "沙箱未能启动")
    figures = site.service.figures(A1)
    f, progress = figures["f"], figures["progress"]
    assert (f["graded"], f["failed"], f["regrade_failed"], progress.failed) == (1, 0, 1, 1)
    assert f["summary"]["students"] == 1  # its previous result still counts
    teacher, _ = site.signed_in("instructor")
    page = teacher.get(f"/instructor/assignments/{A1}/live").text
    assert "其中 1 份重新评分未完成、沿用上一次的结果" in page and "1 份未能重新评分" in page
    regrade.request(site.db, A1, "teacher")  # graded again: nothing is left to name
    record(site, site.gradebook, 8)
    assert site.service.figures(A1)["f"]["regrade_failed"] == 0 and _status(site, first)["error"] is None


# What the pool reports when the grading system itself fails (autograder.batch.jobs.JobError, pools.py), with what
# of it a student must never read: the worker's host, a path, an exception, a sandbox's details.
SYSTEM_ERRORS = {
    "sandbox": ("工作节点 grader-node-17 无法使用沙箱：bwrap: setting up uid map: Permission denied",
                ["grader-node-17", "bwrap", "uid map"]),
    "interpreter": ("工作节点 grader-node-17 的 Python 解释器出错：[Errno 2] No such file or directory: "
                    "'/opt/grading/venv/bin/python3'", ["grader-node-17", "/opt/grading", "Errno"]),
    "grader": ("评分程序出错：KeyError: 'answer_cell_7'", ["评分程序出错", "KeyError", "answer_cell_7"]),
    "worker": ("评分工作进程反复意外退出", ["工作进程", "意外退出"]),
    "scratch": ("评分临时目录已满（/srv/grading/scratch）：No space left on device", ["/srv/grading", "临时目录", "No space"]),
}


def _fail(site: Site, error: str) -> str:
    """Claim the queued submission and let the grading loop record that the pool could not grade it (``error``,
    the pool's message); its id."""
    claim = site.queue.claim(now=site.clock())
    loop(site)._record(site.gradebook, Job(claim.student_id, claim.assignment, "stub", tag=f"{COURSE}/{claim.id}"), None, error)
    return claim.id


def _read_by(site: Site, who: str, submission_id: str) -> dict[str, str]:
    """Every text that shows ``who`` why the submission could not be graded: the API's submission and listing
    (their ``error``), the feedback's refusal, and the pages (a student's assignment page and its live region; the
    submission's page and its live region; an instructor's page of the student)."""
    api = site.client(who)
    client, _ = site.signed_in(who)
    listed = api.get("/api/v1/submissions", params={"assignment": A1}).json()["submissions"]
    texts = {"api": api.get(f"/api/v1/submissions/{submission_id}").json()["error"],
             "listing": next(d for d in listed if d["id"] == submission_id)["error"]}
    feedback = api.get(f"/api/v1/submissions/{submission_id}/feedback")
    if feedback.status_code == 409:  # not graded: the refusal says why
        texts["feedback"] = feedback.json()["error"]
    pages = [f"/submissions/{submission_id}", f"/submissions/{submission_id}/live"]
    pages += ["/instructor/students/s001"] if who == "instructor" else [f"/assignments/{A1}", f"/assignments/{A1}/live"]
    for path in pages:
        r = client.get(path)
        assert r.status_code == 200, (path, r.text)
        texts[path] = r.text
    return texts


@pytest.mark.parametrize("kind", list(SYSTEM_ERRORS))
def test_a_student_never_reads_why_the_grading_system_failed(site, kind):
    """The pool could not grade a new attempt (a worker's sandbox, interpreter or scratch folder, a grader's bug, a
    worker that kept dying): the database and the instructor keep the whole reason; the student's API, feedback
    refusal and pages say that the grading system failed, that it is not their code, and what to do - and nothing
    of the reason (they showed it whole, the worker's host name included)."""
    from autograder.service.queue import STUDENT_SYSTEM_FAILED, SYSTEM_FAILED

    error, secrets = SYSTEM_ERRORS[kind]
    submit(site)
    sid = _fail(site, error)
    assert _status(site, sid)["status"] == "failed"
    for where, text in _read_by(site, "s001", sid).items():
        assert STUDENT_SYSTEM_FAILED in text, where
        assert SYSTEM_FAILED not in text and not [s for s in secrets if s in text], (where, text)
    for where, text in _read_by(site, "instructor", sid).items():
        assert secrets[0] in text and SYSTEM_FAILED in text and STUDENT_SYSTEM_FAILED not in text, where
    assert _status(site, sid)["error"] == SYSTEM_FAILED + error


@pytest.mark.parametrize("kind", ["sandbox", "grader"])
def test_a_student_never_reads_why_the_grading_system_failed_on_a_regrade(site, kind):
    """The pool could not grade a regraded attempt: it keeps its previous result; its student reads that the
    regrade did not finish and the earlier result still counts, without the reason; the instructor reads why."""
    from autograder.service import regrade
    from autograder.service.queue import REGRADE_FAILED, STUDENT_REGRADE_FAILED, SYSTEM_FAILED

    error, secrets = SYSTEM_ERRORS[kind]
    first = submit(site)
    record(site, site.gradebook, 7)
    regrade.request(site.db, A1, "teacher")
    assert _fail(site, error) == first
    doc = site.client("s001").get(f"/api/v1/submissions/{first}").json()
    assert (doc["status"], doc["score"], doc["error"]) == ("graded", 7, STUDENT_REGRADE_FAILED)
    for where, text in _read_by(site, "s001", first).items():
        assert STUDENT_REGRADE_FAILED in text, where
        assert SYSTEM_FAILED not in text and not [s for s in secrets if s in text], (where, text)
    student, _ = site.signed_in("s001")
    assert "计入成绩" in student.get(f"/assignments/{A1}").text
    for where, text in _read_by(site, "instructor", first).items():
        assert secrets[0] in text and SYSTEM_FAILED in text and STUDENT_REGRADE_FAILED not in text, where
    assert _status(site, first)["error"] == REGRADE_FAILED.format(reason=SYSTEM_FAILED + error)
    assert regrade.latest(site.db, A1).failed == 1


def test_a_stored_file_that_is_gone_is_told_to_the_student_as_it_is(site):
    """A reason written for the student (the stored file is gone: submit again) reaches them whole, on a new
    attempt and on a regraded one alike."""
    from autograder.service import regrade
    from autograder.service.queue import FILE_LOST, REGRADE_FAILED

    first = submit(site)
    record(site, site.gradebook, 7)
    fresh = submit(site)
    regrade.request(site.db, A1, "teacher", submission_id=first)
    for path in site.service.data_root.rglob("*.ipynb"):
        path.unlink()
    assert loop(site)._claim() is None  # both refused by the grading loop
    for who in ("s001", "instructor"):
        failed, kept = _read_by(site, who, fresh), _read_by(site, who, first)
        assert all(FILE_LOST in text for text in failed.values()), who
        assert all(REGRADE_FAILED.format(reason=FILE_LOST) in text for text in kept.values()), who


@pytest.mark.parametrize("kind", ["unreadable", "someone_else", "unstorable"])
def test_a_worker_result_that_cannot_be_used_is_that_submissions_graded_outcome_and_never_the_loops(site, kind):
    """A result the grading loop cannot read, that is not its job's, or that cannot be stored is recorded as that
    submission's outcome, as ``autograder grade`` records it: every case 0 and the reason.  A regraded attempt does
    not keep its previous result (a notebook that breaks its result - the red-team review's forged float cell
    index did - must not keep a grade its corrected tests would take back).  It used to raise out of ``_record``:
    the loop gave its claims back without counting the try (``Queue.release``), claimed the same submission first
    again, and never got past it (nor to ``MAX_TRIES``); another student's result was recorded as this one's."""
    from autograder.service import regrade

    def bad(student: str) -> dict:
        good = stub_result(student, A1, 10).to_json()
        return {"unreadable": {"result": {"student": student}},
                "someone_else": {"result": stub_result("s999", A1, 10).to_json()},
                "unstorable": {"result": {**good, "notes": ["\ud800"]}}}[kind]

    first = submit(site)
    record(site, site.gradebook, 7)
    regrade.request(site.db, A1, "teacher")
    fresh = submit(site)
    for _ in range(2):
        claim = site.queue.claim(now=site.clock())
        loop(site)._record(site.gradebook, Job("s001", A1, "stub", tag=f"{COURSE}/{claim.id}"), bad("s001"), None)
    assert site.queue.claim(now=site.clock()) is None
    for sid in (first, fresh):
        doc = _status(site, sid)
        assert (doc["status"], doc["score"], doc["error"]) == ("graded", 0, None)
        assert "评分结果无法读取或写入" in site.client("instructor").get(doc["feedback_url"]).text
    assert grades(site) == {"s001": 0} and site.gradebook.scores[("s001", A1)] == 0
    assert regrade.latest(site.db, A1).failed == 0


def test_an_attempt_the_grading_system_failed_does_not_take_one_of_the_students_attempts(tmp_path):
    """Two attempts a day: two new attempts the pool could not grade leave both (the student reads so, on the
    page and in the failure's text); a third such failure in the day counts (at most as many are free as are
    allowed, or a grading system that keeps failing could be fed uploads without end); so does an attempt the
    service gave up on (its process kept exiting while grading it: a notebook may do that on purpose) and a
    graded one.  Fails on the old rule, which counted every upload."""
    from autograder.service.queue import STUDENT_SYSTEM_FAILED

    site = Site(tmp_path, {"assignments": {A1: {"attempts_per_24h": 2, "counts": "best"}}}, ["s001"], 1.8e9)
    student, _ = site.signed_in("s001")
    try:
        def left() -> int:
            return site.service.submissions.window("s001", A1, site.clock()).left

        for _ in range(2):
            submit(site)
            _fail(site, SYSTEM_ERRORS["sandbox"][0])
            assert left() == 2
            assert "24 小时内还可提交 2 次（共 2 次）" in student.get(f"/assignments/{A1}").text
        assert "不占用你的提交次数" in STUDENT_SYSTEM_FAILED and "剩余次数以作业页面上显示的为准" in STUDENT_SYSTEM_FAILED
        page = student.get(f"/assignments/{A1}").text
        assert STUDENT_SYSTEM_FAILED in page and "评分失败于" in page and "评分于" not in page.replace("评分失败于", "")
        submit(site)
        _fail(site, SYSTEM_ERRORS["grader"][0])  # the third in a day: beyond the free ones
        assert left() == 1
        gave_up = submit(site)
        assert site.queue.failed(site.queue.claim(now=site.clock()).id, Failure.GAVE_UP, "3")
        assert _status(site, gave_up)["status"] == "failed" and left() == 0
        r = upload(site.client("s001"), A1, solution_bytes(A1))
        assert r.status_code == 429 and "24 小时内最多评分 2 次" in r.json()["error"]
    finally:
        site.db.dispose()


def test_graded_attempts_count_as_before_beside_free_failures(tmp_path):
    site = Site(tmp_path, {"assignments": {A1: {"attempts_per_24h": 2, "counts": "best"}}}, ["s001"], 1.8e9)
    try:
        submit(site)
        _fail(site, SYSTEM_ERRORS["worker"][0])
        submit(site)
        record(site, site.gradebook, 6)
        assert site.service.submissions.window("s001", A1, site.clock()).left == 1
        submit(site)
        record(site, site.gradebook, 9)
        w = site.service.submissions.window("s001", A1, site.clock())
        assert w.left == 0 and w.wait is not None and 0 < w.wait <= 86400
        assert upload(site.client("s001"), A1, solution_bytes(A1)).status_code == 429
    finally:
        site.db.dispose()


def test_a_regrade_that_failed_shows_when_the_result_it_keeps_was_recorded(site):
    """A regrade that could not finish keeps the attempt's previous result, and with it that result's time (the
    pages and the API showed the failed regrade's moment as when it was graded); the regrade's progress still
    counts it as ended (by ``finished_at``).  Fails on the old code, which moved ``graded_at``."""
    import time

    from autograder.service import regrade

    first = submit(site)
    record(site, site.gradebook, 7)
    before = _status(site, first)["graded_at"]
    time.sleep(1.1)  # the API's times are to the second
    progress = regrade.request(site.db, A1, "teacher")
    assert _fail(site, SYSTEM_ERRORS["grader"][0]) == first
    for who in ("s001", "instructor"):
        doc = site.client(who).get(f"/api/v1/submissions/{first}").json()
        assert (doc["status"], doc["score"], doc["graded_at"]) == ("graded", 7, before), who
    now = regrade.latest(site.db, A1)
    assert (now.id, now.done, now.failed) == (progress.id, 1, 1)


def test_uploads_racing_for_the_attempt_a_free_failure_gave_back_take_it_once(tmp_path):
    """Two attempts a day: one graded, one the grading system failed (free): one attempt is left.  Eight uploads of
    the student at once get it once: one is accepted, the others are refused (429 by the count made again under
    the student's lock, or 503 past the student's two upload slots); the free failure stays free, and the day
    then holds one graded and one pending attempt, none left."""
    import threading

    site = Site(tmp_path, {"assignments": {A1: {"attempts_per_24h": 2, "counts": "best"}}}, ["s001"], 1.8e9)
    try:
        submit(site)
        record(site, site.gradebook, 6)
        submit(site)
        _fail(site, SYSTEM_ERRORS["scratch"][0])
        assert site.service.submissions.window("s001", A1, site.clock()).left == 1
        data, go, codes = solution_bytes(A1), threading.Barrier(8), []

        def race() -> None:
            client = site.client("s001")
            go.wait()
            codes.append(upload(client, A1, data).status_code)

        threads = [threading.Thread(target=race) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert len(codes) == 8 and codes.count(202) == 1 and set(codes) <= {202, 429, 503} and 429 in codes, codes
        w = site.service.submissions.window("s001", A1, site.clock())
        assert w.left == 0 and w.wait is not None
        statuses = [r["status"] for r in site.client("s001").get("/api/v1/submissions").json()["submissions"]]
        assert sorted(statuses) == ["failed", "graded", "queued"]
    finally:
        site.db.dispose()
