"""Expected values: the course's reference implementation called on private copies of a case's inputs."""

from __future__ import annotations

import copy
from typing import Any, Callable

from .. import reference

__all__ = ["REFERENCE_FUNCTIONS", "expected_for", "expects_error"]

REFERENCE_FUNCTIONS: dict[str, Callable[..., Any]] = {
    name: getattr(reference, name)
    for name in ("confusion_counts", "binary_metrics", "roc_curve", "roc_auc", "pairwise_auc", "pr_curve",
                 "average_precision", "brier_score", "brier_baseline", "calibration_curve", "expected_calibration_error")
}


def expected_for(function: str, args: tuple, kwargs: dict) -> tuple[Any, BaseException | None]:
    """``(value, None)`` from the reference, or ``(None, exc)`` when the reference rejects the input with ``ValueError``."""
    fn = REFERENCE_FUNCTIONS[function]
    try:
        return fn(*copy.deepcopy(args), **copy.deepcopy(kwargs)), None
    except ValueError as exc:
        return None, exc


_EXPECTS_ERROR: dict[tuple[str, str], bool] = {}


def expects_error(case) -> bool:
    """Is ``case`` a validation case: one call whose input the reference rejects with ``ValueError``?"""
    key = (case.function, case.id)
    if key not in _EXPECTS_ERROR:
        _EXPECTS_ERROR[key] = case.kind == "ref" and expected_for(case.function, case.args, case.kwargs)[1] is not None
    return _EXPECTS_ERROR[key]
