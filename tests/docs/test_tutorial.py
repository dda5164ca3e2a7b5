"""The instructors' tutorial (docs/instructors/tutorial.md), followed as a lecturer follows it.

Its shell commands are read from the page and run exactly as written, in a fresh home folder (``HOME`` is a new
folder in which ``~/binary-eval`` is this checkout), each terminal of the page one bash process: terminal 1's blocks
in order, each after the one before has finished; terminals 2 and 3 (the fake LMS and ``autograder serve``) keep
running.  At the page's target ``(tutorial-in-the-lms)=`` the browser steps that the page describes are done in
Debian's chromium (the teacher adds the assignment by deep linking, the student opens it from the LMS and uploads,
the score appears in the LMS's gradebook, the instructor's dashboard); their screenshots are the page's pictures.
At ``(tutorial-cleanup)=`` terminals 2 and 3 get Ctrl-C (SIGINT) and must stop.

The screenshots go to ``artifacts/tutorial/``; with ``GUIDE_SCREENSHOTS=1`` (``make guide-screenshots``) into
``docs/_static/tutorial/``, where the page shows them.
"""

from __future__ import annotations

import csv
import io
import os
import re
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from .pages import REPO, TUTORIAL, Block, code_blocks, label_line

pytestmark = pytest.mark.slow

SHOTS = REPO / ("docs/_static/tutorial" if os.environ.get("GUIDE_SCREENSHOTS") == "1" else "artifacts/tutorial")
VIEWPORT = {"width": 1024, "height": 720}
TERMINAL = re.compile(r"^终端 (?P<number>\d)")
#: The one block a test cannot run as written: it clones the repository (the test runs in this checkout).
PREPARATION = "准备（只做一次）"
DONE = "@@tutorial-block-done"


def terminal_of(block: Block) -> int:
    found = TERMINAL.match(block.caption)
    assert found, f"line {block.line}: a command block's caption names its terminal (终端 N), not {block.caption!r}"
    return int(found["number"])


def port_of(block: Block) -> int:
    found = re.search(r"--port (\d+)", block.text)
    assert found, f"line {block.line}: a program that keeps running says its --port"
    return int(found[1])


@dataclass
class Terminal:
    """One terminal of the page: a bash process reading the blocks sent to it; its output in ``log``."""

    number: int
    home: Path
    env: dict[str, str]
    log: Path = field(init=False)
    proc: subprocess.Popen = field(init=False)
    seen: int = 0  # how much of the output earlier blocks printed

    def __post_init__(self) -> None:
        self.log = self.home.parent / f"terminal-{self.number}.log"
        self.proc = subprocess.Popen(["bash", "-e"], stdin=subprocess.PIPE, stdout=self.log.open("w"),
                                     stderr=subprocess.STDOUT, cwd=self.home, env=self.env, text=True,
                                     start_new_session=True)

    def output(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")

    def send(self, block: Block, folder: Path) -> None:
        script = folder / f"block-{block.line}.sh"
        script.write_text(block.text, encoding="utf-8")
        # sourced, so that the shell keeps its folder and variables for the next block, as a terminal does
        self.proc.stdin.write(f"source {script} < /dev/null\necho {DONE}-{block.line}\n")
        self.proc.stdin.flush()

    def wait_done(self, block: Block, timeout: float = 300) -> str:
        """Until ``block`` has finished; its output.  A failing command ends the shell (``bash -e``): the test fails."""
        marker = f"{DONE}-{block.line}"
        deadline = time.monotonic() + timeout
        while marker not in self.output():
            assert self.proc.poll() is None, f"终端 {self.number}: the block of line {block.line} failed:\n{self.output()[-4000:]}"
            assert time.monotonic() < deadline, f"终端 {self.number}: the block of line {block.line} took over {timeout} s"
            time.sleep(0.2)
        text = self.output()
        end = text.index(marker)
        new, self.seen = text[self.seen:end], end + len(marker) + 1
        return new

    def interrupt(self, block: Block, timeout: float = 60) -> None:
        """Ctrl-C: SIGINT to the terminal's programs; the one ``block`` started must end (its shell may stay)."""
        os.killpg(self.proc.pid, signal.SIGINT)
        deadline = time.monotonic() + timeout
        while f"{DONE}-{block.line}" not in self.output() and self.proc.poll() is None:
            assert time.monotonic() < deadline, f"终端 {self.number} did not stop on Ctrl-C:\n{self.output()[-3000:]}"
            time.sleep(0.2)

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=30)


