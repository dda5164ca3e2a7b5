"""An instructor's exceptions for one student apply to the attempts already made (issue 40, item 2), in process
(:mod:`.inprocess`: a clock the test moves, a stub grader).

A later deadline restates each attempt's lateness and penalty under the student's own deadline and chooses the
counting attempt again in the same transaction; a waived late penalty lets late work count whole, past and future;
what the student reads, ``grades.csv``, the API and the gradebook's copy (written by the real grading loop's step
while it runs) all follow.  That the LMS gets the changed score exactly once: ``lti/test_passback_exceptions.py``.
"""

from __future__ import annotations

import csv
import io
import re
from datetime import datetime, timedelta, timezone

import pytest

from autograder.batch.pools import IDLE
from autograder.model import Limits
from autograder.service import counting, overrides
from autograder.service.courses import UPGRADED
from autograder.service.roles import Role
from autograder.service.roster import staff_code
from autograder.service.dispatcher import SWEEP_SECONDS, Dispatcher, Lane

from .inprocess import REPO, A, Site, solution_bytes, upload

A1, A2 = "ps1_threshold_metrics", "ps2_roc_auc"
CHINA = timezone(timedelta(hours=8))
T0 = datetime(2026, 12, 1, 12, 0, tzinfo=CHINA)
DEADLINE = T0 + timedelta(hours=1)
LATE_UNTIL = DEADLINE + timedelta(days=1)
STUDENTS = ["s001", "s002", "s003"]
NB = {a: solution_bytes(a) for a in (A1, A2)}


@pytest.fixture
def site(tmp_path):
    config = {"assignments": {
        A1: {"deadline": DEADLINE.isoformat(), "counts": "best"},  # late work refused
        A2: {"deadline": DEADLINE.isoformat(), "late": {"penalty": 0.5, "until": LATE_UNTIL.isoformat()},
             "feedback_before_deadline": "score", "counts": "best"},
    }}
    s = Site(tmp_path, config, STUDENTS, T0.timestamp())
    yield s
    s.db.dispose()


def at(site: Site, moment: datetime) -> None:
    site.clock.advance(moment.timestamp() - site.clock())


def grades(site: Site) -> dict[tuple[str, str], dict[str, str]]:
    text = site.client("instructor").get("/api/v1/grades.csv").content.decode("utf-8-sig")
    return {(r["student_id"], r["assignment"]): r for r in csv.DictReader(io.StringIO(text))}


def visible(html: str) -> str:
    """The text a reader sees (tags dropped, whitespace folded)."""
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def attempts_text(html: str) -> str:
    """The visible text of the page's list of attempts (not its facts about the assignment)."""
    return visible(html[html.index('<ol class="attempts"'):])


def post(site: Site, path: str, **form: str):
    teacher, token = site.signed_in("instructor")
    return teacher.post(path, data={**form, "csrf_token": token}, follow_redirects=False)


def gradebook_loop(site: Site) -> Dispatcher:
    """The real grading loop of a service process over the site's queue, its gradebook the site's recorder."""
    lanes = [Lane(UPGRADED.id, site.queue, lambda: site.gradebook, site.service.data_root,
                  {a: (A[a].notebook, REPO / "solutions" / a / f"{A[a].notebook}.ipynb", "best") for a in (A1, A2)})]
    loop = Dispatcher(lanes, lambda: None, sandbox=False, limits=Limits(), scratch=None, log=lambda message: None)
    loop._stores = {UPGRADED.id: site.gradebook}  # what its run opens before the first job
    return loop


def test_an_extension_restates_the_attempts_already_made_and_what_counts(site):
    """s001's attempt made a minute after the course's deadline counted x 0.5 (25 of 50 in the issue's words); a
    later deadline for s001 makes it on time: it counts whole, the counting choice moves to it in the same
    transaction, and the page never shows 「（已为你延期）」 above 「迟交 x0.5」."""
    c = site.client("s001")
    upload(c, A2, NB[A2])
    site.grade(score=6)  # on time: 6
    at(site, DEADLINE + timedelta(minutes=1))
    late = upload(c, A2, NB[A2]).json()["id"]
    site.grade(score=10)  # late: 10 x 0.5 = 5, the first attempt's 6 counts
    page, _ = site.signed_in("s001")
    before = attempts_text(page.get(f"/assignments/{A2}").text)
    assert "迟交，原始得分 10 × 0.5" in before and grades(site)[("s001", A2)]["score"] == "6"
    assert site.gradebook.scores[("s001", A2)] == 6

    r = post(site, "/instructor/students/s001/extend", assignment=A2,
             deadline=(DEADLINE + timedelta(hours=2)).strftime("%Y-%m-%dT%H:%M"))
    assert r.status_code == 303
    doc = c.get(f"/api/v1/submissions/{late}").json()
    assert (doc["late"], doc["penalty"], doc["score"]) == (False, 1.0, 10)
    row = grades(site)[("s001", A2)]
    assert (row["score"], row["late"], row["penalty"]) == ("10", "no", "1")  # the choice moved with the new terms
    html = page.get(f"/assignments/{A2}").text
    assert "（已为你延期）" in visible(html)
    shown = attempts_text(html)
    assert "迟交，" not in shown and "· 迟交" not in shown and "× 0.5" not in shown and "10 / 10" in shown
    assert "计入成绩" in page.get(f"/submissions/{late}").text
    # the gradebook's copy is not written in the grant: the grading loop writes it while it runs
    assert counting.unsettled_pairs(site.db) == [("s001", A2)] and site.gradebook.scores[("s001", A2)] == 6
    teacher_page = post(site, "/instructor/students/s001/extend", assignment=A2,
                        deadline=(DEADLINE + timedelta(hours=3)).strftime("%Y-%m-%dT%H:%M"))
    assert teacher_page.status_code == 303  # a second, later grant changes nothing more
    assert grades(site)[("s001", A2)]["score"] == "10"


