"""The scoring rules (autograder/check/scoring.py): one wrong metric costs that metric, validation points go only to
functions that fail their basic cases, and nothing hostile gains from either rule.

Graded in process on the real hidden cases (tests/autograder grades the recall slip and the stubs in the sandbox)."""

from __future__ import annotations

import json
import math

import pytest

from autograder.check.expected import expected_for, expects_error
from autograder.check.specs import all_assignments, get_assignment
from autograder.model import SubmissionResult

from .inprocess_grading import grade_in_process, solution_namespace

A1 = get_assignment("ps1_threshold_metrics")
A2 = get_assignment("ps2_roc_auc")
BM_VALID = [c for c in A1.cases if c.function == "binary_metrics" and not expects_error(c)]

RECALL_SLIP = ('recall=_divide(tp, tp + fn, policy, "recall")', 'recall=_divide(tp, tp + fp, policy, "recall")')


def _grade(assignment, *sources, edit=None):
    return grade_in_process(assignment, solution_namespace(assignment, *sources, edit=edit))


def _recall_wrong(case) -> bool:
    m, _ = expected_for(case.function, case.args, case.kwargs)
    undefined = 0.0 if case.kwargs.get("zero_division", "nan") != "nan" else math.nan  # "raise" cases expect an error
    slip = m.tp / (m.tp + m.fp) if m.tp + m.fp else undefined
    return not (math.isnan(slip) and math.isnan(m.recall) or slip == m.recall)


def test_a_wrong_recall_formula_costs_the_recall_share_of_each_case_it_is_wrong_in():
    r = _grade(A1, edit=RECALL_SLIP)  # one token: the denominator of recall is TP+FP
    wrong = [c for c in BM_VALID if _recall_wrong(c)]
    assert len(wrong) >= 10
    by_id = {c.id: c for c in r.cases}
    for case in BM_VALID:
        rec = by_id[case.id]
        assert rec.earned == pytest.approx(case.points * (0.9 if case in wrong else 1.0)), case.id
        assert rec.result.wrong_fields == (("recall",) if case in wrong else ())
    # the one case about recall's own zero denominator ("raise" with no positives) is lost: the slip returns a value
    assert [c.id for c in r.cases if c.earned == 0] == ["zero.raise_recall"]
    assert not any(c.voided for c in r.cases)
    lost = 0.1 * sum(c.points for c in wrong) + 1
    assert r.score == pytest.approx(r.max_score - lost) and r.max_score - r.score < 4
    assert r.wrong_fields() == [{"function": "binary_metrics", "whole": 1,
                                 "fields": [{"name": "recall", "label": "召回率（recall）", "cases": len(wrong)}]}]


def test_ties_counted_as_zero_lose_the_tie_cases_only():
    r = _grade(A2, "def pairwise_auc(y_true, y_score):\n    pos, s = _validated(y_true, y_score)\n"
                   "    p, n = s[pos], s[~pos]\n    return float((p[:, None] > n[None, :]).mean())\n")
    failed = {c.id for c in r.listed_failures()}
    assert failed == {"visible.pairwise_ties", "edge.pairwise_constant", "edge.pairwise_ties", "random.pairwise.seed31",
                      "random.pairwise.seed32", "random.pairwise.seed33"}
    assert not any(c.voided for c in r.cases) and r.score == r.max_score - 6


def test_a_stub_that_only_raises_scores_nothing_and_says_which_basic_cases_it_missed():
    stubs = "".join(f"def {fn}(*args, **kwargs):\n    raise ValueError('未实现')\n\n\n" for fn in A1.functions)
    r = _grade(A1, stubs)
    assert r.score == 0
    voided = [c for c in r.cases if c.voided]
    assert {c.id for c in voided} == {c.id for c in A1.cases if expects_error(c)}
    bm = next(g for g in r.voided_groups() if g["function"] == "binary_metrics")
    assert bm["basic"] == [c.description for c in A1.basic_cases("binary_metrics")]
    assert bm["why"].startswith("在基本用例（") and all(c.voided_by == ("visible.metrics", "random.seed4")
                                                     for c in voided if c.function == "binary_metrics")


