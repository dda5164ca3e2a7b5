"""Plain-data wire format between the trusted grader and the sandboxed student process.

Only JSON crosses the sandbox boundary, never pickle.  Every value is encoded
as a small tagged dict so that types survive exactly (``int`` vs ``float`` vs
``numpy.int64``, NaN and infinities, complex numbers, array dtypes and shapes,
named-tuple field names).  Anything else becomes ``{"t": "other"}`` carrying only
its type name and a trimmed ``repr`` -- an object whose ``__eq__`` always returns
True therefore never reaches a comparison as such.

Part of the sandbox payload: it imports nothing but the standard library and NumPy, runs inside
the sandbox (:mod:`runner`) and, on the trusted side, decodes what comes back.

Nothing that comes back is trusted, so :func:`loads` and :func:`decode` check every message against
hard limits BEFORE materialising it: a line of at most :data:`MAX_LINE` bytes, strings no longer
than :data:`MAX_STR` characters (names :data:`MAX_NAME`), at most :data:`MAX_ITEMS` values in a
message, nesting at most :data:`MAX_DEPTH`, integers of at most :data:`MAX_DIGITS` digits, at most
:data:`MAX_FIELDS` fields of a named tuple and :data:`MAX_DICT` entries of a dict, array dtypes from
a fixed list (text arrays of at most :data:`MAX_STR` characters per item); lone surrogates (which no
file or database can store) become U+FFFD.  Decoding a message within these limits is linear in its
size, so it ends quickly whatever the sandbox sends.
"""

from __future__ import annotations

import json
import re
from collections import namedtuple
from typing import Any, Callable

import numpy as np

__all__ = ["encode", "decode", "dumps", "loads", "WireError", "MAX_ITEMS", "MAX_LINE"]

MAX_ITEMS = 1_000_000  # values (scalars, array elements, containers) in one message
MAX_DEPTH = 12
MAX_STR = 20_000  # characters of a string or of one item of a text array
MAX_NAME = 100  # characters of a type, named-tuple or field name
MAX_FIELDS = 64
MAX_DICT = 1_000  # entries (dict keys are hashed: a bound keeps hash-collision attacks short)
MAX_DIGITS = 1_000
MAX_LINE = 8 << 20  # bytes of one message line
_ARRAY_KINDS = "biufcU"
# the only array dtypes that may cross (byte order as NumPy writes it on this machine or explicit)
_NUMERIC_DTYPES = {np.dtype(t).str for t in (np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
                                             np.uint32, np.uint64, np.float16, np.float32, np.float64, np.complex64,
                                             np.complex128)}


class WireError(ValueError):
    """A message does not follow the wire format (or exceeds its limits)."""


def _float_text(x: float) -> str:
    return repr(float(x))


def _scalar_array_item(kind: str, v: Any) -> Any:
    if kind == "b":
        return bool(v)
    if kind in "iu":
        return str(int(v))
    if kind == "f":
        return _float_text(v)
    if kind == "c":
        return [_float_text(v.real), _float_text(v.imag)]
    return str(v)[:MAX_STR]


def _array_items(kind: str, values: list) -> list:
    """The items of a numeric or text array (``tolist()``: Python scalars), as :func:`_scalar_array_item` writes
    each one; the common kinds in one pass (an assignment-5 test sends arrays in every call of an implementation)."""
    if kind == "f":
        return [repr(float(v)) for v in values]
    if kind in "iu":
        return [str(int(v)) for v in values]
    if kind == "b":
        return [bool(v) for v in values]
    return [_scalar_array_item(kind, v) for v in values]


