"""Name a known misconception for a failing function, or nothing: matching that never guesses (trusted side only).

For a graded function that failed, each catalogue entry of :mod:`.misconceptions` concerning it is tried,
variant by variant.  A variant *matches* when, on every case of the function where the variant's result
differs from the reference's (at least two such cases), the student's function failed and did exactly what
the variant does (the same value under :func:`~.compare.compare`, or a ``ValueError`` where the variant
raises one).  Of several matching entries the *more specific* one is named: the one whose differing cases
strictly include every other match's (it explains more of the failures and everything the others
explain); when no entry's cases do, nothing is named.  A function that passes every case gets no
diagnosis.

The variants run in this process on the cases' own inputs (at most :data:`MAX_INPUT_VALUES` values per
case), once per process: their results are cached with the case.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ..model import CaseResult, Diagnosis
from ..sandbox.payload.wire import Struct
from .compare import compare
from .expected import expected_for
from .misconceptions import Misconception, for_assignment
from .specs import Assignment, Case

__all__ = ["Observed", "diagnose", "match_function", "prediction", "MAX_INPUT_VALUES"]

MAX_INPUT_VALUES = 20_000


@dataclass(frozen=True)
class Observed:
    """What the student's function did on one call: returned ``value``, raised (``mro``: exception class
    names), or ``failed`` (timeout, crash, unreadable value)."""

    kind: str  # "value" | "raised" | "failed"
    value: Any = None
    mro: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Outcome:
    raised: bool
    value: Any = None
    broken: bool = False  # the planted implementation failed otherwise (a catalogue bug): never agrees


@dataclass(frozen=True)
class Prediction:
    """A variant on one case: its outcome per call, and the index of the first call where it differs from the
    reference (None: it agrees with the reference on this case)."""

    outcomes: tuple[_Outcome, ...]
    first_difference: int | None


def _as_wire(x: Any) -> Any:
    """A trusted value in the shape the wire decodes a student's value to (named tuples become :class:`Struct`)."""
    if isinstance(x, tuple) and hasattr(type(x), "_fields"):
        return Struct(type(x).__name__, list(type(x)._fields), [_as_wire(v) for v in x])
    return x


def _size(x: Any) -> int:
    if isinstance(x, (list, tuple)):
        return sum(_size(v) for v in x)
    if isinstance(x, dict):
        return sum(_size(v) for v in x.values())
    return int(np.size(x)) if isinstance(x, np.ndarray) else 1


def _run(impl: Any, args: tuple, kwargs: dict) -> _Outcome:
    if _size(args) + _size(kwargs) > MAX_INPUT_VALUES:
        return _Outcome(False, broken=True)
    try:
        return _Outcome(False, impl(*copy.deepcopy(args), **copy.deepcopy(kwargs)))
    except ValueError:
        return _Outcome(True)
    except Exception:  # noqa: BLE001 - a planted implementation that breaks explains nothing
        return _Outcome(False, broken=True)


_CACHE_LIMIT = 20_000  # the specs' cases are built once per process; cases built elsewhere must not grow it forever
_REFERENCE: dict[tuple[int, int], tuple[Case, Any, bool]] = {}


def _reference(case: Case, index: int) -> tuple[Any, bool]:
    """The reference's value on call ``index`` of ``case`` and whether it raised (computed once per case object)."""
    hit = _REFERENCE.get((id(case), index))
    if hit is not None and hit[0] is case:
        return hit[1], hit[2]
    args, kwargs = _calls(case)[index]
    expected, exc = expected_for(case.function, args, kwargs)
    if len(_REFERENCE) >= _CACHE_LIMIT:
        _REFERENCE.clear()
    _REFERENCE[(id(case), index)] = (case, expected, exc is not None)
    return expected, exc is not None


def _differs(case: Case, index: int, got: _Outcome) -> bool:
    expected, raised = _reference(case, index)
    if got.broken:
        return True
    if raised or got.raised:
        return raised != got.raised
    try:
        return compare(expected, _as_wire(got.value)) is not None
    except Exception:  # noqa: BLE001 - a value the comparison cannot handle is a difference
        return True


