"""Shared pytest configuration.

Hypothesis runs with a fixed, CI-friendly profile: derandomized (the same examples
every run, so a failure is reproducible) and without a deadline (the machine is shared).
"""

from hypothesis import HealthCheck, settings

settings.register_profile(
    "course",
    max_examples=200,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("course")
