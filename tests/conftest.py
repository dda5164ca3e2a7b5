"""Shared pytest configuration.

Hypothesis runs with a fixed, CI-friendly profile: derandomized (the same examples
every run, so a failure is reproducible) and without a deadline (the machine is shared).
"""

import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

#: The fixtures of the grading runs under faults and at scale (PostgreSQL, the corpus slice and its reference
#: grading), shared by tests/batch, tests/service and tests/service/lti; the parallel run's units and their
#: measured seconds.
pytest_plugins = ["tests.grading_runs", "tests.parallel_units"]
# The sample corpus's generator is imported by its top-level name, as when it runs as a script.
sys.path.insert(0, str(Path(__file__).resolve().parent / "autograder"))

#: Fixtures that build the book, start a browser, a real server or PostgreSQL, or grade through the sandbox: a test
#: that uses one is slow whatever its own marks, so that ``make test-fast`` (``-m "not slow"``) stays fast.
SLOW_FIXTURES = frozenset({"book_build", "browser", "postgres", "corpus", "reference", "course", "graded", "lab", "grader"})


@pytest.hookimpl(tryfirst=True)  # before ``-m`` deselects
def pytest_collection_modifyitems(items) -> None:
    for item in items:
        if SLOW_FIXTURES & set(getattr(item, "fixturenames", ())) and item.get_closest_marker("slow") is None:
            item.add_marker(pytest.mark.slow)


settings.register_profile(
    "course",
    max_examples=200,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("course")
