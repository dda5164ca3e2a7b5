"""The pages of a real ``autograder serve`` in Debian's chromium (Playwright): students and instructors,
at desktop width and at 375 px, with an axe-core audit of every page.

With ``COURSE_SCREENSHOTS=1`` every page visited is screenshotted into ``artifacts/pages/`` (pictures to look at,
compared by nothing).  Every time on a page is in the course's zone
(+08:00 here, the deadlines'), whatever the device's zone; the upload limit a page states is the one the server
enforces; feedback reads on a phone (a summary first, cases folded by function, earlier attempts folded).  Each flow fails on a console error, a page
error, a failed request or an HTTP error answer other than the ones the flow expects (a wrong code's 401,
another student's submission's 404, the server's refusal of an upload past the attempt limit).
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import make_corpus
import pytest

from autograder.model import MAX_NOTEBOOK_BYTES

from .server import REPO, UPGRADED, Server, Tosser, make_course, notebook_bytes, screenshot, submit, wait_done

pytestmark = pytest.mark.slow

A1, A2, A3 = "ps1_threshold_metrics", "ps2_roc_auc", "ps3_pr_ap"
MAX1, MAX2 = make_corpus.A[A1].max_score(), make_corpus.A[A2].max_score()
FAR = "2099-01-01T00:00:00+08:00"
PAST = "2020-01-01T00:00:00+08:00"
STUDENTS = [f"s{i:03d}" for i in range(1, 11)]
COURSE_ZONE = "UTC+08:00"  # the zone of the deadlines of course.yml below
PHONE_HEIGHT_BOUND = 2600  # CSS px: the assignment page after a correct and a wrong attempt, at 375 px (was 17,600)
DESKTOP_HEIGHT_BOUND = 2200  # the same at 1280 px
DATETIME = re.compile(r"(\d{4}-\d{2}-\d{2} \d{2}:\d{2})(?:（(UTC[+-]\d{2}:\d{2})）)?")
SHOTS = REPO / "artifacts" / "pages"
AXE = REPO / "tests" / "a11y" / "node_modules" / "axe-core" / "axe.min.js"
WIDTHS = {"desktop": {"width": 1280, "height": 900}, "phone": {"width": 375, "height": 740}}
SOLUTION = notebook_bytes(make_corpus.solution(A1))
WRONG = notebook_bytes(make_corpus.build()["wrong_strict_threshold"][1])
OTHER = notebook_bytes(make_corpus.solution(A2))
AXE_SOURCE = ""
UNTOUCHED2 = notebook_bytes(make_corpus.student(A2))
SOLUTION3 = notebook_bytes(make_corpus.solution(A3))


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    data = tmp_path_factory.mktemp("pages") / "data"
    config = {"login_failures": {"max": 8, "window_minutes": 15}, "assignments": {
        A1: {"deadline": FAR, "attempts_per_24h": 3, "feedback_before_deadline": "cases", "counts": "best"},
        A2: {"deadline": FAR, "attempts_per_24h": 5, "feedback_before_deadline": "full", "counts": "last"},
        A3: {"deadline": PAST},
    }}
    codes = make_course(data, STUDENTS, config=config)
    server = Server(data, "--jobs", "2").start()
    SERVER_LOGS.append(server.log)
    with server.client(codes["s008"]) as c:  # someone else's graded submission, for the URL-editing attack
        theirs = submit(c, A1, WRONG, "threshold_metrics.ipynb").json()["id"]
        wait_done(c, [theirs])
    yield {"server": server, "base": server.url, "codes": codes, "data": data, "theirs": theirs}
    server.stop()


class Tab:
    """A page in a fresh browser context that records every problem (console errors, failed requests, HTTP >= 400)."""

    def __init__(self, browser, width: str, timezone_id: str = "Asia/Shanghai") -> None:
        self.ctx = browser.new_context(viewport=WIDTHS[width], timezone_id=timezone_id, locale="zh-CN", accept_downloads=True)
        self.page = self.ctx.new_page()
        self.width = width
        self.problems: list[str] = []
        self.expected: list[tuple[int, str]] = []
        self.page.on("console", lambda m: self.problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.problems.append(f"page error: {e}"))
        self.page.on("requestfailed", self._failed)
        self.page.on("response", self._response)

    def _failed(self, r) -> None:
        # the icon (fetched after a page has loaded) or a live region's poll, cancelled by a click that leaves the page
        if r.failure == "net::ERR_ABORTED" and (r.url.endswith("/static/favicon.svg") or r.url.split("?")[0].endswith("/live")):
            return
        self.problems.append(f"request failed: {r.url} {r.failure}")

    def _response(self, r) -> None:
        if r.status < 400:
            return
        url = r.url.split("?")[0]
        hit = next((e for e in self.expected if e[0] == r.status and url.endswith(e[1])), None)
        if hit is not None:
            self.expected.remove(hit)
        else:
            self.problems.append(f"HTTP {r.status}: {r.url}")

    def expect_error(self, status: int, url_end: str) -> None:
        """The next answer ``status`` to a URL ending in ``url_end`` is part of the flow (and its console message)."""
        self.expected.append((status, url_end))

    def shot(self, name: str) -> None:
        """A full-page screenshot into ``artifacts/pages/`` with ``COURSE_SCREENSHOTS=1`` (:func:`.server.screenshot`)."""
        screenshot(self.page, SHOTS / f"{name}-{self.width}.png")

    def clean(self) -> list[str]:
        """The problems seen, without the console lines of the expected error answers (a live region's poll cut by
        leaving the page is never recorded: :meth:`_failed`)."""
        return [p for p in self.problems if not re.fullmatch(r"console error: Failed to load resource: the server responded "
                                                            r"with a status of (400|401|403|404|413|429) \(.*\)", p)]

    def close(self) -> None:
        self.ctx.close()


SERVER_LOGS: list[Path] = []  # the running service's log, quoted when a page does not answer


def login(tab: Tab, base: str, who: str, code: str) -> None:
    """Sign in through the form and wait for the server's answer to the POST (not only for the old page's load)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    tab.page.goto(f"{base}/login")
    tab.page.fill("#login", who)
    tab.page.fill("#code", code)
    try:
        with tab.page.expect_response(lambda r: r.request.method == "POST" and r.url.split("?")[0].endswith("/login"),
                                      timeout=90_000):
            tab.page.click("button[type=submit]")
    except PlaywrightTimeout:
        log = SERVER_LOGS[-1].read_text(errors="replace")[-4000:] if SERVER_LOGS else "(no log)"
        raise AssertionError(f"the service did not answer the sign-in form in 90 s; its log ends:\n{log}") from None
    tab.page.wait_for_load_state("load")


