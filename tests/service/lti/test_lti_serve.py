"""LTI end to end: a real ``autograder serve`` (registered with ``autograder lti add-platform``), the fake
platform on another site (``127.0.0.1`` vs the tool at ``localhost``), Debian's chromium through Playwright.

* the browser flow, top-level and inside the platform's iframe: login initiation -> authorization -> form
  post -> the signed-in student's page;
* graded submissions -> their scores at the platform exactly once, with the platform down during the burst
  and the service killed (SIGKILL) and restarted in between.
"""

from __future__ import annotations

import csv
import html as htmllib
import io
import json
import re
import time
from pathlib import Path
from urllib.parse import urlencode

import httpx
import pytest

from ..server import UPGRADED, Server, make_course, notebook_bytes, run, screenshot, submit, wait_done  # noqa: I001 (puts tests/autograder on sys.path)
from ..test_pages import WIDTHS
from .fake_lms import INSTRUCTOR, LEARNER, FakePlatform, User

import make_corpus  # noqa: E402

pytestmark = pytest.mark.slow

A1 = "ps1_threshold_metrics"
REPO = Path(__file__).resolve().parents[3]
SHOTS = REPO / "artifacts" / "lti"
STUDENTS = [f"s{i:03d}" for i in range(1, 7)]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    data = tmp_path_factory.mktemp("lti") / "data"
    codes = make_course(data, STUDENTS, config={"assignments": {A1: {"counts": "best", "attempts_per_24h": 10}}})
    platform = FakePlatform(flavour="canvas")
    for s in STUDENTS:
        platform.users[s] = User(f"sub-{s}", f"学生 {s}", f"{s}@example.edu", LEARNER, sourcedid=s)
    platform.users["newcomer"] = User("sub-newcomer", "新 同学", "new@example.edu", LEARNER)
    platform.users["teacher"] = User("sub-teacher", "王 老师", "wang@example.edu", INSTRUCTOR)
    platform.custom = {"link-1": {"assignment": A1}}
    run("lti", "add-platform", "--data", str(data), *platform.cli_args())
    run("lti", "bind", "--data", str(data), "--platform", "1", "--context", "course-1", "--roster-authority")
    server = Server(data, "--jobs", "2", public_host="localhost").start()
    platform.tool = f"http://localhost:{server.port}"  # another site than the platform's 127.0.0.1
    platform.start()
    yield {"server": server, "platform": platform, "codes": codes, "data": data}
    server.stop()
    platform.stop()


def at_both_widths(page, check) -> None:
    """``check(width)`` at 1280 px, then again with the same page at 375 px (the page laid out anew: what its text shows
    at each width), back to 1280 px after.  One launch for both widths (each was a launch of its own)."""
    for width in ("desktop", "phone"):
        page.set_viewport_size(WIDTHS[width])
        check(width)
    page.set_viewport_size(WIDTHS["desktop"])


def shot(page, name: str) -> None:
    """Into ``artifacts/lti/`` with ``COURSE_SCREENSHOTS=1`` (:func:`..server.screenshot`)."""
    screenshot(page, SHOTS / f"{name}.png")


def test_top_level_launch_in_the_browser(site, browser):
    platform, server = site["platform"], site["server"]
    ctx = browser.new_context(viewport=WIDTHS["desktop"], locale="zh-CN")
    page = ctx.new_page()
    page.goto(f"{platform.base}/courses/course-1?user=s001")
    page.click("#open")
    page.wait_for_url(re.compile(rf"^http://localhost:{server.port}/c/{UPGRADED}/assignments/{A1}$"), timeout=30000)

    def student_page(width: str) -> None:
        text = page.inner_text("body")
        assert "作业 1：固定阈值指标" in text and "学生 s001" in text, width
        shot(page, f"top-level-student-page-{width}")

    at_both_widths(page, student_page)
    # the session is the service's ordinary one: the course page works too
    page.goto(f"http://localhost:{server.port}/c/{UPGRADED}/")
    assert "我的作业" in page.inner_text("body")
    ctx.close()


