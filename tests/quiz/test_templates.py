"""Every question template over thousands of seeds: deterministic per seed, different across students, every
variant well posed, and its key equal to an independent computation (tests/quiz/independent.py)."""

from __future__ import annotations

import functools
import json
import re

import pytest

from autograder.quiz import TEMPLATES, Answer, get_template, grade, make_variant, variant_seed
from autograder.quiz.template import DISTRACTORS, LETTERS

from .independent import KEYS, LIBRARY_KEYS

SEEDS = 2000
OTHER_FORM_SEEDS = 200
LIBRARY_SEEDS = 200
STUDENTS = 200


def seeds(template_id: str, count: int = SEEDS) -> list[int]:
    return [variant_seed("course-a", f"student-{i}", template_id, 0) for i in range(count)]


def test_every_template_has_an_independent_key():
    assert set(KEYS) == {t.id for t in TEMPLATES}


_NUMBER = re.compile(r"-?\d+(?:\.(\d+))?")


def _shows(text: str, value) -> bool:
    """``text`` writes ``value``: the statement itself, or each number rounded to the decimals it is written with."""
    if isinstance(value, str):
        return text == value
    values = value if isinstance(value, tuple) else (value,)
    found = list(_NUMBER.finditer(text))
    return len(found) == len(values) and all(
        abs(float(m.group(0)) - v) <= 0.5 * 10 ** -len(m.group(1) or "") + 1e-9 for m, v in zip(found, values))


def _close(a, b) -> bool:
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    xs, ys = (a if isinstance(a, tuple) else (a,)), (b if isinstance(b, tuple) else (b,))
    return len(xs) == len(ys) and all(abs(x - y) < 1e-9 for x, y in zip(xs, ys))


@functools.lru_cache(maxsize=None)
def book_variants(template_id: str) -> list:
    """The book form's variant of each of :data:`SEEDS` students' first attempt (made once per test run)."""
    return [make_variant(template_id, s) for s in seeds(template_id)]


def _check_well_posed(v) -> None:
    if v.form == "numeric":
        values = [v.key.value] + [d.value for d in v.diagnoses]
        assert len(v.diagnoses) == DISTRACTORS
        assert all(abs(a - b) > 2 * v.key.tolerance for i, a in enumerate(values) for b in values[i + 1:]), values
        assert len({v.key.text, *(d.text for d in v.diagnoses)}) == DISTRACTORS + 1
        assert _shows(v.key.text, v.value)
    else:
        assert [o.letter for o in v.options] == list(LETTERS[: len(v.options)]) and len(v.options) >= 3
        assert sum(o.correct for o in v.options) == 1
        assert len({o.text for o in v.options}) == len(v.options), [o.text for o in v.options]
        assert all((o.mistake is None) == o.correct for o in v.options)
        assert _shows(next(o for o in v.options if o.correct).text, v.value)
    assert len(v.mistakes) == max(len(v.options), len(v.diagnoses) + 1) - 1 and all(m.label and m.title for m in v.mistakes)
    json.dumps(v.to_json(), allow_nan=False)


@pytest.mark.parametrize("template", TEMPLATES, ids=lambda t: t.id)
def test_every_variant_is_well_posed_and_its_key_agrees_with_an_independent_computation(template):
    independent = KEYS[template.id]
    for v in book_variants(template.id):
        assert _close(v.value, independent(v.data)), (v.seed, v.data, v.value, independent(v.data))
        _check_well_posed(v)
    for seed in seeds(template.id, OTHER_FORM_SEEDS):  # the same question in the form the book does not use
        for form in set(template.forms) - {template.book_form}:
            v = make_variant(template, seed, form)
            assert _close(v.value, independent(v.data))
            _check_well_posed(v)


@pytest.mark.parametrize("template", TEMPLATES, ids=lambda t: t.id)
def test_the_brute_force_keys_agree_with_the_libraries(template):
    """The exact counts above against scikit-learn, SciPy and statsmodels on a few hundred variants."""
    for v in book_variants(template.id)[:LIBRARY_SEEDS]:
        assert _close_enough(KEYS[template.id](v.data), LIBRARY_KEYS[template.id](v.data)), v.data


def _close_enough(a, b) -> bool:
    if isinstance(a, str):
        return a == b
    xs, ys = (a if isinstance(a, tuple) else (a,)), (b if isinstance(b, tuple) else (b,))
    return all(abs(x - y) < 1e-9 for x, y in zip(xs, ys))


@pytest.mark.parametrize("template", TEMPLATES, ids=lambda t: t.id)
def test_a_variant_is_the_same_every_time_and_differs_across_students(template):
    for seed in seeds(template.id, 50):
        for form in template.forms:
            assert make_variant(template.id, seed, form).to_json() == make_variant(template, seed, form).to_json()
    stems = [v.stem for v in book_variants(template.id)[:STUDENTS]]
    differ = sum(a != b for a, b in zip(stems, stems[1:]))
    assert differ >= 0.9 * (len(stems) - 1), f"{template.id}: only {differ} of {len(stems) - 1} neighbours differ"
    assert len(set(stems)) >= 20


@pytest.mark.parametrize("template", TEMPLATES, ids=lambda t: t.id)
def test_grading_names_the_mistake_of_every_wrong_answer(template):
    for seed in seeds(template.id, 60):
        for form in template.forms:
            v = make_variant(template, seed, form)
            if form == "choice":
                for o in v.options:
                    verdict = grade(v, Answer(choice=o.letter))
                    assert verdict.correct == o.correct and verdict.score == (1.0 if o.correct else 0.0)
                    assert verdict.mistake == o.mistake and verdict.feedback == o.explanation
            else:
                typed = float(v.key.text)  # what a student types: the key rounded as asked
                assert grade(v, Answer(number=typed)).correct
                for d in v.diagnoses:
                    verdict = grade(v, Answer(number=float(d.text)))
                    assert not verdict.correct and verdict.mistake == d.mistake and verdict.feedback == d.explanation
                far = v.key.value + 1000
                verdict = grade(v, Answer(number=far))
                assert not verdict.correct and verdict.mistake is None


def test_the_book_forms_and_quizzes_are_consistent():
    quizzes = [t.quiz for t in TEMPLATES if t.quiz is not None]
    assert len(quizzes) == len(set(quizzes))
    assert {1, 5, 6, 7, 9, 10, 11} <= set(quizzes)  # the seed quizzes whose numbers can vary
    assert make_variant(get_template("auc-pairs"), 1) == make_variant("auc-pairs", 1)