def encode(x: Any, _depth: int = 0, _budget: list[int] | None = None) -> dict:
    """Encode ``x`` as tagged JSON-compatible data (see module docstring)."""
    budget = _budget if _budget is not None else [MAX_ITEMS]
    budget[0] -= 1
    if budget[0] < 0 or _depth > MAX_DEPTH:
        raise WireError("返回值过大或嵌套过深")
    if x is None:
        return {"t": "none"}
    if isinstance(x, (bool, np.bool_)):
        return {"t": "bool" if isinstance(x, bool) else "npbool", "v": bool(x)}
    if isinstance(x, np.integer):
        return {"t": "npint", "dtype": x.dtype.str, "v": str(int(x))}
    if isinstance(x, int):
        return {"t": "int", "v": str(int(x))}
    if isinstance(x, np.floating):
        if x.dtype.itemsize > 8:
            return {"t": "other", "type": type(x).__name__, "repr": repr(x)[:200]}
        return {"t": "npfloat", "dtype": x.dtype.str, "v": _float_text(x)}
    if isinstance(x, float):
        return {"t": "float", "v": _float_text(x)}
    if isinstance(x, (complex, np.complexfloating)):
        return {"t": "complex", "v": [_float_text(x.real), _float_text(x.imag)]}
    if isinstance(x, str):
        return {"t": "str", "v": str(x)[:MAX_STR]}
    if isinstance(x, np.ndarray):
        kind = x.dtype.kind
        budget[0] -= x.size
        if budget[0] < 0:
            raise WireError("返回的数组过大")
        if kind == "O":
            return {"t": "ndarray", "dtype": "|O", "shape": list(x.shape),
                    "v": [encode(v, _depth + 1, budget) for v in x.ravel().tolist()]}
        if kind not in _ARRAY_KINDS or (kind == "f" and x.dtype.itemsize > 8) or (kind == "c" and x.dtype.itemsize > 16):
            return {"t": "other", "type": f"ndarray[{x.dtype}]", "repr": repr(x)[:200]}
        return {"t": "ndarray", "dtype": x.dtype.str, "shape": list(x.shape), "v": _array_items(kind, x.ravel().tolist())}
    if isinstance(x, tuple):
        fields = getattr(type(x), "_fields", None)
        if fields is not None:
            return {"t": "tuple", "name": type(x).__name__, "fields": [str(f) for f in fields],
                    "v": [encode(v, _depth + 1, budget) for v in tuple.__iter__(x)]}
        return {"t": "tuple", "name": None, "fields": None, "v": [encode(v, _depth + 1, budget) for v in tuple.__iter__(x)]}
    if isinstance(x, list):
        return {"t": "list", "v": [encode(v, _depth + 1, budget) for v in list.__iter__(x)]}
    if isinstance(x, dict):
        return {"t": "dict", "v": [[encode(k, _depth + 1, budget), encode(v, _depth + 1, budget)] for k, v in dict.items(x)]}
    try:
        text = repr(x)[:200]
    except BaseException:  # noqa: BLE001 - a hostile __repr__
        text = "<repr 失败>"
    return {"t": "other", "type": type(x).__name__[:100], "repr": text}


class Struct:
    """A decoded named tuple: its class name, field names and values (trusted side only)."""

    __slots__ = ("name", "fields", "values")

    def __init__(self, name: str, fields: list[str], values: list[Any]) -> None:
        self.name, self.fields, self.values = name, fields, values

    def __repr__(self) -> str:
        inner = ", ".join(f"{f}={v!r}" for f, v in zip(self.fields, self.values))
        return f"{self.name}({inner})"


class Opaque:
    """A value the wire format does not carry (only its type name and a trimmed repr)."""

    __slots__ = ("type", "repr")

    def __init__(self, type_: str, text: str) -> None:
        self.type, self.repr = type_, text

    def __repr__(self) -> str:
        return f"<{self.type} 对象：{self.repr}>"


def _parse_float(s: Any) -> float:
    if not isinstance(s, str) or len(s) > 40:
        raise WireError("浮点数编码错误")
    return float(s)


def _parse_int(s: Any) -> int:
    if not isinstance(s, str) or not 0 < len(s) <= MAX_DIGITS + 1:
        raise WireError("整数编码错误（或位数过多）")
    return int(s)


def _name(x: Any) -> str:
    if not isinstance(x, str) or len(x) > MAX_NAME:
        raise WireError("名称编码错误（或过长）")
    return x


def _array_dtype(text: Any) -> np.dtype:
    """The dtype of an array message, from the fixed list only (text arrays: at most MAX_STR characters per item)."""
    if not isinstance(text, str) or len(text) > 12:
        raise WireError("数组类型错误")
    if text in _NUMERIC_DTYPES or text.replace(">", "<") in _NUMERIC_DTYPES or text.replace("<", ">") in _NUMERIC_DTYPES:
        dt = np.dtype(text)
    elif text[:2] in ("<U", ">U", "|U") and text[2:].isdigit() and 0 < int(text[2:]) <= MAX_STR:
        dt = np.dtype(text)
    else:
        raise WireError("数组类型错误")
    if dt.fields is not None or dt.subdtype is not None or dt.kind not in _ARRAY_KINDS:
        raise WireError("数组类型错误")
    return dt


