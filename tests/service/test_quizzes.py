"""Graded quizzes and timed exams through the real web layer and core, in process (:mod:`.inprocess`): a clock the
test moves (deadlines, an exam's time limit), the students' own session cookies and CSRF tokens.

The variants a student gets are recomputed here independently from the seed rule of :mod:`autograder.quiz`
(course, student, ``<quiz>/<template>``, attempt), which is also how each test knows the right and the wrong
answers: the API never tells a client the key of an open attempt.
"""

from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import replace
from pathlib import Path
from datetime import datetime, timedelta, timezone

import numpy as np
import pytest
import sqlalchemy as sa

from autograder.check import all_assignments
from autograder.quiz import Candidate, get_template, make_variant, variant_seed
from autograder.quiz import templates as registry
from autograder.service.courses import UPGRADED
from autograder.service.database import SUBMISSIONS
from autograder.service.policy import PolicyError, parse_policy
from autograder.service.quiz_tables import ITEMS
from autograder.service.quizzes import QuizCloser

from .inprocess import Site

A1 = "ps1_threshold_metrics"
QUIZ, EXAM = "quiz1", "exam1"
CHINA = timezone(timedelta(hours=8))
T0 = datetime(2026, 12, 1, 12, 0, tzinfo=CHINA)
DEADLINE = T0 + timedelta(days=2)
QUESTIONS = [("confusion-cells", "numeric"), ("fixed-metrics", "choice"), ("roc-area", "choice")]
EXAM_QUESTIONS = [("auc-pairs", "choice"), ("brier", "choice"), ("ap-ranking", "numeric")]
STUDENTS = [f"s{i:03d}" for i in range(1, 9)]
BOOK = "http://127.0.0.1:8000/"  # the site's --book-url
LIMIT = 10  # the exam's minutes


def config(**quiz) -> dict:
    return {"assignments": {A1: {}}, "quizzes": {
        QUIZ: {"title": "小测 1", "questions": [{"template": t, "form": f} for t, f in QUESTIONS],
               "deadline": DEADLINE.isoformat(), "attempts": 2, "feedback_before_deadline": "full", **quiz},
        EXAM: {"title": "限时测验", "questions": [{"template": t, "form": f} for t, f in EXAM_QUESTIONS],
               "time_limit_minutes": LIMIT, "deadline": DEADLINE.isoformat(), "feedback_before_deadline": "score"}}}


@pytest.fixture
def site(tmp_path):
    s = Site(tmp_path, config(), STUDENTS, T0.timestamp(), book_url=BOOK)
    yield s
    s.db.dispose()


class Student:
    """A student's browser session: the cookie, its CSRF token, and the API calls of the quiz pages' script."""

    def __init__(self, site: Site, login: str) -> None:
        self.site, self.login = site, login
        self.c, self.csrf = site.signed_in(login)

    def _h(self) -> dict[str, str]:
        return {"X-CSRF-Token": self.csrf}

    def start(self, quiz: str = QUIZ, **kw):
        return self.c.post(f"/api/v1/quizzes/{quiz}/attempts", headers=self._h(), **kw)

    def get(self, attempt_id: str):
        return self.c.get(f"/api/v1/quiz-attempts/{attempt_id}")

    def save(self, attempt_id: str, position: int, answer, seq: int | None = None, **extra):
        body = {"answer": answer, **({"seq": seq} if seq is not None else {}), **extra}
        return self.c.put(f"/api/v1/quiz-attempts/{attempt_id}/answers/{position}", json=body, headers=self._h())

    def submit(self, attempt_id: str, **kw):
        return self.c.post(f"/api/v1/quiz-attempts/{attempt_id}/submit", headers=self._h(), **kw)


def variant(student: str, quiz: str, template: str, form: str, attempt: int = 0):
    """The variant the seed rule gives ``student`` (computed here, not asked of the service)."""
    return make_variant(template, variant_seed(UPGRADED.id, student, f"{quiz}/{template}", attempt), form)


def answer_of(v, right: bool) -> str:
    """The right answer of variant ``v``, or a wrong one that a named mistake gives."""
    if v.form == "choice":
        return next(o.letter for o in v.options if o.correct == right and (right or o.mistake is not None))
    return v.key.text if right else v.diagnoses[0].text


def grades(site: Site) -> dict[tuple[str, str], str]:
    r = site.client("instructor").get("/api/v1/grades.csv")
    assert r.status_code == 200
    return {(row["student_id"], row["assignment"]): row["score"] for row in csv.DictReader(io.StringIO(r.content.decode("utf-8-sig")))}


