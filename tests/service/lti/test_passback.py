"""Grade passback (AGS): the counting score reaches the platform's line item exactly once.

The score change goes through the service's real :func:`autograder.service.counting.settle` (which enqueues
the passback in the same transaction as the counting row); the gradebook writer is a recorder (the nbgrader
gradebook is not what these tests are about).  The platform is the real fake server on loopback; it verifies
the tool's signed client assertion against the tool's key set.
"""

from __future__ import annotations

import json
import time

import pytest
import sqlalchemy as sa

from autograder.model import SubmissionResult
from autograder.service import counting
from autograder.service.database import SUBMISSIONS
from autograder.service.lti import passback
from autograder.service.lti.keys import ToolKeys
from autograder.service.lms_tables import LINEITEMS, PASSBACK

from .conftest import ASSIGNMENT, TOOL, launch, people
from .test_launch import follow_to_page


class Recorder:
    """Stands in for the nbgrader gradebook writer."""

    def __init__(self) -> None:
        self.recorded: list = []

    def record(self, result, notebook, comment) -> None:
        self.recorded.append(result.score)


class Clock:
    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


def login_of(tool, sub: str) -> str:
    from autograder.service.database import ACCOUNTS
    from autograder.service.lms_tables import USERS

    with tool.db.read() as con:
        return con.execute(sa.select(ACCOUNTS.c.login).join(USERS, USERS.c.account_id == ACCOUNTS.c.id).where(USERS.c.sub == sub)).scalar()


def grade(tool, student: str, score: float, *, max_score: float = 10.0, penalty: float = 1.0, counts: str = "best",
          at: float | None = None) -> str:
    """A graded attempt of ``student``, then the service's settle step (which enqueues the passback)."""
    sid = f"sub{time.monotonic_ns()}"[-30:]
    result = SubmissionResult(student, ASSIGNMENT, score, max_score, {}, [])
    with tool.db.write() as con:
        con.execute(sa.insert(SUBMISSIONS).values(
            id=sid, student_id=student, assignment=ASSIGNMENT, status="graded", created_at=at or time.time(), filename="a.ipynb",
            path="x", sha256="0" * 64, size=1, late=penalty != 1.0, penalty=penalty, tries=1, score=score, max_score=max_score,
            result_json=json.dumps(result.to_json()), settled=False, graded_at=time.time()))
    counting.settle(tool.db, Recorder(), lambda a: counts, lambda a: "threshold_metrics", student, ASSIGNMENT)
    return sid


def worker(tool, clock=None, **kw) -> passback.Passback:
    return passback.Passback(tool.db, tool.db, ToolKeys(tool.data), f"test-{time.monotonic_ns()}", titles=lambda a: "作业 1：固定阈值指标",
                             feedback_url=lambda sid: f"{TOOL}/submissions/{sid}", clock=clock or time.time, **kw)


def enrolled(tool, platform, *who: str) -> list[str]:
    for w in who:
        follow_to_page(tool, launch(tool, platform, w))
    return [login_of(tool, platform.users[w].sub) for w in who]


def test_first_grade_arrives_once_with_every_field(tool, platform):
    (alice,) = enrolled(tool, platform, "alice")
    sid = grade(tool, alice, 7.0)
    w = worker(tool)
    assert w.run_once() == 1
    assert w.run_once() == 0  # nothing twice
    (score,) = platform.scores
    assert score["userId"] == people()["alice"].sub
    assert (score["scoreGiven"], score["scoreMaximum"]) == (7.0, 10.0)
    assert score["activityProgress"] == "Completed" and score["gradingProgress"] == "FullyGraded"
    assert score["timestamp"].endswith("Z") and f"{TOOL}/submissions/{sid}" in score["comment"]
    (item,) = platform.lineitems["course-1"]
    assert item["label"] == "作业 1：固定阈值指标" and item["scoreMaximum"] == 10.0 and item["resourceId"] == ASSIGNMENT
    assert platform.assertions[0]["aud"] == platform.token_url  # the token came by a verified client assertion
    assert passback.summary(tool.db) == {"pending": 0, "sent": 1, "failed": 0}


