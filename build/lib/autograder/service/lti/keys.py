"""The tool's own RSA key pairs, in ``DATA/lti/keys/`` (private keys mode 0600, never in the database).

The newest key signs (client assertions for the AGS/NRPS token endpoint, deep-linking responses).  A rotation
(:func:`rotate`) adds a new key; the older ones stay in the published key set (:meth:`ToolKeys.jwks`) for
:data:`KEEP_SECONDS` after their successor appeared (longer than any token the tool signs lives), so a
platform still verifies what the old key signed, and are then removed.

Keys are made and serialized by ``cryptography``; the public JWKs by PyJWT (``RSAAlgorithm.to_jwk``).
"""

from __future__ import annotations

import json
import os
import secrets
import time
from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm

TOKEN_LIFETIME = 300  # seconds: every JWT the tool signs
KEEP_SECONDS = 3600  # an old public key stays published this long after its successor appeared (> TOKEN_LIFETIME)


@dataclass(frozen=True)
class ToolKey:
    kid: str
    created: float
    private_pem: bytes

    def public_jwk(self) -> dict:
        private = serialization.load_pem_private_key(self.private_pem, password=None)
        jwk = json.loads(RSAAlgorithm.to_jwk(private.public_key()))
        return {**jwk, "kid": self.kid, "alg": "RS256", "use": "sig"}


def key_dir(data: Path) -> Path:
    return Path(data) / "lti" / "keys"


def _write_key(folder: Path, now: float) -> ToolKey:
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    kid = secrets.token_urlsafe(12)
    path = folder / f"{int(now * 1000):015d}-{kid}.pem"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(pem)
        f.flush()
        os.fsync(f.fileno())
    return ToolKey(kid, int(now * 1000) / 1000, pem)


def _read(folder: Path) -> list[ToolKey]:
    keys = []
    for path in sorted(folder.glob("*.pem")) if folder.is_dir() else []:
        stamp, _, kid = path.stem.partition("-")
        keys.append(ToolKey(kid, int(stamp) / 1000, path.read_bytes()))
    return keys  # oldest first


class ToolKeys:
    """The key pairs in ``DATA/lti/keys/`` (the first one is created on first use)."""

    def __init__(self, data: Path, clock=time.time) -> None:
        self.folder, self.clock = key_dir(data), clock

    def all(self) -> list[ToolKey]:
        keys = _read(self.folder)
        if not keys:
            _write_key(self.folder, self.clock())
            keys = _read(self.folder)
        return keys

    def current(self) -> ToolKey:
        return self.all()[-1]

    def published(self) -> list[ToolKey]:
        """The current key and the older ones whose successor is younger than :data:`KEEP_SECONDS`."""
        keys, now = self.all(), self.clock()
        return [k for k, nxt in zip(keys, keys[1:]) if now - nxt.created < KEEP_SECONDS] + [keys[-1]]

    def jwks(self) -> dict:
        return {"keys": [k.public_jwk() for k in self.published()]}


def rotate(data: Path, clock=time.time) -> ToolKey:
    """Add a new signing key; delete keys whose successor appeared more than :data:`KEEP_SECONDS` ago."""
    store = ToolKeys(data, clock)
    store.all()
    now = clock()
    new = _write_key(store.folder, max(now, store.current().created + 0.001))
    keys = _read(store.folder)
    for old, nxt in zip(keys, keys[1:]):
        if now - nxt.created >= KEEP_SECONDS:
            for path in store.folder.glob(f"*-{old.kid}.pem"):
                path.unlink()
    return new