def pick(tab: Tab, name: str, data: bytes) -> None:
    tab.page.set_input_files("#notebook", files=[{"name": name, "mimeType": "application/x-ipynb+json", "buffer": data}])


def drop(tab: Tab, name: str, data: bytes) -> None:
    """Drag a file onto the drop zone (a real DataTransfer with a File, as the browser makes it)."""
    tab.page.evaluate("""([name, text]) => {
        const dt = new DataTransfer();
        dt.items.add(new File([text], name, {type: "application/x-ipynb+json"}));
        const zone = document.getElementById("drop");
        for (const type of ["dragenter", "dragover", "drop"]) {
            zone.dispatchEvent(new DragEvent(type, {dataTransfer: dt, bubbles: true, cancelable: true}));
        }
    }""", [name, data.decode("utf-8")])


def latest_attempt(tab: Tab):
    return tab.page.locator("#live li.attempt").first


def wait_graded(tab: Tab, timeout: float = 120_000) -> None:
    """Until the latest attempt is graded (or failed) and the page has stopped polling (the attempt that counts
    is recorded with the grade, in one transaction; the page shows both by itself)."""
    tab.page.wait_for_function("() => { const a = document.querySelector('#live li.attempt');"
                               " return a && ['graded', 'failed'].includes(a.dataset.status)"
                               " && document.getElementById('live').dataset.pending === '0'; }", timeout=timeout)


# ---- students


