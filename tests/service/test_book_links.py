"""The service links into the book (issue 40, items 3 and 8, the service's side), in process (:mod:`.inprocess`).

The book's address is configuration (``autograder serve --book-url``, which ``make serve`` gives its own book's port),
never a request's: with it, a diagnosis's 「课本中的讲解」 is a link to its section, and the course's pages link the book
and its 编程作业 page; without it (the default) they name the section as plain text, and the API's feedback page does
not fall back on the deployment file's addresses (``deploy/local.yml``'s fixed ports were the issue's dead links).
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from autograder.model import Diagnosis
from autograder.service.site import BOOK_ASSIGNMENTS, SiteError, book_url

from .inprocess import REPO, Site, solution_bytes, stub_result, upload

A1 = "ps1_threshold_metrics"
BOOK = "http://127.0.0.1:9100/"
SECTION = "book/binary/metrics.html#binary-precision"


@pytest.fixture
def site(tmp_path):
    s = Site(tmp_path, {"assignments": {A1: {"feedback_before_deadline": "cases"}}}, ["s001"], 1.8e9)
    yield s
    s.db.dispose()


def graded_with_diagnoses(site: Site, links: list[str]) -> str:
    """An attempt of s001 graded with one diagnosis per link (as the grader's catalogue names a section); its id."""
    sid = upload(site.client("s001"), A1, solution_bytes(A1)).json()["id"]
    claim = site.queue.claim(now=site.clock())
    result = stub_result("s001", A1, 4)
    result.diagnoses = [Diagnosis("f", f"m{i}", ["c0"], title=f"错误 {i}", link=link, section=f"小节 {i}")
                        for i, link in enumerate(links)]
    assert site.queue.graded(claim.id, score=4, max_score=10, fingerprint="stub", result_json=json.dumps(result.to_json()),
                             counts="best")
    return sid


def test_with_a_book_url_a_diagnosis_links_its_section_and_the_pages_link_the_book(site):
    site.site.book_url = book_url(BOOK.rstrip("/"))
    sid = graded_with_diagnoses(site, [SECTION, "https://elsewhere.example/x.html", "javascript:alert(1)"])
    page, _ = site.signed_in("s001")
    html = page.get(f"/assignments/{A1}").text
    assert f'课本中的讲解：<a href="{BOOK}{SECTION}">“小节 0”一节</a>' in html
    for i, other in ((1, "https://elsewhere.example/x.html"), (2, "javascript:alert(1)")):  # not a section: text only
        assert f"“小节 {i}”一节（<code>{other}</code>）" in html and f'href="{other}"' not in html
    assert f'<a href="{BOOK}" class="book-link">课本</a>' in html  # the header's menu
    assert f'<a href="{BOOK}{BOOK_ASSIGNMENTS}">“编程作业”</a>' in html
    assert f'<a href="{BOOK}{BOOK_ASSIGNMENTS}">“编程作业”</a>一页' in page.get("/").text
    feedback = site.client("s001").get(f"/api/v1/submissions/{sid}/feedback").text
    assert f'href="{BOOK}{SECTION}"' in feedback


def test_without_one_the_pages_name_the_section_and_link_nowhere(site):
    sid = graded_with_diagnoses(site, [SECTION])
    page, _ = site.signed_in("s001")
    html = page.get(f"/assignments/{A1}").text
    assert f"课本中的讲解：“小节 0”一节（<code>{SECTION}</code>）" in html
    assert "课本</a>" not in html and "编程作业" not in html
    feedback = site.client("s001").get(f"/api/v1/submissions/{sid}/feedback").text
    assert "小节 0" in feedback and "<a href=\"http" not in feedback and "127.0.0.1:8000" not in feedback


def test_a_request_cannot_choose_the_book():
    assert book_url(None) == "" and book_url("") == ""
    assert book_url("https://course.example.edu/bin") == "https://course.example.edu/bin/"
    for bad in ("ftp://x.example/", "course.example.edu", "https://x.example/?a=1", "https://u@x.example/", "http:///p"):
        with pytest.raises(SiteError, match="--book-url"):
            book_url(bad)


def test_the_links_point_at_pages_the_book_has_and_make_serve_passes_its_own_port():
    assert (REPO / BOOK_ASSIGNMENTS.replace("/index.html", "/index.md")).is_file()
    # what `make serve` would run with other ports than the defaults (dry run; the book and PDF taken as built)
    proc = subprocess.run(["make", "--no-print-directory", "-n", "-o", "book", "-o", "pdf", "serve", "HOST=127.0.0.9",
                           "PORT=9123", "SUBMIT_PORT=9124"], cwd=REPO, capture_output=True, text=True, timeout=60, check=True)
    service = [line for line in proc.stdout.splitlines() if "autograder.commands.demo_course" in line]
    assert len(service) == 1 and "--port 9124 " in service[0], proc.stdout
    assert re.search(r"--book-url http://127\.0\.0\.9:9123/(\s|$)", service[0]), service[0]
    assert Path(REPO / "autograder" / "commands" / "demo_course.py").read_text(encoding="utf-8").count("--book-url") >= 2