def text(response) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", response.text))


# ------------------------------------------------------------------------------------------ variants


def test_each_student_gets_their_own_variant_issued_from_the_seed_and_kept(site):
    mine, theirs = Student(site, "s001"), Student(site, "s002")
    first = mine.start()
    assert first.status_code == 201, first.text
    a = first.json()
    b = theirs.start().json()
    for q, (template, form) in zip(a["questions"], QUESTIONS):
        expected = variant("s001", QUIZ, template, form)
        assert q["question"]["stem"] == list(expected.stem)  # the seed rule, derived on the server
        assert [o["text"] for o in q["question"].get("options", [])] == [o.text for o in expected.options]
        assert "answer_text" not in q["question"] and "solution" not in q["question"]  # no key while it is open
    assert [q["question"]["stem"] for q in a["questions"]] != [q["question"]["stem"] for q in b["questions"]]
    assert sum(q["question"]["stem"] != r["question"]["stem"] for q, r in zip(a["questions"], b["questions"])) >= 2
    # opening it again resumes the same attempt with the same questions
    again = mine.start().json()
    assert again["id"] == a["id"] and again["questions"] == a["questions"]
    # the next attempt draws new numbers (attempt 1 of the seed rule)
    assert mine.submit(a["id"]).status_code == 200
    second = mine.start().json()
    assert second["number"] == 2
    for q, (template, form) in zip(second["questions"], QUESTIONS):
        assert q["question"]["stem"] == list(variant("s001", QUIZ, template, form, attempt=1).stem)
    assert [q["question"]["stem"] for q in second["questions"]] != [q["question"]["stem"] for q in a["questions"]]


def test_the_issued_variant_and_the_templates_fingerprint_are_stored(site):
    a = Student(site, "s001").start().json()
    with site.db.read() as con:
        rows = con.execute(sa.select(ITEMS).where(ITEMS.c.attempt_id == a["id"]).order_by(ITEMS.c.position)).all()
    for row, (template, form) in zip(rows, QUESTIONS):
        assert json.loads(row.shown_json) == json.loads(json.dumps(variant("s001", QUIZ, template, form).to_json()))
        assert row.fingerprint == get_template(template).fingerprint
        assert int(row.seed) == variant_seed(UPGRADED.id, "s001", f"{QUIZ}/{template}", 0)


# ------------------------------------------------------------------------------------------ grading and counting


def test_a_wrong_answer_names_its_mistake_and_the_best_attempt_counts(site):
    me = Student(site, "s001")
    a = me.start().json()
    v = [variant("s001", QUIZ, t, f) for t, f in QUESTIONS]
    assert me.save(a["id"], 1, answer_of(v[0], True), seq=1).status_code == 200
    wrong = answer_of(v[1], False)
    assert me.save(a["id"], 2, wrong, seq=2).json()["answer"] == {"choice": wrong}
    graded = me.submit(a["id"]).json()  # question 3 left unanswered
    assert (graded["score"], graded["max_score"], graded["counting"]) == (1.0, 3.0, True)
    q1, q2, q3 = graded["questions"]
    assert q1["verdict"]["correct"] and q1["score"] == 1.0
    option = next(o for o in v[1].options if o.letter == wrong)
    assert not q2["verdict"]["correct"] and q2["verdict"]["mistake"]["id"] == option.mistake.id
    assert q2["verdict"]["feedback"] == option.explanation and q2["verdict"]["answer_text"] == v[1].answer_text
    assert q3["answer"] is None and q3["verdict"] is None and q3["score"] == 0.0
    page = me.c.get(f"/quizzes/{QUIZ}/attempts/1")
    assert page.status_code == 200 and f"常见错误：{option.mistake.title}" in text(page)
    assert option.mistake.section in text(page) and f'href="{BOOK}{option.mistake.url()}"' in page.text  # linked
    assert grades(site)[("s001", QUIZ)] == "1"
    # a second, better attempt counts; the course page shows it
    b = me.start().json()
    for i, (t, f) in enumerate(QUESTIONS, 1):
        assert me.save(b["id"], i, answer_of(variant("s001", QUIZ, t, f, 1), True)).status_code == 200
    assert me.submit(b["id"]).json()["score"] == 3.0
    assert grades(site)[("s001", QUIZ)] == "3" and grades(site)[("s002", QUIZ)] == ""
    course = text(me.c.get("/"))
    assert "小测 1" in course and "3 / 3" in course
    # attempts used up
    refused = me.start()
    assert refused.status_code == 403 and "最多作答 2 次" in refused.json()["error"]


