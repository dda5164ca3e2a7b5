"""Answers and verdicts: what a student may type, what is refused with a message, and how a redraw happens."""

from __future__ import annotations

import math
from collections import Counter

import pytest

from autograder.quiz import (
    Answer,
    AnswerError,
    Candidate,
    IllPosed,
    Posed,
    Template,
    TemplateError,
    Verdict,
    get_template,
    grade,
    make_variant,
    parse_answer,
    parse_number,
    variant_seed,
)
from autograder.quiz.template import MAX_DRAWS, UNKNOWN_WRONG
from autograder.quiz.templates._common import fixed

SEED = variant_seed("c", "s", "q", 0)


@pytest.mark.parametrize(("text", "value"), [("0.875", 0.875), (" 0.875 ", 0.875), ("-0.1", -0.1), (".5", 0.5), ("7/8", 0.875),
                                             ("３/４", 0.75), ("０．２５", 0.25), ("+2", 2.0), ("1 / 4", 0.25), ("12.", 12.0)])
def test_numbers_a_student_may_type(text, value):
    assert math.isclose(parse_number(text), value)


@pytest.mark.parametrize("text", ["", "abc", "0.8.7", "1/0", "1e3", "0,875", "--1", "1/2/3", "½", "inf", "nan"])
def test_text_that_is_not_a_number_is_refused_with_a_message(text):
    with pytest.raises(AnswerError, match="不是一个数|分母不能为 0|请先填写答案"):
        parse_number(text)


def test_answers_of_the_wrong_kind_are_refused_not_graded():
    choice = make_variant("auc-pairs", SEED, "choice")
    numeric = make_variant("auc-pairs", SEED, "numeric")
    with pytest.raises(AnswerError, match="选择题"):
        grade(choice, Answer(number=0.5))
    with pytest.raises(AnswerError, match="填写一个数"):
        grade(numeric, Answer(choice="A"))
    with pytest.raises(AnswerError, match="没有选项"):
        grade(choice, Answer(choice="E"))
    with pytest.raises(AnswerError, match="选项是 A、B、C、D"):
        parse_answer(choice, "E")
    assert parse_answer(choice, " b ") == Answer(choice="B")
    assert parse_answer(numeric, "1/2") == Answer(number=0.5)
    for bad in (dict(), dict(choice="A", number=1.0), dict(number=float("nan")), dict(number=True), dict(choice="")):
        with pytest.raises(AnswerError):
            Answer(**bad)
    with pytest.raises(AnswerError):
        grade(choice, "A")


def test_a_number_within_the_stated_tolerance_is_right_and_just_outside_it_is_not():
    v = make_variant("expected-cost", SEED, "numeric")
    tol = v.key.tolerance
    assert "0.001" in v.key.instruction()
    assert grade(v, Answer(number=v.key.value + 0.9 * tol)).correct
    outside = grade(v, Answer(number=v.key.value + 1.1 * tol))
    assert not outside.correct and outside.score == 0.0
    assert outside.feedback in (UNKNOWN_WRONG, *(d.explanation for d in v.diagnoses))


def test_verdicts_and_answers_round_trip_through_json():
    v = make_variant("brier", SEED, "numeric")
    verdict = grade(v, Answer(number=float(v.diagnoses[0].text)))
    data = verdict.to_json()
    assert data["mistake"]["id"] == v.diagnoses[0].mistake.id and data["correct"] is False
    assert Answer.from_json(data["answer"]) == verdict.answer
    with pytest.raises(AnswerError):
        Answer.from_json({"choice": "A", "extra": 1})
    assert isinstance(verdict, Verdict)


def test_unknown_templates_forms_and_seeds_are_refused_with_a_message():
    with pytest.raises(TemplateError, match="没有名为"):
        get_template("no-such")
    with pytest.raises(TemplateError, match="作答方式"):
        make_variant("roc-flip", SEED, "numeric")
    with pytest.raises(TemplateError, match="seed"):
        make_variant("roc-flip", -3)


def _posed(key, candidates, tolerance=0.001):
    return Posed(("?",), key, "ok", tuple(candidates), fixed(3), {}, tolerance=tolerance)


def _three(*values):
    return [Candidate(v, "brier_sum", "why") for v in values]


def test_an_ill_posed_draw_is_drawn_again_deterministically():
    calls = []

    def pose(draw):
        x = draw.integer(0, 3)
        calls.append(x)
        if x != 3:
            raise IllPosed("not this one")
        return _posed(0.5, _three(0.1, 0.2, 0.3))

    t = Template("probe", "probe", "binary/auc", "binary-auc", pose)
    first = make_variant(t, SEED)
    assert first.redraws == len(calls) - 1 and first == make_variant(t, SEED)


def test_options_too_close_or_reading_the_same_make_the_draw_ill_posed():
    # a required mistake within twice the tolerance of the key: never well posed
    t = Template("probe", "probe", "binary/auc", "binary-auc",
                 lambda d: _posed(0.5, [Candidate(0.5015, "brier_sum", "w", required=True), *_three(0.1, 0.2, 0.3)]))
    with pytest.raises(TemplateError, match=f"{MAX_DRAWS} 次"):
        make_variant(t, SEED)
    # an optional one is left out, the next one taken
    t = Template("probe", "probe", "binary/auc", "binary-auc", lambda d: _posed(0.5, _three(0.1, 0.1004, 0.2, 0.3)))
    v = make_variant(t, SEED, "numeric")
    assert [d.value for d in v.diagnoses] == [0.1, 0.2, 0.3]
    # too few distinct wrong answers
    t = Template("probe", "probe", "binary/auc", "binary-auc", lambda d: _posed(0.5, _three(0.1, 0.2, 0.5)))
    with pytest.raises(TemplateError):
        make_variant(t, SEED)
    # not finite
    t = Template("probe", "probe", "binary/auc", "binary-auc", lambda d: _posed(float("nan"), _three(0.1, 0.2, 0.3)))
    with pytest.raises(TemplateError):
        make_variant(t, SEED)


def test_the_key_takes_every_letter_about_as_often():
    for template in ("brier", "nested-cv", "wilson"):
        letters = Counter(next(o.letter for o in make_variant(template, variant_seed("c", f"s{i}", template, 0), "choice").options
                               if o.correct) for i in range(400))
        assert set(letters) == {"A", "B", "C", "D"} and min(letters.values()) > 60, (template, letters)


def test_a_template_fingerprint_follows_its_code():
    assert get_template("brier").fingerprint != get_template("rmse").fingerprint
    assert len(get_template("brier").fingerprint) == 64