@pytest.mark.parametrize("width, who", [("desktop", "s001"), ("phone", "s002")])
def test_student_submits_and_sees_feedback_without_reloading(site, browser, width, who):
    base, codes = site["base"], site["codes"]
    tab = Tab(browser, width, timezone_id="America/New_York")
    page = tab.page
    tab.expect_error(401, "/login")
    code = codes[who]
    login(tab, base, who, code[:-1] + ("x" if code[-1] != "x" else "y"))  # one letter off (codes end in x 1 time in 31)
    assert "学号或访问码不正确" in page.locator(".error-message").inner_text()
    tab.shot("login-wrong-code")
    login(tab, base, who, code)
    assert page.url == f"{base}/" and page.locator("h1").inner_text() == "我的作业"
    card = page.locator(f"#assignment-{A1}")
    # the deadline 2099-01-01 00:00 +08:00 in the course's zone, not the device's (New York), which the page names
    assert "2099-01-01 00:00（UTC+08:00）" in card.inner_text() and "还剩" in card.inner_text()
    note = page.locator(".tz-note").inner_text()
    assert "UTC+08:00" in note and "你的设备在 UTC-05:00" in note
    assert "24 小时内还可提交 3 次" in card.inner_text()
    assert "已截止" in page.locator(f"#assignment-{A3}").inner_text()
    tab.shot("course")
    with page.expect_download() as download:
        card.locator("a[download]").click()
    assert json.loads(Path(download.value.path()).read_text(encoding="utf-8"))["nbformat"] == 4
    card.locator("a.primary").click()
    page.wait_for_load_state("load")
    assert page.locator("h1").inner_text().strip() and "还没有提交" in page.locator("#live").inner_text()
    page.evaluate("window.notReloaded = true")
    tab.shot("assignment-empty")

    # refused in the browser, before anything is sent
    pick(tab, "notes.txt", b"hello")
    page.wait_for_function("() => document.getElementById('upload-message').textContent.includes('不是 Jupyter 笔记本')")
    pick(tab, "roc_auc.ipynb", OTHER)
    page.wait_for_function("() => document.getElementById('upload-message').textContent.includes('这是作业 ps2_roc_auc 的笔记本')")
    pick(tab, "broken.ipynb", b"{not json")
    page.wait_for_function("() => document.getElementById('upload-message').textContent.includes('不是合法的 JSON')")
    tab.shot("assignment-refused")
    assert page.locator("#live li.attempt").count() == 0

    # a correct notebook: queued -> graded on screen, full marks and feedback
    (drop if width == "phone" else pick)(tab, "threshold_metrics.ipynb", SOLUTION)
    page.wait_for_selector("#live li.attempt")
    seen = latest_attempt(tab).get_attribute("data-status")
    assert seen in ("queued", "grading", "graded")
    wait_graded(tab)
    first = latest_attempt(tab)
    assert f"{MAX1} / {MAX1}" in first.inner_text() and "计入成绩" in first.inner_text()
    assert "全部用例通过" in first.locator(".fb-summary").inner_text()
    # the "received, queued" message went when the attempt was graded
    page.wait_for_function("() => !document.getElementById('upload-message').textContent.includes('排队')", timeout=5000)
    assert page.evaluate("window.notReloaded") is True
    tab.shot("assignment-graded")

    # a wrong one: which cases failed (policy "cases": no inputs or values before the deadline)
    (pick if width == "phone" else drop)(tab, "threshold_metrics (1).ipynb", WRONG)
    page.wait_for_function("() => document.querySelectorAll('#live li.attempt').length === 2")
    wait_graded(tab)
    second = latest_attempt(tab)
    summary = second.locator(".feedback > :first-child")  # a summary first: the score and what to fix
    assert "fb-summary" in summary.get_attribute("class")
    passed = re.search(rf"得分 ([\d.]+) / {MAX1}：(\d+) / (\d+) 个用例通过", summary.inner_text())
    assert passed and float(passed.group(1)) < MAX1 and int(passed.group(2)) < int(passed.group(3))
    assert "要改的地方" in summary.inner_text() and "binary_metrics" in summary.inner_text()
    folds = second.locator("details.fb-function")  # the failed cases, folded by function
    assert folds.count() >= 1 and not any(d.evaluate("d => d.open") for d in folds.all())
    page.wait_for_function("() => !document.getElementById('upload-message').textContent.includes('排队')", timeout=5000)
    assert page.locator("#live li.attempt.older details[open]").count() == 0  # the earlier attempt is one folded line
    height = page.evaluate("document.documentElement.scrollHeight")
    assert height <= PHONE_HEIGHT_BOUND if width == "phone" else height <= DESKTOP_HEIGHT_BOUND, height
    folds.first.locator("summary").click()
    text = folds.first.inner_text()
    assert "参考实现的结果" not in text and "edge." in text
    assert "计入成绩" not in second.inner_text()  # the best attempt (the first) still counts
    assert "计入成绩" in page.locator("#live li.attempt").nth(1).inner_text()
    assert "第 1 次提交" in page.locator(".summary-line").inner_text()
    tab.shot("assignment-wrong")

    # the third and last attempt of the 24 hours; then the page says so and the server refuses too
    pick(tab, "threshold_metrics.ipynb", WRONG)
    page.wait_for_function("() => document.querySelectorAll('#live li.attempt').length === 3")
    wait_graded(tab)
    page.wait_for_function("() => document.getElementById('upload-message').textContent.includes('已用完')")
    assert page.locator("#drop").is_hidden() and "已用完" in page.locator(".summary-line").inner_text()
    tab.expect_error(429, "/submissions")
    status = page.evaluate("""async (data) => {
        const form = new FormData(); form.append('csrf_token', document.querySelector('[name=csrf_token]').value);
        form.append('notebook', new File([data], 'threshold_metrics.ipynb'));
        const r = await fetch(document.getElementById('upload').action, {method: 'POST', body: form});
        return [r.status, (await r.json()).error];
    }""", SOLUTION.decode())
    assert status[0] == 429 and "已用完" in status[1]
    assert page.evaluate("window.notReloaded") is True
    tab.shot("assignment-limit")
    page.reload()
    assert "已用完" in page.locator("#closed").inner_text() and page.locator("#upload").count() == 0

    # one attempt's own page; another student's submission answers 404 like a made-up id, pages and fragments
    oldest = page.locator("#live li.attempt").last
    oldest.locator("summary").first.click()
    oldest.locator("a", has_text="单独页面").click()
    page.wait_for_load_state("load")
    assert "第 1 次提交" in page.locator("h1").inner_text() and f"{MAX1} / {MAX1}" in page.locator("#live").inner_text()
    tab.shot("submission")
    for url in (f"/submissions/{site['theirs']}", f"/submissions/{site['theirs']}/live", "/submissions/" + "A" * 22):
        tab.expect_error(404, url.rsplit("/", 1)[-1])
        answer = page.goto(base + url)
        assert answer.status == 404 and "没有这份提交" in page.locator("main").inner_text()
        assert "s008" not in page.content()
    tab.shot("not-found")
    tab.expect_error(403, "/instructor/")
    assert page.goto(f"{base}/instructor/").status == 403
    assert tab.clean() == [], tab.clean()
    tab.close()