def test_score_feedback_shows_only_the_total_until_the_deadline(site):
    me = Student(site, "s001")
    a = me.start(EXAM).json()
    wrong = answer_of(variant("s001", EXAM, *EXAM_QUESTIONS[0]), False)
    me.save(a["id"], 1, wrong)
    graded = me.submit(a["id"]).json()
    assert graded["feedback"] == "score" and graded["score"] == 0.0
    assert all(q["verdict"] is None and q["score"] is None for q in graded["questions"])
    assert "常见错误" not in text(me.c.get(f"/quizzes/{EXAM}/attempts/1"))
    site.clock.t = DEADLINE.timestamp() + 1
    after = me.get(a["id"]).json()
    assert after["feedback"] == "full" and after["questions"][0]["verdict"]["mistake"] is not None
    assert "常见错误" in text(me.c.get(f"/quizzes/{EXAM}/attempts/1"))


def test_a_changed_counting_rule_chooses_again_at_the_next_start(site):
    from autograder.service.quizzes import Quizzes

    me = Student(site, "s001")
    for attempt, rights in ((0, (True, True, True)), (1, (False, True, False))):
        a = me.start().json()
        for position, ((t, f), right) in enumerate(zip(QUESTIONS, rights), 1):
            me.save(a["id"], position, answer_of(variant("s001", QUIZ, t, f, attempt), right))
        me.submit(a["id"])
        site.clock.advance(60)
    assert grades(site)[("s001", QUIZ)] == "3"  # best
    assert site.service.quizzes.resettle() == 1 and site.service.quizzes.resettle() == 0  # first start, then nothing
    restarted = Quizzes(site.db, parse_policy(config(counts="last"), list(all_assignments())), UPGRADED.id, site.clock)
    assert restarted.resettle() == 1
    assert grades(site)[("s001", QUIZ)] == "1"  # course.yml now says last


def test_a_quiz_attempt_is_not_put_into_the_grading_queue(site):
    me = Student(site, "s001")
    a = me.start().json()
    me.submit(a["id"])
    with site.db.read() as con:
        submission = con.execute(sa.select(SUBMISSIONS.c.id).where(SUBMISSIONS.c.assignment == QUIZ)).scalar()
    staff, csrf = site.signed_in("instructor")
    r = staff.post(f"/instructor/submissions/{submission}/regrade", data={"csrf_token": csrf})
    assert r.status_code == 400 and "小测的统计页面重新评分" in text(r)
    assert site.queue.claim(now=site.clock()) is None  # nothing queued


def test_late_work_takes_its_penalty_and_a_forgotten_submission_is_not_late(tmp_path):
    until = DEADLINE + timedelta(days=1)
    site = Site(tmp_path, config(late={"penalty": 0.5, "until": until.isoformat()}), STUDENTS, T0.timestamp())
    try:
        forgot, late = Student(site, "s001"), Student(site, "s002")
        a = forgot.start().json()  # answered in time, never submitted
        for position, (t, f) in enumerate(QUESTIONS, 1):
            forgot.save(a["id"], position, answer_of(variant("s001", QUIZ, t, f), True))
        site.clock.t = DEADLINE.timestamp() + 3600  # the late period
        b = late.start().json()
        for position, (t, f) in enumerate(QUESTIONS, 1):
            late.save(b["id"], position, answer_of(variant("s002", QUIZ, t, f), True))
        done = late.submit(b["id"]).json()
        assert (done["late"], done["raw_score"], done["score"]) == (True, 3.0, 1.5)
        assert forgot.get(a["id"]).json()["status"] == "open"  # still open while late work is accepted
        site.clock.t = until.timestamp() + 1
        closed = forgot.get(a["id"]).json()
        assert (closed["closed_by"], closed["late"], closed["score"]) == ("clock", False, 3.0)
        assert grades(site)[("s001", QUIZ)] == "3" and grades(site)[("s002", QUIZ)] == "1.5"
    finally:
        site.db.dispose()


# ------------------------------------------------------------------------------------------ hostile input


