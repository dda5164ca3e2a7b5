"""Strict comparison of a decoded student value with the reference value (trusted process only).

Rules: named tuples must have the reference's class name and field names;
integers are exact (``bool`` is not an integer here); floats agree to a relative
and absolute tolerance of 1e-9 with NaN equal to NaN and infinities equal only to
themselves; arrays must be ``numpy.ndarray`` with the same shape, a compatible
dtype kind and equal values under the same rules.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from ..sandbox.payload.wire import Opaque, Struct

TOL = 1e-9

__all__ = ["compare", "field_differences", "TOL"]


def _is_int(x: Any) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _is_real(x: Any) -> bool:
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, (bool, np.bool_))


def _close(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= TOL * max(1.0, abs(b))


def _close_all(got: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """:func:`_close` of each pair of elements of two float64 arrays of one shape, in one pass."""
    with np.errstate(all="ignore"):
        nan_g, nan_e = np.isnan(got), np.isnan(expected)
        inf = np.isinf(got) | np.isinf(expected)
        near = np.abs(got - expected) <= TOL * np.maximum(1.0, np.abs(expected))
    return np.where(nan_g | nan_e, nan_g & nan_e, np.where(inf, got == expected, near))


def _type_name(x: Any) -> str:
    if isinstance(x, Struct):
        return f"命名元组 {x.name}"
    if isinstance(x, Opaque):
        return x.type
    if isinstance(x, np.ndarray):
        return f"numpy 数组（dtype={x.dtype}）"
    return type(x).__name__


def _is_record(x: Any) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def _record_shape(expected: Any, got: Any, path: str) -> str | None:
    """Why ``got`` is not a record of the named tuple ``expected``'s class and fields (None when it is)."""
    name = type(expected).__name__
    fields = list(type(expected)._fields)
    if not isinstance(got, Struct):
        return f"{path} 应当是命名元组 {name}，实际类型为 {_type_name(got)}"
    if got.name != name or got.fields != fields:
        return f"{path} 应当是 {name}({', '.join(fields)})，实际为 {got.name}({', '.join(got.fields)})"
    return None


def field_differences(expected: Any, got: Any) -> dict[str, str] | None:
    """For a named-tuple ``expected`` and a ``got`` of its class and fields: each field that differs, with the
    explanation of :func:`compare` (empty when none does).  None when ``expected`` is no named tuple or ``got``
    is not a record of its shape (the result is then wrong as a whole)."""
    if not _is_record(expected) or _record_shape(expected, got, "返回值"):
        return None
    out = {}
    for f, e, g in zip(type(expected)._fields, expected, got.values):
        why = compare(e, g, f)
        if why:
            out[f] = why
    return out


def compare(expected: Any, got: Any, path: str = "返回值") -> str | None:
    """Return None when ``got`` matches ``expected``, else a Chinese explanation."""
    if _is_record(expected):
        return _compare_named_tuple(expected, got, path)
    if isinstance(expected, np.ndarray):
        return _compare_array(expected, got, path)
    if isinstance(expected, (bool, np.bool_)):
        if not isinstance(got, (bool, np.bool_)) or bool(got) != bool(expected):
            return f"{path} 应为 {bool(expected)!r}，实际为 {got!r}"
        return None
    if _is_int(expected):
        if not _is_int(got):
            return f"{path} 应当是整数 {int(expected)}，实际为 {_type_name(got)} {got!r}"
        if int(got) != int(expected):
            return f"{path} 应为 {int(expected)}，实际为 {int(got)}"
        return None
    if isinstance(expected, (float, np.floating)):
        if not _is_real(got):
            return f"{path} 应当是实数 {float(expected)!r}，实际为 {_type_name(got)} {got!r}"
        try:
            value = float(got)
        except OverflowError:  # e.g. 10**400: no float is that large
            return f"{path} 应为 {float(expected)!r}，实际为一个超出浮点范围的整数"
        if not _close(value, float(expected)):
            return f"{path} 应为 {float(expected)!r}，实际为 {value!r}"
        return None
    if isinstance(expected, numbers.Number) or isinstance(expected, str) or expected is None:
        if type(got) is not type(expected) or got != expected:
            return f"{path} 应为 {expected!r}，实际为 {got!r}"
        return None
    raise TypeError(f"无法比较参考值类型 {type(expected).__name__}")


def _compare_named_tuple(expected: tuple, got: Any, path: str) -> str | None:
    """A named tuple: the same name and fields (:func:`_record_shape`), each field compared in turn."""
    why = _record_shape(expected, got, path)
    if why:
        return why
    for f, e, g in zip(type(expected)._fields, expected, got.values):
        why = compare(e, g, f"{path}.{f}" if path != "返回值" else f)
        if why:
            return why
    return None


def _compare_array(expected: np.ndarray, got: Any, path: str) -> str | None:
    """An array: the same shape, a dtype of the same kind (integers for integers, real numbers for floats), and the
    same values (floats by the scalar rule, in one pass)."""
    if not isinstance(got, np.ndarray):
        return f"{path} 应当是 numpy 数组，实际类型为 {_type_name(got)}"
    if got.shape != expected.shape:
        return f"{path} 的形状应为 {expected.shape}，实际为 {got.shape}"
    ek, gk = expected.dtype.kind, got.dtype.kind
    if ek in "iu":
        if gk not in "iu":
            return f"{path} 应当是整数数组，实际 dtype={got.dtype}"
        return None if np.array_equal(expected, got) else f"{path} 的取值不一致"
    if ek == "f":
        if gk not in "iuf":
            return f"{path} 应当是实数数组，实际 dtype={got.dtype}"
        e = expected.astype(np.float64).ravel()
        g = got.astype(np.float64).ravel()
        ok = _close_all(g, e)
        if ok.all():
            return None
        i = int(np.argmin(ok))  # the first element that differs
        return f"{path} 第 {i} 个元素应为 {float(e[i])!r}，实际为 {float(g[i])!r}"
    if ek == "b":
        return None if gk == "b" and np.array_equal(expected, got) else f"{path} 不一致"
    return None if np.array_equal(expected, got) else f"{path} 不一致"
