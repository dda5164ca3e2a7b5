"""A graded quiz over LTI: launched from the LMS, answered, its score passed back to the LMS course's line item
exactly once (and once more after a regrade changes it); deep linking offers the quiz with its full marks.

The platform is the real fake LMS on loopback (:mod:`.conftest`); the quiz is answered through the tool's own API
with the session the launch gave, as the quiz page's script does.
"""

from __future__ import annotations

import html as htmllib
import re
import time
from dataclasses import replace

import jwt
import pytest
import sqlalchemy as sa

from autograder.quiz import Candidate, get_template, make_variant, variant_seed
from autograder.quiz import templates as registry
from autograder.check import all_assignments
from autograder.service.lms_tables import LINKS
from autograder.service.lti import passback
from autograder.service.lti.keys import ToolKeys
from autograder.service.roster import instructor_code

from .conftest import COURSE, TOOL, launch, make_tool, visible_text
from .test_deeplink_nrps import choose
from .test_launch import follow_to_page
from .test_passback import login_of

QUIZ = "quiz1"
TITLE = "小测 1：混淆矩阵"
QUESTIONS = [("fixed-metrics", "choice"), ("roc-area", "choice")]
API = f"/c/{COURSE}/api/v1"


@pytest.fixture
def tool(tmp_path):
    """The tool with every assignment open and one graded quiz (two attempts, the best counts)."""
    config = {"assignments": {n: {} for n in all_assignments()}, "quizzes": {
        QUIZ: {"title": TITLE, "questions": [{"template": t, "form": f, "points": 2} for t, f in QUESTIONS],
               "attempts": 2, "feedback_before_deadline": "full"}}}
    t = make_tool(tmp_path, config=config)
    yield t
    t.client.close()
    t.db.dispose()


def worker(tool) -> passback.Passback:
    return passback.Passback(tool.db, tool.db, ToolKeys(tool.data), f"test-{time.monotonic_ns()}",
                             titles=lambda a: tool.service.titles.get(a, a),
                             feedback_url=lambda sid: f"{TOOL}/c/{COURSE}/submissions/{sid}")


def answer(tool, student: str, attempt: int, rights: list[bool]) -> dict:
    """Start ``student``'s next attempt with the launch's session, answer each question right or wrong, submit."""
    headers = {"X-CSRF-Token": tool.client.get(f"{API}/session").json()["csrf_token"], "Origin": TOOL}
    started = tool.client.post(f"{API}/quizzes/{QUIZ}/attempts", headers=headers)
    assert started.status_code == 201, started.text
    a = started.json()
    for position, ((template, form), right) in enumerate(zip(QUESTIONS, rights), 1):
        v = make_variant(template, variant_seed(COURSE, student, f"{QUIZ}/{template}", attempt), form)
        letter = next(o.letter for o in v.options if o.correct == right)
        assert tool.client.put(f"{API}/quiz-attempts/{a['id']}/answers/{position}", json={"answer": letter},
                               headers=headers).status_code == 200
    done = tool.client.post(f"{API}/quiz-attempts/{a['id']}/submit", headers=headers)
    assert done.status_code == 200, done.text
    return done.json()


def test_a_quiz_score_reaches_the_lms_exactly_once(tool, platform, monkeypatch):
    platform.custom = {"link-1": {"assignment": QUIZ}}
    entered, page = follow_to_page(tool, launch(tool, platform, "alice"))
    assert entered.headers["location"].endswith(f"quizzes/{QUIZ}") and TITLE in visible_text(page)
    alice = login_of(tool, platform.users["alice"].sub)
    first = answer(tool, alice, 0, [True, True])
    assert (first["score"], first["max_score"]) == (4.0, 4.0)
    w = worker(tool)
    assert w.run_once() == 1
    assert w.run_once() == 0  # nothing twice
    (score,) = platform.scores
    assert score["userId"] == platform.users["alice"].sub
    assert (score["scoreGiven"], score["scoreMaximum"]) == (4.0, 4.0)
    (item,) = platform.lineitems["course-1"]
    assert item["label"] == TITLE and item["resourceId"] == QUIZ and item["scoreMaximum"] == 4.0
    # the grade comment's link opens the attempt's page
    link = re.search(r"(https://tool\.test\S+)", score["comment"]).group(1)
    opened = tool.client.get(link.removeprefix(TOOL))
    assert opened.status_code == 303 and opened.headers["location"].endswith(f"quizzes/{QUIZ}/attempts/1")
    # a worse second attempt changes nothing that counts (best): nothing posted
    assert answer(tool, alice, 1, [False, False])["score"] == 0.0
    assert w.run_once() == 0 and len(platform.scores) == 1
    # a template fix: the regrade changes the counting score, which is posted once
    template = get_template("roc-area")

    def flipped(draw):  # the key and the first wrong answer swapped: alice's right pick becomes wrong
        posed = template.pose(draw)
        return replace(posed, key=posed.candidates[0].value,
                       candidates=(Candidate(posed.key, posed.candidates[0].mistake, "……"), *posed.candidates[1:]))
    monkeypatch.setitem(registry._BY_ID, template.id, replace(template, pose=flipped))
    staff_headers = {"Authorization": f"Bearer {instructor_code(tool.db, '王老师')}"}
    regraded = tool.client.post(f"{API}/quizzes/{QUIZ}/regrade", headers=staff_headers)
    assert regraded.status_code == 200 and regraded.json()["changes"], regraded.text
    assert tool.client.get(f"{API}/quiz-attempts/{first['id']}").json()["score"] == 2.0  # question 2 now wrong
    assert w.run_once() == 1 and w.run_once() == 0
    assert [s["scoreGiven"] for s in platform.scores] == [4.0, 2.0]  # the best attempt now scores 2
    assert platform.scores[0]["timestamp"] < platform.scores[1]["timestamp"]
    assert len(platform.lineitems["course-1"]) == 1


def test_deep_linking_offers_the_quiz_with_its_full_marks(tool, platform):
    page = launch(tool, platform, "teacher", type="LtiDeepLinkingRequest")
    assert page.status_code == 200 and TITLE in visible_text(page)
    back = choose(tool, page, QUIZ)
    assert back.status_code == 200, visible_text(back)
    token = htmllib.unescape(re.search(r'name="JWT" value="([^"]+)"', back.text).group(1))
    with tool.db.read() as con:
        assert con.execute(sa.select(LINKS.c.assignment)).scalars().all() == [QUIZ]  # grades of the quiz go there
    claims = jwt.decode(token, options={"verify_signature": False})
    (item,) = claims["https://purl.imsglobal.org/spec/lti-dl/claim/content_items"]
    assert item["custom"] == {"assignment": QUIZ} and item["lineItem"]["scoreMaximum"] == 4.0
    assert item["lineItem"]["label"] == TITLE
