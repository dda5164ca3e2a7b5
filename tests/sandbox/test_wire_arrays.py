"""Arrays on the wire: the one-pass encoding and decoding of numeric arrays give exactly what item by item gives,
and an array with one bad item is refused as before (``payload/wire.py``: ``_array_items``, ``_decode_items``)."""

from __future__ import annotations

import numpy as np
import pytest

from autograder.sandbox.payload import wire


@pytest.mark.parametrize("array", [np.array([0.1, -2.5e-300, float("nan"), float("inf"), -0.0]),
                                   np.array([1.5, 2.25], dtype=np.float32), np.array([-3, 2**40], dtype=np.int64),
                                   np.array([0, 255], dtype=np.uint8), np.array([2**64 - 1], dtype=np.uint64),
                                   np.array([True, False]), np.array([1 + 2j]), np.array(["甲", "ab"])])
def test_one_pass_arrays_are_item_by_item_arrays(array):
    kind = array.dtype.kind
    values = array.ravel().tolist()
    items = wire._array_items(kind, values)
    assert items == [wire._scalar_array_item(kind, v) for v in values]
    assert [type(v) for v in items] == [type(wire._scalar_array_item(kind, v)) for v in values]
    decoded = wire._decode_items(kind, items)
    expected = [wire._decode_item(kind, v) for v in items]
    assert [type(v) for v in decoded] == [type(v) for v in expected]
    assert np.array_equal(np.array(decoded, dtype=array.dtype), np.array(expected, dtype=array.dtype), equal_nan=kind in "fc")
    back = wire.decode(wire.loads(wire.dumps({"v": wire.encode(array)}))["v"])
    assert back.dtype == array.dtype and np.array_equal(back, array, equal_nan=kind in "fc")


@pytest.mark.parametrize("dtype, items", [("<f8", ["1.0", 2]), ("<f8", ["1.0", "1" * 41]), ("<f8", ["1.0", "x"]),
                                          ("<i8", ["1", ""]), ("<i8", ["1", "9" * (wire.MAX_DIGITS + 2)]),
                                          ("<i8", ["1", 2]), ("|b1", [True, 1]), ("<i8", ["1", "1.5"])])
def test_an_array_with_one_bad_item_is_refused(dtype, items):
    message = {"t": "ndarray", "dtype": dtype, "shape": [len(items)], "v": items}
    with pytest.raises(wire.WireError):
        wire.decode(message)
