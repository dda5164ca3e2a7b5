"""The wire format between the sandbox and the grader: exact round trips, and hostile messages refused."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from autograder.sandbox.payload import wire

scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True, allow_infinity=True),
                    st.complex_numbers(), st.text(max_size=50))
arrays = hnp.arrays(st.sampled_from([np.int64, np.int32, np.uint8, np.float64, np.float32, np.bool_, np.complex128]),
                    hnp.array_shapes(min_dims=0, max_dims=3, max_side=4))
values = st.recursive(st.one_of(scalars, arrays), lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.tuples(inner, inner), st.dictionaries(st.text(max_size=5), inner, max_size=3)),
    max_leaves=12)


def _same(a, b) -> bool:
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")
    if isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)
    if isinstance(a, complex):
        return isinstance(b, complex) and (a == b or (math.isnan(a.real) or math.isnan(a.imag)))
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return isinstance(b, dict) and list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


@given(values)
def test_round_trip_is_exact(value):
    line = wire.dumps({"v": wire.encode(value)})
    assert _same(value, wire.decode(wire.loads(line)["v"]))


def test_named_tuples_travel_as_structs_with_their_fields():
    from collections import namedtuple

    Point = namedtuple("Point", ["x", "y"])
    got = wire.decode(wire.loads(wire.dumps(wire.encode(Point(1, 2.5)))))
    assert isinstance(got, wire.Struct) and (got.name, got.fields, got.values) == ("Point", ["x", "y"], [1, 2.5])


def test_objects_without_a_wire_form_become_opaque():
    class AlwaysEqual:
        def __eq__(self, other):
            return True

    got = wire.decode(wire.encode(AlwaysEqual()))
    assert isinstance(got, wire.Opaque) and got.type == "AlwaysEqual"


@pytest.mark.parametrize("line", [b"not json\n", b"[1, 2]\n", b'{"t": NaN}\n', b"\xff\xfe\n"])
def test_malformed_lines_are_refused(line):
    with pytest.raises(wire.WireError):
        wire.loads(line)


@pytest.mark.parametrize("message", [
    {"t": "float", "v": "1" * 100},
    {"t": "int", "v": "9" * 6000},
    {"t": "ndarray", "dtype": "<f8", "shape": [2], "v": ["1.0"]},
    {"t": "ndarray", "dtype": "|V8", "shape": [1], "v": ["x"]},
    {"t": "ndarray", "dtype": "<f8", "shape": [-1], "v": []},
    {"t": "tuple", "name": "P", "fields": ["a", "b"], "v": [{"t": "none"}]},
    {"t": "npfloat", "dtype": "<f16", "v": "1.0"},
    {"t": "mystery"},
    "not a dict",
])
def test_hostile_messages_are_refused(message):
    with pytest.raises((wire.WireError, ValueError, TypeError, KeyError)):
        wire.decode(message)


def test_nesting_is_bounded():
    value = []
    for _ in range(wire.MAX_DEPTH + 5):
        value = [value]
    with pytest.raises(wire.WireError):
        wire.encode(value)
    message = {"t": "none"}
    for _ in range(wire.MAX_DEPTH + 5):
        message = {"t": "list", "v": [message]}
    with pytest.raises(wire.WireError):
        wire.decode(message)