def test_another_students_attempt_answers_like_one_that_does_not_exist(site):
    me, other = Student(site, "s001"), Student(site, "s002")
    a = me.start().json()
    me.save(a["id"], 2, "A", seq=1)
    for r in (other.save(a["id"], 2, "B", seq=9), other.get(a["id"]), other.submit(a["id"])):
        assert r.status_code == 404 and r.json()["error"] == "没有这次作答"
    unknown = me.get("x" * 22)
    assert unknown.status_code == 404 and unknown.json() == other.get(a["id"]).json()
    assert me.get(a["id"]).json()["questions"][1]["answer"] == {"choice": "A"}  # untouched, still open
    assert me.get(a["id"]).json()["status"] == "open"
    # nor through the pages: another student's attempt number is theirs alone
    other.start()
    assert other.c.get(f"/quizzes/{QUIZ}/attempts/1").status_code == 200  # their own attempt 1, other variants
    assert "A" not in [q["answer"] and q["answer"].get("choice") for q in other.start().json()["questions"]]


@pytest.mark.parametrize("field", ["seed", "template", "variant", "form", "score"])
def test_a_forged_seed_template_or_variant_is_refused(site, field):
    me = Student(site, "s001")
    forged = me.start(json={field: 12345})
    assert forged.status_code == 400 and f"不接受“{field}”" in forged.json()["error"] and "服务器" in forged.json()["error"]
    with site.db.read() as con:
        assert con.execute(sa.select(sa.func.count()).select_from(ITEMS)).scalar() == 0  # nothing was issued
    a = me.start().json()
    r = me.save(a["id"], 1, "3", **{field: 1})
    assert r.status_code == 400 and f"不接受“{field}”" in r.json()["error"]
    assert me.get(a["id"]).json()["questions"][0]["answer"] is None
    r = me.submit(a["id"], json={field: 3})
    assert r.status_code == 400 and me.get(a["id"]).json()["status"] == "open"


def test_replayed_saves_and_duplicate_submissions_are_refused(site):
    me = Student(site, "s001")
    a = me.start().json()
    assert me.save(a["id"], 2, "B", seq=5).status_code == 200
    replay = me.save(a["id"], 2, "A", seq=4)  # an older request arriving late (or sent again)
    assert replay.status_code == 409 and "更新的答案" in replay.json()["error"]
    assert me.save(a["id"], 2, "A", seq=5).status_code == 409  # the same number again
    assert me.get(a["id"]).json()["questions"][1]["answer"] == {"choice": "B"}
    assert me.submit(a["id"]).status_code == 200
    twice = me.submit(a["id"])
    assert twice.status_code == 409 and "不能再修改或重复提交" in twice.json()["error"]
    late_save = me.save(a["id"], 2, "C", seq=6)
    assert late_save.status_code == 409 and "不能再修改" in late_save.json()["error"]
    with site.db.read() as con:
        assert con.execute(sa.select(sa.func.count()).select_from(SUBMISSIONS)
                           .where(SUBMISSIONS.c.assignment == QUIZ)).scalar() == 1  # graded and counted once
    # the page's form, posted again after the submission, changes nothing either
    form = me.c.post(f"/quizzes/{QUIZ}/attempts/1", data={"csrf_token": me.csrf, "q2": "A", "action": "submit"})
    assert form.status_code == 409 and me.get(a["id"]).json()["questions"][1]["answer"] == {"choice": "B"}


def test_answers_after_the_deadline_are_refused_by_the_server_clock(site):
    me = Student(site, "s001")
    a = me.start().json()
    right = answer_of(variant("s001", QUIZ, *QUESTIONS[1]), True)
    assert me.save(a["id"], 2, right).status_code == 200
    site.clock.t = DEADLINE.timestamp() + 1
    late = me.save(a["id"], 3, "A")
    assert late.status_code == 403 and "结束" in late.json()["error"] and "服务器" in late.json()["error"]
    # the open attempt was closed at its end with the answer saved before it
    closed = me.get(a["id"]).json()
    assert closed["status"] == "submitted" and closed["closed_by"] == "clock" and closed["score"] == 1.0
    assert closed["questions"][2]["answer"] is None
    assert me.submit(a["id"]).status_code == 403
    refused = me.start()
    assert refused.status_code == 403 and "截止" in refused.json()["error"]