# ---- instructors


def _instructor(browser, site, width: str) -> Tab:
    tab = Tab(browser, width)
    login(tab, site["base"], "王老师", site["codes"]["instructor"])
    assert tab.page.url.endswith("/instructor/"), tab.page.url
    assert "教师总览" in tab.page.locator("h1").inner_text()
    return tab


@pytest.mark.parametrize("width, students", [("desktop", ("s003", "s004")), ("phone", ("s005", "s006"))])
def test_instructor_dashboard_regrade_extend_and_grades(site, browser, width, students):
    base, codes, server = site["base"], site["codes"], site["server"]
    tab = _instructor(browser, site, width)
    page = tab.page
    tab.shot("instructor-home")
    page.click(f"a[href$='instructor/assignments/{A2}']")
    page.wait_for_load_state("load")
    page.evaluate("window.notReloaded = true")
    before = int(page.locator("#fig-students").inner_text().split("/")[0])
    histogram = "() => [...document.querySelectorAll('#histogram tbody tr td:first-of-type')].map(td => +td.textContent)"
    bins = page.evaluate(histogram) or [0] * 10
    # students submit while the dashboard is open: it updates by itself
    with server.client(codes[students[0]]) as c0, server.client(codes[students[1]]) as c1:
        ids = [submit(c0, A2, OTHER, "roc_auc.ipynb").json()["id"], submit(c1, A2, UNTOUCHED2, "roc_auc.ipynb").json()["id"]]
        page.wait_for_function(f"() => parseInt(document.getElementById('fig-students').textContent) === {before + 2}", timeout=30_000)
        wait_done(c0, ids[:1])
        wait_done(c1, ids[1:])
    page.wait_for_function("() => document.querySelector('#cases tbody tr')", timeout=30_000)
    assert page.evaluate("window.notReloaded") is True
    page.wait_for_function(f"() => ({histogram})().reduce((a, b) => a + b, 0) === {sum(bins) + 2}", timeout=30_000)
    after = page.evaluate(histogram)
    assert after[0] == bins[0] + 1 and after[9] == bins[9] + 1  # 0 points and full marks
    n = sum(after)  # every student with a graded ps2 attempt; half of the new ones failed every case
    assert re.search(rf"\d+/{n}（\d+%）", page.locator("#cases").inner_text())
    tab.shot("dashboard")

    # regrade the whole assignment (the browser asks first), with progress
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("button.danger")
    page.wait_for_load_state("load")
    page.wait_for_function("() => document.getElementById('regrade-progress') && "
                           "document.getElementById('regrade-progress').textContent.includes('已完成')", timeout=120_000)
    progress = page.locator("#regrade-progress").inner_text()
    done, total = map(int, re.search(r"(\d+) / (\d+)", progress).groups())
    assert done == total >= 2
    tab.shot("dashboard-regraded")

    # look up a student: attempts and feedback, regrade one submission
    page.goto(f"{base}/instructor/students")
    tab.shot("students")
    page.fill("#q", students[0])
    page.click("form.search button")
    page.wait_for_load_state("load")
    assert page.locator("#students tbody tr").count() == 1
    page.click(f"#students a[href$='instructor/students/{students[0]}']")
    page.wait_for_load_state("load")
    section = page.locator(f"#section-{A2}")
    assert f"{MAX2} / {MAX2}" in section.inner_text() and "全部用例通过" in section.locator(".fb-summary").first.inner_text()
    section.locator("button", has_text="重新评分这次提交").first.click()
    page.wait_for_load_state("load")
    assert "已放回队列" in page.locator(".notice").inner_text()
    page.wait_for_function(f"() => document.querySelector('#section-{A2} li.attempt').dataset.status === 'graded'", timeout=120_000)
    tab.shot("student")

    # extend the closed assignment's deadline for this student, grant two more attempts
    tools = page.locator(f"#section-{A3} details.tools")
    tools.locator("summary").click()
    assert "课程时区 UTC+08:00" in tools.locator("label[for^=deadline]").inner_text()
    tools.locator("input[name=deadline]").fill("2099-02-01T12:00")
    tools.locator("button", has_text="延期").click()
    page.wait_for_load_state("load")
    assert "已为该生延期" in page.locator(".notice").inner_text()
    assert "已为该生延期" in page.locator(f"#section-{A3}").inner_text()
    assert "2099-02-01 12:00（UTC+08:00）" in page.locator(f"#section-{A3}").inner_text()  # read as written, in the course's zone
    tools = page.locator(f"#section-{A1} details.tools")
    tools.locator("summary").click()
    tools.locator("input[name=extra]").fill("2")
    tools.locator("button", has_text="增加次数").click()
    page.wait_for_load_state("load")
    assert "5（含额外 2 次）" in page.locator(f"#section-{A1}").inner_text()
    student = Tab(browser, width)
    login(student, base, students[0], codes[students[0]])
    assert "已为你延期" in student.page.locator(f"#assignment-{A3}").inner_text()
    assert "还可提交 5 次" in student.page.locator(f"#assignment-{A1}").inner_text()
    student.page.goto(f"{base}/assignments/{A3}")
    pick(student, "pr_ap.ipynb", SOLUTION3)
    wait_graded(student)
    assert "迟交" not in latest_attempt(student).inner_text() and "/ " in latest_attempt(student).inner_text()
    assert student.clean() == [], student.clean()
    student.close()

    # grades.csv holds the counting attempts, with names and times, and a row for everyone enrolled
    page.goto(f"{base}/instructor/")
    with page.expect_download() as download:
        page.click("a[href$='api/v1/grades.csv']")
    data = Path(download.value.path()).read_bytes()
    assert data.startswith(b"\xef\xbb\xbf")  # UTF-8 with a byte order mark: a Chinese Excel reads the names right
    rows = list(csv.DictReader(io.StringIO(data.decode("utf-8-sig"))))
    mine = {(r["student_id"], r["assignment"]): r for r in rows}
    assert float(mine[(students[0], A2)]["score"]) == MAX2 and float(mine[(students[1], A2)]["score"]) == 0
    assert mine[(students[0], A3)]["score"] and mine[(students[0], A2)]["student_name"] == f"学生 {students[0]}"
    assert DATETIME.match(mine[(students[0], A2)]["submitted_at"]) and mine[(students[0], A2)]["time_zone"] == COURSE_ZONE
    assert len(rows) == len(STUDENTS) * 3 and mine[("s010", A3)]["score"] == ""  # s010 never submits A3
    assert tab.clean() == [], tab.clean()
    tab.close()


