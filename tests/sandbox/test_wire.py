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


# -- hostile messages from a sandbox (issue: the trusted side bounded before it materialises anything) --------


def test_a_huge_text_dtype_is_refused_before_allocating():
    """112 bytes declaring dtype <U250000000 made the decoder allocate 4 GB per call."""
    message = {"t": "ndarray", "dtype": "<U250000000", "shape": [4], "v": ["a", "b", "c", "d"]}
    with pytest.raises(wire.WireError):
        wire.decode(message)


@pytest.mark.parametrize("dtype", ["|V16", "<M8[s]", "|O8", "<f16", "[('a', '<i4')]", "<i4 ", "<U0"])
def test_only_listed_dtypes_cross(dtype):
    with pytest.raises(wire.WireError):
        wire.decode({"t": "ndarray", "dtype": dtype, "shape": [1], "v": ["1"]})


def test_a_shape_that_multiplies_to_more_than_the_budget_is_refused():
    with pytest.raises(wire.WireError):
        wire.decode({"t": "ndarray", "dtype": "<f8", "shape": [1 << 20, 1 << 20], "v": []})


def test_long_names_from_a_tuple_subclass_are_refused():
    """A tuple subclass whose _fields held one 5 MiB name made the grader write 1.1 GB."""
    message = wire.loads(wire.dumps({"v": {"t": "tuple", "name": "R", "fields": ["x" * 5_000_000], "v": [{"t": "none"}]}}))
    with pytest.raises(wire.WireError):
        wire.decode(message["v"])


def test_the_item_budget_holds_on_the_trusted_side():
    message = {"t": "list", "v": [{"t": "list", "v": [{"t": "none"}] * 1000}] * 1100}
    with pytest.raises(wire.WireError):
        wire.decode(message)


def test_colliding_dict_keys_are_bounded_and_fast():
    """Integer keys that all hash to 0 (multiples of 2**61 - 1) made decoding quadratic (40 k keys: 8.8 s)."""
    import time

    m = (1 << 61) - 1
    message = {"t": "dict", "v": [[{"t": "int", "v": str(k * m)}, {"t": "none"}] for k in range(40_000)]}
    t0 = time.monotonic()
    with pytest.raises(wire.WireError):
        wire.decode(message)
    assert time.monotonic() - t0 < 0.5
    ok = {"t": "dict", "v": [[{"t": "int", "v": str(k * m)}, {"t": "none"}] for k in range(wire.MAX_DICT)]}
    t0 = time.monotonic()
    assert len(wire.decode(ok)) == wire.MAX_DICT
    assert time.monotonic() - t0 < 0.5


def test_huge_integers_are_refused():
    with pytest.raises(wire.WireError):
        wire.decode({"t": "int", "v": "9" * (wire.MAX_DIGITS + 5)})
    assert wire.decode({"t": "int", "v": str(10**400)}) == 10**400


def test_lone_surrogates_are_repaired_so_they_can_be_stored():
    """A runner that escapes non-ASCII can send "\\ud800", which no UTF-8 file or database accepts."""
    import json

    line = json.dumps({"op": "result", "exc": {"msg": "\ud800 坏", "\udfff": 1}}, ensure_ascii=True).encode() + b"\n"
    msg = wire.loads(line)
    assert msg["exc"]["msg"] == "\ufffd 坏" and "\ufffd" in msg["exc"]
    json.dumps(msg, ensure_ascii=False).encode("utf-8")  # storable
    assert wire.loads(json.dumps({"s": "😀"}, ensure_ascii=True).encode())["s"] == "😀"  # a valid pair stays


def test_an_overlong_line_is_refused():
    with pytest.raises(wire.WireError):
        wire.loads(b'{"v": "' + b"x" * wire.MAX_LINE + b'"}')