def test_oversized_and_malformed_bodies_are_refused(site):
    me = Student(site, "s001")
    a = me.start().json()
    url = f"/api/v1/quiz-attempts/{a['id']}/answers/1"
    big = me.c.put(url, content=json.dumps({"answer": "1" * 5000}).encode(),
                   headers={"X-CSRF-Token": me.csrf, "Content-Type": "application/json"})
    assert big.status_code == 413
    assert me.c.put(url, content=b"{not json", headers={"X-CSRF-Token": me.csrf}).status_code == 400
    assert me.save(a["id"], 1, "x" * 101).status_code == 400  # a long answer inside a small body
    bad = me.save(a["id"], 2, "Z")
    assert bad.status_code == 400 and "选项是 A、B、C、D" in bad.json()["error"]
    assert me.save(a["id"], 1, "很多").json()["error"].startswith("第 1 题：")
    assert me.save(a["id"], 9, "A").status_code == 404
    # with the cookie, a state change needs the CSRF token
    assert me.c.put(url, json={"answer": "3"}).status_code == 403
    # staff do not answer quizzes
    staff = site.client("instructor").post(f"/api/v1/quizzes/{QUIZ}/attempts")
    assert staff.status_code == 403 and "教师和助教" in staff.json()["error"]


# ------------------------------------------------------------------------------------------ the timed exam


def test_an_exam_resumes_after_a_dropped_connection_and_closes_at_its_end(site):
    first = Student(site, "s001")
    a = first.start(EXAM).json()
    assert a["seconds_left"] == LIMIT * 60
    v = [variant("s001", EXAM, t, f) for t, f in EXAM_QUESTIONS]
    assert first.save(a["id"], 1, answer_of(v[0], True), seq=1).status_code == 200
    assert first.save(a["id"], 2, answer_of(v[1], False), seq=2).status_code == 200
    site.clock.advance(4 * 60)
    del first  # the connection drops: a new browser, a new sign-in
    again = Student(site, "s001")
    resumed = again.start(EXAM).json()
    assert resumed["id"] == a["id"] and resumed["seconds_left"] == (LIMIT - 4) * 60
    assert [q["answer"] for q in resumed["questions"]] == [{"choice": answer_of(v[0], True)},
                                                           {"choice": answer_of(v[1], False)}, None]
    page = again.c.get(f"/quizzes/{EXAM}/attempts/1")
    assert f'data-seconds-left="{(LIMIT - 4) * 60}"' in page.text
    assert f'value="{answer_of(v[0], True)}" checked' in page.text and f'value="{answer_of(v[1], False)}" checked' in page.text
    assert resumed["seq"] == 2  # the page's script continues above the stored sequence numbers
    assert again.save(a["id"], 3, answer_of(v[2], True), seq=3).status_code == 200
    site.clock.advance((LIMIT - 4) * 60 + 1)
    late = again.save(a["id"], 3, "0")
    assert late.status_code == 403 and "结束" in late.json()["error"]
    done = again.get(a["id"]).json()
    assert done["status"] == "submitted" and done["closed_by"] == "clock" and done["score"] == 2.0
    assert [q["answer"] is not None for q in done["questions"]] == [True, True, True]
    assert "服务器按" in text(again.c.get(f"/quizzes/{EXAM}/attempts/1"))
    assert grades(site)[("s001", EXAM)] == "2"
    refused = again.start(EXAM)
    assert refused.status_code == 403 and "只能作答一次" in refused.json()["error"]


def test_an_exam_left_open_is_graded_at_its_end_by_the_sweep(site):
    gone = Student(site, "s002")
    a = gone.start(EXAM).json()
    gone.save(a["id"], 1, answer_of(variant("s002", EXAM, *EXAM_QUESTIONS[0]), True))
    closer = QuizCloser([site.service.quizzes], log=print)  # what autograder serve runs every few seconds
    assert closer.run_once() == 0  # not yet
    site.clock.advance(LIMIT * 60 + 1)
    assert closer.run_once() == 1 and closer.run_once() == 0
    assert grades(site)[("s002", EXAM)] == "1"  # nobody came back; graded from the saved answer


def test_an_exam_never_runs_past_its_deadline(site):
    site.clock.t = DEADLINE.timestamp() - 180
    a = Student(site, "s003").start(EXAM).json()
    assert a["seconds_left"] == 180


