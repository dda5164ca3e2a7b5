"""Personal access codes: issued once, stored only as a slow hash, checked in constant-looking time.

A code reads ``XXXXXXXX-YYYY...``: the first part (``code_id``, 40 random bits) finds the account, the
second (130 random bits) is the secret, stored only as an argon2id hash (argon2-cffi, OWASP's minimum
parameters: 19 MiB, 2 passes).  A code whose ``code_id`` is unknown is checked against a dummy hash, so a
wrong code costs the same whether or not its first part exists.  Issuing a new code replaces both parts:
the old code (and every session made with it) stops working at once.

:class:`CodeCache` remembers recently verified codes (by SHA-256 of the whole code, in memory only) so that
a student polling the status of a submission does not pay for argon2 on every request; a cached code is
still checked against the account's current ``code_id``.
"""

from __future__ import annotations

import hashlib
import secrets
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from .roles import LABELS, Permission, Role, can, is_staff

_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"  # no 0/o, 1/l/i: codes are read and typed by people
HASHER = PasswordHasher(time_cost=2, memory_cost=19456, parallelism=1)
MAX_CODE_LENGTH = 80


def _random(n: int) -> str:
    return "".join(secrets.choice(_ALPHABET) for _ in range(n))


def new_code() -> tuple[str, str, str]:
    """A fresh code: ``(code, code_id, argon2 hash of the secret part)``."""
    code_id, secret = _random(8), _random(26)
    return f"{code_id}-{secret}", code_id, HASHER.hash(secret)


def split(code: str) -> tuple[str, str] | None:
    """``(code_id, secret)`` of a well-formed code, else None (also for anything too long or odd)."""
    if not isinstance(code, str) or len(code) > MAX_CODE_LENGTH:
        return None
    code_id, sep, secret = code.strip().lower().partition("-")
    if not sep or len(code_id) != 8 or not secret or not (code_id + secret).isascii():
        return None
    return code_id, secret


_DUMMY = HASHER.hash(_random(26))
HASH_SLOTS = 2  # argon2 checks at once in one process: bounded CPU (cores) and memory (2 x 19 MiB)
_hashing = threading.BoundedSemaphore(HASH_SLOTS)
_seconds = [0.05]  # how long a check took lately (a moving average): the pause of a refusal made without one


def verify(secret: str, code_hash: str | None) -> bool:
    """Does ``secret`` match ``code_hash``?  With ``code_hash`` None the dummy hash is checked (same cost).
    At most :data:`HASH_SLOTS` run at once; the others wait."""
    with _hashing:
        start = time.perf_counter()
        try:
            return HASHER.verify(code_hash or _DUMMY, secret) and code_hash is not None
        except (VerificationError, InvalidHashError):
            return False
        finally:
            _seconds[0] = 0.8 * _seconds[0] + 0.2 * min(time.perf_counter() - start, 1.0)


def pause_like_verify() -> None:
    """Wait about as long as a check takes, without doing one (a refusal must not be told apart by its time)."""
    time.sleep(_seconds[0])


@dataclass(frozen=True)
class Account:
    """A signed-in person of one course: ``role`` a :class:`~.roles.Role` value; ``login`` the student id, or the
    name of an instructor or teaching assistant."""

    id: int
    role: str
    login: str
    name: str
    code_id: str

    @property
    def is_instructor(self) -> bool:
        return self.role == Role.INSTRUCTOR

    @property
    def is_staff(self) -> bool:
        """Sees the class (an instructor or a teaching assistant), not only their own work."""
        return is_staff(self.role)

    def can(self, permission: Permission) -> bool:
        return can(self.role, permission)

    @property
    def role_label(self) -> str:
        return LABELS.get(self.role, self.role)


class CodeCache:
    """SHA-256 of recently verified codes -> (account id, code id), bounded and expiring."""

    def __init__(self, size: int = 20000, ttl: float = 600.0) -> None:
        self.size, self.ttl = size, ttl
        self._data: OrderedDict[bytes, tuple[int, str, float]] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def _key(code: str) -> bytes:
        return hashlib.sha256(code.encode()).digest()

    def get(self, code: str) -> tuple[int, str] | None:
        key = self._key(code)
        with self._lock:
            hit = self._data.get(key)
            if hit is None or hit[2] < time.monotonic():
                self._data.pop(key, None)
                return None
            self._data.move_to_end(key)
            return hit[0], hit[1]

    def put(self, code: str, account_id: int, code_id: str) -> None:
        with self._lock:
            self._data[self._key(code)] = (account_id, code_id, time.monotonic() + self.ttl)
            self._data.move_to_end(self._key(code))
            while len(self._data) > self.size:
                self._data.popitem(last=False)

    def drop(self, code: str) -> None:
        with self._lock:
            self._data.pop(self._key(code), None)
