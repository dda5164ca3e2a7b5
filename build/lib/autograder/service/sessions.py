"""Browser sessions and CSRF tokens.

A session cookie is ``base64url(JSON payload) "." base64url(HMAC-SHA256(secret, payload))``; the payload holds the
course (the signer's ``scope``: accounts of two courses may share an id, so a session of one is never read by
another), the account id, the ``code_id`` of the code it was made with (a new code ends every old session), a
random nonce and the expiry. Each course's cookies have names of their own (:meth:`Signer.name`), so a person
signed in to two courses keeps both sessions. The cookie is ``HttpOnly``, ``SameSite=Strict`` and ``Path=/``; over
HTTPS it is ``Secure`` and named with the ``__Host-`` prefix (:func:`cookie_name`), which a browser accepts only
from a secure page of this very host, without ``Domain``: a page on a sibling subdomain, or any plain-HTTP page of
the host (another port), cannot set or replace it (cookie tossing), and over HTTPS the service reads only that
name. Over plain HTTP (a trial on loopback) browsers refuse a ``__Host-`` cookie without ``Secure``, and a
``Secure`` cookie would not come back, so the name is the plain one there and cookie tossing is not prevented (the
pages then notice a changed account, and an upload form refuses another account than its page's). The code that
made a session is its account's session version: a new code (a reset) ends every session made with the old.

A CSRF token is ``HMAC(secret, "csrf" + nonce)``: tied to one session, never stored, checked in constant time on
every state-changing request that is authenticated by the cookie.

The server secret is 32 random bytes in ``DATA/secret.key`` (mode 0600), created on first start and shared by every
service process that uses the same data folder.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import secrets
import time
from dataclasses import dataclass
from pathlib import Path

COOKIE = "autograder_session"
LOGIN_COOKIE = "autograder_login"  # a signed anonymous session: the sign-in form's CSRF token is tied to it
HOST_PREFIX = "__Host-"
CSRF_HEADER = "x-csrf-token"
CSRF_FIELD = "csrf_token"
MAX_AGE = 12 * 3600
MAX_COOKIE = 1024


def load_secret(path: Path) -> bytes:
    """The server secret at ``path``, created (atomically, mode 0600) if it does not exist yet."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(secrets.token_bytes(32).hex().encode())
            f.flush()
            os.fsync(f.fileno())
        try:
            os.link(tmp, path)  # fails if another process created it first: then use theirs
        except FileExistsError:
            pass
        finally:
            tmp.unlink()
        data = path.read_bytes()
    secret = bytes.fromhex(data.decode().strip())
    if len(secret) < 32:
        raise ValueError(f"{path} 中的服务器密钥太短")
    return secret


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass(frozen=True)
class Session:
    account_id: int
    code_id: str
    nonce: str
    expires: float


class Signer:
    """Issues and checks session cookies and CSRF tokens of one ``scope`` (a course's id; ``admin`` for the site's
    administrators) with one server secret."""

    def __init__(self, secret: bytes, max_age: float = MAX_AGE, scope: str = "") -> None:
        self._key = hashlib.sha256(b"autograder-session" + secret).digest()
        self._csrf = hashlib.sha256(b"autograder-csrf" + secret).digest()
        self.max_age, self.scope = max_age, scope

    def name(self, base: str) -> str:
        """The name of cookie ``base`` in this scope (before the scheme's prefix, :func:`cookie_name`)."""
        return f"{base}-{self.scope}" if self.scope else base

    def _mac(self, payload: bytes) -> bytes:
        return hmac.new(self._key, payload, hashlib.sha256).digest()

    def issue(self, account_id: int, code_id: str, now: float | None = None) -> tuple[str, Session]:
        """A new cookie value and its session."""
        session = Session(account_id, code_id, secrets.token_urlsafe(16), (now or time.time()) + self.max_age)
        payload = json.dumps({"k": self.scope, "a": session.account_id, "c": session.code_id, "n": session.nonce,
                              "e": session.expires}, separators=(",", ":")).encode()
        return f"{_b64(payload)}.{_b64(self._mac(payload))}", session

    def read(self, cookie: str | None, now: float | None = None) -> Session | None:
        """The session of a cookie value, or None if it is missing, malformed, forged or expired."""
        if not cookie or len(cookie) > MAX_COOKIE or cookie.count(".") != 1:
            return None
        body, mac = cookie.split(".")
        try:
            payload, given = _unb64(body), _unb64(mac)
        except (ValueError, TypeError):
            return None
        if not hmac.compare_digest(given, self._mac(payload)):
            return None
        try:
            data = json.loads(payload)
            session = Session(int(data["a"]), str(data["c"]), str(data["n"]), float(data["e"]))
            scope = data.get("k", "")
        except (ValueError, KeyError, TypeError, AttributeError):
            return None
        if scope != self.scope:  # another course's (or the administrators') session
            return None
        return session if session.expires > (now or time.time()) else None

    def csrf_token(self, session: Session) -> str:
        return _b64(hmac.new(self._csrf, b"csrf" + session.nonce.encode(), hashlib.sha256).digest())

    def check_csrf(self, session: Session, token: str | None) -> bool:
        return bool(token) and len(token) < 200 and token.isascii() and hmac.compare_digest(token.encode(), self.csrf_token(session).encode())


def cookie_name(name: str, *, secure: bool) -> str:
    """The name a cookie has: with the ``__Host-`` prefix over HTTPS (``secure``), plain over HTTP."""
    return HOST_PREFIX + name if secure else name


def cookie_header(value: str, *, secure: bool, max_age: int = MAX_AGE, name: str = COOKIE) -> str:
    """The ``Set-Cookie`` value of cookie ``name`` (the session's by default; ``max_age`` 0 deletes it):
    ``__Host-`` and ``Secure`` over HTTPS, never a ``Domain``."""
    parts = [f"{cookie_name(name, secure=secure)}={value}", "Path=/", f"Max-Age={max_age}", "HttpOnly", "SameSite=Strict"]
    if secure:
        parts.append("Secure")
    return "; ".join(parts)