def test_better_attempt_posts_again_worse_does_not_token_cached_line_item_once(tool, platform):
    (alice,) = enrolled(tool, platform, "alice")
    w = worker(tool)
    grade(tool, alice, 5.0)
    w.run_once()
    grade(tool, alice, 3.0)  # best counts: nothing changes
    assert w.run_once() == 0
    grade(tool, alice, 9.0)
    assert w.run_once() == 1
    assert [s["scoreGiven"] for s in platform.scores] == [5.0, 9.0]
    assert platform.scores[0]["timestamp"] < platform.scores[1]["timestamp"]
    assert len(platform.lineitems["course-1"]) == 1 and len(platform.assertions) == 1 == w.tokens.requested


def test_a_regrade_of_the_counting_attempt_posts_its_new_score_once(tool, platform):
    """A regrade changes the counting submission's score in place (same id): settle enqueues the new score, and a
    settle that changes nothing the LMS shows (the gradebook rewritten for an unsettled worse attempt) posts nothing."""
    (alice,) = enrolled(tool, platform, "alice")
    w = worker(tool)
    sid = grade(tool, alice, 5.0)
    assert w.run_once() == 1
    with tool.db.write() as con:  # what a regrade leaves: a new score on the same row, not settled yet
        con.execute(sa.update(SUBMISSIONS).where(SUBMISSIONS.c.id == sid).values(score=7.5, settled=False))
    counting.settle(tool.db, Recorder(), lambda a: "best", lambda a: "threshold_metrics", alice, ASSIGNMENT)
    assert w.run_once() == 1
    counting.settle(tool.db, Recorder(), lambda a: "best", lambda a: "threshold_metrics", alice, ASSIGNMENT, force=True)
    assert w.run_once() == 0
    assert [s["scoreGiven"] for s in platform.scores] == [5.0, 7.5]


def test_late_penalty_and_last_attempt_lowering_the_score_are_posted(tool, platform):
    (alice,) = enrolled(tool, platform, "alice")
    w = worker(tool)
    grade(tool, alice, 8.0, counts="last")
    grade(tool, alice, 6.0, penalty=0.5, counts="last")  # a late attempt counts half
    assert w.run_once() == 1
    assert [s["scoreGiven"] for s in platform.scores] == [3.0]  # the burst posted only the latest score


class Unreachable(Recorder):
    """A gradebook writer that fails (the gradebook copy comes after the result's transaction)."""

    def record(self, result, notebook, comment) -> None:
        raise RuntimeError("the gradebook is not reachable")


def graded_by_the_loop(tool, student: str, score: float, store) -> None:
    """An upload's row, claimed and recorded by the service's real grading loop (:meth:`Dispatcher._record`)."""
    from autograder.batch.jobs import Job
    from autograder.model import Limits
    from autograder.service.dispatcher import Dispatcher, Lane
    from autograder.service.queue import Queue

    from .conftest import COURSE, REPO

    with tool.db.write() as con:
        con.execute(sa.insert(SUBMISSIONS).values(
            id=f"up{time.monotonic_ns()}"[-30:], student_id=student, assignment=ASSIGNMENT, status="queued", created_at=time.time(),
            filename="a.ipynb", path="x", sha256="0" * 64, size=1, late=False, penalty=1.0, tries=0, settled=True))
    queue = Queue(tool.db, "loop", 30)
    claim = queue.claim()
    lane = Lane(COURSE, queue, Recorder, tool.data, {ASSIGNMENT: ("threshold_metrics", REPO / "solutions" / ASSIGNMENT
                                                                  / "threshold_metrics.ipynb", "best")})
    loop = Dispatcher([lane], lambda: None, sandbox=False, limits=Limits(), scratch=None, log=lambda message: None)
    result = SubmissionResult(student, ASSIGNMENT, score, 10.0, {}, [], fingerprint="f")  # the job's graded bytes
    loop._record(store, Job(student, ASSIGNMENT, "f", tag=f"{COURSE}/{claim.id}"), {"result": result.to_json()}, None)


@pytest.mark.parametrize("tool", ["sqlite", pytest.param("postgresql", marks=pytest.mark.slow)], indirect=True)
def test_the_passback_is_queued_with_the_result_even_if_the_gradebook_copy_fails(tool, platform):
    """The grading loop records the result, the counting choice and the passback in one transaction; the
    gradebook's copy comes after it, so a failing (or killed) copy cannot hold the score back from the platform."""
    (alice,) = enrolled(tool, platform, "alice")
    graded_by_the_loop(tool, alice, 4.0, Recorder())
    with pytest.raises(RuntimeError, match="not reachable"):
        graded_by_the_loop(tool, alice, 9.0, Unreachable())
    with tool.db.read() as con:
        (row,) = con.execute(sa.select(PASSBACK)).all()
    assert (row.score, row.version, row.status) == (9.0, 2, "pending")
    assert counting.unsettled_pairs(tool.db) == [(alice, ASSIGNMENT)]  # the next start copies it into the gradebook
    assert worker(tool).run_once() == 1 and [s["scoreGiven"] for s in platform.scores] == [9.0]


