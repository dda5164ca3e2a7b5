"""The attempts rule of an assignment, stated once: how many graded attempts a student has, which attempts take
one, and when one comes back.

* **The allowance**: ``attempts_per_24h`` of the assignment (``course.yml``) plus the extra attempts an
  instructor granted the student (:func:`allowance`, applied by :func:`.overrides.personal_policy`).
* **The window**: an attempt takes one of the allowance for :data:`WINDOW` seconds from its arrival (a rolling
  24 hours, not a calendar day: no midnight rush).
* **Free failures**: an attempt that failed through no doing of its student does not take one
  (:func:`forgiven`): a ``failed`` row of every kind but those in :data:`COUNTED_FAILURES`.  At most as many
  attempts as the allowance are free in a window (the newest), so that a grading system that keeps failing
  cannot be fed uploads without end (:func:`taken`).
* **Coming back**: with none left, the next one comes back when the oldest attempt that took one leaves the
  window (:func:`attempts_left`).

:meth:`.submissions.Submissions.window` reads a student's recent attempts and asks this module; every page, the
API and the upload itself go through it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from .failures import Failure
from .policy import DAY, retry_after

#: Seconds an attempt takes one of the allowance for.
WINDOW = DAY
#: The failure kinds whose attempt still takes one: the service gave up on it after its process exited again
#: and again, which a notebook might cause on purpose (free, a student could repeat it without limit).
COUNTED_FAILURES = frozenset({Failure.GAVE_UP})


class Recent(NamedTuple):
    """One attempt of the window as the rule needs it: when it arrived, its status and its failure kind."""

    created_at: float
    status: str
    failure: Failure | None


class Left(NamedTuple):
    """How many attempts are left, and (with none left) the seconds until one comes back."""

    left: int
    wait: int | None


def allowance(per_24h: int, extra: int | None) -> int:
    """The attempts a student has per window: the assignment's ``per_24h`` and the ``extra`` granted to them."""
    return per_24h + (extra or 0)


def forgiven(status: str, failure: Failure | None) -> bool:
    """Whether an attempt in ``status`` that failed with ``failure`` failed through no doing of its student (free).

    A regraded attempt that keeps its previous result is ``graded`` and takes one."""
    return status == "failed" and failure not in COUNTED_FAILURES


def rows_needed(allowed: int) -> int:
    """How many of the newest attempts of the window decide :func:`attempts_left`: more than that leave none free."""
    return 2 * allowed + 1


def taken(recent: Iterable[Recent], allowed: int) -> list[float]:
    """The arrival times of the attempts (``recent``: the window's, newest first) that take one of ``allowed``."""
    counted: list[float] = []
    free = 0
    for attempt in recent:
        if free < allowed and forgiven(attempt.status, attempt.failure):
            free += 1
        else:
            counted.append(attempt.created_at)
    return counted[:allowed]


def attempts_left(recent: Iterable[Recent], allowed: int, now: float) -> Left:
    """The attempts left at ``now`` (epoch seconds) of ``allowed``, given the window's attempts ``recent`` (newest
    first, at least :func:`rows_needed` of them when there are that many)."""
    counted = taken(recent, allowed)
    n = max(0, allowed - len(counted))
    return Left(n, None if n else retry_after(min(counted), now, WINDOW))
