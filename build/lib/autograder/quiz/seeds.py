"""Seeds of variants and the deterministic stream of numbers a template draws from.

A variant's seed is derived from who asks for which question how many times (:func:`variant_seed`), by
SHA-256, so the same student gets the same variant on every machine and in every Python or NumPy
version, and two students almost never share one (64 bits).  :class:`Draw` is the only source of
randomness of the templates: SHA-256 in counter mode over ``(seed, attempt)``, so a draw that is not
well posed is replaced by the next attempt of the same seed, again the same everywhere.  (NumPy's
generators promise no stream stability across versions, and ``random.Random`` only for ``random()``.)
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import TypeVar

from .model import TemplateError

__all__ = ["variant_seed", "Draw", "SEED_BITS"]

SEED_BITS = 64
_DOMAIN = b"course-quiz-variant/1\0"
T = TypeVar("T")


def _check_text(value: object, name: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise TemplateError(f"{name} 必须是非空的字符串，收到的是 {value!r}")
    return value


def variant_seed(course: str, student: str, question: str, attempt: int) -> int:
    """The seed of ``student``'s ``attempt``-th variant (0, 1, ...) of ``question`` in ``course``.

    A stable 64-bit integer: SHA-256 of the four values (as one JSON array, so no two different tuples share an
    encoding).  The service derives it on its side; a seed sent by a client is never to be trusted.

    Raises
    ------
    TemplateError
        If a name is not a non-empty string or ``attempt`` is not an integer >= 0.
    """
    _check_text(course, "course")
    _check_text(student, "student")
    _check_text(question, "question")
    if isinstance(attempt, bool) or not isinstance(attempt, int) or attempt < 0:
        raise TemplateError(f"attempt 必须是不小于 0 的整数，收到的是 {attempt!r}")
    payload = json.dumps([course, student, question, attempt], ensure_ascii=False, separators=(",", ":"))
    return int.from_bytes(hashlib.sha256(_DOMAIN + payload.encode("utf-8")).digest()[: SEED_BITS // 8], "big")


def check_seed(seed: object) -> int:
    """``seed`` if it is an integer in [0, 2**64), else :class:`TemplateError`."""
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2 ** SEED_BITS:
        raise TemplateError(f"seed 必须是 0 到 2**64-1 之间的整数，收到的是 {seed!r}")
    return seed


class Draw:
    """The numbers of one draw: a deterministic stream of integers for ``(seed, attempt)``."""

    def __init__(self, seed: int, attempt: int = 0) -> None:
        self._prefix = f"{check_seed(seed)}:{attempt}:".encode()
        self._counter = 0

    def _word(self) -> int:
        digest = hashlib.sha256(self._prefix + str(self._counter).encode()).digest()
        self._counter += 1
        return int.from_bytes(digest[:8], "big")

    def integer(self, low: int, high: int) -> int:
        """An integer of ``[low, high]`` (both included), uniformly (rejection sampling, no modulo bias)."""
        if high < low:
            raise ValueError(f"empty range [{low}, {high}]")
        n = high - low + 1
        limit = (1 << 64) - (1 << 64) % n
        while True:
            word = self._word()
            if word < limit:
                return low + word % n

    def choice(self, items: Sequence[T]) -> T:
        """One of ``items``."""
        return items[self.integer(0, len(items) - 1)]

    def sample(self, items: Sequence[T], k: int) -> list[T]:
        """``k`` different items of ``items``, in drawn order."""
        pool = list(items)
        if not 0 <= k <= len(pool):
            raise ValueError(f"cannot draw {k} of {len(pool)} items")
        for i in range(k):
            j = self.integer(i, len(pool) - 1)
            pool[i], pool[j] = pool[j], pool[i]
        return pool[:k]

    def shuffled(self, items: Sequence[T]) -> list[T]:
        """``items`` in a drawn order."""
        return self.sample(items, len(items))