@pytest.mark.parametrize("width", ["desktop", "phone"])
def test_launch_inside_the_platforms_iframe(site, browser, width):
    platform, server = site["platform"], site["server"]
    ctx = browser.new_context(viewport=WIDTHS[width], locale="zh-CN")
    page = ctx.new_page()
    page.goto(f"{platform.base}/courses/course-1?user=newcomer&frame=1")
    frame = page.frame_locator("#tool")
    frame.locator("text=已通过课程平台登录").wait_for(timeout=30000)
    inner = frame.locator("main").inner_text()
    assert "新 同学" in inner and "作业 1：固定阈值指标" in inner and "在新窗口中打开作业" in inner
    shot(page, f"iframe-landing-{width}")
    with ctx.expect_page() as opened:
        frame.locator("text=在新窗口中打开作业").click()
    student = opened.value
    # the new window is the tool's own site, where the frame's launch cookie (partitioned under the platform's
    # site) is not sent: the person confirms, on a page naming the account, that it is theirs
    student.locator("text=确认登录的账号").wait_for(timeout=30000)
    assert "新 同学" in student.inner_text("main") and "是我，继续" in student.inner_text("main")
    shot(student, f"iframe-confirm-{width}")
    student.click("button:has-text('是我，继续')")
    student.wait_for_url(re.compile(rf"^http://localhost:{server.port}/c/{UPGRADED}/assignments/{A1}$"), timeout=30000)
    assert "新 同学" in student.inner_text("body")
    ctx.close()


def test_instructor_launch_opens_the_dashboard_and_the_lti_page(site, browser):
    platform, server = site["platform"], site["server"]
    ctx = browser.new_context(viewport=WIDTHS["desktop"], locale="zh-CN")
    page = ctx.new_page()
    page.goto(f"{platform.base}/courses/course-1?user=teacher")
    page.click("#open")
    dashboard = re.compile(rf"^http://localhost:{server.port}/c/{UPGRADED}/instructor/assignments/{A1}$")
    page.wait_for_url(dashboard, timeout=30000)

    def to_the_lti_page(width: str) -> None:  # the header's link, clicked at this width
        page.click("header >> text=课程平台")
        page.wait_for_url(re.compile(r"/lti/admin$"))
        text = page.inner_text("main")
        assert "成绩回传" in text and "绑定的课程平台课程" in text and "评价二分类模型" in text, width  # the launch's course
        shot(page, f"lti-admin-{width}")
        page.go_back()
        page.wait_for_url(dashboard)

    at_both_widths(page, to_the_lti_page)
    ctx.close()


def test_the_service_pages_refuse_to_be_framed_by_the_platform(site, browser):
    """Only the LTI pages may be framed by the platform: the student page in the platform's frame is blocked."""
    platform, server = site["platform"], site["server"]
    ctx = browser.new_context()
    page = ctx.new_page()
    page.route(f"{platform.base}/framed", lambda route: route.fulfill(
        status=200, content_type="text/html",
        body=f'<iframe id="f" src="http://localhost:{server.port}/c/{UPGRADED}/login"></iframe>'))
    page.goto(f"{platform.base}/framed")
    page.wait_for_timeout(1500)
    frame = page.frame_locator("#f")
    assert frame.locator("text=访问码").count() == 0  # the sign-in page did not render inside the frame
    ctx.close()


def test_a_refused_launch_shows_a_chinese_page(site, browser):
    server = site["server"]
    ctx = browser.new_context(viewport=WIDTHS["desktop"], locale="zh-CN")
    page = ctx.new_page()
    page.goto(f"http://localhost:{server.port}/lti/login?" + urlencode({"iss": "https://unknown.example", "login_hint": "x"}))

    def refused(width: str) -> None:
        assert "没有在本服务注册" in page.inner_text("main") and "没有创建任何账号" in page.inner_text("main"), width
        shot(page, f"refused-{width}")

    at_both_widths(page, refused)
    ctx.close()


