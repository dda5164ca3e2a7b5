"""Assignment and Grade Services client: an OAuth 2 token by signed client assertion, line items, scores.

* :class:`Tokens` - the client-credentials grant with a ``private_key_jwt`` client assertion (RFC 7523) signed
  by the tool's current key (PyJWT); tokens are cached per (platform, scopes) until shortly before they expire;
* :func:`find_or_create_lineitem` - the line item of an assignment in a course: the one remembered, else the
  one on the platform whose ``resourceId`` is the assignment (so a crash between creating and remembering never
  makes a second one), else a new one (label, ``scoreMaximum``, ``resourceId``, ``tag``);
* :func:`post_score` - ``POST {lineitem}/scores``.

Every failure raises :class:`AgsError`, ``transient`` when retrying later may succeed (no connection, a
timeout, 429, 5xx, an expired token).
"""

from __future__ import annotations

import secrets
import threading
import time
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx
import jwt
import sqlalchemy as sa

from ..database import Database
from .keys import TOKEN_LIFETIME, ToolKeys
from .registry import Platform
from ..lms_tables import LINEITEMS, LINKS

SCOPE_LINEITEM = "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem"
SCOPE_SCORE = "https://purl.imsglobal.org/spec/lti-ags/scope/score"
SCOPE_NRPS = "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly"
LINEITEM_TYPE = "application/vnd.ims.lis.v2.lineitem+json"
CONTAINER_TYPE = "application/vnd.ims.lis.v2.lineitemcontainer+json"
SCORE_TYPE = "application/vnd.ims.lis.v1.score+json"
ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
TAG = "autograder"


class AgsError(Exception):
    def __init__(self, message: str, transient: bool, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.message, self.transient, self.retry_after = message, transient, retry_after


def client_assertion(keys: ToolKeys, platform: Platform, now: float | None = None) -> str:
    """The signed JWT that authenticates the tool at the platform's token endpoint."""
    now = int(now or time.time())
    key = keys.current()
    claims = {"iss": platform.client_id, "sub": platform.client_id, "aud": platform.token_audience,
              "iat": now, "exp": now + TOKEN_LIFETIME, "jti": secrets.token_urlsafe(16)}
    return jwt.encode(claims, key.private_pem, algorithm="RS256", headers={"kid": key.kid})


def _check(response: httpx.Response, what: str) -> httpx.Response:
    if response.status_code < 300:
        return response
    retry = response.headers.get("retry-after")
    wait = float(retry) if retry and retry.isdigit() else None
    transient = response.status_code in (401, 408, 425, 429) or response.status_code >= 500
    raise AgsError(f"{what}：课程平台回答 HTTP {response.status_code} {response.text[:200]}", transient, wait)


def _call(client: httpx.Client, method: str, url: str, what: str, **kw) -> httpx.Response:
    try:
        return _check(client.request(method, url, **kw), what)
    except httpx.HTTPError as exc:
        raise AgsError(f"{what}：无法连接课程平台（{type(exc).__name__}）", True) from None


class Tokens:
    """Access tokens of the platforms (cached until :data:`MARGIN` seconds before they expire)."""

    MARGIN = 30.0

    def __init__(self, keys: ToolKeys, client: httpx.Client, clock=time.time) -> None:
        self.keys, self.client, self.clock = keys, client, clock
        self._cache: dict[tuple[int, str], tuple[str, float]] = {}
        self._lock = threading.Lock()
        self.requested = 0  # how many tokens were asked for (the cache's effect, for tests and logs)

    def get(self, platform: Platform, scopes: list[str]) -> str:
        key = (platform.id, " ".join(sorted(scopes)))
        with self._lock:
            hit = self._cache.get(key)
            if hit and hit[1] - self.MARGIN > self.clock():
                return hit[0]
        form = {"grant_type": "client_credentials", "client_assertion_type": ASSERTION_TYPE,
                "client_assertion": client_assertion(self.keys, platform), "scope": key[1]}  # wall clock: the platform checks it
        response = _call(self.client, "POST", platform.auth_token_url, "取访问令牌", data=form)
        try:
            body = response.json()
            token, lifetime = str(body["access_token"]), float(body.get("expires_in", 3600))
        except (ValueError, KeyError, TypeError):
            raise AgsError("取访问令牌：课程平台的回答不是合法的令牌", True) from None
        with self._lock:
            self.requested += 1
            self._cache[key] = (token, self.clock() + lifetime)
        return token

    def forget(self, platform: Platform) -> None:
        with self._lock:
            for k in [k for k in self._cache if k[0] == platform.id]:
                del self._cache[k]


def _auth(token: str, accept: str | None = None, content: str | None = None) -> dict[str, str]:
    headers = {"Authorization": f"Bearer {token}"}
    if accept:
        headers["Accept"] = accept
    if content:
        headers["Content-Type"] = content
    return headers


def with_path(url: str, suffix: str) -> str:
    """``url`` with ``suffix`` appended to its path (line item URLs may carry a query string)."""
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=parts.path.rstrip("/") + suffix))


def find_or_create_lineitem(db: Database, client: httpx.Client, token: str, platform: Platform, context_id: str,
                            lineitems_url: str, assignment: str, label: str, score_maximum: float) -> str:
    key = (LINEITEMS.c.platform_id == platform.id) & (LINEITEMS.c.context_id == context_id) & (LINEITEMS.c.assignment == assignment)
    with db.read() as con:
        url = con.execute(sa.select(LINEITEMS.c.url).where(key)).scalar()
    if url:
        return url
    with db.pair_lock(f"lti-lineitem:{platform.id}:{context_id}:{assignment}"):
        with db.read() as con:
            url = con.execute(sa.select(LINEITEMS.c.url).where(key)).scalar()
        if url:
            return url
        listed = _call(client, "GET", lineitems_url, "查找成绩列", params={"resource_id": assignment},
                       headers=_auth(token, CONTAINER_TYPE)).json()
        found = [li for li in listed if isinstance(li, dict) and li.get("resourceId") == assignment and isinstance(li.get("id"), str)] \
            if isinstance(listed, list) else []
        if found:
            url = found[0]["id"]
        else:
            with db.read() as con:  # a column is created only where the assignment is linked (lti_links)
                linked = con.execute(sa.select(LINKS.c.assignment).where(
                    (LINKS.c.platform_id == platform.id) & (LINKS.c.context_id == context_id) & (LINKS.c.assignment == assignment))).first()
            if linked is None:
                raise AgsError(f"作业 {assignment} 没有链接到课程平台上的这门课程，不为它创建成绩列", False)
            body: dict[str, Any] = {"label": label, "scoreMaximum": score_maximum, "resourceId": assignment, "tag": TAG}
            made = _call(client, "POST", lineitems_url, "创建成绩列", json=body, headers=_auth(token, LINEITEM_TYPE, LINEITEM_TYPE)).json()
            if not isinstance(made, dict) or not isinstance(made.get("id"), str):
                raise AgsError("创建成绩列：课程平台的回答没有 id", True)
            url = made["id"]
        with db.write() as con:
            con.execute(sa.insert(LINEITEMS).values(platform_id=platform.id, context_id=context_id, assignment=assignment, url=url))
        return url


def post_score(client: httpx.Client, token: str, lineitem_url: str, score: dict[str, Any]) -> None:
    _call(client, "POST", with_path(lineitem_url, "/scores"), "回传成绩", json=score, headers=_auth(token, content=SCORE_TYPE))