def test_roster_import_codes_once_and_reset(site, browser):
    base = site["base"]
    tab = _instructor(browser, site, "desktop")
    page = tab.page
    page.goto(f"{base}/instructor/roster")
    tab.shot("roster")
    page.set_input_files("#roster", files=[{"name": "roster.csv", "mimeType": "text/csv",
                                           "buffer": "student_id,name\ns001,学生 s001\nn100,新同学\n".encode()}])
    with page.expect_download() as download:
        page.click("#roster-import button")
    rows = list(csv.DictReader(io.StringIO(Path(download.value.path()).read_text(encoding="utf-8"))))
    assert [r["student_id"] for r in rows] == ["n100"] and rows[0]["code"]
    page.wait_for_function("() => document.getElementById('import-message').textContent.includes('新建 1 个账号')")
    page.wait_for_selector("#roster-table a[href$='students/n100']")
    tab.shot("roster-imported")
    newcomer = Tab(browser, "phone")
    login(newcomer, base, "n100", rows[0]["code"])
    assert newcomer.page.locator("h1").inner_text() == "我的作业"
    # "换发" asks first: cancelled, nothing changes (the newcomer's session still works)
    asked: list[str] = []
    page.once("dialog", lambda d: (asked.append(d.message), d.dismiss()))
    page.locator("#roster-table tr", has_text="n100").locator("button").click()
    page.wait_for_timeout(500)
    assert asked and "n100" in asked[0] and "立即失效" in asked[0] and page.url.endswith("/instructor/roster")
    newcomer.page.goto(f"{base}/")
    assert newcomer.page.locator("h1").inner_text() == "我的作业"
    tab.shot("roster-reset-asked")
    # confirmed: a new code for n100, shown once; the old code and its session stop working
    page.once("dialog", lambda d: d.accept())
    page.locator("#roster-table tr", has_text="n100").locator("button").click()
    page.wait_for_load_state("load")
    page.wait_for_selector("#new-code")
    code = page.locator("#new-code").inner_text()
    assert code != rows[0]["code"] and len(code) == 35
    tab.shot("code")
    newcomer.page.goto(f"{base}/")
    assert newcomer.page.url.endswith("/login")
    newcomer.expect_error(401, "/login")
    login(newcomer, base, "n100", rows[0]["code"])
    assert "学号或访问码不正确" in newcomer.page.locator(".error-message").inner_text()
    login(newcomer, base, "n100", code)
    assert newcomer.page.locator("h1").inner_text() == "我的作业"
    assert tab.clean() == [] and newcomer.clean() == [], tab.clean() + newcomer.clean()
    tab.close()
    newcomer.close()


