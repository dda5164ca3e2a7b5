"""Hidden and visible test cases of every assignment, as data evaluated in the trusted process.

A :class:`Case` names the student function, its inputs, the grade cell it counts
towards and its points.  Expected values are never stored: they are computed by
calling :mod:`autograder.reference` on the same inputs at grading time.  A case
passes when the student's function (called in the sandbox) returns a value equal
to the reference's under :func:`~autograder.check.compare.compare`, or raises
the same kind of error (``ValueError``; ``UndefinedMetricError`` may also be
matched by ``ZeroDivisionError``).  A *property* case makes several calls and
also checks a relation between them; a *mutant* case (assignment 5) runs the
student's own test function against a planted implementation.
"""

from __future__ import annotations

from .case import FIELD_LABELS, Assignment, Case, cell_group, listing_line, prop, ref, render_cell_listing

__all__ = ["Case", "Assignment", "get_assignment", "all_assignments", "ref", "prop", "render_cell_listing", "listing_line",
           "cell_group", "FIELD_LABELS"]


def _registry() -> dict[str, Assignment]:
    from . import a1_threshold, a2_roc, a3_pr, a4_calibration, a5_testing

    items = [a1_threshold.ASSIGNMENT, a2_roc.ASSIGNMENT, a3_pr.ASSIGNMENT, a4_calibration.ASSIGNMENT, a5_testing.ASSIGNMENT]
    return {a.name: a for a in items}


_CACHE: dict[str, Assignment] = {}


def get_assignment(name: str) -> Assignment:
    """The assignment called ``name`` (``KeyError`` if there is none)."""
    if not _CACHE:
        _CACHE.update(_registry())
    return _CACHE[name]


def all_assignments() -> dict[str, Assignment]:
    """Every assignment, by name."""
    if not _CACHE:
        _CACHE.update(_registry())
    return dict(_CACHE)
