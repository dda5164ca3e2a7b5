"""In Debian's chromium: a student signs in to the course through JupyterHub, opens the assignment in JupyterLab
from the course's hub link (nbgitpuller), writes the answer, clicks 提交 and sees the grade; a student whose hub
token is no longer valid is told to sign in again, keeps the notebook, signs in again and submits.

With ``COURSE_SCREENSHOTS=1`` the pages are saved under ``artifacts/pages/hub/`` at 1280 and 375 px."""

from __future__ import annotations

import json
import re
import time

import pytest

from tests.service.hub.conftest import ASSIGNMENT, NOTEBOOK, REPO
from tests.service.server import screenshot

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("jupyterhub")]
SHOTS = REPO / "artifacts" / "pages" / "hub"
AXE = REPO / "tests" / "a11y" / "node_modules" / "axe-core" / "axe.min.js"
LAB_TIMEOUT = 240_000  # a first spawn, a git pull and JupyterLab's assets on a loaded machine
GRADE_TIMEOUT = 300_000


def _answer_code() -> str:
    nb = json.loads((REPO / "solutions" / ASSIGNMENT / NOTEBOOK).read_text(encoding="utf-8"))
    cell = next(c for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id") == "a1_solution")
    return "".join(cell["source"]).split("### BEGIN SOLUTION\n", 1)[1].split("### END SOLUTION", 1)[0]


def _hub_login(page, site, user: str) -> None:
    """The hub's own sign-in form (the dummy authenticator of the trial hub)."""
    page.fill("#username_input", user)
    page.fill("#password_input", site.hub.password)
    page.click("#login_submit")


def _write_answer(page, code: str) -> None:
    answer = page.locator(".jp-CodeCell", has_text="raise NotImplementedError").first
    answer.locator(".cm-content").click()
    page.keyboard.press("Control+a")
    page.keyboard.press("Delete")
    page.keyboard.insert_text(code)
    page.keyboard.press("Escape")


def _open_in_lab(page, site, user: str) -> None:
    """From the course's sign-in page: 用 JupyterHub 账号登录, the hub's form, the course's hub page, the link."""
    page.goto(f"{site.service_url}/c/bin-hub/login")
    screenshot(page, SHOTS / f"login-{page.viewport_size['width']}.png")
    page.get_by_role("link", name="用 JupyterHub 账号登录").click()
    _hub_login(page, site, user)
    page.wait_for_url(re.compile(r".*/c/bin-hub/$"), timeout=60_000)
    page.get_by_role("link", name="在 JupyterHub 中打开作业").click()  # from the student's course page
    page.wait_for_url(re.compile(r".*/c/bin-hub/jupyterhub/$"))
    assert not axe_violations(page)
    screenshot(page, SHOTS / f"links-student-{page.viewport_size['width']}.png")
    link = page.get_by_role("link", name="在 JupyterHub 中打开").first.get_attribute("href")
    page.goto(link)  # the hub starts the server, nbgitpuller copies the notebooks, JupyterLab opens this one
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=LAB_TIMEOUT)
    page.wait_for_selector("[data-jp-item-name='autograder-submit']", timeout=60_000)


def axe_violations(page) -> list[str]:
    """The serious and critical findings of axe-core on ``page`` (the course's pages' audit, tests/service/test_pages.py)."""
    page.evaluate(AXE.read_text(encoding="utf-8") + "\n;typeof axe")  # by the debugger: the pages' CSP allows no inline script
    result = page.evaluate("() => axe.run(document, {resultTypes: ['violations']})")
    return [f"{v['impact']} {v['id']}: {v['help']}" for v in result["violations"] if v["impact"] in ("serious", "critical")]


def _home(site, user: str):
    return site.hub.folder / "home" / user / "bin-hub" / "exercises" / ASSIGNMENT / NOTEBOOK


def _toast(page, pattern: str, timeout: float):
    toast = page.locator(".Toastify__toast", has_text=re.compile(pattern)).last
    toast.wait_for(timeout=timeout)
    return toast