def _decode_item(kind: str, v: Any) -> Any:
    if kind == "b":
        if not isinstance(v, bool):
            raise WireError("布尔数组编码错误")
        return v
    if kind in "iu":
        return _parse_int(v)
    if kind == "f":
        return _parse_float(v)
    if kind == "c":
        if not isinstance(v, list) or len(v) != 2:
            raise WireError("复数数组编码错误")
        return complex(_parse_float(v[0]), _parse_float(v[1]))
    if not isinstance(v, str) or len(v) > MAX_STR:
        raise WireError("字符串数组编码错误")
    return v


def _decode_items(kind: str, items: list) -> list:
    """:func:`_decode_item` of every item: the common kinds in one pass when every item passes its check (the same
    checks and conversions), else item by item, which raises the item's error."""
    if kind == "f" and all(isinstance(v, str) and len(v) <= 40 for v in items):
        return [float(v) for v in items]
    if kind in "iu" and all(isinstance(v, str) and 0 < len(v) <= MAX_DIGITS + 1 for v in items):
        return [int(v) for v in items]
    if kind == "b" and all(isinstance(v, bool) for v in items):
        return items
    return [_decode_item(kind, item) for item in items]


def decode(obj: Any, make_tuple: Callable[[str, list[str], list[Any]], Any] | None = None, *,
           max_items: int = MAX_ITEMS) -> Any:
    """Decode :func:`encode`'s output into exact built-in / NumPy values, within the limits of this module.

    ``make_tuple(name, fields, values)`` builds named tuples; by default a :class:`Struct` (trusted
    side).  The sandbox passes a factory that builds real ``collections.namedtuple`` instances.
    Raises :class:`WireError` for anything malformed or over a limit (``max_items`` may lower the budget).
    """
    budget = [min(max_items, MAX_ITEMS)]
    try:
        return _decode(obj, make_tuple, 0, budget)
    except WireError:
        raise
    except (ValueError, TypeError, KeyError, OverflowError, MemoryError, RecursionError) as exc:
        raise WireError(f"消息结构错误：{type(exc).__name__}") from None


def _spend(budget: list[int], n: int) -> None:
    budget[0] -= n
    if budget[0] < 0:
        raise WireError("返回值过大（元素过多）")


def _items(v: Any, budget: list[int]) -> list:
    if not isinstance(v, list):
        raise WireError("消息结构错误")
    _spend(budget, len(v))
    return v


def _decode(obj: Any, make_tuple, depth: int, budget: list[int]) -> Any:
    if depth > MAX_DEPTH + 1 or not isinstance(obj, dict):
        raise WireError("消息结构错误（或嵌套过深）")
    _spend(budget, 1)
    t = obj.get("t")
    v = obj.get("v")
    if t in _SCALARS:
        return _decode_scalar(t, v, obj)
    if t == "ndarray":
        return _decode_array(obj, v, make_tuple, depth, budget)
    if t == "tuple":
        return _decode_tuple(obj, v, make_tuple, depth, budget)
    if t == "list":
        return [_decode(item, make_tuple, depth + 1, budget) for item in _items(v, budget)]
    if t == "dict":
        pairs = _items(v, budget)
        if len(pairs) > MAX_DICT:
            raise WireError("返回的字典过大")
        out = {}
        for pair in pairs:
            if not isinstance(pair, list) or len(pair) != 2:
                raise WireError("字典编码错误")
            out[_decode(pair[0], make_tuple, depth + 1, budget)] = _decode(pair[1], make_tuple, depth + 1, budget)
        return out
    if t == "other":
        return Opaque(str(obj.get("type"))[:MAX_NAME], str(obj.get("repr"))[:200])
    raise WireError(f"未知的类型标记 {str(t)[:20]!r}")


_SCALARS = frozenset({"none", "bool", "npbool", "int", "npint", "float", "npfloat", "complex", "str"})


def _decode_scalar(t: str, v: Any, obj: dict) -> Any:
    """One of :data:`_SCALARS`: Python's or NumPy's scalar of type tag ``t``, value ``v``."""
    if t == "none":
        return None
    if t == "bool":
        return bool(v)
    if t == "npbool":
        return np.bool_(bool(v))
    if t == "int":
        return _parse_int(v)
    if t == "npint":
        dt = _array_dtype(obj.get("dtype"))
        if dt.kind not in "iu":
            raise WireError("整数类型错误")
        return dt.type(_parse_int(v))
    if t == "float":
        return _parse_float(v)
    if t == "npfloat":
        dt = _array_dtype(obj.get("dtype"))
        if dt.kind != "f":
            raise WireError("浮点类型错误")
        return dt.type(_parse_float(v))
    if t == "complex":
        if not isinstance(v, list) or len(v) != 2:
            raise WireError("复数编码错误")
        return complex(_parse_float(v[0]), _parse_float(v[1]))
    if not isinstance(v, str) or len(v) > MAX_STR:
        raise WireError("字符串编码错误（或过长）")
    return v


