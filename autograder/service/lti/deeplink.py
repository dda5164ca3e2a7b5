"""Deep linking: the signed response that puts an assignment (and its gradebook column) into the LMS course.

The verified request waits on the server (:func:`.tickets.hold`, a ticket in the selection form, one hour) until
the instructor chooses an assignment; :func:`response_jwt` then signs the ``LtiDeepLinkingResponse`` with the
tool's current key: one ``ltiResourceLink`` whose custom parameter ``assignment`` names the assignment (every
later launch of the link opens it) and whose ``lineItem`` (label, ``scoreMaximum``, ``resourceId``) makes the
platform create the gradebook column before the first submission.  The platform's ``data`` goes back exactly as
it came, whatever its JSON type (the specification requires it unchanged; some platform libraries send an object).
A request whose ``accept_types`` has no ``ltiResourceLink`` (a rich-text editor's placement takes links, HTML or
images) is refused before the instructor chooses: the platform would refuse the response.
"""

from __future__ import annotations

import json
import secrets
import time
from typing import Any

import jwt

from .keys import TOKEN_LIFETIME, ToolKeys
from .launch import DL, LTI, Launch, LaunchRefused

RESPONSE = "LtiDeepLinkingResponse"
ITEM_TYPE = "ltiResourceLink"  # an assignment, launched by its link
LINK_TYPE = "link"  # a plain link: the assignment opened in the student's JupyterLab (:mod:`..hub`)
MAX_DATA = 4000  # characters of the platform's ``data`` as JSON


def return_url(launch: Launch) -> str:
    """Where the response goes (LaunchRefused when the request names no usable address)."""
    url = launch.deep_linking.get("deep_link_return_url")
    if not isinstance(url, str) or not url.startswith(("https://", "http://")) or len(url) > 1000:
        raise LaunchRefused("深度链接请求没有合法的返回地址（deep_link_return_url）")
    return url


def check_accepts(launch: Launch) -> None:
    """LaunchRefused unless the request accepts an LTI resource link (its ``accept_types``, required by the
    specification; a request without it is taken to accept one, as every platform's assignment placement does)."""
    accepted = launch.deep_linking.get("accept_types")
    if isinstance(accepted, list) and ITEM_TYPE not in accepted:
        kinds = "、".join(str(t)[:40] for t in accepted[:8]) or "（无）"
        raise LaunchRefused(f"课程平台在这个位置只接受这些内容：{kinds}，不接受作业链接（{ITEM_TYPE}），所以这里不能添加作业。"
                            "请从课程平台添加作业或活动（外部工具）的地方打开本工具。")


def check_data(launch: Launch) -> None:
    """A ``data`` too large to keep is refused rather than cut (it must go back unchanged)."""
    if "data" in launch.deep_linking and len(json.dumps(launch.deep_linking["data"], ensure_ascii=False)) > MAX_DATA:
        raise LaunchRefused("深度链接请求的 data 过大")


def response_jwt(keys: ToolKeys, launch: Launch, items: list[dict[str, Any]], now: float | None = None) -> str:
    """The ``JWT`` form field posted back to the request's ``deep_link_return_url`` (signed by the tool's current key)."""
    now = int(now or time.time())
    key = keys.current()
    claims: dict[str, Any] = {
        "iss": launch.platform.client_id, "aud": [launch.platform.issuer], "iat": now, "exp": now + TOKEN_LIFETIME,
        "nonce": secrets.token_urlsafe(16), LTI + "message_type": RESPONSE, LTI + "version": "1.3.0",
        LTI + "deployment_id": launch.deployment_id, DL + "content_items": items,
    }
    if "data" in launch.deep_linking:
        claims[DL + "data"] = launch.deep_linking["data"]
    return jwt.encode(claims, key.private_pem, algorithm="RS256", headers={"kid": key.kid})


def assignment_item(target_url: str, assignment: str, title: str, score_maximum: float) -> dict[str, Any]:
    """A resource link to ``assignment`` with its line item (label, scoreMaximum, resourceId)."""
    return {"type": ITEM_TYPE, "title": title, "url": target_url, "custom": {"assignment": assignment},
            "lineItem": {"label": title, "scoreMaximum": score_maximum, "resourceId": assignment, "tag": "autograder"}}


def link_item(url: str, title: str) -> dict[str, Any]:
    """A plain link (content item ``link``): no launch and no line item, e.g. an assignment opened in JupyterHub."""
    return {"type": LINK_TYPE, "title": title, "url": url}
