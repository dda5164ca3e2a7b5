"""Deep linking: the signed response that puts an assignment (and its gradebook column) into the LMS course.

The verified request waits on the server (:func:`hold`, a ticket in the selection form, one hour) until the
instructor chooses an assignment; :func:`respond` then signs the ``LtiDeepLinkingResponse`` with the tool's
current key: one ``ltiResourceLink`` whose custom parameter ``assignment`` names the assignment (every later
launch of the link opens it) and whose ``lineItem`` (label, ``scoreMaximum``, ``resourceId``) makes the
platform create the gradebook column before the first submission.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from dataclasses import dataclass
from typing import Any

import jwt
import sqlalchemy as sa

from ..database import Database
from . import registry
from .keys import TOKEN_LIFETIME, ToolKeys
from .launch import DL, LTI, Launch, LaunchRefused
from .registry import Platform
from .tables import DEEP_LINKS

RESPONSE = "LtiDeepLinkingResponse"
HOLD_SECONDS = 3600


@dataclass(frozen=True)
class Request:
    platform: Platform
    deployment_id: str
    return_url: str
    data: str | None


def hold(db: Database, launch: Launch, now: float | None = None) -> str:
    """Keep a verified deep-linking request from an instructor; the ticket for the selection form."""
    if launch.role != "instructor":
        raise LaunchRefused("只有课程的教师可以添加作业", 403)
    url = launch.deep_linking.get("deep_link_return_url")
    if not isinstance(url, str) or not url.startswith(("https://", "http://")) or len(url) > 1000:
        raise LaunchRefused("深度链接请求没有合法的返回地址（deep_link_return_url）")
    data = launch.deep_linking.get("data")
    now = now or time.time()
    ticket = secrets.token_urlsafe(32)
    with db.write() as con:
        con.execute(sa.delete(DEEP_LINKS).where(DEEP_LINKS.c.expires < now))
        con.execute(sa.insert(DEEP_LINKS).values(token=hashlib.sha256(ticket.encode()).hexdigest(), platform_id=launch.platform.id,
                                                 deployment_id=launch.deployment_id, return_url=url,
                                                 data=data[:4000] if isinstance(data, str) else None, expires=now + HOLD_SECONDS))
    return ticket


def take(db: Database, ticket: str, now: float | None = None) -> Request:
    """The held request of ``ticket``, once (LaunchRefused if unknown, used or expired)."""
    digest = hashlib.sha256((ticket or "").encode()).hexdigest()
    with db.write() as con:
        row = con.execute(sa.select(DEEP_LINKS).where(DEEP_LINKS.c.token == digest)).first()
        con.execute(sa.delete(DEEP_LINKS).where(DEEP_LINKS.c.token == digest))
    platform = registry.get(db, row.platform_id) if row is not None else None
    if row is None or row.expires < (now or time.time()) or platform is None:
        raise LaunchRefused("选择页面已过期或已用过：请回到课程平台重新添加作业")
    return Request(platform, row.deployment_id, row.return_url, row.data)


def response_jwt(keys: ToolKeys, request: Request, items: list[dict[str, Any]], now: float | None = None) -> str:
    """The ``JWT`` form field posted back to ``deep_link_return_url`` (signed by the tool's current key)."""
    now = int(now or time.time())
    key = keys.current()
    claims: dict[str, Any] = {
        "iss": request.platform.client_id, "aud": [request.platform.issuer], "iat": now, "exp": now + TOKEN_LIFETIME,
        "nonce": secrets.token_urlsafe(16), LTI + "message_type": RESPONSE, LTI + "version": "1.3.0",
        LTI + "deployment_id": request.deployment_id, DL + "content_items": items,
    }
    if request.data is not None:
        claims[DL + "data"] = request.data
    return jwt.encode(claims, key.private_pem, algorithm="RS256", headers={"kid": key.kid})


def assignment_item(target_url: str, assignment: str, title: str, score_maximum: float) -> dict[str, Any]:
    """A resource link to ``assignment`` with its line item (label, scoreMaximum, resourceId)."""
    return {"type": "ltiResourceLink", "title": title, "url": target_url, "custom": {"assignment": assignment},
            "lineItem": {"label": title, "scoreMaximum": score_maximum, "resourceId": assignment, "tag": "autograder"}}