# ---- every page: screenshots at both widths, axe-core, no problems


def _pages(site) -> dict[str, tuple[str, str]]:
    """Page name -> (who, path); s007's graded submission is made on the first call (both widths audit it)."""
    if "s007" not in site:
        with site["server"].client(site["codes"]["s007"]) as c:
            site["s007"] = submit(c, A2, notebook_bytes(make_corpus.student(A2)), "roc_auc.ipynb").json()["id"]
            wait_done(c, [site["s007"]])
    sid = site["s007"]
    return {"login": ("", "/login"), "course": ("s007", "/"), "assignment": ("s007", f"/assignments/{A2}"),
            "submission": ("s007", f"/submissions/{sid}"), "not-found": ("s007", "/no/such/page"),
            "instructor-home": ("instructor", "/instructor/"), "dashboard": ("instructor", f"/instructor/assignments/{A2}"),
            "students": ("instructor", "/instructor/students"), "student": ("instructor", "/instructor/students/s007"),
            "roster": ("instructor", "/instructor/roster")}


@pytest.mark.parametrize("width", list(WIDTHS))
def test_every_page_passes_axe_at_both_widths(site, browser, width):
    assert AXE.is_file(), "找不到 axe-core（make setup 会用 npm 安装 tests/a11y/package.json）"
    global AXE_SOURCE
    AXE_SOURCE = AXE.read_text(encoding="utf-8") + "\n;typeof axe"
    found = []
    tabs: dict[str, Tab] = {}
    for name, (who, path) in _pages(site).items():
        if who not in tabs:
            tabs[who] = Tab(browser, width, timezone_id="America/New_York")  # a device in another zone than the course
            if who:
                login(tabs[who], site["base"], "王老师" if who == "instructor" else who, site["codes"][who])
        tab = tabs[who]
        if name == "not-found":
            tab.expect_error(404, "page")
        tab.page.goto(site["base"] + path)
        tab.page.wait_for_load_state("load")
        tab.shot(f"audit-{name}")  # as a reader first sees it (unfolded, a full feedback page is tens of screens long)
        for details in tab.page.locator("details").all():  # audit what is folded too
            details.evaluate("d => d.open = true")
        wide = tab.page.evaluate("""() => [...document.querySelectorAll('body *')]
            .filter(el => el.getBoundingClientRect().right > document.documentElement.clientWidth + 0.5 && !el.closest('.table-wrap, pre, table'))
            .map(el => `${el.tagName}.${el.className}: ${el.textContent.slice(0, 40)}`).slice(0, 5)""")
        overflow = tab.page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert not wide and overflow <= 0, f"{name}: {overflow}px wider than the {width} screen: {wide}"
        found += _one_zone(tab, name) + _narrow_cells(tab, name)
        tab.page.evaluate(AXE_SOURCE)  # evaluated by the debugger, not as a script tag (the strict CSP would block that)
        result = tab.page.evaluate("() => axe.run(document, {resultTypes: ['violations']})")
        for v in result["violations"]:
            if v["impact"] in ("serious", "critical"):
                found.append(f"{name}: {v['impact']} {v['id']}: {v['help']} — {[n['target'] for n in v['nodes'][:3]]}")
    for who, tab in tabs.items():
        found += [f"{who}: {p}" for p in tab.clean()]
        tab.close()
    assert not found, "\n".join(found)


def _one_zone(tab: Tab, name: str) -> list[str]:
    """Every date and time on the page is written with the course's zone, and a page with times says which zone."""
    text = tab.page.locator("main").inner_text()
    times = DATETIME.findall(text)
    out = [f"{name}: {t} is not in {COURSE_ZONE} but in {zone or 'no zone'}" for t, zone in times if zone != COURSE_ZONE]
    if times:
        note = tab.page.locator(".tz-note")
        if note.count() != 1 or COURSE_ZONE not in note.inner_text() or "你的设备在 UTC-05:00" not in note.inner_text():
            out.append(f"{name}: times without one note naming the course's zone and the device's")
    return out


