"""Shared pytest configuration.

Hypothesis runs with a fixed, CI-friendly profile: derandomized (the same examples
every run, so a failure is reproducible) and without a deadline (the machine is shared).
"""

import os
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

#: The fixtures of the grading runs under faults and at scale (PostgreSQL, the corpus slice and its reference
#: grading), shared by tests/batch, tests/service and tests/service/lti.
pytest_plugins = ["tests.grading_runs"]
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


# --- Parallel runs (``make test``: pytest-xdist ``-n 3 --dist loadscope``) ------------------------------------
#
# Each test module is one unit of work that runs whole on one worker (its module fixtures are made once),
# except the modules below, which share session fixtures and run together (:class:`UnitScheduling`).
# The units are sent to the workers longest first (measured seconds of a serial run, 2026-12-01; a
# module not listed counts 0.1 s per test), so that no long module starts last and leaves the other
# workers idle. The book's builds are shared between workers by ``tests/book/conftest.py`` (one build
# per run, under a lock).

#: Modules sharing session fixtures: the scale tests (PostgreSQL, the graded reference slice) and the
#: service tests (one running course).
SHARED_GROUPS = {
    "tests/batch/test_dask.py": "scale", "tests/batch/test_faults.py": "scale", "tests/batch/test_resume.py": "scale",
    "tests/service/test_scale.py": "scale",
    "tests/service/test_api.py": "service-course",
    "tests/service/test_attacks.py": "service-course",
}
#: Seconds per unit in a serial run (only the long ones; used for ordering, not as limits).
UNIT_SECONDS = {
    "scale": 270, "tests/book/test_accessibility.py": 240, "tests/book/test_pdf.py": 120,
    "tests/book/test_notebooks.py": 95, "tests/service/test_pages.py": 92, "tests/book/test_site_browser.py": 20,
    "service-course": 64, "tests/batch/test_lms_layouts.py": 62, "tests/sandbox/test_load_isolation.py": 52,
    "tests/autograder/test_grade_e2e.py": 46, "tests/exercises/test_jupyterlab.py": 44,
    "tests/book/test_quiz_browser.py": 27, "tests/demo/test_app_browser.py": 25, "tests/book/test_publishing.py": 25,
    "tests/autograder/test_redteam.py": 25, "tests/exercises/test_notebooks_run.py": 18,
    "tests/book/test_rendered_text.py": 14, "tests/check/test_diagnosis_e2e.py": 85,
    "tests/sandbox/test_unprivileged_grader.py": 200, "tests/book/test_navigation_browser.py": 90,
    "tests/book/test_phone_layout.py": 80, "tests/service/test_policy.py": 20, "tests/service/test_hostile.py": 80,
}


def unit_of(nodeid: str) -> str:
    """The unit of work of a test: its shared group, or else its module."""
    module = nodeid.split("::", 1)[0]
    for prefix, group in SHARED_GROUPS.items():
        if module.startswith(prefix):
            return group
    return module


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items) -> None:
    """In a pytest-xdist worker: order the tests by unit, longest unit first (every worker alike)."""
    if os.environ.get("PYTEST_XDIST_WORKER") is None:
        return
    units: dict[str, list] = {}
    for item in items:
        units.setdefault(unit_of(item.nodeid), []).append(item)
    order = sorted(units, key=lambda u: -UNIT_SECONDS.get(u, 0.1 * len(units[u])))
    items[:] = [item for unit in order for item in units[unit]]


def pytest_xdist_make_scheduler(config, log):
    """``--dist loadscope`` with :func:`unit_of` as the scope, in the workers' (longest first) order."""
    if config.getoption("dist") != "loadscope":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class UnitScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return unit_of(nodeid)

    config.option.loadscopereorder = False  # keep the longest-first order
    return UnitScheduling(config, log)