def test_the_running_grading_loop_copies_a_restated_pair_into_the_gradebook(site):
    """The loop's source (what it runs between jobs) writes the gradebook copy of the pairs a grant left unsettled:
    at once when the grant asks (``settle_soon``), else at its next periodic sweep."""
    at(site, DEADLINE + timedelta(minutes=5))
    upload(site.client("s002"), A2, NB[A2])
    site.grade(score=8)
    assert site.gradebook.scores[("s002", A2)] == 4
    loop = gradebook_loop(site)
    loop.outstanding = 1  # a job in flight: the source answers IDLE after its turn instead of waiting for work
    assert next(loop._source()) is IDLE
    site.service.settle_soon = loop.settle_soon  # as autograder serve wires it
    assert post(site, "/instructor/students/s002/waive", assignment=A2, waive="1").status_code == 303
    assert next(loop._source()) is IDLE
    assert site.gradebook.scores[("s002", A2)] == 8 and counting.unsettled_pairs(site.db) == []
    site.service.settle_soon = lambda: None  # a grant made by another process: only the periodic sweep sees it
    assert post(site, "/instructor/students/s002/waive", assignment=A2, waive="0").status_code == 303
    assert next(loop._source()) is IDLE and site.gradebook.scores[("s002", A2)] == 8
    loop._swept -= SWEEP_SECONDS
    assert next(loop._source()) is IDLE and site.gradebook.scores[("s002", A2)] == 4


def test_a_waiver_lets_past_and_future_late_work_count_whole_and_can_be_taken_back(site):
    c = site.client("s003")
    at(site, DEADLINE + timedelta(minutes=10))
    first = upload(c, A2, NB[A2]).json()["id"]
    site.grade(score=10)
    assert grades(site)[("s003", A2)]["score"] == "5"
    assert post(site, "/instructor/students/s003/waive", assignment=A2, waive="1").status_code == 303
    page, _ = site.signed_in("s003")
    html = page.get(f"/assignments/{A2}").text
    assert "迟交扣分已为你免除" in visible(html)
    assert "迟交，扣分已免除" in attempts_text(html) and "× 0.5" not in attempts_text(html)
    assert "迟交扣分已为你免除" in visible(page.get("/").text)  # the course page too
    row = grades(site)[("s003", A2)]
    assert (row["score"], row["late"], row["penalty"]) == ("10", "yes", "1")  # still late, counted whole
    site.clock.advance(600)
    second = upload(c, A2, NB[A2]).json()["id"]  # a new late attempt: no penalty either
    site.grade(score=9)
    assert c.get(f"/api/v1/submissions/{second}").json()["penalty"] == 1.0
    teacher, _ = site.signed_in("instructor")
    assert "已为该生免除" in visible(teacher.get("/instructor/students/s003").text)
    assert post(site, "/instructor/students/s003/waive", assignment=A2, waive="0").status_code == 303
    assert [c.get(f"/api/v1/submissions/{s}").json()["score"] for s in (first, second)] == [5, 4.5]
    assert grades(site)[("s003", A2)]["score"] == "5"
    assert "迟交扣分已为你免除" not in visible(page.get(f"/assignments/{A2}").text)


def test_who_may_waive_and_what_cannot_be_waived(site):
    site.codes["ta"] = staff_code(site.db, "赵助教", Role.TA)
    ta, token = site.signed_in("ta")
    r = ta.post("/instructor/students/s001/waive", data={"assignment": A2, "waive": "1", "csrf_token": token},
                follow_redirects=False)
    assert r.status_code == 303  # a teaching assistant holds the GRANT permission
    student, token = site.signed_in("s002")
    r = student.post("/instructor/students/s002/waive", data={"assignment": A2, "waive": "1", "csrf_token": token})
    assert r.status_code == 403 and "免除迟交扣分" in r.text
    r = post(site, "/instructor/students/s001/waive", assignment=A1, waive="1")
    assert r.status_code == 400 and "不接受迟交，没有迟交扣分可以免除" in r.text
    r = post(site, "/instructor/students/s001/waive", assignment=A2, waive="yes")
    assert r.status_code == 400 and "1（免除）或 0（恢复）" in r.text


def test_an_extension_cannot_move_before_an_attempt_it_let_in(site):
    """An extension let s002 submit after the course's deadline (late work refused); moving it back before that
    attempt would leave an accepted attempt that the rule refuses: the grant is refused and nothing changes."""
    later = DEADLINE + timedelta(hours=2)
    assert post(site, "/instructor/students/s002/extend", assignment=A1,
                deadline=later.strftime("%Y-%m-%dT%H:%M")).status_code == 303
    at(site, DEADLINE + timedelta(hours=1))
    assert upload(site.client("s002"), A1, NB[A1]).status_code == 202
    r = post(site, "/instructor/students/s002/extend", assignment=A1,
             deadline=(DEADLINE + timedelta(minutes=30)).strftime("%Y-%m-%dT%H:%M"))
    assert r.status_code == 400 and "新的截止时间不能早于已经接受的提交" in r.text
    assert overrides.get(site.db, "s002", A1).deadline == later.timestamp()
