"""``make serve`` with other ports than the defaults, as a reader and a student meet it.

The deployment setting is the one the Makefile writes for ``PORT=.. DEMO_PORT=.. SUBMIT_PORT=..`` (free ports of
this machine).  With it, into a folder of its own and reusing the execution cache:

* the site: the home page's demo and submission links, the 编程作业 page's link to each assignment's page on the
  submission service, and the downloads' links all carry those ports; the submission links go to the demo
  course's page on the service (``/c/bin-2026/``, the Makefile's ``SUBMIT_URL``), where a student signs in and
  submits; the site is served on its port, as ``make serve`` does;
* the PDF edition (single page printed by chromium): its text names the three addresses, the same as the site's;
* the demo, started with the setting: its 「← 回到课程」 goes to the book's port;
* the submission service's feedback (rendered with no explicit book address, as the service does): its
  book links go to the book's port;
* a downloaded notebook (fetched from the served site) runs in a new virtual environment holding only public
  packages (NumPy, SciPy, Matplotlib, scikit-learn, Pillow, mplfonts, IPython's kernel): its first cell installs
  the course's helper wheel from the site, every cell runs, the outputs are there, and no MyST markup is left.
"""

from __future__ import annotations

import concurrent.futures
import functools
import http.server
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.request
import venv
from pathlib import Path

import pytest

from coursebook.deployment import load_settings

from .conftest import ROOT, _jupyter_book
from .test_quiz_browser import SHOTS

pytestmark = pytest.mark.slow

sys.path.insert(0, str(ROOT / "book" / "_ext"))
from download_markdown import remaining_markup  # noqa: E402

#: Pages whose downloads run in the clean environment: an animation and glued numbers (ROC), scikit-learn models,
#: a glued figure (multiclass).
RUN_PAGES = ("book/binary/roc", "book/binary/pr", "book/methodology/multiclass")
#: The public packages of the clean environment (their versions: requirements.txt).
PUBLIC_PACKAGES = ("numpy", "scipy", "matplotlib", "scikit-learn", "pillow", "mplfonts", "ipykernel", "nbclient", "nbformat")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


@pytest.fixture(scope="module")
def served(book_html, tmp_path_factory):
    """The site built with the setting ``make site-config PORT=.. DEMO_PORT=.. SUBMIT_PORT=..`` writes, served on PORT."""
    out = tmp_path_factory.mktemp("ports")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Quiet)  # its port is the book's port
    port = server.server_port
    ports = {"PORT": port, "DEMO_PORT": _free_port(), "SUBMIT_PORT": _free_port()}
    assert len(set(ports.values())) == 3 and not {8000, 8050, 8060} & set(ports.values())
    config = out / "site.yml"
    subprocess.run(["make", "--no-print-directory", "-s", "site-config", *(f"{k}={v}" for k, v in ports.items()),
                    f"SERVE_SITE={config}"], cwd=ROOT, check=True, timeout=60)
    env = dict(os.environ, COURSE_SITE_CONFIG=str(config))
    code, log, seconds = _jupyter_book("--builder", "html", "--path-output", str(out), env=env)
    print(f"build with ports {ports}: {seconds:.0f} s")
    assert code == 0, log[-4000:]
    site = out / "_build" / "html"
    server.RequestHandlerClass = functools.partial(_Quiet, directory=str(site))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield {"ports": ports, "config": config, "env": env, "out": out, "site": site, "settings": load_settings(config)}
    server.shutdown()
    server.server_close()


def _hrefs(html: str) -> list[str]:
    return re.findall(r'href="(http[^"]+)"', html)


#: The course of the submission service that ``make serve``'s links name (the demo's first course).
COURSE_PATH = "c/bin-2026/"


def _addresses(ports: dict[str, int]) -> tuple[str, str, str]:
    """The book's, the demo's and the submission service's course address for ``ports``."""
    return (f"http://127.0.0.1:{ports['PORT']}/", f"http://127.0.0.1:{ports['DEMO_PORT']}/",
            f"http://127.0.0.1:{ports['SUBMIT_PORT']}/{COURSE_PATH}")