HOSTILE_BM = {
    # only the metric it can get right, as a dict: no record, no share
    "dict_with_recall": "    return {'recall': _solution_bm(y_true, y_score, threshold, zero_division=zero_division).recall}\n",
    # a record of constants: coincidences with the reference on some hidden cases must earn nothing
    "constant_record": "    _solution_bm(y_true, y_score, threshold, zero_division=zero_division)\n"
                       "    return BinaryMetrics(0, 0, 0, 0, 0.0, math.nan, math.nan, math.nan, math.nan, 0.0)\n",
    # the visible answers looked up, a constant record elsewhere
    "visible_lookup": "    m = _solution_bm(y_true, y_score, threshold, zero_division=zero_division)\n"
                      "    if len(y_true) <= 10:\n        return m\n"
                      "    return BinaryMetrics(3, 1, 4, 2, 0.7, 0.75, 0.6, 0.2, 0.8, 2 / 3)\n",
    # exceptions on every valid input (other than ValueError)
    "raises": "    _solution_bm(y_true, y_score, threshold, zero_division=zero_division)\n    raise RuntimeError('没写完')\n",
}


@pytest.mark.parametrize("name", sorted(HOSTILE_BM))
def test_hostile_results_gain_nothing_from_scoring_by_metric(name):
    """Whatever binary_metrics returns instead of computing: no share of a case, no validation points (what it
    may keep is the cases it passes whole, as before: the visible ones for the lookup)."""
    code = ("_solution_bm = binary_metrics\n\n\ndef binary_metrics(y_true, y_score, threshold, *, zero_division='nan'):\n"
            + HOSTILE_BM[name])
    r = _grade(A1, code)
    bm = [c for c in r.cases if c.function == "binary_metrics"]
    assert all(c.earned in (0, c.points) for c in bm)
    assert all(c.earned == 0 for c in bm if expects_error(next(x for x in A1.cases if x.id == c.id)))
    whole = {c.id for c in bm if c.earned}
    small = {c.id for c in BM_VALID if len(c.args[0]) <= 10}
    assert whole <= (small if name == "visible_lookup" else set())


def test_a_record_with_only_the_counts_right_earns_their_share_but_no_validation():
    """Four right counts of ten metrics: 0.4 of each case, less than half, so the validation points stay void."""
    code = ("_solution_bm = binary_metrics\n\n\ndef binary_metrics(y_true, y_score, threshold, *, zero_division='nan'):\n"
            "    m = _solution_bm(y_true, y_score, threshold, zero_division=zero_division)\n"
            "    return m._replace(accuracy=-1.0, precision=-1.0, recall=-1.0, fpr=-1.0, specificity=-1.0, f1=-1.0)\n")
    r = _grade(A1, code)
    by_id = {c.id: c for c in r.cases}
    assert all(by_id[c.id].earned == pytest.approx(0.4 * c.points) for c in BM_VALID)
    assert all(by_id[c.id].voided for c in A1.cases if c.function == "binary_metrics" and expects_error(c))


@pytest.mark.parametrize("name", sorted(all_assignments()))
def test_every_function_names_basic_cases_a_constant_cannot_pass(name):
    """Each function with validation cases has basic cases: valid inputs of its own, at least one hidden, whose
    reference results all differ (for a record: field by field), so no constant and no table of the visible
    answers computes them."""
    a = all_assignments()[name]
    for fn in a.functions:
        cases = [c for c in a.cases if c.function == fn]
        basic = a.basic_cases(fn)
        assert len(basic) == len(a.basic.get(fn, ())), (fn, "a basic id names no case")
        if not any(expects_error(c) for c in cases):
            continue
        assert len(basic) >= 2 and all(c.function == fn and c.kind == "ref" and not expects_error(c) for c in basic), fn
        assert any(not c.cell.endswith("_visible") for c in basic), fn
        values = [expected_for(fn, c.args, c.kwargs)[0] for c in basic]
        columns = list(zip(*values)) if fn in a.by_field else [values]
        for column in columns:
            assert len({repr(v) for v in column}) == len(column), (fn, column)
    assert set(a.basic) <= set(a.functions) and set(a.by_field) <= set(a.functions)


def test_the_scoring_round_trips_through_json_and_old_results_read_as_they_were_graded():
    r = _grade(A1, edit=RECALL_SLIP)
    data = r.to_json()
    again = SubmissionResult.from_json(json.loads(json.dumps(data)))
    assert again == r and again.cases[1].result.wrong_fields == ("recall",) and again.cases[1].earned == 0.9
    assert again.field_label("recall") == "召回率（recall）" and again.field_scored == ["binary_metrics"]
    for c in data["cases"]:  # a result stored before these fields: whole points for a passed case, none otherwise
        for key in ("earned", "basic", "group", "voided_by", "wrong_fields"):
            del c[key]
    del data["field_labels"], data["field_scored"]
    old = SubmissionResult.from_json(data)
    assert [c.earned for c in old.cases] == [float(c.points) if c.passed else 0.0 for c in old.cases]
    assert old.field_label("recall") == "recall" and old.wrong_fields() == []