def test_extra_time_for_one_student_granted_by_a_teaching_assistant(site):
    from autograder.service.roster import staff_code

    site.codes["ta"] = staff_code(site.db, "赵助教", "ta")
    mine, theirs = Student(site, "s001"), Student(site, "s002")
    a, b = mine.start(EXAM).json(), theirs.start(EXAM).json()
    site.clock.advance(5 * 60)
    ta, csrf = site.signed_in("ta")
    granted = ta.post(f"/instructor/quizzes/{EXAM}/students/s002", data={"csrf_token": csrf, "extra_minutes": "15"},
                      follow_redirects=False)
    assert granted.status_code == 303, granted.text
    assert theirs.get(b["id"]).json()["seconds_left"] == (LIMIT - 5 + 15) * 60  # the running exam moves
    assert mine.get(a["id"]).json()["seconds_left"] == (LIMIT - 5) * 60  # nobody else's
    assert "延长 15 分钟" in text(ta.get(f"/instructor/quizzes/{EXAM}"))
    found = ta.get(f"/instructor/quizzes/{EXAM}/students", params={"login": "s008"}, follow_redirects=False)
    assert found.status_code == 303 and found.headers["location"].endswith(f"instructor/quizzes/{EXAM}/students/s008")
    assert "还没有作答" in text(ta.get(f"/instructor/quizzes/{EXAM}/students/s008"))
    # a student cannot grant it
    assert theirs.c.post(f"/instructor/quizzes/{EXAM}/students/s002",
                         data={"csrf_token": theirs.csrf, "extra_minutes": "15"}).status_code == 403
    site.clock.advance((LIMIT - 5) * 60 + 1)
    assert mine.save(a["id"], 1, "A").status_code == 403 and theirs.save(b["id"], 1, "A").status_code == 200


# ------------------------------------------------------------------------------------------ regrades


def _broken(template):
    """``template`` with its key and its first wrong answer swapped: the kind of bug a regrade is for."""
    def pose(draw):
        posed = template.pose(draw)
        first = posed.candidates[0]
        return replace(posed, key=first.value,
                       candidates=(Candidate(posed.key, first.mistake, "（有错的说明）"), *posed.candidates[1:]))
    return replace(template, pose=pose)


def test_a_regrade_after_a_template_fix_rescores_every_affected_attempt(site, monkeypatch):
    template = get_template("fixed-metrics")
    broken = _broken(template)
    assert broken.fingerprint != template.fingerprint
    monkeypatch.setitem(registry._BY_ID, template.id, broken)
    students = {"s001": True, "s002": False}  # s001 picks the true answer (marked wrong), s002 the broken key
    attempts = {}
    for login, true_answer in students.items():
        me = Student(site, login)
        a = me.start().json()
        seed = variant_seed(UPGRADED.id, login, f"{QUIZ}/{template.id}", 0)
        true_text = next(o.text for o in make_variant(template, seed, "choice").options if o.correct)
        shown = make_variant(broken, seed, "choice")
        assert [o["text"] for o in a["questions"][1]["question"]["options"]] == [o.text for o in shown.options]
        pick = next(o.letter for o in shown.options if (o.text == true_text if true_answer else o.correct))
        me.save(a["id"], 2, pick)
        assert me.submit(a["id"]).json()["score"] == (0.0 if true_answer else 1.0)
        attempts[login] = (me, a["id"])
    # the template is fixed and the instructor regrades
    monkeypatch.setitem(registry._BY_ID, template.id, template)
    staff, csrf = site.signed_in("instructor")
    r = staff.post(f"/instructor/quizzes/{QUIZ}/regrade", data={"csrf_token": csrf}, follow_redirects=False)
    assert r.status_code == 303
    assert grades(site)[("s001", QUIZ)] == "1" and grades(site)[("s002", QUIZ)] == "0"
    me, aid = attempts["s001"]
    after = me.get(aid).json()
    assert (after["score"], after["previous_score"]) == (1.0, 0.0)
    assert after["questions"][1]["verdict"]["correct"] and after["questions"][1]["previous_score"] == 0.0
    page = text(me.c.get(f"/quizzes/{QUIZ}/attempts/1"))
    assert "重新评分" in page and "由 0 分改为 1 分" in page and "修正" in page
    with site.db.read() as con:
        row = con.execute(sa.select(ITEMS).where((ITEMS.c.attempt_id == aid) & (ITEMS.c.position == 2))).first()
    assert row.fingerprint == broken.fingerprint and row.graded_fingerprint == template.fingerprint
    assert json.loads(row.shown_json)["answer_text"] != json.loads(row.graded_json)["answer_text"]  # kept as seen
    # the instructor sees the variant as the student saw it (the broken key), and the correction
    seen = text(staff.get(f"/instructor/quizzes/{QUIZ}/students/s001"))
    assert json.loads(row.shown_json)["stem"][0] in seen and "修正后的正确答案" in seen
    assert "上次重新评分" in text(staff.get(f"/instructor/quizzes/{QUIZ}"))
    # nothing left to change
    api = site.client("instructor").post(f"/api/v1/quizzes/{QUIZ}/regrade")
    assert api.status_code == 200 and api.json() == {"templates": [], "items": 0, "changes": []}