def _narrow_cells(tab: Tab, name: str) -> list[str]:
    """Table cells whose content box is narrower than two characters (text wrapping a character per line)."""
    narrow = tab.page.evaluate("""() => [...document.querySelectorAll('main th, main td')].filter(c => c.getClientRects().length)
        .filter(c => !c.closest('thead') || c.closest('thead').getBoundingClientRect().width > 1)  // not a header kept for screen readers only
        .map(c => { const s = getComputedStyle(c);
                    return [c.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight), 2 * parseFloat(s.fontSize),
                            c.textContent.trim().slice(0, 30)]; })
        .filter(([w, two]) => w < two)""")
    return [f"{name}: a table cell {w:.0f} px wide (< {two:.0f}): {text}" for w, two, text in narrow]


def at_both_widths(tab: Tab, check) -> None:
    """``check()`` on the tab's page as it is, then again at the other width (the same page laid out anew: the text
    each width shows), and back: one flow for both widths where nothing in it depends on the width."""
    first, other = tab.width, "phone" if tab.width == "desktop" else "desktop"
    for width in (first, other):
        tab.page.set_viewport_size(WIDTHS[width])
        tab.width = width
        check()
    tab.page.set_viewport_size(WIDTHS[first])
    tab.width = first


def test_counts_last_warns_before_the_upload_and_on_the_lower_result(site, browser):
    """Under ``counts: last`` a lower score replaces a better one: the page says so before and after, at both widths
    (one student's two uploads; each width was a student of its own)."""
    tab = Tab(browser, "desktop")
    page = tab.page
    login(tab, site["base"], "s009", site["codes"]["s009"])
    page.goto(f"{site['base']}/assignments/{A2}")

    def warned() -> None:
        assert "最后一次" in page.locator("#counts-warning").inner_text(), tab.width

    at_both_widths(tab, warned)
    pick(tab, "roc_auc.ipynb", OTHER)
    wait_graded(tab)

    def before_the_next_upload() -> None:  # what it would replace
        assert f"{MAX2} / {MAX2}" in latest_attempt(tab).inner_text() and page.locator(".last-counts").count() == 0, tab.width
        warning = page.locator("#counts-warning").inner_text()
        assert f"{MAX2} 分" in warning and "取代" in warning, (tab.width, warning)

    at_both_widths(tab, before_the_next_upload)
    pick(tab, "roc_auc.ipynb", UNTOUCHED2)
    page.wait_for_function("() => document.querySelectorAll('#live li.attempt').length === 2")
    wait_graded(tab)

    def after_the_lower_result() -> None:
        note = latest_attempt(tab).locator(".last-counts").inner_text()
        assert f"低于第 1 次提交的 {MAX2} 分" in note and "计入成绩的是这次的 0 分" in note, (tab.width, note)
        assert f"0 / {MAX2}" in page.locator(".summary-line").inner_text(), tab.width
        tab.shot("assignment-counts-last")

    at_both_widths(tab, after_the_lower_result)
    assert tab.clean() == [], tab.clean()
    tab.close()


def test_the_limit_stated_is_the_limit_enforced_and_the_favicon_answers(site, browser, tmp_path):
    tab = Tab(browser, "phone")
    page = tab.page
    login(tab, site["base"], "s009", site["codes"]["s009"])
    page.goto(f"{site['base']}/assignments/{A1}")
    stated = re.fullmatch(r"不超过 (\d+(?:\.\d+)?) MiB", page.locator("#upload-limit").inner_text())
    assert stated, page.locator("#upload-limit").inner_text()
    limit = int(float(stated.group(1)) * (1 << 20))
    assert limit == MAX_NOTEBOOK_BYTES  # the default: the grader's limit, which the notebooks and the book state
    # the browser refuses one byte more, naming the same number; so does the server, and not one byte less
    big = tmp_path / "big.ipynb"  # picked from disk: a buffer of 20 MiB crosses to the browser as base64 JSON
    big.write_bytes(b" " * (limit + 1))
    page.set_input_files("#notebook", files=[str(big)])
    page.wait_for_function("() => document.getElementById('upload-message').textContent.includes('超过上限')")
    assert f"超过上限 {stated.group(1)} MiB" in page.locator("#upload-message").inner_text()
    tab.expected += [(413, "/submissions"), (400, "/submissions")]
    answers = page.evaluate("""async (sizes) => {
        const out = [];
        for (const n of sizes) {
            const form = new FormData(); form.append('csrf_token', document.querySelector('[name=csrf_token]').value);
            const bytes = new Uint8Array(n).fill(32); bytes[0] = 123;  // "{" and spaces: not JSON
            form.append('notebook', new File([bytes], 'threshold_metrics.ipynb'));
            const r = await fetch(document.getElementById('upload').action, {method: 'POST', body: form});
            out.push([r.status, (await r.json()).error]);
        }
        return out;
    }""", [limit + 1, limit])
    assert answers[0][0] == 413 and f"最大 {stated.group(1)} MiB" in answers[0][1], answers[0]
    assert answers[1][0] == 400 and "JSON" in answers[1][1], answers[1]  # the size passed; the content did not
    icon = page.request.get(f"{site['server'].base}/favicon.ico")
    assert icon.status == 200 and icon.headers["content-type"].startswith("image/svg+xml") and b"<svg" in icon.body()
    linked = page.evaluate("document.querySelector('link[rel=icon]').href")
    assert page.request.get(linked).status == 200
    assert tab.clean() == [], tab.clean()
    tab.close()


