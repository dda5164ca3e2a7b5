"""A graded quiz and a timed exam in Debian's chromium against a real ``autograder serve``, at 375 and 1280 px:
a student answers (each answer saved as it is given, also across a dropped connection), submits, reads the
feedback that names the misconception of a wrong answer, and finds the score on the course page; an instructor
reads the item statistics and a student's variant as the student saw it.

Each page is checked for a horizontal overflow and audited with axe-core (serious and critical findings fail);
with ``COURSE_SCREENSHOTS=1`` every page is screenshotted into ``artifacts/pages/quiz-*.png``.  A flow fails on a
console error, a page error, a failed request or an HTTP error answer other than the ones it expects.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

import pytest
from playwright.sync_api import expect

from autograder.quiz import make_variant, variant_seed

from .server import REPO, UPGRADED, Server, make_course, screenshot

pytestmark = pytest.mark.slow

QUIZ, EXAM = "quiz1_confusion", "exam1_ranking"
QUESTIONS = [("confusion-cells", "numeric"), ("fixed-metrics", "choice"), ("roc-area", "choice")]
FAR = (datetime.now(timezone(timedelta(hours=8))) + timedelta(days=30)).replace(microsecond=0).isoformat()
WIDTHS = {"desktop": {"width": 1280, "height": 900}, "phone": {"width": 375, "height": 740}}
STUDENT = {"desktop": "s001", "phone": "s002"}
SHOTS = REPO / "artifacts" / "pages"
AXE = REPO / "tests" / "a11y" / "node_modules" / "axe-core" / "axe.min.js"
OFFLINE = ("net::ERR_INTERNET_DISCONNECTED", "Failed to fetch", "ERR_INTERNET_DISCONNECTED")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    data = tmp_path_factory.mktemp("quiz-pages") / "data"
    config = {"assignments": {"ps1_threshold_metrics": {"deadline": FAR}}, "quizzes": {
        QUIZ: {"title": "小测 1：混淆矩阵与固定阈值指标", "questions": [{"template": t, "form": f} for t, f in QUESTIONS],
               "deadline": FAR, "attempts": 3, "feedback_before_deadline": "full"},
        EXAM: {"title": "限时测验：排序与 AP", "questions": ["auc-pairs", "ap-ranking"], "time_limit_minutes": 10,
               "deadline": FAR}}}
    codes = make_course(data, ["s001", "s002", "s003"], config=config)
    server = Server(data, "--jobs", "1").start()
    yield {"server": server, "base": server.url, "codes": codes}
    server.stop()


class Tab:
    """A page in a fresh browser context that records every problem (console errors, failed requests, HTTP >= 400)."""

    def __init__(self, browser, width: str) -> None:
        self.ctx = browser.new_context(viewport=WIDTHS[width], timezone_id="Asia/Shanghai", locale="zh-CN")
        self.page = self.ctx.new_page()
        self.width, self.offline, self.problems = width, False, []
        self.page.on("console", lambda m: self._problem(f"console {m.type}: {m.text}") if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self._problem(f"page error: {e}"))
        self.page.on("requestfailed", lambda r: None if r.url.endswith("favicon.svg") else self._problem(
            f"request failed: {r.url} {r.failure}"))
        self.page.on("response", lambda r: self._problem(f"HTTP {r.status}: {r.url}") if r.status >= 400 else None)

    def _problem(self, text: str) -> None:
        if not (self.offline and any(o in text for o in OFFLINE)):  # the connection this test cut
            self.problems.append(text)

    def shot(self, name: str) -> None:
        screenshot(self.page, SHOTS / f"quiz-{name}-{self.width}.png")

    def login(self, base: str, who: str, code: str) -> None:
        self.page.goto(f"{base}/login")
        self.page.fill("#login", who)
        self.page.fill("#code", code)
        with self.page.expect_navigation():
            self.page.click("button[type=submit]")

    def check(self, name: str) -> None:
        """No horizontal overflow, no serious or critical axe-core finding on the page now."""
        overflow = self.page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow <= 0, f"{name}: {overflow}px wider than the {self.width} screen"
        self.page.evaluate(AXE.read_text(encoding="utf-8") + "\n;typeof axe")
        result = self.page.evaluate("() => axe.run(document, {resultTypes: ['violations']})")
        bad = [f"{v['id']}: {v['help']} {[n['target'] for n in v['nodes'][:3]]}" for v in result["violations"]
               if v["impact"] in ("serious", "critical")]
        assert not bad, f"{name}: {bad}"


def answers(student: str) -> list[tuple[str, object]]:
    """What the test answers: question 1 right (typed), question 2 wrong with a named mistake, question 3 right."""
    v = [make_variant(t, variant_seed(UPGRADED, student, f"{QUIZ}/{t}", 0), f) for t, f in QUESTIONS]
    wrong = next(o for o in v[1].options if not o.correct and o.mistake is not None)
    return [("type", v[0].key.text), ("pick", wrong), ("pick", next(o for o in v[2].options if o.correct))]


def saved(tab: Tab, position: int) -> None:
    expect(tab.page.locator(f"#state-{position}")).to_have_text(re.compile("^已保存"), timeout=30_000)


@pytest.mark.parametrize("width", list(WIDTHS))
def test_a_student_answers_a_quiz_and_reads_the_misconception(site, browser, width):
    assert AXE.is_file(), "找不到 axe-core（make setup 会用 npm 安装 tests/a11y/package.json）"
    who = STUDENT[width]
    tab = Tab(browser, width)
    page = tab.page
    tab.login(site["base"], who, site["codes"][who])
    card = page.locator(f"#quiz-{QUIZ}")
    assert "还没有已评分的作答" in card.inner_text()
    page.click(f"#quiz-{QUIZ} a.button")
    tab.check("quiz")
    tab.shot("quiz")
    page.click("#start")
    page.wait_for_selector("#quiz-form")
    plan = answers(who)
    # question 1 typed, saved as it is given
    page.fill("#q1", plan[0][1])
    saved(tab, 1)
    # the connection drops while question 2 is answered: the page says so, and saves when it is back
    tab.offline = True
    tab.ctx.set_offline(True)
    page.check(f"#q2-{plan[1][1].letter}")
    expect(page.locator("#state-2")).to_contain_text("未能保存", timeout=30_000)
    tab.ctx.set_offline(False)
    saved(tab, 2)
    tab.offline = False
    page.check(f"#q3-{plan[2][1].letter}")
    saved(tab, 3)
    tab.check("attempt")
    tab.shot("attempt")
    # reopened (another tab, a new start of the browser): every saved answer is there
    page.reload()
    assert page.input_value("#q1") == plan[0][1]
    assert page.is_checked(f"#q2-{plan[1][1].letter}") and page.is_checked(f"#q3-{plan[2][1].letter}")
    with page.expect_navigation():
        page.click("#submit")
    result = page.locator("main").inner_text()
    mistake = plan[1][1].mistake
    assert "2 / 3" in result and f"常见错误：{mistake.title}" in result and mistake.section in result
    assert page.locator("#question-2 .badge.bad").inner_text() == "答错"
    tab.check("result")
    tab.shot("result")
    page.click("text=我的作业")
    page.wait_for_selector(f"#quiz-{QUIZ}")
    assert "2 / 3" in page.locator(f"#quiz-{QUIZ} .quiz-score").inner_text()
    tab.check("course")
    tab.shot("course")
    # the exam: its clock runs from the start
    page.click(f"#quiz-{EXAM} a.button")
    page.click("#start")
    page.wait_for_selector(".quiz-timer")
    assert "剩余时间 9 分" in page.locator(".quiz-timer").inner_text() or "剩余时间 10 分" in page.locator(".quiz-timer").inner_text()
    tab.check("exam")
    tab.shot("exam")
    assert not tab.problems, tab.problems
    tab.ctx.close()


@pytest.fixture(scope="module")
def graded_s003(site):
    """s003's attempt, answered through the API with an access code (no session, no CSRF token), once."""
    with site["server"].client(site["codes"]["s003"]) as c:
        a = c.post(f"api/v1/quizzes/{QUIZ}/attempts").json()
        for position, (kind, value) in enumerate(answers("s003"), 1):
            answer = value if kind == "type" else value.letter
            assert c.put(f"api/v1/quiz-attempts/{a['id']}/answers/{position}", json={"answer": answer}).status_code == 200
        assert c.post(f"api/v1/quiz-attempts/{a['id']}/submit").json()["score"] == 2.0


@pytest.mark.parametrize("width", list(WIDTHS))
def test_an_instructor_reads_the_statistics_and_a_students_variant(site, graded_s003, browser, width):
    tab = Tab(browser, width)
    page = tab.page
    tab.login(site["base"], "王老师", site["codes"]["instructor"])
    page.click(f"#quiz-{QUIZ} a")
    page.wait_for_selector("#item-stats")
    stats = page.locator("#item-2").inner_text()
    mistake = answers("s003")[1][1].mistake
    assert "0%" in stats and mistake.title in stats  # nobody right; every wrong pick names its mistake
    tab.check("class")
    tab.shot("class")
    page.click("#quiz-students a >> text=s003")
    page.wait_for_selector("#grant-form")
    seen = page.locator("main").inner_text()
    assert answers("s003")[1][1].text in seen and "种子" in seen and f"常见错误：{mistake.title}" in seen
    tab.check("student")
    tab.shot("student")
    assert not tab.problems, tab.problems
    tab.ctx.close()
