"""Deep linking: the signed response that puts an assignment (and its gradebook column) into the LMS course."""

from __future__ import annotations

import secrets
import time
from typing import Any

import jwt

from .keys import TOKEN_LIFETIME, ToolKeys
from .launch import DL, LTI, Launch

RESPONSE = "LtiDeepLinkingResponse"


def response_jwt(keys: ToolKeys, launch: Launch, items: list[dict[str, Any]], now: float | None = None) -> str:
    """The ``JWT`` form field posted back to ``deep_link_return_url`` (signed by the tool's current key)."""
    now = int(now or time.time())
    key = keys.current()
    claims: dict[str, Any] = {
        "iss": launch.platform.client_id, "aud": [launch.platform.issuer], "iat": now, "exp": now + TOKEN_LIFETIME,
        "nonce": secrets.token_urlsafe(16), LTI + "message_type": RESPONSE, LTI + "version": "1.3.0",
        LTI + "deployment_id": launch.deployment_id, DL + "content_items": items,
    }
    data = launch.deep_linking.get("data")
    if isinstance(data, str):
        claims[DL + "data"] = data
    return jwt.encode(claims, key.private_pem, algorithm="RS256", headers={"kid": key.kid})


def assignment_item(target_url: str, assignment: str, title: str, score_maximum: float) -> dict[str, Any]:
    """A resource link to ``assignment`` with its line item (label, scoreMaximum, resourceId)."""
    return {"type": "ltiResourceLink", "title": title, "url": target_url, "custom": {"assignment": assignment},
            "lineItem": {"label": title, "scoreMaximum": score_maximum, "resourceId": assignment, "tag": "autograder"}}
