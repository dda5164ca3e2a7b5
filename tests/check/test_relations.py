"""Property cases check the relation they promise (monotone transforms of ROC and PR curves)."""

from __future__ import annotations

import numpy as np
import pytest

from autograder import reference
from autograder.check.specs import get_assignment
from autograder.sandbox.payload import wire


def _student_values(case, tamper=None):
    values = []
    for k, (args, kwargs) in enumerate(case.calls):
        value = reference.__dict__[case.function](*args, **kwargs)
        if tamper and k > 0:
            value = tamper(value)
        values.append(wire.decode(wire.encode(value)))
    return values


@pytest.mark.parametrize("assignment, case_id", [("ps2_roc_auc", "property.monotone_roc"), ("ps3_pr_ap", "property.monotone_pr")])
def test_monotone_curve_relation(assignment, case_id):
    case = next(c for c in get_assignment(assignment).cases if c.id == case_id)
    assert case.relation(_student_values(case)) is None
    # thresholds copied from the first call instead of transformed with the scores
    first = reference.__dict__[case.function](*case.calls[0][0])
    why = case.relation(_student_values(case, lambda v: v._replace(thresholds=first.thresholds)))
    assert why and "阈值" in why
    # a point of the curve moved
    field = "fpr" if case.function == "roc_curve" else "recall"
    why = case.relation(_student_values(case, lambda v: v._replace(**{field: np.roll(getattr(v, field), 1)})))
    assert why and field in why
