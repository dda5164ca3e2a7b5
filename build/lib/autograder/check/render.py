"""Human-readable (Chinese) renderings of inputs, values and exceptions for feedback."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..sandbox.payload.wire import Opaque, Struct

SMALL = 20


def show(x: Any) -> str:
    """Small values in full; large arrays summarised."""
    if isinstance(x, Struct):
        return f"{x.name}(" + ", ".join(f"{f}={show(v)}" for f, v in zip(x.fields, x.values)) + ")"
    if isinstance(x, tuple) and hasattr(type(x), "_fields"):
        return f"{type(x).__name__}(" + ", ".join(f"{f}={show(v)}" for f, v in zip(type(x)._fields, x)) + ")"
    if isinstance(x, Opaque):
        return repr(x)
    if isinstance(x, np.ndarray):
        if x.size <= SMALL:
            body = np.array2string(x, separator=", ", threshold=SMALL + 1, max_line_width=200)
            return f"array({body}, dtype={x.dtype})"
        flat = x.ravel()
        head = np.array2string(flat[:6], separator=", ")[1:-1]
        return f"形状为 {x.shape}、dtype={x.dtype} 的数组（前 6 个：{head}, ...）"
    if isinstance(x, list):
        if len(x) <= SMALL:
            return "[" + ", ".join(show(v) for v in x) + "]"
        return f"长度为 {len(x)} 的列表（前 6 个：{', '.join(show(v) for v in x[:6])}, ...）"
    if isinstance(x, (float, np.floating)):
        return repr(float(x)) if isinstance(x, float) else f"{type(x).__name__}({float(x)!r})"
    text = repr(x)
    return text if len(text) <= 300 else text[:300] + "..."


def show_call(fn: str, args: tuple, kwargs: dict) -> str:
    parts = [show(a) for a in args] + [f"{k}={show(v)}" for k, v in kwargs.items()]
    return f"{fn}(" + ", ".join(parts) + ")"


def show_exc(exc: dict | None) -> str:
    if not exc:
        return ""
    return f"抛出 {exc.get('type')}：{str(exc.get('msg'))[:300]}"