def _decode_array(obj: dict, v: Any, make_tuple, depth: int, budget: list[int]) -> np.ndarray:
    """An array: its shape checked and its size counted against ``budget`` before any item is decoded."""
    shape_in = obj.get("shape")
    if not isinstance(shape_in, list) or len(shape_in) > 32 or not all(
            isinstance(n, int) and not isinstance(n, bool) and 0 <= n <= MAX_ITEMS for n in shape_in):
        raise WireError("数组形状错误")
    size = 1
    for n in shape_in:
        size *= n
    if size > budget[0]:
        raise WireError("数组过大")
    items = _items(v, budget)
    if len(items) != size:
        raise WireError("数组长度与形状不符")
    shape = tuple(shape_in)
    if obj.get("dtype") == "|O":
        arr = np.empty(size, dtype=object)
        for i, item in enumerate(items):
            arr[i] = _decode(item, make_tuple, depth + 1, budget)
        return arr.reshape(shape)
    dt = _array_dtype(obj.get("dtype"))
    return np.array(_decode_items(dt.kind, items), dtype=dt).reshape(shape)


def _decode_tuple(obj: dict, v: Any, make_tuple, depth: int, budget: list[int]) -> Any:
    """A tuple, or a named tuple built by ``make_tuple`` (default :class:`Struct`) from checked names."""
    values = [_decode(item, make_tuple, depth + 1, budget) for item in _items(v, budget)]
    if obj.get("name") is None:
        return tuple(values)
    fields_in = obj.get("fields")
    if not isinstance(fields_in, list) or len(fields_in) > MAX_FIELDS:
        raise WireError("命名元组字段错误")
    fields = [_name(f) for f in fields_in]
    if len(fields) != len(values):
        raise WireError("命名元组字段数不符")
    factory = make_tuple or (lambda n, f, vals: Struct(n, f, vals))
    return factory(_name(obj.get("name")), fields, values)


_TUPLE_CLASSES: dict[tuple[str, tuple[str, ...]], type] = {}


def namedtuple_factory(name: str, fields: list[str], values: list[Any]) -> Any:
    """Build a real named tuple (used inside the sandbox)."""
    key = (name, tuple(fields))
    cls = _TUPLE_CLASSES.get(key)
    if cls is None:
        cls = namedtuple(name, fields)  # type: ignore[misc]
        _TUPLE_CLASSES[key] = cls
    return cls(*values)


def dumps(message: dict) -> bytes:
    """One message as one line of UTF-8 JSON (no NaN literals: floats travel as text)."""
    return json.dumps(message, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8") + b"\n"


_LONE_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def loads(line: bytes) -> dict:
    """Parse one message line; raise :class:`WireError` on anything malformed or longer than :data:`MAX_LINE`.

    Strings holding lone surrogates (only possible through ``\\udXXX`` escapes) are repaired to U+FFFD,
    so that every string of a message can be written to a file or a database.
    """
    if len(line) > MAX_LINE:
        raise WireError("消息过长")
    try:
        msg = json.loads(line.decode("utf-8"), parse_constant=_reject_constant)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise WireError(f"无法解析的消息：{str(exc)[:200]}") from None
    if not isinstance(msg, dict):
        raise WireError("消息不是对象")
    if _LONE_SURROGATE_ESCAPE.search(line):
        msg = _repair(msg)
    return msg


def _repair(x: Any) -> Any:
    """``x`` with every lone surrogate of every string (keys included) replaced by U+FFFD."""
    if isinstance(x, str):
        try:
            x.encode("utf-8")
            return x
        except UnicodeEncodeError:
            return "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in x)
    if isinstance(x, list):
        return [_repair(v) for v in x]
    if isinstance(x, dict):
        return {_repair(k): _repair(v) for k, v in x.items()}
    return x


def _reject_constant(name: str) -> float:
    raise WireError(f"消息中出现非法常量 {name}")