# ------------------------------------------------------------------------------------------ item statistics


def test_item_statistics_match_an_independent_computation(site):
    # question 1 right for the first five students, question 2 right for the first three, the others pick a mistake
    pattern = {s: (i < 5, i < 3, i % 2 == 0) for i, s in enumerate(STUDENTS[:6])}
    chosen = {}
    for login, rights in pattern.items():
        me = Student(site, login)
        a = me.start().json()
        for position, ((t, f), right) in enumerate(zip(QUESTIONS, rights), 1):
            v = variant(login, QUIZ, t, f)
            me.save(a["id"], position, answer_of(v, right))
            if position == 2 and not right:
                chosen[login] = next(o.mistake.id for o in v.options if o.letter == answer_of(v, False))
        me.submit(a["id"])
    r = site.client("instructor").get(f"/api/v1/quizzes/{QUIZ}/statistics")
    assert r.status_code == 200
    items = r.json()["items"]
    right = np.array([rights for rights in pattern.values()], dtype=float)
    for j, item in enumerate(items):
        assert item["students"] == 6 and item["difficulty"] == pytest.approx(right[:, j].mean())
        rest = right.sum(axis=1) - right[:, j]
        assert item["discrimination"] == pytest.approx(np.corrcoef(right[:, j], rest)[0, 1])
        order = np.argsort(right.sum(axis=1), kind="stable")
        band = round(0.27 * 6)
        assert item["upper_lower"] == pytest.approx(right[order[-band:], j].mean() - right[order[:band], j].mean())
    shares = {m: list(chosen.values()).count(m) / 6 for m in set(chosen.values())}
    assert items[1]["mistakes"] == pytest.approx(shares) and sum(items[1]["mistakes"].values()) == pytest.approx(0.5)
    page = text(site.signed_in("instructor")[0].get(f"/instructor/quizzes/{QUIZ}"))
    assert "逐题统计" in page and "50%" in page  # question 2: half right
    student = Student(site, "s007")
    assert student.c.get(f"/api/v1/quizzes/{QUIZ}/statistics").status_code == 403
    assert student.c.get(f"/instructor/quizzes/{QUIZ}").status_code == 403


# ------------------------------------------------------------------------------------------ course.yml


@pytest.mark.parametrize("change, message", [
    ({"questions": ["no-such-template"]}, "quizzes.quiz1.questions[0].template"),
    ({"questions": [{"template": "fixed-metrics", "form": "numeric"}]}, "quizzes.quiz1.questions[0].form"),
    ({"questions": ["roc-area", "roc-area"]}, "出现了不止一次"),
    ({"questions": []}, "quizzes.quiz1.questions"),
    ({"feedback_before_deadline": "cases"}, "quizzes.quiz1.feedback_before_deadline"),
    ({"time_limit_minutes": 30, "attempts": 2}, "quizzes.quiz1.attempts"),
    ({"time_limit_minutes": 0}, "quizzes.quiz1.time_limit_minutes"),
    ({"seed": 3}, "未知的键 seed"),
    ({"attempts": 0}, "quizzes.quiz1.attempts"),
    ({"opens": (DEADLINE + timedelta(days=1)).isoformat()}, "quizzes.quiz1.opens"),
    ({"deadline": "2026-12-01T12:00:00"}, "quizzes.quiz1.deadline"),
])
def test_course_yml_quiz_errors_name_the_key(change, message):
    with pytest.raises(PolicyError, match=re.escape(message)):
        parse_policy(config(**change), list(all_assignments()))


