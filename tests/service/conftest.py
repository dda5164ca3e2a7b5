"""One real grading service for the API tests: a SQLite course with eight students and an instructor, made with the
commands an instructor runs (``autograder course add``, ``roster import``, ``roster instructor``).

Assignments and their policies (``course.yml``):

* ps1: deadline far ahead, 3 attempts per 24 h, feedback ``cases`` before the deadline, best attempt counts;
* ps2: deadline passed, late work accepted x 0.5 until far ahead, feedback ``score``, last attempt counts;
* ps3: deadline passed, late work refused.

What happens as time passes (deadlines, the rolling 24 hours) is tested in process with a moving clock
(``test_policy.py``), not by waiting here.
"""

from __future__ import annotations

import pytest

from autograder.service.database import Database
from autograder.service.schema import prepare

from .server import Server, make_course

STUDENTS = [f"s{i:03d}" for i in range(1, 9)]
COURSE = "api-2026"
FAR = "2099-01-01T00:00:00+08:00"
PAST = "2020-01-01T00:00:00+08:00"


@pytest.fixture(scope="session")
def course(tmp_path_factory):
    data = tmp_path_factory.mktemp("service") / "data"
    config = {"login_failures": {"max": 5, "window_minutes": 15}, "upload_limit_mib": 5, "assignments": {
        "ps1_threshold_metrics": {"deadline": FAR, "attempts_per_24h": 3, "feedback_before_deadline": "cases", "counts": "best"},
        "ps2_roc_auc": {"deadline": PAST, "late": {"penalty": 0.5, "until": FAR}, "feedback_before_deadline": "score",
                        "counts": "last"},
        "ps3_pr_ap": {"deadline": PAST},
    }}
    codes = make_course(data, STUDENTS, config=config, cli=COURSE)  # the course and roster commands themselves
    server = Server(data, "--jobs", "2", course=COURSE).start()
    yield {"server": server, "codes": codes, "data": data / "courses" / COURSE}
    server.stop()


@pytest.fixture
def db(tmp_path):
    """A fresh service database (SQLite file in the test's folder) with its tables."""
    d = Database(f"sqlite:///{tmp_path / 'g.db'}")
    prepare(d)
    yield d
    d.dispose()
