"""Registered platforms (an LMS: issuer + client id, its deployments and endpoints) and their key sets.

A platform's key set is fetched from its ``jwks_url`` and cached for :data:`JWKS_TTL`; a token signed with a
key id the cache does not know triggers ONE refresh (the platform rotated its keys), never more than once per
:data:`REFRESH_GAP` seconds (a flood of made-up key ids cannot make the tool hammer the platform).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpx
import jwt
import sqlalchemy as sa

from ..database import Database
from ..lms_tables import DEPLOYMENTS, PLATFORMS

JWKS_TTL = 3600.0
REFRESH_GAP = 10.0
HTTP_TIMEOUT = 10.0
LOOPBACK = ("127.0.0.1", "localhost", "::1")


class RegistryError(ValueError):
    """A registration is not valid (Chinese message naming the field)."""


@dataclass(frozen=True)
class Platform:
    id: int
    name: str
    issuer: str
    client_id: str
    auth_login_url: str
    auth_token_url: str
    jwks_url: str
    deployments: tuple[str, ...]
    auth_audience: str | None = None

    @property
    def token_audience(self) -> str:
        """The ``aud`` of the tool's client assertion: the token URL unless the platform names another."""
        return self.auth_audience or self.auth_token_url

    def origins(self) -> list[str]:
        """The web origins of this platform (the pages that may frame the tool's LTI pages)."""
        out = []
        for url in (self.issuer, self.auth_login_url):
            parts = urlsplit(url)
            if parts.scheme in ("http", "https") and parts.netloc:
                origin = f"{parts.scheme}://{parts.netloc}"
                if origin not in out:
                    out.append(origin)
        return out


def check_url(field: str, url: str) -> str:
    """``url`` if it is https (or http on this machine's loopback, for trying the tool out); else RegistryError."""
    parts = urlsplit(url or "")
    if parts.scheme == "https" and parts.hostname:
        return url
    if parts.scheme == "http" and parts.hostname in LOOPBACK:
        return url
    raise RegistryError(f"{field} 必须是 https:// 地址（只有本机回环地址可以用 http://）：{url!r}")


def add(db: Database, *, name: str, issuer: str, client_id: str, deployments: list[str], auth_login_url: str,
        auth_token_url: str, jwks_url: str, auth_audience: str | None = None, now: float | None = None) -> Platform:
    """Register a platform (RegistryError if a field is wrong or the issuer + client id is registered already)."""
    if not name.strip():
        raise RegistryError("缺少平台名称 --name")
    if not client_id.strip():
        raise RegistryError("缺少 --client-id")
    if not deployments or any(not d.strip() for d in deployments):
        raise RegistryError("至少需要一个非空的 --deployment-id")
    if issuer.startswith("http"):  # the issuer is a URL for every major LMS, but the spec allows any case-sensitive string
        check_url("--issuer", issuer)
    urls = {f: check_url(f, u) for f, u in (("--auth-login-url", auth_login_url), ("--auth-token-url", auth_token_url),
                                            ("--jwks-url", jwks_url))}
    with db.write() as con:
        if con.execute(sa.select(PLATFORMS.c.id).where((PLATFORMS.c.issuer == issuer) & (PLATFORMS.c.client_id == client_id))).first():
            raise RegistryError(f"平台 {issuer}（client id {client_id}）已经注册过了")
        pid = con.execute(sa.insert(PLATFORMS).values(
            name=name.strip(), issuer=issuer, client_id=client_id.strip(), auth_login_url=urls["--auth-login-url"],
            auth_token_url=urls["--auth-token-url"], jwks_url=urls["--jwks-url"], auth_audience=auth_audience or None,
            created_at=now or time.time())).inserted_primary_key[0]
        for d in dict.fromkeys(d.strip() for d in deployments):
            con.execute(sa.insert(DEPLOYMENTS).values(platform_id=pid, deployment_id=d))
    return get(db, pid)


def _platforms(db: Database, where=None) -> list[Platform]:
    with db.read() as con:
        q = sa.select(PLATFORMS).order_by(PLATFORMS.c.id)
        rows = con.execute(q.where(where) if where is not None else q).all()
        deps = con.execute(sa.select(DEPLOYMENTS)).all()
    return [Platform(r.id, r.name, r.issuer, r.client_id, r.auth_login_url, r.auth_token_url, r.jwks_url,
                     tuple(sorted(d.deployment_id for d in deps if d.platform_id == r.id)), r.auth_audience) for r in rows]


def all_platforms(db: Database) -> list[Platform]:
    return _platforms(db)


def get(db: Database, platform_id: int) -> Platform | None:
    found = _platforms(db, PLATFORMS.c.id == platform_id)
    return found[0] if found else None


def find(db: Database, issuer: str, client_id: str | None) -> Platform | None:
    """The platform of a login initiation (``client_id`` may be missing when the issuer has only one registration)."""
    found = _platforms(db, PLATFORMS.c.issuer == issuer)
    if client_id:
        found = [p for p in found if p.client_id == client_id]
    return found[0] if len(found) == 1 else None


def remove(db: Database, platform_id: int) -> bool:
    with db.write() as con:
        gone = con.execute(sa.delete(PLATFORMS).where(PLATFORMS.c.id == platform_id)).rowcount
        con.execute(sa.delete(DEPLOYMENTS).where(DEPLOYMENTS.c.platform_id == platform_id))
    return bool(gone)


class PlatformKeys:
    """The platforms' key sets, cached per process (thread-safe)."""

    def __init__(self, client: httpx.Client | None = None, clock=time.monotonic) -> None:
        self._client = client
        self.clock = clock
        self._cache: dict[str, tuple[float, jwt.PyJWKSet]] = {}
        self._last_refresh: dict[str, float] = {}
        self._lock = threading.Lock()

    def _fetch(self, url: str) -> jwt.PyJWKSet:
        client = self._client or httpx.Client(timeout=HTTP_TIMEOUT)
        try:
            response = client.get(url, headers={"Accept": "application/json"})
            response.raise_for_status()
            return jwt.PyJWKSet.from_dict(response.json())
        finally:
            if self._client is None:
                client.close()

    def key(self, platform: Platform, kid: str | None) -> jwt.PyJWK | None:
        """The platform's public key ``kid`` (None if the platform does not publish it, even after one refresh)."""
        with self._lock:
            now = self.clock()
            cached = self._cache.get(platform.jwks_url)
            if cached is None or now - cached[0] > JWKS_TTL:
                cached = (now, self._fetch(platform.jwks_url))
                self._cache[platform.jwks_url] = cached
                self._last_refresh[platform.jwks_url] = now
            found = _pick(cached[1], kid)
            if found is None and now - self._last_refresh.get(platform.jwks_url, -1e18) >= REFRESH_GAP:
                cached = (now, self._fetch(platform.jwks_url))
                self._cache[platform.jwks_url] = cached
                self._last_refresh[platform.jwks_url] = now
                found = _pick(cached[1], kid)
            return found


def _pick(keys: jwt.PyJWKSet, kid: str | None) -> jwt.PyJWK | None:
    if kid is None:
        return keys.keys[0] if len(keys.keys) == 1 else None
    return next((k for k in keys.keys if k.key_id == kid), None)