def test_student_without_lti_queues_nothing(tool, platform):
    grade(tool, "s999", 4.0)
    with tool.db.read() as con:
        assert con.execute(sa.select(sa.func.count()).select_from(PASSBACK)).scalar() == 0


def test_existing_line_item_is_found_not_duplicated(tool, platform):
    (alice,) = enrolled(tool, platform, "alice")
    platform.lineitems["course-1"] = [{"id": f"{platform.base}/api/lti/courses/course-1/line_items/pre?v=1", "label": "x",
                                       "scoreMaximum": 10, "resourceId": ASSIGNMENT}]
    grade(tool, alice, 6.0)
    worker(tool).run_once()
    assert len(platform.lineitems["course-1"]) == 1 and platform.scores[0]["lineitem"] == "pre"


def test_platform_down_during_a_burst_then_restart_every_score_once(tool, platform):
    """10 students x 5 graded attempts while the platform answers 503, then a new worker (a restarted
    service): each student's final counting score arrives exactly once, nothing else."""
    names = ["alice", "bob"] + [f"p{i}" for i in range(8)]
    from .fake_lms import LEARNER, User

    for i in range(8):
        platform.users[f"p{i}"] = User(f"sub-p{i}", f"学生 {i}", f"p{i}@example.edu", LEARNER)
    logins = enrolled(tool, platform, *names)
    clock = Clock()
    first = worker(tool, clock)
    platform.mode = "down"
    final = {}
    for attempt in range(5):
        for n, login in enumerate(logins):
            score = float((attempt * 3 + n) % 11)
            grade(tool, login, score)
            final[login] = max(final.get(login, 0.0), score)
        first.run_once()
        clock.now += 1000  # past any backoff
    assert platform.scores == []
    with tool.db.read() as con:
        rows = con.execute(sa.select(PASSBACK)).all()
    assert len(rows) == 10 and all(r.status == "pending" and r.tries >= 1 for r in rows)
    assert all("HTTP 503" in r.error for r in rows)
    # the service restarts (a new worker, the old one's claims released) and the platform is back
    platform.mode = "up"
    second = worker(tool, clock)
    second.release_orphans()
    clock.now += 1000
    while second.run_once():
        pass
    got = {s["userId"]: s["scoreGiven"] for s in platform.scores}
    assert len(platform.scores) == 10 == len(got)
    assert got == {platform.users[n].sub: final[login] for n, login in zip(names, logins)}
    assert passback.summary(tool.db)["sent"] == 10


def test_killed_after_the_platform_stored_it_reposts_the_same_timestamp(tool, platform, monkeypatch):
    """The one case exactly-once cannot rule out: the post succeeded but the service died before recording it.
    The retry carries the same score and timestamp, which AGS platforms treat as the same update."""
    (alice,) = enrolled(tool, platform, "alice")
    grade(tool, alice, 7.0)
    clock = Clock()
    dying = worker(tool, clock)

    def killed(self, row):
        raise KeyboardInterrupt("killed")

    monkeypatch.setattr(passback.Passback, "_done", killed)
    with pytest.raises(KeyboardInterrupt):
        dying.run_once()
    monkeypatch.undo()
    assert worker(tool, clock).run_once() == 0  # still under the dead worker's lease
    clock.now += passback.LEASE + 1
    assert worker(tool, clock).run_once() == 1
    first, second = platform.scores
    assert first == second  # same score, same timestamp: the platform's result is unchanged