def test_the_site_links_to_the_ports_it_was_given(served):
    book, demo, submit = _addresses(served["ports"])
    assert served["settings"].submit_url == submit
    intro = (served["site"] / "book/intro.html").read_text(encoding="utf-8")
    assert demo in _hrefs(intro) and submit in _hrefs(intro)
    assignments = _hrefs((served["site"] / "book/assignments/index.html").read_text(encoding="utf-8"))
    for name in ("ps1_threshold_metrics", "ps2_roc_auc", "ps3_pr_ap", "ps4_calibration", "ps5_testing"):
        assert f"{submit}assignments/{name}" in assignments, name
    assert not any(re.search(r"127\.0\.0\.1:80[56]0\b", h) for h in assignments + _hrefs(intro))
    with urllib.request.urlopen(f"{book}book/binary/roc.html") as page:  # served where its links say
        assert page.status == 200
    download = json.loads((served["site"] / "_sources/book/binary/roc.ipynb").read_text(encoding="utf-8"))
    text = "\n".join("".join(c["source"]) for c in download["cells"])
    assert f"%pip install -q {book}_downloads/course/binary_eval_course-" in text
    links = re.findall(r"\]\((http[^)]+)\)", text)
    assert links and all(link.startswith(book) for link in links), links[:5]


def test_the_pdf_names_the_addresses_it_was_given(served):
    from coursebook.pdf import Edition, print_pdf, serve

    out = served["out"]
    code, log, _ = _jupyter_book("--builder", "singlehtml", "--path-output", str(out), env=served["env"])
    assert code == 0, log[-4000:]
    single = out / "_build" / "singlehtml"
    shutil.copy2(single / "book" / "intro.html", single / "print.html")
    pdf = out / "course.pdf"
    with serve(single) as base, concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        # on a thread of its own: while this process's shared chromium lives (the ``browser`` fixture), Playwright's
        # sync API keeps its event loop marked as running in the main thread, where a second sync API refuses to start
        pool.submit(print_pdf, f"{base}/print.html", pdf, Edition(False), served["settings"]).result()
    text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    cover = text.split("\f", 1)[0]
    for address in _addresses(served["ports"]):  # the addresses the site links (a long one may wrap on the cover)
        assert address in re.sub(r"\s+", "", cover), f"the cover does not name {address}:\n{cover}"
    assert not re.search(r"127\.0\.0\.1:80[056]0\b", text), "the PDF names a default port"
    # the address printed after each assignment's link on 编程作业 (in a table cell: read in the order it is drawn)
    drawn = subprocess.run(["pdftotext", "-raw", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    submit = _addresses(served["ports"])[2].removeprefix("http://")
    assert f"{submit}assignments/ps2_roc_auc" in re.sub(r"\s+", "", drawn)


def test_the_demo_links_back_to_the_book_at_its_port(served, browser):
    port = served["ports"]["DEMO_PORT"]
    demo = subprocess.Popen([sys.executable, "-m", "demo", "--host", "127.0.0.1", "--port", str(port)], cwd=ROOT,
                            env=served["env"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5).close()
                break
            except OSError:
                assert demo.poll() is None and time.monotonic() < deadline, "the demo did not start"
                time.sleep(0.5)
        for width in (375, 1280):
            ctx = browser.new_context(viewport={"width": width, "height": 800})
            tab = ctx.new_page()
            tab.goto(f"http://127.0.0.1:{port}/", wait_until="networkidle")
            back = tab.locator("#book-link")  # a tab of the navigation bar (bslib gives it role=tab)
            assert back.inner_text().strip() == "← 回到课程" and back.get_attribute("href") == served["settings"].site_url
            names = tab.evaluate("() => [...document.querySelectorAll('[title], [aria-label]')]"
                                 ".map(e => (e.getAttribute('title') || '') + ' ' + (e.getAttribute('aria-label') || ''))")
            assert not [n for n in names if "Toggle" in n], names
            tab.screenshot(path=str(SHOTS / f"demo-ports-{width}.png"))
            ctx.close()
    finally:
        demo.terminate()
        demo.wait(timeout=30)


def test_the_feedback_links_to_the_book_at_its_port(served, monkeypatch):
    from autograder.check.specs import get_assignment
    from autograder.store import report

    from ..check.diagnosis_students import WALKER
    from ..check.inprocess_grading import grade_in_process, solution_namespace

    assignment = get_assignment("ps2_roc_auc")
    result = grade_in_process(assignment, solution_namespace(assignment, WALKER))
    monkeypatch.setenv("COURSE_SITE_CONFIG", str(served["config"]))
    report.default_book_url.cache_clear()
    try:
        html = report.feedback_html("作业 2", result, "full")  # as the service renders it: no address given
    finally:
        report.default_book_url.cache_clear()
    book = served["settings"].site_url
    assert f'href="{book}book/binary/roc.html#' in html
    assert not re.search(r"127\.0\.0\.1:8000\b", html)


@pytest.fixture(scope="module")
def clean_python(tmp_path_factory) -> Path:
    """A new virtual environment with only public packages (pinned as in requirements.txt), not this repository."""
    home = tmp_path_factory.mktemp("clean-env")
    venv.EnvBuilder(with_pip=True).create(home / "env")
    python = home / "env" / "bin" / "python"
    pins = home / "pins.txt"
    pins.write_text("\n".join(line for line in (ROOT / "requirements.txt").read_text(encoding="utf-8").splitlines()
                              if "==" in line) + "\n", encoding="utf-8")
    proc = subprocess.run([str(python), "-m", "pip", "install", "-q", "-c", str(pins), *PUBLIC_PACKAGES], cwd=home,
                          capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stderr[-3000:]
    present = "import importlib.util as u; print([m for m in ('autograder', 'coursebook', 'myst_nb') if u.find_spec(m)])"
    check = subprocess.run([str(python), "-c", present], cwd=home, capture_output=True, text=True, check=True)
    assert check.stdout.strip() == "[]", f"the clean environment already has {check.stdout}"
    return python


RUN_NOTEBOOK = """
import json, sys, nbformat
from nbclient import NotebookClient
nb = nbformat.reads(sys.stdin.read(), as_version=4)
NotebookClient(nb, timeout=600, kernel_name="python3", allow_errors=True, resources={"metadata": {"path": "."}}).execute()
print(json.dumps([[[o.get("output_type"), o.get("ename"), o.get("evalue")] for o in c.get("outputs", [])]
                  for c in nb.cells if c.cell_type == "code"]))
"""
#: What importing the reference metrics from the public helper wheel says (book/_ext/helper_wheel.py).
NO_REFERENCE = "公开课程不附带课程的参考实现 autograder.reference"


@pytest.mark.parametrize("page", RUN_PAGES)
def test_a_downloaded_notebook_runs_with_public_packages_only(served, clean_python, page, tmp_path):
    """The public edition's download installs the course's helper wheel and runs in a clean environment; a cell
    that needs the reference metrics (the assignments' answers, not published) says why, and every other error is
    a name such a cell did not bind."""
    url = f"{served['settings'].site_url}_sources/{page}.ipynb"
    with urllib.request.urlopen(url) as response:  # as a reader downloads it
        text = response.read().decode("utf-8")
    download = json.loads(text)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COURSE_", "PYTHON", "JUPYTER", "VIRTUAL_ENV"))}
    env["PATH"] = f"{clean_python.parent}:{env.get('PATH', '')}"
    proc = subprocess.run([str(clean_python), "-c", RUN_NOTEBOOK], input=text, cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, f"{page}: the download could not be run in a clean environment:\n{proc.stderr[-4000:]}"
    ran = json.loads(proc.stdout.strip().splitlines()[-1])
    code = [c for c in download["cells"] if c["cell_type"] == "code"]
    assert len(ran) == len(code)
    assert not any(o[0] == "error" for o in ran[0]), f"{page}: the helper wheel did not install: {ran[0]}"
    errors = [(k, o) for k, outputs in enumerate(ran) for o in outputs if o[0] == "error"]
    assert errors, f"{page}: ran to the end although the public wheel has no reference metrics (does it still compute with them?)"
    first, (_, ename, evalue) = errors[0]
    assert ename == "ReferenceNotPublished" and NO_REFERENCE in evalue, errors[0]
    for k, (_, ename, evalue) in errors[1:]:  # the reference again, or a name a cell that needed it did not bind
        assert ename in ("ReferenceNotPublished", "NameError"), f"{page}: cell {k}: {ename}: {evalue}"
    missing = [k for k in range(first) if code[k].get("outputs") and not ran[k]]
    assert not missing, f"{page}: code cells {missing} had outputs in the download and none when run"


def test_no_download_shows_myst_markup(served):
    notebooks = sorted((served["site"] / "_sources").rglob("*.ipynb"))
    assert len(notebooks) >= 20
    with_outputs = 0
    for path in notebooks:
        nb = json.loads(path.read_text(encoding="utf-8"))
        with_outputs += any(c.get("outputs") for c in nb["cells"] if c["cell_type"] == "code")
        for cell in nb["cells"]:
            texts = ["".join(cell["source"])] if cell["cell_type"] == "markdown" else \
                ["".join(o["data"]["text/markdown"]) for o in cell.get("outputs", []) if "text/markdown" in o.get("data", {})]
            for text in texts:
                assert not remaining_markup(text), f"{path.relative_to(served['site'])}: {remaining_markup(text)[:5]}"
            if cell["cell_type"] == "code":
                assert "from myst_nb" not in "".join(cell["source"]), f"{path.name} imports myst_nb"
    assert with_outputs >= len(notebooks) - 4, f"only {with_outputs} of {len(notebooks)} downloads carry their outputs"