def _calls(case: Case) -> list[tuple[tuple, dict]]:
    return [(case.args, case.kwargs)] if case.kind == "ref" else list(case.calls)


_CACHE: dict[tuple[int, str, str, str], tuple[Case, Prediction]] = {}


def prediction(entry: Misconception, function: str, variant: str, case: Case) -> Prediction:
    """What ``variant`` of ``entry`` does on ``case`` (computed once per case object and process)."""
    key = (id(case), entry.id, function, variant)
    hit = _CACHE.get(key)
    if hit is not None and hit[0] is case:
        return hit[1]
    impl = entry.impls[function][variant]
    outcomes, first = [], None
    for i, (args, kwargs) in enumerate(_calls(case)):
        out = _run(impl, args, kwargs)
        outcomes.append(out)
        if first is None and _differs(case, i, out):
            first = i
    pred = Prediction(tuple(outcomes), first)
    if len(_CACHE) >= _CACHE_LIMIT:
        _CACHE.clear()
    _CACHE[key] = (case, pred)
    return pred


def _agrees(pred: _Outcome, seen: Observed) -> bool:
    if pred.broken:
        return False
    if pred.raised:
        return seen.kind == "raised" and "ValueError" in seen.mro
    if seen.kind != "value":
        return False
    try:
        return compare(pred.value, seen.value) is None
    except Exception:  # noqa: BLE001 - not comparable: no agreement
        return False


def _explains(pred: Prediction, seen: Sequence[Observed]) -> bool:
    """Did the student do what the variant does on a case where the variant differs from the reference?

    The student's calls of a property case stop at its first failing call, so the student must have reached
    the variant's first differing call and agreed with the variant on every call made."""
    assert pred.first_difference is not None
    if len(seen) <= pred.first_difference:
        return False
    return all(_agrees(p, s) for p, s in zip(pred.outcomes, seen))


def match_function(entry: Misconception, function: str, cases: Sequence[Case], results: dict[str, CaseResult],
                   observed: dict[str, Sequence[Observed]]) -> list[str] | None:
    """The ids of the cases ``entry`` explains for ``function`` (its best-matching variant), or None."""
    best: list[str] | None = None
    for variant in entry.impls.get(function, {}):
        differing = [(c, prediction(entry, function, variant, c)) for c in cases]
        differing = [(c, p) for c, p in differing if p.first_difference is not None]
        if len(differing) < 2:
            continue
        if all(not results[c.id].passed and _explains(p, observed.get(c.id, ())) for c, p in differing):
            ids = [c.id for c, _ in differing]
            if best is None or len(ids) > len(best):
                best = ids
    return best


def diagnose(assignment: Assignment, results: dict[str, CaseResult], observed: dict[str, Sequence[Observed]],
             entries: Sequence[Misconception] | None = None) -> list[Diagnosis]:
    """One :class:`Diagnosis` per failing function of ``assignment`` that an entry explains (``entries``:
    by default the catalogue's entries of the assignment)."""
    entries = for_assignment(assignment.name) if entries is None else entries
    out: list[Diagnosis] = []
    for function in assignment.functions:
        cases = [c for c in assignment.cases if c.function == function and c.kind != "mutant"]
        if all(results[c.id].passed for c in cases):
            continue
        matches = [(e, ids) for e in entries if function in e.impls
                   for ids in [match_function(e, function, cases, results, observed)] if ids]
        if not matches:
            continue
        entry, ids = max(matches, key=lambda m: len(m[1]))
        rivals = [set(other) for e, other in matches if e is not entry]
        if all(other < set(ids) for other in rivals):  # an equal rival: two explanations, so none
            out.append(Diagnosis(function, entry.id, ids, entry.title, entry.explanation, entry.hint, entry.url(),
                                 entry.section))
    return out
