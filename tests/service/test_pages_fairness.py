"""Issue 40's service items in Debian's chromium against a real ``autograder serve`` (real sandboxed grading, the
real grading loop and nbgrader gradebook), at 1280 and 375 px, each page audited with axe-core and checked for
horizontal overflow; with ``COURSE_SCREENSHOTS=1`` screenshots into ``artifacts/pages/fair-*``.

* item 2: an extension and a waiver granted on the staff's student page cover the attempts already made - the
  student's page shows the whole score with 「（已为你延期）」 and no 「迟交 ×0.5」 (or 「迟交扣分已为你免除」), and the
  gradebook's copy follows within seconds (the running grading loop copies it);
* item 7: the feedback's one sentence names the late cut-off;
* item 14: the whole-assignment regrade asks first (cancelling sends nothing), and while it runs the dashboard and
  the student's page never show 「还没有评分完成的提交」 or 「得分：—」;
* items 3/8: with ``--book-url``, the header links the book and a diagnosis's 「课本中的讲解」 links its section;
* item 1's check: 「只检查可见测试」 shows the visible tests' outcomes only and uses no attempt.
"""

from __future__ import annotations

import time

import make_corpus
import pytest

from autograder.check import all_assignments

from .server import Server, make_course, notebook_bytes, submit, wait_done
from .test_pages import AXE, SERVER_LOGS, Tab, _narrow_cells, login

pytestmark = pytest.mark.slow

A1, A3 = "ps1_threshold_metrics", "ps3_pr_ap"
FAR = "2099-01-01T00:00:00+08:00"
PAST = "2020-01-01T00:00:00+08:00"
STUDENTS = [f"s{i:03d}" for i in range(1, 11)]
BOOK = "http://127.0.0.1:9/"  # links only: never fetched
SOLUTION1 = notebook_bytes(make_corpus.solution(A1))
WRONG1 = notebook_bytes(make_corpus.build()["wrong_strict_threshold"][1])
SOLUTION3 = notebook_bytes(make_corpus.solution(A3))
TOP3 = all_assignments()[A3].max_score()
GRADEBOOK_SECONDS = 30  # the gradebook's copy follows a grant within this (the loop is asked at once)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    data = tmp_path_factory.mktemp("fairness") / "data"
    config = {"assignments": {
        A1: {"deadline": FAR, "attempts_per_24h": 3, "feedback_before_deadline": "cases", "checks_per_hour": 3},
        A3: {"deadline": PAST, "late": {"penalty": 0.5, "until": FAR}, "feedback_before_deadline": "score"},
    }}
    codes = make_course(data, STUDENTS, config=config)
    server = Server(data, "--jobs", "2", "--book-url", BOOK).start()
    SERVER_LOGS.append(server.log)
    yield {"server": server, "base": server.url, "codes": codes, "data": data}
    server.stop()


def audit(tab: Tab, name: str) -> list[str]:
    """Screenshot, then axe-core (serious and critical), horizontal overflow and cramped cells, folded parts opened."""
    tab.shot(f"fair-{name}")
    for details in tab.page.locator("main details").all():
        details.evaluate("d => d.open = true")
    overflow = tab.page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    found = [f"{name}: {overflow}px wider than the screen"] if overflow > 0 else []
    tab.page.evaluate(AXE.read_text(encoding="utf-8") + "\n;typeof axe")
    result = tab.page.evaluate("() => axe.run(document, {resultTypes: ['violations']})")
    found += [f"{name}: {v['impact']} {v['id']}: {v['help']} — {[n['target'] for n in v['nodes'][:3]]}"
              for v in result["violations"] if v["impact"] in ("serious", "critical")]
    for details in tab.page.locator("main details").all():
        details.evaluate("d => d.open = false")
    return found + _narrow_cells(tab, name)


def graded(site, who: str, assignment: str, data: bytes) -> dict:
    with site["server"].client(site["codes"][who]) as c:
        sid = submit(c, assignment, data, "notebook.ipynb").json()["id"]
        return wait_done(c, [sid])[sid]


def gradebook_score(site, student: str, assignment: str) -> float | None:
    """The score the nbgrader gradebook holds for (student, assignment), read as ``nbgrader export`` would."""
    from autograder.store import ledger

    store = ledger.Store(f"sqlite:///{site['data'] / 'gradebook.db'}", wait=10, log=lambda message: None)
    try:
        return next((r.score for r in store.results([assignment]) if r.student == student), None)
    finally:
        store.close()