def test_the_documented_quizzes_parse():
    """The example of docs/quizzes.md (and the policy module's docstring) is a valid ``quizzes:`` section."""
    import yaml

    from autograder.service import policy as policy_module

    known = list(all_assignments())
    doc = (Path(__file__).resolve().parents[2] / "docs" / "quizzes.md").read_text(encoding="utf-8")
    for block in (re.search(r"```yaml\n(quizzes:.*?)```", doc, re.S).group(1),
                  re.search(r"\n    (quizzes:\n.*?)\"\"\"", policy_module.__doc__ + '"""', re.S).group(1).replace("\n    ", "\n")):
        parsed = parse_policy({"assignments": {A1: {}}, **yaml.safe_load(block)}, known)
        quiz, exam = parsed.quizzes.values()
        assert quiz.attempts == 3 and quiz.rules.feedback_before_deadline == "full" and not quiz.is_exam
        assert exam.is_exam and exam.attempts == 1 and exam.time_limit_minutes > 0
        assert any(q.points == 2 and q.form == "choice" for q in quiz.questions)


def test_a_quiz_cannot_take_an_assignments_name():
    data = config()
    data["quizzes"][A1] = data["quizzes"].pop(QUIZ)
    with pytest.raises(PolicyError, match="编程作业的名称"):
        parse_policy(data, list(all_assignments()))


# ------------------------------------------------------------------------------------------ the tables


def test_migration_c010_adds_the_quiz_tables_to_a_course_database_and_can_run_again(tmp_path):
    from autograder.service.database import Database
    from autograder.service.quiz_tables import COURSE
    from autograder.service.schema import VERSION_TABLE, head, prepare

    db = Database(f"sqlite:///{tmp_path / 'course.db'}")
    prepare(db)
    with db.write() as con:  # a course's database as the revision before it left it
        for table in reversed(COURSE.sorted_tables):
            table.drop(con)
        con.execute(sa.text(f"UPDATE {VERSION_TABLE} SET version_num = 'c002' WHERE version_num = :h"), {"h": head("course")})
    prepare(db)
    prepare(db)  # again: nothing to do
    with db.read() as con:
        tables = set(sa.inspect(con).get_table_names())
        versions = con.execute(sa.text(f"SELECT version_num FROM {VERSION_TABLE}")).scalars().all()
    assert {t.name for t in COURSE.sorted_tables} <= tables and versions == [head("course")]
    db.dispose()


# ------------------------------------------------------------------------------------------ at once, on both databases


@pytest.mark.parametrize("database", ["sqlite", pytest.param("postgresql", marks=pytest.mark.slow)])
def test_submissions_at_once_count_once_and_the_sweep_closes_an_exam(tmp_path, database):
    """Eight submissions of one attempt at once (a double click, a replay): one is graded, the others refused; eight
    starts at once open one attempt.  On PostgreSQL the row locks and the pair's advisory lock serialize what
    SQLite's ``BEGIN IMMEDIATE`` does."""
    from concurrent.futures import ThreadPoolExecutor

    pg = None
    if database == "postgresql":
        from tests.grading_runs import Postgres

        pg = Postgres()
    site = Site(tmp_path, config(), STUDENTS, T0.timestamp(), db_url=pg.url("quizzes") if pg else None)
    try:
        clients = [site.client("s001") for _ in range(8)]  # with the access code: no session, no CSRF token
        with ThreadPoolExecutor(8) as pool:
            started = list(pool.map(lambda c: c.post(f"/api/v1/quizzes/{QUIZ}/attempts").json()["id"], clients))
        assert len(set(started)) == 1
        aid = started[0]
        clients[0].put(f"/api/v1/quiz-attempts/{aid}/answers/2", json={"answer": answer_of(variant("s001", QUIZ, *QUESTIONS[1]), True)})
        with ThreadPoolExecutor(8) as pool:
            codes = list(pool.map(lambda c: c.post(f"/api/v1/quiz-attempts/{aid}/submit").status_code, clients))
        assert sorted(codes) == [200] + [409] * 7
        with site.db.read() as con:
            assert con.execute(sa.select(sa.func.count()).select_from(SUBMISSIONS)
                               .where(SUBMISSIONS.c.assignment == QUIZ)).scalar() == 1
        assert grades(site)[("s001", QUIZ)] == "1"
        other = Student(site, "s002")
        exam = other.start(EXAM).json()
        other.save(exam["id"], 1, answer_of(variant("s002", EXAM, *EXAM_QUESTIONS[0]), True))
        site.clock.advance(LIMIT * 60 + 1)
        assert QuizCloser([site.service.quizzes], log=print).run_once() == 1
        assert grades(site)[("s002", EXAM)] == "1"
    finally:
        site.db.dispose()
        if pg is not None:
            pg.close()
