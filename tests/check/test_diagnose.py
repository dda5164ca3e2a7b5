"""Matching that never guesses: student-style answers graded in process on the real hidden cases, and the rule itself."""

from __future__ import annotations


import numpy as np
import pytest


from .diagnosis_students import HONEST, OUTSIDE, STUDENTS, TWO  # noqa: E402
from .inprocess_grading import grade_in_process, solution_namespace  # noqa: E402

from autograder.check.diagnose import Observed, diagnose, match_function  # noqa: E402
from autograder.check.misconceptions import CATALOGUE, Misconception  # noqa: E402
from autograder.check.specs import Assignment, get_assignment, ref  # noqa: E402
from autograder.model import CaseResult, Diagnosis, SubmissionResult  # noqa: E402


def _grade(name: str, source: str) -> SubmissionResult:
    a = get_assignment(name)
    return grade_in_process(a, solution_namespace(a, source))


def test_every_entry_has_a_student_answer():
    assert set(STUDENTS) == {m.id for m in CATALOGUE}


@pytest.mark.parametrize("entry", sorted(STUDENTS))
def test_student_answer_gets_exactly_that_diagnosis(entry):
    name, source = STUDENTS[entry]
    result = _grade(name, source)
    assert result.score < result.max_score
    assert result.diagnoses, [c.id for c in result.failed_cases()]
    assert {d.misconception for d in result.diagnoses} == {entry}
    failed = {c.id for c in result.failed_cases()}
    for d in result.diagnoses:
        assert len(d.cases) >= 2 and set(d.cases) <= failed
        assert {c.function for c in result.cases if c.id in d.cases} == {d.function}


@pytest.mark.parametrize("name", sorted(HONEST))
def test_honest_alternatives_get_full_marks_and_no_diagnosis(name):
    result = _grade(*HONEST[name])
    assert result.score == result.max_score and result.diagnoses == []


def test_instructor_solutions_get_no_diagnosis():
    for name in REQUIRED_ASSIGNMENTS:
        result = _grade(name, "")
        assert result.score == result.max_score and result.diagnoses == []


REQUIRED_ASSIGNMENTS = ("ps1_threshold_metrics", "ps2_roc_auc", "ps3_pr_ap", "ps4_calibration")


def test_a_mistake_outside_the_catalogue_gets_no_diagnosis():
    result = _grade(*OUTSIDE)
    assert result.score < result.max_score
    assert any(c.function == "pairwise_auc" for c in result.failed_cases())
    assert result.diagnoses == []


def test_two_mistakes_in_two_functions_get_two_diagnoses():
    name, source, want = TWO
    result = _grade(name, source)
    assert {d.function: d.misconception for d in result.diagnoses} == want


def test_a_stub_that_only_raises_is_not_diagnosed():
    result = _grade("ps2_roc_auc", "def roc_auc(y_true, y_score):\n    raise ValueError('未实现')\n")
    assert result.diagnoses == []


def test_diagnoses_round_trip_through_json_and_old_results_read_without_them():
    result = _grade(*STUDENTS["roc_no_origin"])
    data = result.to_json()
    d = data["diagnoses"][0]
    assert {k: d[k] for k in ("function", "misconception")} == {"function": "roc_curve", "misconception": "roc_no_origin"}
    assert d["cases"] == result.diagnoses[0].cases and d["link"] == "book/binary/roc.html#binary-roc-construction"
    assert SubmissionResult.from_json(data).diagnoses == result.diagnoses
    del data["diagnoses"]
    for c in data["cases"]:
        del c["voided"]
    old = SubmissionResult.from_json(data)
    assert old.diagnoses == [] and not any(c.voided for c in old.cases)


# -- the rule, on a constructed assignment -----------------------------------------------------------------
def _double(y, s):
    return 2.0 * float(np.mean(s))


def _mean(y, s):
    return float(np.mean(s))


RULE = Assignment("rule", "rule", "rule", ("f",), [ref(f"c{i}", "h", 1, "f", "", [1, 0], v) for i, v in
                                                   enumerate(([0.0, 0.0], [0.2, 0.4], [0.1, 0.5], [0.3, 0.3]))])


def _entry(mid: str, impl, **kw) -> Misconception:
    return Misconception(mid, "rule", mid, "", "", "book/x", "x", {"f": {"v": impl}})


@pytest.fixture(autouse=False)
def mean_reference(monkeypatch):
    from autograder.check import diagnose as d
    from autograder.check import expected

    monkeypatch.setitem(expected.REFERENCE_FUNCTIONS, "f", _mean)
    return d


def _student(values: dict[str, float]):
    """Results and observations of a student whose f returned ``values`` (the reference is the mean)."""
    results, observed = {}, {}
    for c in RULE.cases:
        got = values.get(c.id, _mean(*c.args))
        results[c.id] = CaseResult(abs(got - _mean(*c.args)) < 1e-12)
        observed[c.id] = [Observed("value", got)]
    return results, observed


def test_rule_names_a_mistake_the_student_follows_on_every_differing_case(mean_reference):
    doubled = {c.id: _double(*c.args) for c in RULE.cases}  # differs on c1, c2, c3 (c0 is 0 either way)
    results, observed = _student(doubled)
    assert match_function(_entry("double", _double), "f", RULE.cases, results, observed) == ["c1", "c2", "c3"]
    assert diagnose(RULE, results, observed, [_entry("double", _double)]) == [
        Diagnosis("f", "double", ["c1", "c2", "c3"], "double", "", "", "book/x.html#x")]


def test_rule_needs_agreement_everywhere_and_two_cases(mean_reference):
    entry = _entry("double", _double)
    results, observed = _student({"c1": _double(*RULE.cases[1].args), "c2": _double(*RULE.cases[2].args), "c3": 9.0})
    assert match_function(entry, "f", RULE.cases, results, observed) is None  # disagrees on c3
    results, observed = _student({"c1": _double(*RULE.cases[1].args), "c2": _double(*RULE.cases[2].args)})
    assert match_function(entry, "f", RULE.cases, results, observed) is None  # passes c3: not all differing cases fail
    only_one = _entry("one", lambda y, s: 7.0 if s[0] == 0.2 else _mean(y, s))
    results, observed = _student({"c1": 7.0})
    assert match_function(only_one, "f", RULE.cases, results, observed) is None  # a single differing case is no evidence


def test_rule_prefers_the_more_specific_entry_and_names_none_when_two_explain_the_same(mean_reference):
    wide = _entry("wide", _double)
    narrow = _entry("narrow", lambda y, s: _double(y, s) if s[0] != 0.3 else _mean(y, s))  # differs on c1, c2 only
    results, observed = _student({c.id: _double(*c.args) for c in RULE.cases})
    assert [d.misconception for d in diagnose(RULE, results, observed, [narrow, wide])] == ["wide"]
    twin = _entry("twin", lambda y, s: 2.0 * float(np.mean(s)))
    assert diagnose(RULE, results, observed, [wide, twin]) == []
    passing = {c.id: CaseResult(True) for c in RULE.cases}
    assert diagnose(RULE, passing, observed, [wide]) == []  # a function that passes keeps no diagnosis