def test_a_student_opens_the_assignment_in_jupyterlab_clicks_submit_and_sees_the_grade(hub_site, browser):
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = ctx.new_page()
        _open_in_lab(page, hub_site, "carol")
        assert _home(hub_site, "carol").is_file()  # pulled into carol's home, under the course's folder
        _write_answer(page, _answer_code())
        page.locator("[data-jp-item-name='autograder-submit']").get_by_text("提交").click()
        graded = _toast(page, r"已评分：得分 \d+ / \d+", GRADE_TIMEOUT)
        assert re.search(r"“测试课程 bin-hub”的作业“[^”]+”已评分：得分 (\d+) / \1", graded.inner_text()), graded.inner_text()
        assert _answer_code().splitlines()[0] in _home(hub_site, "carol").read_text(encoding="utf-8")  # saved first
        screenshot(page, SHOTS / "lab-graded-1280.png", full_page=False)
        page.set_viewport_size({"width": 375, "height": 812})
        screenshot(page, SHOTS / "lab-graded-375.png", full_page=False)
        page.set_viewport_size({"width": 1280, "height": 900})
        with ctx.expect_page() as opened:  # 查看反馈: the submission's page, through the hub's sign-in
            graded.get_by_role("button", name="查看反馈").click()
        feedback = opened.value
        feedback.wait_for_url(re.compile(r".*/c/bin-hub/submissions/[A-Za-z0-9_-]+$"), timeout=60_000)
        feedback.get_by_text("得分").first.wait_for()
        assert "carol" in feedback.content()
    finally:
        ctx.close()


def test_a_revoked_hub_login_is_told_to_sign_in_again_and_loses_nothing(hub_site, browser):
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = ctx.new_page()
        _open_in_lab(page, hub_site, "frank")
        _write_answer(page, "# 我的草稿：还没写完\n" + _answer_code())
        with hub_site.hub.api() as api:  # every token of frank's ends, his JupyterLab's session token among them
            for token in api.get("users/frank/tokens").json()["api_tokens"]:
                assert api.delete(f"users/frank/tokens/{token['id']}").status_code == 204
        page.locator("[data-jp-item-name='autograder-submit']").get_by_text("提交").click()
        refused = _toast(page, "请重新登录", 60_000)
        assert "没有丢失" in refused.inner_text()
        saved = _home(hub_site, "frank").read_text(encoding="utf-8")
        assert "我的草稿：还没写完" in saved  # saved before it was sent: nothing lost
        screenshot(page, SHOTS / "lab-sign-in-again-1280.png", full_page=False)
        refused.get_by_role("button", name="重新登录").click()  # the hub signs the Lab in again (no password: the hub's session)
        page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=LAB_TIMEOUT)
        page.get_by_text("我的草稿：还没写完").first.wait_for(timeout=60_000)
        page.wait_for_selector("[data-jp-item-name='autograder-submit']", timeout=60_000)
        page.locator("[data-jp-item-name='autograder-submit']").get_by_text("提交").click()
        _toast(page, r"已提交到|已评分", 60_000)
    finally:
        ctx.close()


def test_an_expired_hub_login_is_refused_and_the_notebook_stays_in_the_lab(hub_site, browser):
    """The hub's OAuth tokens made to expire after 30 s (``oauth_token_expires_in``): JupyterLab goes on working on
    its cached check of the token, the service asks the hub and refuses; the notebook stays saved in the Lab (the
    test after the revoked token signs in again and submits: the same refusal, the same way back)."""
    hub_site.hub.restart("c.JupyterHub.oauth_token_expires_in = 30")
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = ctx.new_page()
        _open_in_lab(page, hub_site, "gina")
        opened = time.monotonic()  # the Lab's token was issued before its page loaded
        _write_answer(page, "# 过期前写下的答案\n" + _answer_code())
        time.sleep(max(0.0, opened + 35 - time.monotonic()))
        page.locator("[data-jp-item-name='autograder-submit']").get_by_text("提交").click()
        refused = _toast(page, "请重新登录", 60_000)
        assert "没有丢失" in refused.inner_text()
        assert "过期前写下的答案" in _home(hub_site, "gina").read_text(encoding="utf-8")
        page.get_by_text("过期前写下的答案").first.wait_for()  # still open in the Lab, as written
        screenshot(page, SHOTS / "lab-expired-1280.png", full_page=False)
    finally:
        ctx.close()
        hub_site.hub.restart()


