"""Seeds of variants: stable across machines and versions (a fixed value is pinned), different across students,
attempts and questions, bad input refused; the draw stream is uniform and replays exactly."""

from __future__ import annotations

from collections import Counter

import pytest

from autograder.quiz import Draw, TemplateError, variant_seed


def test_a_seed_is_pinned_so_a_change_of_derivation_cannot_go_unnoticed():
    # A student's variant must not change under a service that upgrades Python or NumPy: SHA-256 of the four values.
    assert variant_seed("eval-2026", "2026001", "auc-pairs", 0) == 0xC0493C50DB4CF03C
    assert Draw(7).integer(0, 10 ** 6) == Draw(7).integer(0, 10 ** 6) == 340557


def test_seeds_differ_across_students_questions_attempts_and_courses():
    base = ("c", "s", "q", 0)
    variants = {variant_seed(*base), variant_seed("c2", "s", "q", 0), variant_seed("c", "s2", "q", 0),
                variant_seed("c", "s", "q2", 0), variant_seed("c", "s", "q", 1)}
    assert len(variants) == 5
    assert len({variant_seed("c", f"s{i}", "q", 0) for i in range(5000)}) == 5000
    # no ambiguity between ("ab", "c") and ("a", "bc")
    assert variant_seed("ab", "c", "q", 0) != variant_seed("a", "bc", "q", 0)


@pytest.mark.parametrize("args", [("", "s", "q", 0), ("c", None, "q", 0), ("c", "s", 3, 0), ("c", "s", "q", -1),
                                  ("c", "s", "q", True), ("c", "s", "q", 1.0)])
def test_bad_seed_input_is_refused_with_a_message(args):
    with pytest.raises(TemplateError, match="course|student|question|attempt"):
        variant_seed(*args)


@pytest.mark.parametrize("seed", [-1, 2 ** 64, 1.5, "7", True])
def test_a_seed_outside_64_bits_is_refused(seed):
    with pytest.raises(TemplateError, match="seed"):
        Draw(seed)


def test_draws_are_uniform_and_attempts_are_independent_streams():
    draw = Draw(123)
    counts = Counter(draw.integer(1, 6) for _ in range(60000))
    assert set(counts) == set(range(1, 7)) and all(abs(c - 10000) < 400 for c in counts.values())
    assert [Draw(5, 0).integer(0, 99) for _ in range(3)] != [Draw(5, 1).integer(0, 99) for _ in range(3)]
    d = Draw(9)
    assert sorted(d.sample(range(10), 10)) == list(range(10)) and len(set(Draw(9).shuffled("abcdef"))) == 6
    with pytest.raises(ValueError):
        Draw(1).integer(3, 2)