@pytest.mark.parametrize("width", ["desktop", "phone"])
def test_instructor_deep_links_an_assignment_inside_the_iframe(site, browser, width):
    platform = site["platform"]
    before = len(platform.deep_link_responses)
    ctx = browser.new_context(viewport=WIDTHS[width], locale="zh-CN")
    page = ctx.new_page()
    page.goto(f"{platform.base}/courses/course-1?user=teacher&frame=1&type=LtiDeepLinkingRequest")
    frame = page.frame_locator("#tool")
    frame.locator("text=选择要添加到课程平台的作业").wait_for(timeout=30000)
    assert "作业 1：固定阈值指标" in frame.locator("main").inner_text()
    shot(page, f"deep-link-choice-{width}")
    frame.locator("button:has-text('添加到课程平台')").click()
    frame.locator("text=返回课程平台并添加").wait_for(timeout=30000)
    shot(page, f"deep-link-return-{width}")
    frame.locator("button:has-text('返回课程平台并添加')").click()
    frame.locator("#added").wait_for(timeout=30000)
    assert "已添加 1 项：作业 1：固定阈值指标" in frame.locator("#added").inner_text()
    assert len(platform.deep_link_responses) == before + 1
    link, title = platform.links["course-1"][-1]  # the LMS course's page lists the new activity, which opens it
    assert title == "作业 1：固定阈值指标" and platform.custom[link] == {"assignment": A1}
    ctx.close()


def launch_without_browser(platform: FakePlatform, tool: str, user: str) -> httpx.Response:
    """The launch with httpx (the launch cookie passed by hand: http.cookiejar never sends a Secure cookie over http)."""
    with httpx.Client(timeout=30) as c:
        r = c.get(f"{tool}/lti/login", params={"iss": platform.issuer, "login_hint": user, "client_id": platform.client_id})
        assert r.status_code == 302, r.text
        cookie = r.headers["set-cookie"].split(";")[0]
        page = c.get(r.headers["location"]).text
        form = {k: htmllib.unescape(v) for k, v in re.findall(r'name="(id_token|state)" value="([^"]*)"', page)}
        return c.post(f"{tool}/lti/launch", data=form, headers={"Cookie": cookie})


def counting_scores(server: Server, code: str) -> dict[str, float]:
    with server.client(code) as c:
        rows = list(csv.DictReader(io.StringIO(c.get("/api/v1/grades.csv").content.decode("utf-8-sig"))))
    return {r["student_id"]: float(r["score"]) for r in rows if r["assignment"] == A1 and r["score"] != ""}  # "": not submitted


def test_scores_arrive_exactly_once_despite_downtime_and_sigkill(site):
    platform, server, codes = site["platform"], site["server"], site["codes"]
    tool = platform.tool
    for s in STUDENTS:
        assert launch_without_browser(platform, tool, s).status_code == 200
    platform.mode = "down"
    before = len(platform.scores)
    good, wrong = notebook_bytes(make_corpus.solution(A1)), notebook_bytes(make_corpus.build()["wrong_strict_threshold"][1])
    ids = {}
    for i, s in enumerate(STUDENTS):
        with server.client(codes[s]) as c:
            ids[s] = [submit(c, A1, wrong if i % 2 else good, "threshold_metrics.ipynb").json()["id"],
                      submit(c, A1, good if i % 2 else wrong, "threshold_metrics.ipynb").json()["id"]]
    with server.client(codes["instructor"]) as c:
        wait_done(c, [i for v in ids.values() for i in v[:1]])
    server.kill()  # SIGKILL while the second attempts may be grading and the passbacks are pending
    platform.mode = "up"
    server.start()
    with server.client(codes["instructor"]) as c:
        wait_done(c, [i for v in ids.values() for i in v])
    final = counting_scores(server, codes["instructor"])
    deadline = time.monotonic() + 120
    subs = {f"sub-{s}": s for s in STUDENTS}
    while time.monotonic() < deadline:
        got = [x for x in platform.scores[before:] if x["userId"] in subs]
        latest = {x["userId"]: x["scoreGiven"] for x in got}
        if len(latest) == len(STUDENTS) and all(latest[f"sub-{s}"] == final[s] for s in STUDENTS):
            break
        time.sleep(0.5)
    time.sleep(3)  # a few more passback rounds: nothing may arrive twice
    got = [x for x in platform.scores[before:] if x["userId"] in subs]
    per_student = {}
    for x in got:
        per_student.setdefault(subs[x["userId"]], []).append((x["scoreGiven"], x["timestamp"]))
    assert {s: v[-1][0] for s, v in per_student.items()} == final
    # exactly once per score change: no (score, timestamp) posted twice
    assert all(len(v) == len(set(v)) for v in per_student.values()), per_student
    assert len(platform.lineitems["course-1"]) == 1
    out = run("lti", "passback", "--data", str(site["data"])).stdout
    assert "失败 0" in out and "待回传 0" in out, out
    json.dumps(per_student)


