"""Load the quiz data exactly as the book's directive does (book/_ext/quiz.py)."""

from __future__ import annotations

import importlib.util
import re
from fractions import Fraction
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("course_quiz_ext", ROOT / "book" / "_ext" / "quiz.py")
quiz_ext = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(quiz_ext)

_NUMBER = re.compile(r"\\frac\{(\d+)\}\{(\d+)\}|(\d+(?:\.\d+)?)")


def numbers_in(text: str) -> list[Fraction]:
    r"""Every number written in a text: decimals and ``\frac{a}{b}``, in order, as exact fractions."""
    out = []
    for num, den, dec in _NUMBER.findall(text):
        out.append(Fraction(int(num), int(den)) if num else Fraction(dec))
    return out


def load() -> dict:
    """``{"groups": [...], "quizzes": {number: entry}}`` (validated by the directive's loader)."""
    return quiz_ext.load_quizzes()