def test_429_waits_for_retry_after_and_refusals_fail_for_retry(tool, platform):
    (alice,) = enrolled(tool, platform, "alice")
    grade(tool, alice, 7.0)
    clock = Clock()
    w = worker(tool, clock)
    platform.mode = "busy"
    assert w.run_once() == 0
    with tool.db.read() as con:
        row = con.execute(sa.select(PASSBACK)).one()
    assert row.status == "pending" and row.next_at >= clock.now + 1 and "429" in row.error
    platform.mode = "up"
    assert w.run_once() == 0  # not yet due
    clock.now = row.next_at + 0.01
    assert w.run_once() == 1
    # a permanent refusal (the line item is gone: 404) fails at once, and is retried on request
    with tool.db.write() as con:
        con.execute(sa.update(LINEITEMS).values(url=f"{platform.base}/api/lti/courses/course-1/nothing"))
    grade(tool, alice, 9.0)
    clock.now = max(clock.now, time.time())  # the new score is queued at the real time, which may be past the fake one
    w.run_once()
    assert passback.summary(tool.db)["failed"] == 1
    with tool.db.write() as con:
        con.execute(sa.delete(LINEITEMS))
    assert passback.retry_failed(tool.db, clock.now) == 1
    assert w.run_once() == 1 and platform.scores[-1]["scoreGiven"] == 9.0


def test_a_student_graded_before_their_first_launch_is_passed_back(tool, platform):
    from autograder.service.roster import Student, import_students

    import_students(tool.db, [Student("s001", "张丽", "")])
    grade(tool, "s001", 6.0)
    enrolled(tool, platform, "alice")  # sourcedid s001: linked, and the existing score is queued
    assert worker(tool).run_once() == 1 and platform.scores[0]["scoreGiven"] == 6.0


def test_a_platform_with_its_own_token_audience(tool, platform):
    """Brightspace wants the client assertion's aud to be its "OAuth2 Audience", not the token URL."""
    from autograder.service.lti import registry
    from autograder.service.lms_tables import PLATFORMS

    platform.audience = "https://api.brightspace.example/auth/token"
    with tool.db.write() as con:
        con.execute(sa.update(PLATFORMS).values(auth_audience=platform.audience))
    (alice,) = enrolled(tool, platform, "alice")
    grade(tool, alice, 7.0)
    assert worker(tool).run_once() == 1
    assert platform.assertions[-1]["aud"] == platform.audience
    assert registry.all_platforms(tool.db)[0].token_audience == platform.audience
    with tool.db.write() as con:  # without it the platform refuses the assertion: the check is real
        con.execute(sa.update(PLATFORMS).values(auth_audience=None))
    grade(tool, alice, 9.0)
    w = worker(tool)
    assert w.run_once() == 0
    assert platform.refused_requests == 1 and platform.scores[-1]["scoreGiven"] == 7.0
    with tool.db.read() as con:
        assert "HTTP 401" in con.execute(sa.select(PASSBACK.c.error)).scalar()


@pytest.mark.slow  # a PostgreSQL server
@pytest.mark.parametrize("tool", ["postgresql"], indirect=True)
def test_two_service_processes_on_postgresql_post_each_score_once(tool, platform, monkeypatch):
    """Two workers (as in two service processes on one PostgreSQL) claim at once: SKIP LOCKED and the leases
    give every row to exactly one of them."""
    import threading

    from .fake_lms import LEARNER, User

    for i in range(12):
        platform.users[f"q{i}"] = User(f"sub-q{i}", f"学生 {i}", f"q{i}@example.edu", LEARNER)
    logins = enrolled(tool, platform, *[f"q{i}" for i in range(12)])
    for n, login in enumerate(logins):
        grade(tool, login, float(n % 10))
    monkeypatch.setattr(passback, "BATCH", 2)  # small claims: the two workers interleave
    workers = [worker(tool), worker(tool)]
    sent = [0, 0]

    def unsent() -> list:
        with tool.db.read() as con:
            return con.execute(sa.select(PASSBACK.c.status, PASSBACK.c.error).where(PASSBACK.c.status != "sent")).all()

    def drain(k: int) -> None:
        # until every row is sent: a POST the loaded machine let time out is tried again after its back-off (2 s),
        # as the service's loop would (one did on a busy clean-clone run, and the drain stopped one row short)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if n := workers[k].run_once():
                sent[k] += n
            elif unsent():
                time.sleep(0.2)
            else:
                break

    threads = [threading.Thread(target=drain, args=(k,)) for k in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert unsent() == []
    assert sum(sent) == 12 and len(platform.scores) == 12  # each score posted by exactly one of them, once
    assert len({s["userId"] for s in platform.scores}) == 12 and len(platform.lineitems["course-1"]) == 1
