"""What JupyterLab writes is what we grade: a student opens the released notebook in a real JupyterLab 4
(the course environment's own), writes the answer in the real editor, runs all cells, saves, and the
saved file gets full marks from the real command; an answer with notebook habits (a scikit-learn import to
compare, ``display``, a magic) too.

Both answers are written in one browser tab after the other (the process's chromium, tests/conftest.py) and
graded by one run of the real command, as two students of one batch (``s001``: plain, ``s002``: habits)."""

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
ASSIGNMENT, NOTEBOOK = "ps1_threshold_metrics", "threshold_metrics.ipynb"
SHOTS = REPO / "artifacts" / "screenshots"
HABITS = "from sklearn.metrics import f1_score  # 只用来对照\n%matplotlib inline\ndisplay('开始')\n"
#: The student of each answer in the graded batch.
STUDENTS = {"plain": "s001", "habits": "s002"}


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


def _work_in_jupyterlab(lab, page, folder: str, code: str) -> Path:
    """Open the released notebook in ``page``, replace the answer cell's text in the editor, run all, save; the saved file."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    root, url, token = lab
    (root / folder).mkdir()
    shutil.copy(REPO / "exercises" / ASSIGNMENT / NOTEBOOK, root / folder / NOTEBOOK)
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
    saved = root / folder / NOTEBOOK
    assert _answer_code().splitlines()[0] in saved.read_text(encoding="utf-8")  # the editor's text was saved
    return saved


@pytest.fixture(scope="module")
def saved(lab, browser) -> dict[str, Path]:
    """The two answers written in JupyterLab, one after the other in one tab (its assets loaded once)."""
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        page = ctx.new_page()
        return {"plain": _work_in_jupyterlab(lab, page, "plain", _answer_code()),
                "habits": _work_in_jupyterlab(lab, page, "habits", HABITS + _answer_code())}
    finally:
        ctx.close()


@pytest.fixture(scope="module")
def graded_batch(saved, tmp_path_factory) -> tuple[dict[str, dict], list[dict]]:
    """Both saved notebooks graded by one ``autograder grade`` run: each student's result and ``grades.csv``."""
    tmp_path = tmp_path_factory.mktemp("grade")
    for folder, student in STUDENTS.items():
        subs = tmp_path / "subs" / student / ASSIGNMENT
        subs.mkdir(parents=True)
        shutil.copy(saved[folder], subs / NOTEBOOK)
    out = tmp_path / "out"
    run = subprocess.run([str(Path(sys.executable).parent / "autograder"), "grade", str(tmp_path / "subs"), "--out", str(out),
                          "--quiet"], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    results = {student: json.loads((out / "results" / student / f"{ASSIGNMENT}.json").read_text(encoding="utf-8"))
               for student in STUDENTS.values()}
    return results, list(csv.DictReader((out / "grades.csv").open(encoding="utf-8")))


def test_an_answer_written_in_jupyterlab_gets_full_marks(saved, graded_batch):
    nb = json.loads(saved["plain"].read_text(encoding="utf-8"))
    assert nb["metadata"].get("kernelspec") and any(c.get("outputs") for c in nb["cells"] if c["cell_type"] == "code")
    result = graded_batch[0][STUDENTS["plain"]]
    assert result["score"] == result["max_score"], [c["reason"] for c in result["cases"] if not c["passed"]][:5]
    assert result["notes"] == []


def test_notebook_habits_written_in_jupyterlab_keep_full_marks(graded_batch):
    results, rows = graded_batch
    result = results[STUDENTS["habits"]]
    assert result["score"] == result["max_score"], [c["reason"] for c in result["cases"] if not c["passed"]][:5]
    assert len(result["notes"]) == 1 and "导入了 sklearn.metrics" in result["notes"][0]
    assert sorted((r["student_id"], float(r["score"])) for r in rows if r["assignment"] == ASSIGNMENT) == \
        [("s001", 56.0), ("s002", 56.0)]