def wait_for_port(port: int, terminal: Terminal, timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert terminal.proc.poll() is None, f"终端 {terminal.number} ended:\n{terminal.output()[-4000:]}"
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise AssertionError(f"终端 {terminal.number}: nothing listens on port {port} after {timeout} s:\n{terminal.output()[-3000:]}")


def shot(page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"))


def in_the_browser(browser, lms: str, tool: str, course: Path, teacher_code: str) -> None:
    """Sections 7-10 of the page, as a lecturer does them."""
    teacher = browser.new_context(viewport=VIEWPORT, locale="zh-CN", timezone_id="Asia/Shanghai")
    page = teacher.new_page()
    page.goto(lms + "/")
    assert "王老师" in page.inner_text("body") and "添加作业（深度链接）" in page.inner_text("body")
    shot(page, "lms-home")
    # 7. the teacher adds the assignment by deep linking, inside the LMS's frame
    page.click("li:has-text('王老师') >> text=添加作业（深度链接）")
    frame = page.frame_locator("#tool")
    frame.locator("text=作业 1：固定阈值指标").wait_for(timeout=60_000)
    shot(page, "deep-link-choice")
    frame.locator("text=作业 1：固定阈值指标").click()
    frame.locator("button:has-text('添加到课程平台')").click()
    frame.locator("button:has-text('返回课程平台并添加')").click()
    frame.locator("#added").wait_for(timeout=60_000)

    # 8. the student opens it from the LMS, signed in by the launch, and uploads
    student = browser.new_context(viewport=VIEWPORT, locale="zh-CN", timezone_id="Asia/Shanghai")
    own = student.new_page()
    own.goto(lms + "/")
    own.click("li:has-text('张三') >> text=新窗口打开作业")
    own.click("text=作业 1：固定阈值指标")
    own.wait_for_url(re.compile(rf"^{re.escape(tool)}/c/bin-trial/assignments/ps1_threshold_metrics$"), timeout=60_000)
    body = own.inner_text("body")
    assert "张三" in body and "2027001" in body and "UTC+08:00" in body, body
    shot(own, "student-assignment")
    own.set_input_files("#notebook", files=[str(course / "zhangsan.ipynb")])
    own.wait_for_function("() => { const a = document.querySelector('#live li.attempt');"
                          " return a && a.dataset.status === 'graded' && document.getElementById('live').dataset.pending === '0'; }",
                          timeout=300_000)
    assert "56 / 56" in own.inner_text("#live")
    own.locator("#live li.attempt").first.scroll_into_view_if_needed()
    shot(own, "student-graded")

    # 9. the score in the LMS's gradebook
    deadline = time.monotonic() + 120
    while not re.search(r"张三\s+56 / 56", page.inner_text("body")):
        assert time.monotonic() < deadline, "the score did not reach the fake LMS's gradebook in 120 s"
        time.sleep(1)
        page.goto(lms + "/")
    page.locator("table").scroll_into_view_if_needed()
    shot(page, "lms-gradebook")

    # 10. the instructor's pages, signed in with the code of section 3
    staff = browser.new_context(viewport=VIEWPORT, locale="zh-CN", timezone_id="Asia/Shanghai")
    mine = staff.new_page()
    mine.goto(f"{tool}/c/bin-trial/login")
    mine.fill("#login", "王老师")
    mine.fill("#code", teacher_code)
    mine.click("button[type=submit]")
    mine.wait_for_url(re.compile(rf"^{re.escape(tool)}/c/bin-trial/instructor/$"), timeout=60_000)
    mine.click("a:has-text('作业 1：固定阈值指标')")
    mine.wait_for_url(re.compile(r".*/instructor/assignments/ps1_threshold_metrics$"), timeout=60_000)
    mine.wait_for_function("() => parseInt(document.getElementById('fig-students').textContent) === 1", timeout=60_000)
    shot(mine, "instructor-dashboard")
    for context in (teacher, student, staff):
        context.close()


def test_the_tutorial_as_written(tmp_path, browser):
    blocks = code_blocks(TUTORIAL)
    assert [b.caption for b in blocks if not TERMINAL.match(b.caption)] == [PREPARATION], \
        "every block but the one preparation names its terminal (a block the test does not run is a block nobody checked)"
    assert all(b.language == "bash" for b in blocks)
    in_lms, cleanup = label_line(TUTORIAL, "tutorial-in-the-lms"), label_line(TUTORIAL, "tutorial-cleanup")
    home = tmp_path / "home"
    home.mkdir()
    (home / "binary-eval").symlink_to(REPO)
    scripts = tmp_path / "blocks"
    scripts.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "COLUMNS")}
    env.update(HOME=str(home), PATH="/usr/local/bin:/usr/bin:/bin", LANG="C.UTF-8")
    long_running = [b for b in blocks if b.caption != PREPARATION and terminal_of(b) != 1]
    ports = {port_of(b) for b in long_running}
    for port in ports:
        with socket.socket() as s:
            assert s.connect_ex(("127.0.0.1", port)) != 0, f"port {port} of the tutorial is in use on this machine"
    terminals: dict[int, Terminal] = {}
    outputs: dict[int, str] = {}
    started = time.monotonic()
    timeline: list[str] = []
    try:
        browsed = stopped = False
        for block in blocks:
            if block.caption == PREPARATION:
                continue
            if block.line > in_lms and not browsed:
                code = re.search(r"王老师的访问码：(\S+)", "".join(outputs.values()))
                assert code, "section 3 prints the instructor's code"
                lms = next(f"http://127.0.0.1:{port_of(b)}" for b in long_running if "lti_demo" in b.text)
                tool = next(f"http://127.0.0.1:{port_of(b)}" for b in long_running if "autograder serve" in b.text)
                in_the_browser(browser, lms, tool, home / "bin-course", code[1])
                timeline.append(f"{time.monotonic() - started:6.1f} s  browser steps done")
                browsed = True
            if block.line > cleanup and not stopped:
                for running in long_running:
                    terminals[terminal_of(running)].interrupt(running)
                stopped = True
            number = terminal_of(block)
            terminal = terminals.setdefault(number, Terminal(number, home, env))
            terminal.send(block, scripts)
            if block in long_running:
                wait_for_port(port_of(block), terminal)
            else:
                outputs[block.line] = terminal.wait_done(block)
            timeline.append(f"{time.monotonic() - started:6.1f} s  终端 {number}, line {block.line}")
        assert browsed and stopped
        checks = outputs[next(b.line for b in blocks if "lti passback" in b.text)]
        assert "已回传 1" in checks and "待回传 0" in checks and "失败 0" in checks, checks
        sheet = checks[checks.index("student_id"):]
        rows = {r["student_id"]: r for r in csv.DictReader(io.StringIO(sheet))}
        assert set(rows) == {"2027001", "2027002", "2027003"}
        assert float(rows["2027001"]["score"]) == 56 and rows["2027002"]["score"] == ""
        assert not (home / "bin-course").exists(), "the last block removes the course folder"
        with pytest.raises(httpx.HTTPError):
            httpx.get(f"http://127.0.0.1:{max(ports)}/healthz", timeout=2)
    finally:
        for terminal in terminals.values():
            terminal.kill()
        print("\n".join(timeline))