def test_make_serve_demo_course_opens_from_its_fake_platform(browser):
    """``python -m autograder.commands.demo_course --lti-port``: the demo's fake LMS front page launches the tool."""
    import signal

    from ..server import free_port, start_demo_course

    port, lti_port = free_port(), free_port()
    proc, out = start_demo_course(port, "--lti-port", str(lti_port))
    try:
        assert f"假课程平台（试用 LTI 1.3）：http://127.0.0.1:{lti_port}/" in out
        ctx = browser.new_context(viewport=WIDTHS["desktop"], locale="zh-CN")
        page = ctx.new_page()
        page.goto(f"http://127.0.0.1:{lti_port}/")
        page.click("section:has-text('course-1') li:has-text('张三') >> text=新窗口打开作业")
        page.click("#open")
        page.wait_for_url(re.compile(rf"^http://127.0.0.1:{port}/c/bin-2026/assignments/{A1}$"), timeout=30000)
        assert "张三" in page.inner_text("header") and "s001" in page.inner_text("header")  # linked to the demo roster
        shot(page, "demo-launched-desktop")
        ctx.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)


def demo_codes(out: str) -> dict[str, dict[str, str]]:
    """The access codes ``python -m autograder.commands.demo_course`` printed: course id (or "admin") -> name -> code."""
    codes: dict[str, dict[str, str]] = {}
    for block in re.split(r"\n  (?=课程 |管理员 )", out):
        found = re.search(r"课程 .+?：\S+/c/([a-z0-9-]+)/", block)
        if found:
            codes[found.group(1)] = dict(re.findall(r"(?:学生|教师|助教) (\S+?)(?:（\S+）)?\s+访问码 (\S+)", block))
        admin = re.search(r"管理员 (\S+)：\S+\s+访问码 (\S+)", block)
        if admin:
            codes["admin"] = {admin.group(1): admin.group(2)}
    return codes


