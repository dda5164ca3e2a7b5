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
