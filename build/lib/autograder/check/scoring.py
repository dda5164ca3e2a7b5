"""How the results of a submission's cases become points: the course's scoring rules, all in this module.

1. **A case** earns its points when the student's function returns what the reference returns (or raises the
   ``ValueError`` the reference raises); otherwise none, except under rule 2.
2. **Several metrics in one result** (the functions of :attr:`Assignment.by_field`: ``binary_metrics``).  A case
   whose result is a record of the reference's type and fields (``BinaryMetrics``) with some wrong fields earns,
   for each right field, an equal share of the case's points: ``points × right / all fields``.  A field counts
   only where the function computes it: when it is right on every basic case of the function (a constant, or a
   table of the visible answers, is right on no hidden basic case, so it earns nothing).  A result of another
   type, an exception or a timeout earns nothing, as under rule 1.
3. **Validation** (cases whose input the reference rejects with ``ValueError``) counts only for a function that
   computes: one that earns at least half of the points of each of its basic cases (rules 1 and 2).  Otherwise
   its validation cases that passed are *voided*: they earn nothing, and the result says which basic cases were
   not computed right.  A function with one wrong formula among several keeps them; a stub that only raises
   ``ValueError`` does not.

The basic cases of each function are named in its assignment's spec (:attr:`Assignment.basic`): ordinary valid
inputs, at least one of them hidden.  The student's notebook marks them ("基本用例") in the grade cells.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..model import CaseResult
from .expected import expects_error
from .specs import Assignment, Case

__all__ = ["Scores", "score", "VOIDED_REASON"]

VOIDED_REASON = ("函数拒绝了这个非法输入，但它在基本用例（{basic}）上没有算对：只有在函数能正确计算时，"
                 "拒绝非法输入的用例才计分")


@dataclass(frozen=True)
class Scores:
    """The points each case earned, and the validation cases voided by rule 3 with the basic cases that did it."""

    earned: dict[str, float]
    voided: dict[str, tuple[str, ...]]


def _share(case: Case, result: CaseResult, fields: tuple[str, ...], working: frozenset[str]) -> float:
    """Rule 2: the points of a case whose record has some wrong fields (``fields``: all of the record's fields)."""
    right = [f for f in fields if f in working and f not in result.wrong_fields]
    return round(case.points * len(right) / len(fields), 6)


def score(assignment: Assignment, results: dict[str, CaseResult]) -> Scores:
    """Apply the rules to one submission's ``results`` (every case of ``assignment``, by id)."""
    earned: dict[str, float] = {}
    voided: dict[str, tuple[str, ...]] = {}
    for function in assignment.functions:
        cases = [c for c in assignment.cases if c.function == function]
        basic = assignment.basic_cases(function)
        if not basic and any(expects_error(c) for c in cases):
            raise ValueError(f"{assignment.name}: {function} has validation cases but no basic cases")
        own = assignment.by_field.get(function, ())
        working: frozenset[str] = frozenset()
        if own and all(results[b.id].passed or results[b.id].wrong_fields for b in basic):
            working = frozenset(own) - {f for b in basic for f in results[b.id].wrong_fields}
        for c in cases:
            r = results[c.id]
            earned[c.id] = float(c.points) if r.passed else _share(c, r, own, working) if own and r.wrong_fields else 0.0
        blocking = tuple(b.id for b in basic if earned[b.id] < b.points / 2)
        if blocking:
            for c in cases:
                if results[c.id].passed and expects_error(c):
                    earned[c.id] = 0.0
                    voided[c.id] = blocking
    return Scores(earned, voided)