def instructor(browser, site, width: str) -> Tab:
    tab = Tab(browser, width)
    login(tab, site["base"], "王老师", site["codes"]["instructor"])
    return tab


def grant(tab: Tab, site, student: str, assignment: str, action) -> None:
    """Open ``student``'s page, unfold ``assignment``'s exceptions and do ``action(tools)``; wait for the answer page."""
    page = tab.page
    page.goto(f"{site['base']}/instructor/students/{student}")
    tools = page.locator(f"#section-{assignment} details.tools")
    tools.locator("summary").click()
    action(tools)
    page.wait_for_load_state("load")


@pytest.mark.parametrize("width, late, waived", [("desktop", "s001", "s002"), ("phone", "s003", "s004")])
def test_an_extension_and_a_waiver_cover_the_attempts_already_made(site, browser, width, late, waived):
    for who in (late, waived):
        doc = graded(site, who, A3, SOLUTION3)
        assert (doc["late"], doc["penalty"], doc["score"]) == (True, 0.5, TOP3 * 0.5)
    assert gradebook_score(site, late, A3) == TOP3 * 0.5
    teacher = instructor(browser, site, width)
    found = []

    def extend(tools) -> None:
        tools.locator("input[name=deadline]").fill("2099-06-01T12:00")
        tools.locator("button", has_text="为该生延期").click()

    grant(teacher, site, late, A3, extend)
    assert "重新判定是否迟交" in teacher.page.locator(".notice").inner_text()
    section = teacher.page.locator(f"#section-{A3}").inner_text()
    assert f"{TOP3:g} / {TOP3:g}" in section and "× 0.5" not in section
    started = time.monotonic()
    while gradebook_score(site, late, A3) != TOP3 and time.monotonic() - started < GRADEBOOK_SECONDS:
        time.sleep(0.25)
    assert gradebook_score(site, late, A3) == TOP3, f"the gradebook's copy did not follow in {GRADEBOOK_SECONDS} s"
    print(f"gradebook copy followed the extension in {time.monotonic() - started:.2f} s")

    grant(teacher, site, waived, A3, lambda tools: tools.locator("button", has_text="免除迟交扣分").click())
    assert "已免除该生" in teacher.page.locator(".notice").inner_text()
    teacher.page.locator(f"#section-{A3} details.tools summary").click()
    found += audit(teacher, "instructor-student-waived")
    assert "已为该生免除" in teacher.page.locator(f"#section-{A3}").inner_text()

    for who, shot in ((late, "extended"), (waived, "waived")):
        tab = Tab(browser, width)
        login(tab, site["base"], who, site["codes"][who])
        tab.page.goto(f"{site['base']}/assignments/{A3}")
        facts = tab.page.locator("dl.facts").inner_text()
        attempt = tab.page.locator("#live li.attempt").first.inner_text()
        assert f"{TOP3:g} / {TOP3:g}" in attempt and "× 0.5" not in attempt
        if who == late:
            assert "（已为你延期）" in facts and "迟交，" not in attempt and "· 迟交" not in attempt
        else:
            assert "迟交扣分已为你免除" in facts and "迟交，扣分已免除" in attempt
        assert "现在只显示得分；迟交期在" in tab.page.locator("#live").inner_text()  # item 7's one sentence
        found += audit(tab, f"student-{shot}")
        if who == waived:  # the course's page says it too, and links the book's assignments page
            tab.page.goto(f"{site['base']}/")
            card = tab.page.locator(f"#assignment-{A3}").inner_text()
            assert "迟交扣分已为你免除" in card and f"{TOP3:g} / {TOP3:g}（迟交，扣分已免除）" in card
            assert tab.page.locator("main a", has_text="编程作业").get_attribute("href") == BOOK + "book/assignments/index.html"
            found += audit(tab, "student-course")
        found += tab.clean()
        tab.close()
    found += teacher.clean()
    teacher.close()
    assert not found, "\n".join(found)