def test_a_user_on_no_roster_sees_why_in_the_browser(hub_site, browser):
    for width in (1280, 375):
        ctx = browser.new_context(viewport={"width": width, "height": 900})
        try:
            page = ctx.new_page()
            page.goto(f"{hub_site.service_url}/c/bin-hub/login")
            page.get_by_role("link", name="用 JupyterHub 账号登录").click()
            _hub_login(page, hub_site, "mallory")
            page.get_by_text("不在课程“测试课程 bin-hub”的名单上").wait_for(timeout=60_000)
            assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
            assert not axe_violations(page)
            screenshot(page, SHOTS / f"refused-{width}.png")
        finally:
            ctx.close()


def test_the_sign_in_landing_and_the_staff_links_page(hub_site, browser):
    landing = hub_site.hub_session("wang").get(f"{hub_site.service_url}/jupyterhub/login", params={"course": "bin-hub"})
    assert landing.status_code == 200 and landing.headers["refresh"] == "0;url=../c/bin-hub/instructor/"
    for width in (1280, 375):
        ctx = browser.new_context(viewport={"width": width, "height": 900})
        try:
            page = ctx.new_page()
            # the landing page forwards at once; its picture is taken from a copy served at a address of its own
            held = f"{hub_site.service_url}/jupyterhub/landing-picture"
            page.route(held, lambda route: route.fulfill(status=200, content_type="text/html; charset=utf-8", body=landing.text))
            page.goto(held)
            assert "教师" in page.inner_text("main") and not axe_violations(page)
            screenshot(page, SHOTS / f"signed-in-{width}.png")
            page.goto(f"{hub_site.service_url}/jupyterhub/login?course=bin-hub")
            _hub_login(page, hub_site, "wang")
            page.wait_for_url(re.compile(r".*/c/bin-hub/instructor/$"), timeout=60_000)
            page.goto(f"{hub_site.service_url}/c/bin-hub/jupyterhub/")
            link = page.locator("input.code").first.input_value()
            assert link.startswith(f"{hub_site.hub.url}/hub/user-redirect/git-pull?")
            assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
            assert not axe_violations(page)
            screenshot(page, SHOTS / f"links-staff-{width}.png")
        finally:
            ctx.close()


def test_the_students_pages_at_both_widths(hub_site, browser):
    """The sign-in page's hub button, the course page's link to the hub page, and that page, for a student."""
    for width in (1280, 375):
        ctx = browser.new_context(viewport={"width": width, "height": 900})
        try:
            page = ctx.new_page()
            page.goto(f"{hub_site.service_url}/c/bin-hub/login")
            assert not axe_violations(page)
            screenshot(page, SHOTS / f"login-{width}.png")
            page.get_by_role("link", name="用 JupyterHub 账号登录").click()
            _hub_login(page, hub_site, "bob")
            page.wait_for_url(re.compile(r".*/c/bin-hub/$"), timeout=60_000)
            screenshot(page, SHOTS / f"course-{width}.png")
            page.get_by_role("link", name="在 JupyterHub 中打开作业").click()
            page.get_by_role("link", name="在 JupyterHub 中打开").first.wait_for()
            assert page.locator("input.code").count() == 0  # the copyable links are the staff's
            assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
            assert not axe_violations(page)
            screenshot(page, SHOTS / f"links-student-{width}.png")
        finally:
            ctx.close()
