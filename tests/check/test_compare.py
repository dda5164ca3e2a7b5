"""Strict comparison rules of a decoded student value with the reference value."""

from __future__ import annotations

import numpy as np
import pytest

from autograder.check.compare import compare
from autograder.reference import RocCurve
from autograder.sandbox.payload import wire


def _decoded(x):
    return wire.decode(wire.loads(wire.dumps(wire.encode(x))))


@pytest.mark.parametrize("expected, got", [
    (1, 1), (1, np.int64(1)), (0.5, 0.5 + 1e-12), (float("nan"), float("nan")), (float("inf"), float("inf")),
    (np.array([1, 2]), np.array([1, 2], dtype=np.int32)), (np.array([0.1, np.nan]), np.array([0.1, np.nan])),
    (True, np.bool_(True)), ("a", "a"), (None, None),
])
def test_equal_values_pass(expected, got):
    assert compare(expected, _decoded(got)) is None


@pytest.mark.parametrize("expected, got, fragment", [
    (1, True, "整数"), (1, 1.0, "整数"), (0.5, 0.5 + 1e-6, "应为"), (float("inf"), 1e308, "应为"),
    (float("nan"), 0.0, "应为"), (np.array([1, 2]), [1, 2], "numpy 数组"), (np.array([1, 2]), np.array([1, 2, 3]), "形状"),
    (np.array([1, 2]), np.array([1.0, 2.0]), "整数数组"), (np.array([0.5]), np.array([0.6]), "第 0 个元素"),
    (True, 1, "True"), ("a", "b", "应为"),
])
def test_different_values_are_explained(expected, got, fragment):
    why = compare(expected, _decoded(got))
    assert why is not None and fragment in why


def test_named_tuples_need_the_reference_class_and_field_names():
    from collections import namedtuple

    exp = RocCurve(*(np.array([1.0, 0.5]),) * 3)
    Fake = namedtuple("RocCurve", ["a", "b", "c"])
    assert "应当是" in compare(exp, _decoded(Fake(*exp)))
    assert "命名元组" in compare(exp, _decoded(tuple(exp)))
    assert compare(exp, _decoded(exp)) is None


def test_an_object_claiming_equality_is_never_equal():
    class AlwaysEqual:
        def __eq__(self, other):
            return True

    assert compare(0.5, _decoded(AlwaysEqual())) is not None


def test_float_arrays_are_compared_element_by_element_as_single_floats():
    """The one-pass comparison of float arrays agrees with the scalar rule on every element (NaN only equals NaN,
    an infinity only itself, 1e-9 relative and absolute tolerance, overflowing differences) and names the first
    element that differs, as the element-by-element loop did."""
    from autograder.check import compare as cmp

    rng = np.random.default_rng(7)
    specials = [0.0, -0.0, 1.0, 1 + 1e-10, 1 + 1e-8, 1e308, -1e308, 5e-324, float("nan"), float("inf"), float("-inf")]
    for _ in range(200):
        n = int(rng.integers(1, 12))
        e = rng.choice(specials, n)
        g = np.where(rng.random(n) < 0.5, e, rng.choice(specials, n))
        g = np.where(rng.random(n) < 0.2, e + rng.normal(0, 1e-9, n), g)
        scalar = [cmp._close(a, b) for a, b in zip(g.tolist(), e.tolist())]
        assert cmp._close_all(g, e).tolist() == scalar
        why = cmp.compare(e, g)
        if all(scalar):
            assert why is None
        else:
            i = scalar.index(False)
            assert why == f"返回值 第 {i} 个元素应为 {e.tolist()[i]!r}，实际为 {g.tolist()[i]!r}"
