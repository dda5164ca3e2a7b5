"""What JupyterLab writes is what we grade: a student opens the released notebook in a real JupyterLab 4
(the course environment's own), writes the answer in the real editor, runs all cells, saves, and the
saved file gets full marks from the real command; an answer with notebook habits (a scikit-learn import to
compare, ``display``, a magic) too."""

from __future__ import annotations

import csv
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]
ASSIGNMENT, NOTEBOOK = "ps1_threshold_metrics", "threshold_metrics.ipynb"
SHOTS = REPO / "artifacts" / "screenshots"


def _answer_code() -> str:
    nb = json.loads((REPO / "solutions" / ASSIGNMENT / NOTEBOOK).read_text(encoding="utf-8"))
    cell = next(c for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id") == "a1_solution")
    text = "".join(cell["source"])
    return text.split("### BEGIN SOLUTION\n", 1)[1].split("### END SOLUTION", 1)[0]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    root = tmp_path_factory.mktemp("lab")
    home = tmp_path_factory.mktemp("home")
    port, token = _free_port(), "course-test-token"
    env = {**os.environ, "HOME": str(home), "JUPYTER_CONFIG_DIR": str(home / ".jupyter"),
           "JUPYTER_DATA_DIR": str(home / ".local/share/jupyter"), "JUPYTER_RUNTIME_DIR": str(home / "runtime")}
    proc = subprocess.Popen([str(Path(sys.executable).parent / "jupyter-lab"), "--no-browser", "--allow-root",
                             f"--port={port}", "--ip=127.0.0.1", f"--IdentityProvider.token={token}",
                             f"--ServerApp.root_dir={root}", "--LabApp.news_url=", "--ServerApp.disable_check_xsrf=False"],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while True:
        try:
            urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=2).read()
            break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                pytest.fail("JupyterLab did not start: " + (proc.stderr.read() if proc.stderr else "")[-2000:])
            time.sleep(0.5)
    yield root, url, token
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()


def _work_in_jupyterlab(lab, folder: str, code: str) -> Path:
    """Open the released notebook, replace the answer cell's text in the editor, run all, save; the saved file."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    from playwright.sync_api import sync_playwright

    root, url, token = lab
    (root / folder).mkdir()
    shutil.copy(REPO / "exercises" / ASSIGNMENT / NOTEBOOK, root / folder / NOTEBOOK)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(f"{url}/lab/tree/{folder}/{NOTEBOOK}?reset&token={token}")  # a fresh workspace: this notebook only
        page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=90_000)
        # a kernel must be ready before "run all"
        page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=90_000)
        answer = page.locator(".jp-CodeCell", has_text="raise NotImplementedError").first
        editor = answer.locator(".cm-content")
        editor.click()
        page.keyboard.press("Control+a")
        page.keyboard.press("Delete")
        page.keyboard.insert_text(code)
        page.keyboard.press("Escape")
        prompts = "() => [...document.querySelectorAll('.jp-CodeCell .jp-InputArea-prompt')].map(p => p.textContent)"
        started = f"() => ({prompts})().some(t => /\\[(\\*|\\d+)\\]/.test(t))"
        for _ in range(2):  # under load a click on the menu may open it without running the command
            page.get_by_role("menuitem", name="Run").click()
            page.locator("li[data-command='runmenu:run-all']").click()
            try:
                page.wait_for_function(started, timeout=15_000)
                break
            except PlaywrightTimeout:
                page.keyboard.press("Escape")
        # every code cell ran: its prompt shows an execution count ("[ ]" before the run starts, "[*]" while it runs)
        try:
            page.wait_for_function(f"() => ({prompts})().every(t => /\\[\\d+\\]/.test(t))", timeout=120_000)
        except PlaywrightTimeout:
            SHOTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(SHOTS / f"jupyterlab-{folder}-run-all.png"), full_page=True)
            raise AssertionError(f"not every cell ran after Run all; prompts: {page.evaluate(prompts)}") from None
        page.keyboard.press("Control+s")
        page.wait_for_function("() => !document.querySelector('.jp-mod-dirty')", timeout=30_000)
        browser.close()
    saved = root / folder / NOTEBOOK
    assert _answer_code().splitlines()[0] in saved.read_text(encoding="utf-8")  # the editor's text was saved
    return saved


def _grade(tmp_path: Path, saved: Path) -> dict:
    subs = tmp_path / "subs" / "s001" / ASSIGNMENT
    subs.mkdir(parents=True)
    shutil.copy(saved, subs / NOTEBOOK)
    out = tmp_path / "out"
    run = subprocess.run([str(Path(sys.executable).parent / "autograder"), "grade", str(tmp_path / "subs"), "--out", str(out),
                          "--quiet"], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    return json.loads((out / "results" / "s001" / f"{ASSIGNMENT}.json").read_text(encoding="utf-8"))


def test_an_answer_written_in_jupyterlab_gets_full_marks(lab, tmp_path):
    saved = _work_in_jupyterlab(lab, "plain", _answer_code())
    nb = json.loads(saved.read_text(encoding="utf-8"))
    assert nb["metadata"].get("kernelspec") and any(c.get("outputs") for c in nb["cells"] if c["cell_type"] == "code")
    result = _grade(tmp_path, saved)
    assert result["score"] == result["max_score"], [c["reason"] for c in result["cases"] if not c["passed"]][:5]
    assert result["notes"] == []


def test_notebook_habits_written_in_jupyterlab_keep_full_marks(lab, tmp_path):
    habits = ("from sklearn.metrics import f1_score  # 只用来对照\n%matplotlib inline\ndisplay('开始')\n")
    saved = _work_in_jupyterlab(lab, "habits", habits + _answer_code())
    result = _grade(tmp_path, saved)
    assert result["score"] == result["max_score"], [c["reason"] for c in result["cases"] if not c["passed"]][:5]
    assert len(result["notes"]) == 1 and "导入了 sklearn.metrics" in result["notes"][0]
    rows = list(csv.DictReader((tmp_path / "out" / "grades.csv").open(encoding="utf-8")))
    assert [(r["student_id"], float(r["score"])) for r in rows if r["assignment"] == ASSIGNMENT] == [("s001", 54.0)]