def test_a_tossed_session_cookie_is_noticed_and_the_open_page_uploads_nothing(site, browser):
    """Finding 4 over plain HTTP (where browsers allow no ``__Host-`` cookie): a page on another port replaces
    the session cookie with a classmate's.  The assignment page still open (shown for the victim) refuses to
    upload into the other account, naming both; the next page says in red at its top that the browser is now
    signed in as someone else; nothing is stored in either account.  Both messages are read at both widths (one
    flow: each width was a flow of its own, the roles swapped)."""
    width, victim, attacker = "desktop", "s009", "s010"
    with site["server"].client() as c:
        assert c.post("/api/v1/session", json={"code": site["codes"][attacker]}).status_code == 200
        theirs = c.cookies.get(f"autograder_session-{UPGRADED}")
    tosser = Tosser(theirs)
    tab = Tab(browser, width)
    stored = {who: submissions_of(site, who) for who in (victim, attacker)}
    try:
        page = tab.page
        login(tab, site["base"], victim, site["codes"][victim])
        page.goto(f"{site['base']}/assignments/{A3}")  # past its deadline: stays empty whatever happens
        page.goto(f"{site['base']}/assignments/{A1}")
        assert page.locator(".account-change").count() == 0  # the same account as on the last page: no notice
        other = tab.ctx.new_page()  # the classmate's page, in another tab of the same browser
        other.goto(tosser.url)
        other.close()
        assert any(c["value"] == theirs for c in tab.ctx.cookies() if c["name"] == f"autograder_session-{UPGRADED}")
        tab.expect_error(403, f"/api/v1/assignments/{A1}/submissions")
        pick(tab, "threshold_metrics.ipynb", SOLUTION)
        page.wait_for_function("() => document.getElementById('upload-message').textContent.includes('已拒绝')")

        def refused() -> None:
            message = page.locator("#upload-message").inner_text()
            assert f"这个页面是为 {victim} 打开的，但你现在已作为 {attacker} 登录" in message, (tab.width, message)
            tab.shot("account-changed-upload-refused")

        at_both_widths(tab, refused)
        page.goto(f"{site['base']}/")

        def noticed() -> None:
            notice = page.locator(".account-change")
            assert notice.count() == 1, tab.width
            text = notice.inner_text()
            assert f"你现在已作为学生 学生 {attacker}（{attacker}）登录" in text and f"（{victim}）" in text, (tab.width, text)
            assert page.locator(".who").inner_text().endswith(f"（{attacker}）"), tab.width
            tab.shot("account-changed-notice")

        at_both_widths(tab, noticed)
        page.goto(f"{site['base']}/assignments/{A1}")
        assert page.locator(".account-change").count() == 0  # said once, on the first page after the change
        assert tab.clean() == [], tab.clean()
    finally:
        tab.close()
        tosser.close()
    assert {who: submissions_of(site, who) for who in (victim, attacker)} == stored  # nothing stored anywhere


def submissions_of(site, who: str) -> list[str]:
    with site["server"].client(site["codes"][who]) as c:
        return [s["id"] for s in c.get("/api/v1/submissions").json()["submissions"]]


def test_wrong_codes_are_rate_limited_with_a_clear_message(site, browser):
    """Last in this module: it uses up the failures allowed from 127.0.0.1."""
    tab = Tab(browser, "phone")
    wrong = 0
    while wrong <= 8:  # max 8 in the window; the earlier tests used some
        tab.expected = [(401, "/login"), (429, "/login")]
        login(tab, site["base"], "s001", f"abcdefgh-{wrong:026d}")
        if "过多" in tab.page.locator(".error-message").inner_text():
            break
        assert "学号或访问码不正确" in tab.page.locator(".error-message").inner_text()
        wrong += 1
    assert 0 < wrong <= 8
    tab.expected = [(429, "/login")]
    login(tab, site["base"], "s002", site["codes"]["s001"][:9] + "x" * 26)  # any further guess waits
    message = tab.page.locator(".error-message").inner_text()
    assert "错误的访问码尝试过多" in message and "秒后再试" in message
    tab.shot("login-rate-limited")
    assert tab.clean() == [], tab.clean()
    tab.close()
