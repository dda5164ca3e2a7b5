"""The service in this process: the real core and web layer over a SQLite file, a clock the test moves, and a
stub grader in place of the sandbox.

:class:`Site` builds :class:`~autograder.service.service.Service` exactly as ``autograder serve`` does (real
``course.yml`` parsing, the notebooks' real upload rules, real accounts and codes) and talks to it through
Starlette's test client.  :meth:`Site.grade` plays the grading loop: it claims queued submissions from the real
queue, records each with the ``score`` asked for (of 10; one case, failed below full marks) through the real
:meth:`~autograder.service.queue.Queue.graded` (which chooses the counting attempt in the same transaction) and
copies the counting attempt with the real :func:`autograder.service.counting.write_gradebook` into
:class:`GradebookStub` (what would go to the nbgrader gradebook).
"""

from __future__ import annotations

import json
from pathlib import Path

from starlette.testclient import TestClient

from autograder.check import all_assignments
from autograder.model import CaseRecord, CaseResult, CellScore, SubmissionResult
from autograder.service import counting, sessions
from autograder.service.database import Database
from autograder.service.policy import parse_policy
from autograder.service.queue import Queue
from autograder.service.roster import Student, import_students, instructor_code
from autograder.service.schema import prepare
from autograder.service.courses import UPGRADED
from autograder.service.service import Service
from autograder.service.site import Site as ServiceSite
from autograder.service.uploads import notebook_rules
from autograder.service.web.app import make_app

REPO = Path(__file__).resolve().parents[2]
A = all_assignments()


class Clock:
    """Epoch seconds that move only when the test says so."""

    def __init__(self, t: float) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t

    def advance(self, seconds: float) -> None:
        self.t += seconds


class GradebookStub:
    """Records what :func:`~autograder.service.counting.write_gradebook` writes into the gradebook: (student, assignment) -> score."""

    def __init__(self) -> None:
        self.scores: dict[tuple[str, str], float] = {}

    def record(self, result: SubmissionResult, notebook: str, comment: str) -> None:
        self.scores[(result.student, result.assignment)] = result.score


def stub_result(student: str, assignment: str, score: float, max_score: float = 10.0) -> SubmissionResult:
    cases = [CaseRecord("c0", "cell", max_score, "f", "用例 0", False, CaseResult(score == max_score, call="f([1])",
                                                                               expected="1", got="1" if score == max_score else "0"))]
    return SubmissionResult(student, assignment, score, max_score, {"cell": CellScore(score, max_score)}, cases,
                            fingerprint="stub")


COURSE_URL = f"http://testserver/c/{UPGRADED.id}/"


class Site:
    """One course served in process: ``config`` is ``course.yml``'s data; ``students`` get accounts and codes.

    The course is a one-course service's database upgraded in place (the site's database holds the course, id
    ``default``), served under ``/c/default/`` like any course of a site."""

    def __init__(self, tmp: Path, config: dict, students: list[str], now: float, db_url: str | None = None,
                 book_url: str = "") -> None:
        """``db_url``: the gradebook's database (default: SQLite in ``tmp``); ``book_url``: the site's
        ``--book-url`` (default: none, so the pages name the book's sections without links)."""
        self.clock = Clock(now)
        self.db = Database(db_url or f"sqlite:///{tmp / 'gradebook.db'}")
        prepare(self.db)
        prepare(self.db, "site")
        policy = parse_policy(config, list(A))
        sources = {n: REPO / "solutions" / n / f"{A[n].notebook}.ipynb" for n in A}
        rules = {n: notebook_rules(A[n], sources[n], sources) for n in policy.assignments}
        self.service = Service(self.db, policy, tmp / "data", sessions.Signer(b"k" * 32, scope=UPGRADED.id), rules,
                               {n: A[n].title for n in policy.assignments}, clock=self.clock)
        self.codes = {s.student_id: code for s, code in import_students(self.db, [Student(s) for s in students])}
        self.codes["instructor"] = instructor_code(self.db, "王老师")
        self.site = ServiceSite(self.db, tmp / "data", "http://testserver", {UPGRADED.id: self.service}, b"k" * 32,
                                clock=self.clock, book_url=book_url)
        self.app = make_app(self.site)
        self.gradebook = GradebookStub()
        self.queue = Queue(self.db, "stub", lease=30)

    def client(self, who: str | None = None, **kw) -> TestClient:
        """A test client sending ``who``'s code (None: nobody's)."""
        headers = {"Authorization": f"Bearer {self.codes[who]}"} if who else {}
        return TestClient(self.app, base_url=COURSE_URL, headers=headers, **kw)

    def signed_in(self, who: str) -> tuple[TestClient, str]:
        """A client with ``who``'s session cookie (as after the sign-in form), and the session's CSRF token."""
        c = TestClient(self.app, base_url=COURSE_URL)
        r = c.post("/api/v1/session", json={"code": self.codes[who]})
        assert r.status_code == 200, r.text
        return c, r.json()["csrf_token"]

    def grade(self, score: float = 10.0, *, settle: bool = True) -> list[str]:
        """Grade everything queued: each gets ``score`` of 10, recorded with its counting attempt (``settle``: and
        copied into the gradebook at once, else later by :meth:`settle`); the ids."""
        done = []
        courses = self.service.policy.assignments
        while (claim := self.queue.claim(now=self.clock())) is not None:
            assert (self.service.data_root / claim.path).is_file()
            result = stub_result(claim.student_id, claim.assignment, score)
            assert self.queue.graded(claim.id, score=result.score, max_score=result.max_score, fingerprint="stub",
                                     result_json=json.dumps(result.to_json()), counts=courses[claim.assignment].counts)
            if settle:
                counting.write_gradebook(self.db, self.gradebook, A[claim.assignment].notebook, claim.student_id,
                                         claim.assignment)
            done.append(claim.id)
        return done

    def settle(self, student: str, assignment: str) -> None:
        courses = self.service.policy.assignments
        counting.settle(self.db, self.gradebook, lambda a: courses[a].counts, lambda a: A[a].notebook, student, assignment)


def solution_bytes(assignment: str) -> bytes:
    """The released student notebook of ``assignment`` (it has the assignment's answer cells)."""
    return (REPO / "exercises" / assignment / f"{A[assignment].notebook}.ipynb").read_bytes()


def upload(client: TestClient, assignment: str, data: bytes, filename: str = "notebook.ipynb", **kw):
    return client.post(f"/api/v1/assignments/{assignment}/submissions",
                       files={"notebook": (filename, data, "application/x-ipynb+json")}, **kw)