def test_the_demo_lms_binding_request_code_link_and_confirmation_in_the_browser(browser):
    """The demo's people through the new pages, at 1280 and 375 px: 李四 teaches her own unbound sandbox (the
    request form, then the request confirmed by ml-lab's instructor on the course's LMS page); 王五 opens the
    assignment from a section that is no roster authority (links his roster entry with his code); an
    administrator's overview; a ticket opened in another browser (the confirmation page)."""
    import signal

    from ..server import free_port, start_demo_course

    port, lti_port = free_port(), free_port()
    proc, out = start_demo_course(port, "--lti-port", str(lti_port))
    lms, tool = f"http://127.0.0.1:{lti_port}", f"http://127.0.0.1:{port}"
    codes = demo_codes(out)
    try:
        ctx = browser.new_context(viewport=WIDTHS["desktop"], locale="zh-CN")
        page = ctx.new_page()
        # 李四 opens the tool from her own sandbox course: nobody here, a request form
        page.goto(f"{lms}/courses/li-sandbox?user=s002")
        page.click("#open")
        page.locator("text=这门课程还没有接入本服务").wait_for(timeout=30000)

        def unbound(width: str) -> None:
            text = page.inner_text("main")
            assert "李四的练习课程" in text and "机器学习实践（演示）" in text and "提交绑定申请" in text, width
            shot(page, f"demo-unbound-{width}")

        at_both_widths(page, unbound)
        page.check("input[value=ml-lab]")
        page.click("button:has-text('提交绑定申请')")
        page.locator("text=已提交绑定申请").wait_for(timeout=30000)
        at_both_widths(page, lambda w: shot(page, f"demo-requested-{w}"))
        # 王五 from the section (no roster authority): his code links his roster entry
        page.goto(f"{lms}/courses/section-2?user=s003")
        page.click("#open")
        page.locator("text=关联你的名单账号").wait_for(timeout=30000)
        at_both_widths(page, lambda w: shot(page, f"demo-link-{w}"))
        page.fill("#login", "s003")
        page.fill("#code", codes["bin-2026"]["s003"])
        page.click("button:has-text('关联并继续')")
        page.wait_for_url(re.compile(rf"^{tool}/c/bin-2026/assignments/{A1}$"), timeout=30000)
        assert "王五" in page.inner_text("header") and "s003" in page.inner_text("header")
        # ml-lab's instructor confirms the request on the course's LMS page
        page.goto(f"{tool}/c/ml-lab/login")
        page.fill("#login", "周老师")
        page.fill("#code", codes["ml-lab"]["周老师"])
        with page.expect_navigation():
            page.click("button[type=submit]")
        page.goto(f"{tool}/c/ml-lab/lti/admin")

        def lms_page(width: str) -> None:
            text = page.inner_text("main")
            assert "等待确认的绑定申请" in text and "李四的练习课程" in text and "ML-LAB" in text, width
            shot(page, f"demo-lms-page-{width}")

        at_both_widths(page, lms_page)
        page.click("button:has-text('确认绑定到本课程')")
        page.locator("text=已确认").wait_for(timeout=30000)
        # the administrator's overview
        page.goto(f"{tool}/admin/login")
        name, code = next(iter(codes["admin"].items()))
        page.fill("#login", name)
        page.fill("#code", code)
        with page.expect_navigation():
            page.click("button[type=submit]")

        def admin(width: str) -> None:
            text = page.inner_text("main")
            assert "评价二分类模型（2026 秋季）" in text and "李四的练习课程 → 机器学习实践（演示）" in text, width
            shot(page, f"demo-admin-{width}")

        at_both_widths(page, admin)
        # 李四's launch from her sandbox now makes her ml-lab's instructor - in ml-lab only
        page.goto(f"{lms}/courses/li-sandbox?user=s002")
        page.click("#open")
        page.locator("text=继续会换成上面的账号").wait_for(timeout=30000)  # this browser is signed in to ml-lab as 周老师
        page.click("button:has-text('是我，继续')")
        page.wait_for_url(re.compile(rf"^{tool}/c/ml-lab/instructor/"), timeout=30000)
        assert page.goto(f"{tool}/c/bin-2026/instructor/").status in (200, 403)
        # a ticket opened in another browser asks whose session it is
        page.goto(f"{lms}/courses/course-1?user=s001&frame=1")
        landing = page.frame_locator("#tool")
        href = landing.locator("a:has-text('在新窗口中打开作业')").get_attribute("href", timeout=30000)
        other = browser.new_context(viewport=WIDTHS["desktop"], locale="zh-CN")
        elsewhere = other.new_page()
        elsewhere.goto(f"{tool}/lti/" + href.split("lti/", 1)[1])

        def confirm(width: str) -> None:
            text = elsewhere.inner_text("main")
            assert "确认登录的账号" in text and "张三" in text and "是我，继续" in text, width
            shot(elsewhere, f"demo-enter-confirm-{width}")

        at_both_widths(elsewhere, confirm)
        other.close()
        ctx.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
