"""Bounded room for request bodies: a few at a time in all, fewer per student, and never a wait for one.

A route that reads a body takes a slot first (:meth:`BodySlots.take`), after the caller is authenticated and
before a byte of the body is read.  When every slot is taken, or the caller (an account, or an address for
the sign-in forms) already holds its share, the request is refused at once with
:class:`~autograder.service.errors.Busy` (503 with ``Retry-After``) instead of waiting unread: a client that
gives up is never served later, and one student's slow connections cannot hold a classmate's upload.
Together with the time limit on reading a body (:func:`.forms.read_capped`) a slot is held for a bounded time.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Iterator

from ..errors import Busy

RETRY_AFTER = 5  # seconds: a slot is held at most for a body's time limit; most are free again in well under this


class BodySlots:
    """At most ``total`` bodies read at once, at most ``per_key`` of them for one key (account or address)."""

    def __init__(self, total: int, per_key: int) -> None:
        self.total, self.per_key = total, per_key
        self._held: Counter[str] = Counter()

    @property
    def in_use(self) -> int:
        return sum(self._held.values())

    @contextlib.contextmanager
    def take(self, key: str) -> Iterator[None]:
        """Hold one slot for ``key`` (no ``await`` inside: the count is checked and taken in one step)."""
        if self._held[key] >= self.per_key:
            raise Busy(f"你已有 {self.per_key} 个上传正在进行，请等它们完成后再试", retry_after=RETRY_AFTER)
        if self.in_use >= self.total:
            raise Busy("服务器正忙（同时上传的人太多），请稍后重试", retry_after=RETRY_AFTER)
        self._held[key] += 1
        try:
            yield
        finally:
            self._held[key] -= 1
            if not self._held[key]:
                del self._held[key]
