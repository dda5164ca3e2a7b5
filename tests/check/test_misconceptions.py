"""The catalogue of known misconceptions: every entry is well formed, runs on the real hidden cases, differs
from the reference where it should (never on a validation case), links to a book section that exists, and
no two entries give the same result everywhere."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest

from autograder.check.compare import compare
from autograder.check.diagnose import MAX_INPUT_VALUES, _as_wire, _size, prediction
from autograder.check.expected import expected_for, expects_error
from autograder.check.misconceptions import CATALOGUE, by_id, for_assignment
from autograder.check.specs import get_assignment
from autograder.reference import UndefinedMetricError

REPO = Path(__file__).resolve().parents[2]
REQUIRED = {
    "ps1_threshold_metrics": {"threshold_strict", "zero_division_zero", "fpr_as_fdr", "precision_recall_swapped",
                              "f1_arithmetic_mean", "fp_fn_swapped"},
    "ps2_roc_auc": {"roc_ties_split", "roc_no_origin", "roc_axes_swapped", "roc_thresholds_ascending", "auc_ties_zero",
                    "auc_ties_one"},
    "ps3_pr_ap": {"ap_trapezoid", "ap_interpolated", "ap_ties_split", "ap_mean_precision", "pr_extra_point"},
    "ps4_calibration": {"brier_sum", "brier_thresholded", "brier_baseline_half", "calibration_left_closed",
                        "calibration_empty_bins_kept", "ece_unweighted"},
}
VARIANTS = [(m, fn, v) for m in CATALOGUE for fn in m.impls for v in m.impls[fn]]


def _cases(m, fn):
    return [c for c in get_assignment(m.assignment).cases if c.function == fn and c.kind != "mutant"]


def test_catalogue_holds_the_required_ids_once():
    assert len({m.id for m in CATALOGUE}) == len(CATALOGUE)
    for name, ids in REQUIRED.items():
        assert ids <= {m.id for m in for_assignment(name)}, name
    assert by_id("auc_ties_zero").functions == ("roc_auc", "pairwise_auc")


@pytest.mark.parametrize("m", CATALOGUE, ids=lambda m: m.id)
def test_entry_concerns_graded_functions_and_links_an_existing_section(m):
    assert set(m.functions) <= set(get_assignment(m.assignment).functions)
    lines = (REPO / f"{m.page}.md").read_text(encoding="utf-8").splitlines()
    at = lines.index(f"({m.label})=")
    heading = next(line for line in lines[at + 1:] if line.startswith("#"))
    assert heading.lstrip("#").strip() == m.section
    assert m.url() == f"{m.page}.html#{m.label}"


@pytest.mark.parametrize("m", CATALOGUE, ids=lambda m: m.id)
def test_explanation_and_hint_give_away_no_hidden_input(m):
    """Numbers in the texts are those of formulas and conventions only (0, 1, 2, 0.5, 1/2), never a case's data."""
    for text in (m.explanation, m.hint, m.title):
        assert set(re.findall(r"\d+(?:\.\d+)?", text)) <= {"0", "1", "2", "0.5", "0.25"}, text
    assert len(m.explanation) < 400 and len(m.hint) < 200


@pytest.mark.parametrize("m,fn,variant", VARIANTS, ids=[f"{m.id}-{fn}-{v}" for m, fn, v in VARIANTS])
def test_variant_runs_on_every_case_and_differs_on_at_least_two_but_no_validation_case(m, fn, variant):
    differing = []
    for case in _cases(m, fn):
        assert _size(case.args) + _size(case.kwargs) + _size(case.calls) <= MAX_INPUT_VALUES
        pred = prediction(m, fn, variant, case)
        assert not any(o.broken for o in pred.outcomes), case.id
        if pred.first_difference is not None:
            rejected = expects_error(case) and not isinstance(expected_for(case.function, case.args, case.kwargs)[1],
                                                               UndefinedMetricError)
            assert not rejected, f"{case.id}: a mistake must reject bad input like the reference"
            differing.append(case.id)
    assert len(differing) >= 2, differing


def _same_everywhere(a, b, fn) -> bool:
    for case in _cases(a[0], fn):
        pa, pb = prediction(a[0], fn, a[1], case), prediction(b[0], fn, b[1], case)
        for oa, ob in zip(pa.outcomes, pb.outcomes):
            if oa.raised != ob.raised or (not oa.raised and compare(oa.value, _as_wire(ob.value)) is not None):
                return False
    return True


def test_no_two_entries_give_the_same_result_on_every_case():
    for a, b in itertools.combinations(CATALOGUE, 2):
        for fn in set(a.impls) & set(b.impls):
            for va, vb in itertools.product(a.impls[fn], b.impls[fn]):
                assert not _same_everywhere((a, va), (b, vb), fn), (a.id, va, b.id, vb, fn)


def test_the_catalogue_and_the_matching_decide_grades_so_they_are_fingerprinted():
    from autograder.batch.version import PACKAGE, grade_deciding_files

    files = set(grade_deciding_files())
    assert {PACKAGE / "check" / "misconceptions.py", PACKAGE / "check" / "diagnose.py"} <= files
