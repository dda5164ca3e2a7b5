"""Plain-data wire format between the trusted grader and the sandboxed student process.

Only JSON crosses the sandbox boundary, never pickle.  Every value is encoded
as a small tagged dict so that types survive exactly (``int`` vs ``float`` vs
``numpy.int64``, NaN and infinities, complex numbers, array dtypes and shapes,
named-tuple field names).  Anything else becomes ``{"t": "other"}`` carrying only
its type name and a trimmed ``repr`` -- an object whose ``__eq__`` always returns
True therefore never reaches a comparison as such.

Part of the sandbox payload: it imports nothing but the standard library and NumPy, runs inside
the sandbox (:mod:`runner`) and, on the trusted side, decodes what comes back.
"""

from __future__ import annotations

import json
from collections import namedtuple
from typing import Any, Callable

import numpy as np

__all__ = ["encode", "decode", "dumps", "loads", "WireError", "MAX_ITEMS"]

MAX_ITEMS = 2_000_000  # total scalars in one message
MAX_DEPTH = 12
MAX_STR = 20_000
_ARRAY_KINDS = "biufcU"


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
        return {"t": "ndarray", "dtype": x.dtype.str, "shape": list(x.shape),
                "v": [_scalar_array_item(kind, v) for v in x.ravel().tolist()]}
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


def _decode_item(kind: str, v: Any) -> Any:
    if kind == "b":
        if not isinstance(v, bool):
            raise WireError("布尔数组编码错误")
        return v
    if kind in "iu":
        if not isinstance(v, str) or len(v) > 40:
            raise WireError("整数数组编码错误")
        return int(v)
    if kind == "f":
        return _parse_float(v)
    if kind == "c":
        return complex(_parse_float(v[0]), _parse_float(v[1]))
    if not isinstance(v, str):
        raise WireError("字符串数组编码错误")
    return v


def decode(obj: Any, make_tuple: Callable[[str, list[str], list[Any]], Any] | None = None, _depth: int = 0) -> Any:
    """Decode :func:`encode`'s output into exact built-in / NumPy values.

    ``make_tuple(name, fields, values)`` builds named tuples; by default a
    :class:`Struct` (trusted side).  The sandbox passes a factory that builds real
    ``collections.namedtuple`` instances.
    """
    if _depth > MAX_DEPTH + 1 or not isinstance(obj, dict):
        raise WireError("消息结构错误")
    t = obj.get("t")
    v = obj.get("v")
    if t == "none":
        return None
    if t == "bool":
        return bool(v)
    if t == "npbool":
        return np.bool_(bool(v))
    if t == "int":
        if not isinstance(v, str) or len(v) > 5000:
            raise WireError("整数编码错误")
        return int(v)
    if t == "npint":
        dt = np.dtype(obj["dtype"])
        if dt.kind not in "iu":
            raise WireError("整数类型错误")
        return dt.type(int(v))
    if t == "float":
        return _parse_float(v)
    if t == "npfloat":
        dt = np.dtype(obj["dtype"])
        if dt.kind != "f" or dt.itemsize > 8:
            raise WireError("浮点类型错误")
        return dt.type(_parse_float(v))
    if t == "complex":
        return complex(_parse_float(v[0]), _parse_float(v[1]))
    if t == "str":
        if not isinstance(v, str):
            raise WireError("字符串编码错误")
        return v
    if t == "ndarray":
        shape = tuple(int(s) for s in obj["shape"])
        if any(s < 0 for s in shape) or len(shape) > 32:
            raise WireError("数组形状错误")
        size = int(np.prod(shape, dtype=np.int64)) if shape else 1
        if not isinstance(v, list) or len(v) != size:
            raise WireError("数组长度与形状不符")
        if obj["dtype"] == "|O":
            arr = np.empty(size, dtype=object)
            for i, item in enumerate(v):
                arr[i] = decode(item, make_tuple, _depth + 1)
            return arr.reshape(shape)
        dt = np.dtype(obj["dtype"])
        if dt.kind not in _ARRAY_KINDS or dt.fields is not None or dt.subdtype is not None:
            raise WireError("数组类型错误")
        return np.array([_decode_item(dt.kind, item) for item in v], dtype=dt).reshape(shape)
    if t == "tuple":
        values = [decode(item, make_tuple, _depth + 1) for item in v]
        if obj.get("name") is None:
            return tuple(values)
        fields = [str(f) for f in obj["fields"]]
        if len(fields) != len(values):
            raise WireError("命名元组字段数不符")
        factory = make_tuple or (lambda n, f, vals: Struct(n, f, vals))
        return factory(str(obj["name"]), fields, values)
    if t == "list":
        return [decode(item, make_tuple, _depth + 1) for item in v]
    if t == "dict":
        return {decode(k, make_tuple, _depth + 1): decode(val, make_tuple, _depth + 1) for k, val in v}
    if t == "other":
        return Opaque(str(obj.get("type"))[:100], str(obj.get("repr"))[:200])
    raise WireError(f"未知的类型标记 {t!r}")


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


def loads(line: bytes) -> dict:
    """Parse one message line; raise :class:`WireError` on anything malformed."""
    try:
        msg = json.loads(line.decode("utf-8"), parse_constant=_reject_constant)
    except (ValueError, UnicodeDecodeError) as exc:
        raise WireError(f"无法解析的消息：{exc}") from None
    if not isinstance(msg, dict):
        raise WireError("消息不是对象")
    return msg


def _reject_constant(name: str) -> float:
    raise WireError(f"消息中出现非法常量 {name}")
