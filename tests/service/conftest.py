"""One real grading service for the API tests: a SQLite course with eight students and an instructor.

Assignments and their policies (``course.yml``):

* ps1: deadline far ahead, 3 attempts per 24 h, feedback ``cases`` before the deadline, best attempt counts;
* ps2: deadline passed, late work accepted x 0.5 until far ahead, feedback ``score``, last attempt counts;
* ps3: deadline passed, late work refused;
* ps4: deadline :data:`PS4_DEADLINE_S` seconds after the course is made, feedback ``cases`` until then; s008
  submits it as soon as the service is up (``early_ps4``), the tests look at its feedback after the deadline.
"""

from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone

import pytest

from .server import Server, make_course, notebook_bytes, submit  # noqa: I001 - puts tests/autograder on sys.path

import make_corpus  # noqa: E402

STUDENTS = [f"s{i:03d}" for i in range(1, 9)]
PS4_DEADLINE_S = 60
FAR = "2099-01-01T00:00:00+08:00"
PAST = "2020-01-01T00:00:00+08:00"


@pytest.fixture(scope="session")
def course(tmp_path_factory):
    data = tmp_path_factory.mktemp("service") / "data"
    ps4_deadline = datetime.now(timezone.utc) + timedelta(seconds=PS4_DEADLINE_S)
    config = {"login_failures": {"max": 5, "window_minutes": 15}, "upload_limit_mib": 5, "assignments": {
        "ps1_threshold_metrics": {"deadline": FAR, "attempts_per_24h": 3, "feedback_before_deadline": "cases", "counts": "best"},
        "ps2_roc_auc": {"deadline": PAST, "late": {"penalty": 0.5, "until": FAR}, "feedback_before_deadline": "score",
                        "counts": "last"},
        "ps3_pr_ap": {"deadline": PAST},
        "ps4_calibration": {"deadline": ps4_deadline.isoformat(), "feedback_before_deadline": "cases"},
    }}
    codes = make_course(data, STUDENTS, config=config)
    server = Server(data, "--jobs", "2").start()
    with server.client(codes["s008"]) as c:
        r = submit(c, "ps4_calibration", notebook_bytes(make_corpus.solution("ps4_calibration")))
    assert r.status_code == 202, f"the service took longer than {PS4_DEADLINE_S} s to start: {r.text}"
    yield {"server": server, "codes": codes, "data": data, "ps4_deadline": ps4_deadline.timestamp(), "early_ps4": r.json()["id"]}
    server.stop()


def wait_until(t: float) -> None:
    time.sleep(max(0.0, t - time.time()))
