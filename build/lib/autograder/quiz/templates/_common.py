"""What the templates share: writing numbers as a student reads them, and the grader's mistakes as code."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from ...check.misconceptions import by_id

__all__ = ["num", "fixed", "point", "interval", "frac", "listing", "wrong", "from_counts", "percent"]


def num(x: float) -> str:
    """A drawn number as written in a stem: no trailing zeros (``0.5``, ``0.25``, ``12``)."""
    text = f"{float(x):.10f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def fixed(decimals: int) -> Callable[[Any], str]:
    """Writes a number with ``decimals`` decimals (never ``-0.000``)."""

    def show(x: Any) -> str:
        text = f"{float(x):.{decimals}f}"
        return text[1:] if text.startswith("-") and float(text) == 0 else text

    return show


def point(decimals: int) -> Callable[[Any], str]:
    """Writes a tuple of numbers as ``(0.25, 0.75)``."""
    one = fixed(decimals)
    return lambda xs: "(" + ", ".join(one(x) for x in xs) + ")"


def interval(decimals: int) -> Callable[[Any], str]:
    """Writes a pair of numbers as a closed interval ``[0.012, 0.071]``."""
    one = fixed(decimals)
    return lambda xs: f"[{one(xs[0])}, {one(xs[1])}]"


def frac(x: Fraction | float, limit: int = 1000) -> str:
    """An exact fraction as ``2/3`` (an integer as ``1``)."""
    f = Fraction(x).limit_denominator(limit)
    return str(f.numerator) if f.denominator == 1 else f"{f.numerator}/{f.denominator}"


def percent(x: float) -> str:
    return f"{num(round(100 * x, 6))}%"


def listing(values: Sequence[Any], fmt: Callable[[Any], str] = num) -> str:
    """Values joined with the Chinese enumeration comma."""
    return "、".join(fmt(v) for v in values)


def wrong(misconception: str, function: str, variant: str) -> Callable[..., Any]:
    """The grader's own implementation of a known mistake (:mod:`autograder.check.misconceptions`), so a
    quiz's wrong option is computed by the same code that recognises the mistake in a programming assignment."""
    return by_id(misconception).impls[function][variant]


def from_counts(tp: int, fp: int, fn: int, tn: int) -> tuple[np.ndarray, np.ndarray]:
    """Labels and 0/1 scores with exactly these confusion counts at threshold 0.5."""
    y = np.array([1] * tp + [0] * fp + [1] * fn + [0] * tn)
    s = np.array([1.0] * (tp + fp) + [0.0] * (fn + tn))
    return y, s
