"""An exception granted to one student (a later deadline, a waived late penalty) reaches the LMS as the changed
counting score, exactly once (issue 40, item 2).

The grant goes through the real :mod:`autograder.service.overrides` (which restates the attempts already made and
chooses the counting attempt again in the transaction that queues the passback); the platform is the real fake
server on loopback (:mod:`.conftest`).
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from autograder.service import overrides
from autograder.service.policy import parse_policy

from .conftest import ASSIGNMENT
from .test_passback import enrolled, grade, worker

CHINA = timezone(timedelta(hours=8))


def test_an_extension_and_a_waiver_post_the_changed_score_once(tool, platform):
    """Alice's attempts: 6 on time, 10 a minute late (x 0.5 = 5), so 6 counts and is posted.  A later deadline makes
    the late attempt whole: 10 is posted once; granting it again, or waiving a penalty no attempt carries any more,
    posts nothing.  Bob's late 8 counts 4; a waiver posts 8 once, restoring the penalty posts 4 once."""
    (alice, bob) = enrolled(tool, platform, "alice", "bob")
    deadline = datetime.now(CHINA) - timedelta(hours=1)
    policy = parse_policy({"assignments": {ASSIGNMENT: {
        "deadline": deadline.isoformat(), "late": {"penalty": 0.5, "until": (deadline + timedelta(days=1)).isoformat()},
        "counts": "best"}}}, [ASSIGNMENT]).assignments[ASSIGNMENT]
    on_time, late = deadline.timestamp() - 60, deadline.timestamp() + 60
    w = worker(tool)
    grade(tool, alice, 6.0, at=on_time)
    grade(tool, alice, 10.0, penalty=0.5, at=late)
    grade(tool, bob, 8.0, penalty=0.5, at=late)
    assert w.run_once() == 2
    assert sorted(s["scoreGiven"] for s in platform.scores) == [4.0, 6.0]

    overrides.extend_deadline(tool.db, policy, alice, deadline + timedelta(hours=2), "王老师")
    assert w.run_once() == 1 and platform.scores[-1]["scoreGiven"] == 10.0
    overrides.extend_deadline(tool.db, policy, alice, deadline + timedelta(hours=3), "王老师")
    overrides.waive_late(tool.db, policy, alice, True, "王老师")
    assert w.run_once() == 0

    overrides.waive_late(tool.db, policy, bob, True, "王老师")
    overrides.waive_late(tool.db, policy, bob, True, "王老师")  # twice: one change
    assert w.run_once() == 1 and platform.scores[-1]["scoreGiven"] == 8.0
    overrides.waive_late(tool.db, policy, bob, False, "王老师")
    assert w.run_once() == 1 and platform.scores[-1]["scoreGiven"] == 4.0
    assert w.run_once() == 0
    assert [s["scoreGiven"] for s in platform.scores][2:] == [10.0, 8.0, 4.0]
