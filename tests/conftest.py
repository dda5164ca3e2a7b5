"""Shared pytest configuration.

Hypothesis runs with a fixed, CI-friendly profile: derandomized (the same examples
every run, so a failure is reproducible) and without a deadline (the machine is shared).
"""

import sys
from pathlib import Path

from hypothesis import HealthCheck, settings

#: The fixtures of the grading runs under faults and at scale (PostgreSQL, the corpus slice and its reference
#: grading), shared by tests/batch, tests/service and tests/service/lti; the parallel run's units and their
#: measured seconds.
pytest_plugins = ["tests.grading_runs", "tests.parallel_units"]
# The sample corpus's generator is imported by its top-level name, as when it runs as a script.
sys.path.insert(0, str(Path(__file__).resolve().parent / "autograder"))

settings.register_profile(
    "course",
    max_examples=200,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("course")