@pytest.mark.parametrize("width, who", [("desktop", "s005"), ("phone", "s006")])
def test_a_check_shows_the_visible_tests_and_uses_no_attempt_and_a_diagnosis_links_the_book(site, browser, width, who):
    tab = Tab(browser, width)
    login(tab, site["base"], who, site["codes"][who])
    page = tab.page
    assert page.locator("a.book-link").get_attribute("href") == BOOK
    page.goto(f"{site['base']}/assignments/{A1}")
    assert "24 小时内还可提交 3 次" in page.locator("#live").inner_text()
    page.set_input_files("#check-notebook", files=[{"name": "threshold_metrics.ipynb", "mimeType": "application/x-ipynb+json",
                                                    "buffer": WRONG1}])
    page.wait_for_function("() => { const r = document.querySelector('#check-live .check-result');"
                           " return r && r.dataset.status === 'graded'"
                           " && document.getElementById('check-live').dataset.pending === '0'; }", timeout=120_000)
    result = page.locator("#check-live").inner_text()
    visible = [c.id for c in all_assignments()[A1].cases if c.cell.endswith("_visible")]
    assert "可见测试：" in result and all(i in result for i in visible)
    assert not any(c.id in result for c in all_assignments()[A1].cases if not c.cell.endswith("_visible"))
    assert "这一小时内还可检查 2 次" in result
    page.wait_for_function("() => document.getElementById('check-message').textContent === ''", timeout=10_000)
    assert "24 小时内还可提交 3 次" in page.locator("#live").inner_text() and "还没有提交" in page.locator("#live").inner_text()
    found = audit(tab, "student-check")

    page.set_input_files("#notebook", files=[{"name": "threshold_metrics.ipynb", "mimeType": "application/x-ipynb+json",
                                              "buffer": WRONG1}])
    page.wait_for_function("() => { const a = document.querySelector('#live li.attempt');"
                           " return a && a.dataset.status === 'graded' && document.getElementById('live').dataset.pending === '0'; }",
                           timeout=120_000)
    link = page.locator("#live .book-section a").first
    href = link.get_attribute("href")
    assert href.startswith(BOOK + "book/") and ".html#" in href, href
    page.locator("#live details.fb-diagnosis").first.evaluate("d => d.open = true")
    found += audit(tab, "student-diagnosis")
    found += tab.clean()
    tab.close()
    assert not found, "\n".join(found)


@pytest.mark.parametrize("width, students", [("desktop", ("s007", "s008")), ("phone", ("s009", "s010"))])
def test_a_whole_regrade_asks_first_and_everyone_keeps_seeing_results(site, browser, width, students):
    for who in students:
        graded(site, who, A1, SOLUTION1)
    teacher = instructor(browser, site, width)
    page = teacher.page
    page.goto(f"{site['base']}/instructor/assignments/{A1}")
    asked: list[str] = []

    def answer(dialog, accept: bool) -> None:
        asked.append(dialog.message)
        dialog.accept() if accept else dialog.dismiss()

    before = page.locator("#regrade-progress").all_inner_texts()  # (the other width's regrade, when it ran first)
    page.once("dialog", lambda d: answer(d, False))
    page.locator("#regrade-all button").click()
    page.wait_for_timeout(1000)
    assert asked and "确定要重新评分本作业的全部" in asked[0]
    assert page.locator("#regrade-progress").all_inner_texts() == before  # cancelled: nothing was put back
    found = audit(teacher, "dashboard")

    student = Tab(browser, width)
    login(student, site["base"], students[0], site["codes"][students[0]])
    student.page.goto(f"{site['base']}/assignments/{A1}")
    page.once("dialog", lambda d: answer(d, True))
    with page.expect_navigation():
        page.locator("#regrade-all button").click()
    seen_board, seen_student, shot = [], [], False
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        board = page.locator("#live").inner_text()
        mine = student.page.locator("#live").inner_text()
        seen_board.append(board)
        seen_student.append(mine)
        if "在重新评分" in board and not shot:
            shot = True
            found += audit(teacher, "dashboard-regrading")
            found += audit(student, "student-regrading")
        progress = page.locator("#regrade-progress")
        if progress.count() and "已完成" in progress.inner_text():
            break
        page.wait_for_timeout(150)
    assert progress.count() and "已完成" in progress.inner_text()
    assert not [b for b in seen_board if "还没有评分完成的提交" in b]
    assert not [s for s in seen_student if "得分：—" in s or "排队中" in s]
    print(f"regrade observed in {len(seen_board)} samples; the kept-results note seen: {shot}")
    found += teacher.clean() + student.clean()
    teacher.close()
    student.close()
    assert not found, "\n".join(found)
