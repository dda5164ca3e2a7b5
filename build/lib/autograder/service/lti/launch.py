"""LTI 1.3 launches: the OIDC login initiation and the validation of the platform's ``id_token``.

A launch is two requests from the browser.  The platform first sends it to ``/lti/login`` (issuer, login
hint); :func:`begin` finds the registered platform, and stores a fresh ``state`` and ``nonce`` with the hash of
a launch cookie of this browser.  The browser then posts the platform's signed ``id_token`` and the ``state``
to ``/lti/launch``; :func:`validate` accepts it only if, in this order:

1. the state exists, is younger than :data:`STATE_SECONDS`, belongs to this browser's launch cookie, and is
   consumed (deleted) by this launch;
2. the token's signature verifies with the state's platform's published key of the token's ``kid`` (PyJWT;
   the key set is refreshed once for an unknown ``kid``), with RS256 only;
3. ``iss`` is the platform's issuer, ``aud`` contains its client id (and ``azp``, required when there are
   several audiences, is the client id), ``exp``, ``iat`` (and ``nbf``) hold with :data:`LEEWAY` seconds of
   clock skew, and ``iat`` is not older than :data:`MAX_AGE`;
4. ``nonce`` is the state's nonce, and has never been used before;
5. the deployment id is registered for the platform; the LTI version is ``1.3.0``; the message type is a
   resource-link or deep-linking request with the claims that type needs.

Every refusal raises :class:`LaunchRefused` with a Chinese message; nothing is written but the consumed
state (a refused launch creates no account).  A verified launch grants nothing by itself: the role its token
names (:func:`context_role`) holds only in the course here its LMS course is bound to (:mod:`.bindings`).
"""

from __future__ import annotations

import hashlib
import secrets
import time
from dataclasses import dataclass, field
from typing import Any

import httpx
import jwt
import sqlalchemy as sa

from ..database import Database
from ..errors import ServiceError
from ..roles import Role
from . import registry
from .registry import Platform, PlatformKeys
from ..lms_tables import NONCES, STATES

STATE_SECONDS = 600
#: Login initiations one client address may have waiting at once (each stores a state row until it is used or expires):
#: an outsider cannot fill the database, while a class behind one school NAT launching together stays far below it.
STATES_PER_ADDRESS = 500
LEEWAY = 60  # seconds of clock skew allowed between the LMS and this service
MAX_AGE = 3600  # a token issued longer ago than this is refused even if its exp is later
MAX_TOKEN = 64 * 1024

LTI = "https://purl.imsglobal.org/spec/lti/claim/"
DL = "https://purl.imsglobal.org/spec/lti-dl/claim/"
AGS_CLAIM = "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint"
NRPS_CLAIM = "https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice"
RESOURCE_LINK = "LtiResourceLinkRequest"
DEEP_LINKING = "LtiDeepLinkingRequest"

MEMBERSHIP = "http://purl.imsglobal.org/vocab/lis/v2/membership"
#: Context roles (LTI 1.3 allows the simple names for them too).  Institution and system roles
#: (``.../institution/person#Instructor``) describe the person, not their part in this course: they count for nothing.
INSTRUCTOR_ROLES = {MEMBERSHIP + "#Instructor", MEMBERSHIP + "#Administrator", "Instructor", "Administrator"}
TA_ROLES = {MEMBERSHIP + "/Instructor#TeachingAssistant", MEMBERSHIP + "#Instructor#TeachingAssistant",
            MEMBERSHIP + "/Mentor#TeachingAssistant", MEMBERSHIP + "#Mentor#TeachingAssistant", "TeachingAssistant"}
LEARNER_ROLES = {MEMBERSHIP + "#Learner", MEMBERSHIP + "/Learner#Learner", "Learner"}


class LaunchRefused(ServiceError):
    """A login or launch the tool does not accept (Chinese message for the person), with its HTTP ``status``:
    a domain error like the others, shown by the web layer's error mapping on the LTI refusal page."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class LoginRedirect:
    url: str
    params: dict[str, str]
    platform: Platform


@dataclass(frozen=True)
class Launch:
    """A verified launch: the platform, the token's claims and what the tool makes of them."""

    platform: Platform
    claims: dict[str, Any]
    message_type: str
    deployment_id: str
    sub: str
    role: Role | None  # what the token's context roles make of the person here (:func:`context_role`)
    name: str = ""
    email: str = ""
    sourcedid: str = ""
    context_id: str = ""
    context_title: str = ""
    resource_link_id: str = ""
    custom: dict[str, Any] = field(default_factory=dict)

    @property
    def ags(self) -> dict[str, Any]:
        value = self.claims.get(AGS_CLAIM)
        return value if isinstance(value, dict) else {}

    @property
    def nrps(self) -> dict[str, Any]:
        value = self.claims.get(NRPS_CLAIM)
        return value if isinstance(value, dict) else {}

    @property
    def deep_linking(self) -> dict[str, Any]:
        value = self.claims.get(DL + "deep_linking_settings")
        return value if isinstance(value, dict) else {}


def browser_hash(cookie_value: str) -> str:
    return hashlib.sha256(("lti-browser:" + cookie_value).encode()).hexdigest()


def begin(db: Database, params: dict[str, str], redirect_uri: str, browser: str, now: float | None = None, *,
          address: str = "") -> LoginRedirect:
    """The authorization request for a third-party initiated login (``params``: the login request's fields) from
    client ``address`` (at most :data:`STATES_PER_ADDRESS` waiting at once)."""
    issuer, hint = params.get("iss", ""), params.get("login_hint", "")
    if not issuer or not hint:
        raise LaunchRefused("登录请求缺少 iss 或 login_hint：请从课程平台（LMS）中打开本作业")
    platform = registry.find(db, issuer, params.get("client_id"))
    if platform is None:
        raise LaunchRefused(f"课程平台 {issuer[:200]} 没有在本服务注册（或 client_id 不符）；请联系管理员", 403)
    deployment = params.get("lti_deployment_id")
    if deployment and deployment not in platform.deployments:
        raise LaunchRefused(f"部署 {deployment[:100]} 没有在本服务注册；请联系管理员", 403)
    state, nonce = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
    now = now or time.time()
    with db.write() as con:
        con.execute(sa.delete(STATES).where(STATES.c.created_at < now - STATE_SECONDS))
        waiting = con.execute(sa.select(sa.func.count()).select_from(STATES).where(STATES.c.address == address[:64])).scalar()
        if waiting >= STATES_PER_ADDRESS:
            raise LaunchRefused("从这个网络地址发起的登录太多，请几分钟后再从课程平台打开", 429)
        con.execute(sa.insert(STATES).values(state=state, nonce=nonce, platform_id=platform.id, browser=browser_hash(browser),
                                             address=address[:64], created_at=now))
    out = {"scope": "openid", "response_type": "id_token", "response_mode": "form_post", "prompt": "none",
           "client_id": platform.client_id, "redirect_uri": redirect_uri, "login_hint": hint, "state": state, "nonce": nonce}
    if params.get("lti_message_hint"):
        out["lti_message_hint"] = params["lti_message_hint"]
    return LoginRedirect(platform.auth_login_url, out, platform)


def _consume_state(db: Database, state: str, browser: str | None, now: float):
    if not state or len(state) > 64:
        raise LaunchRefused("启动请求缺少 state：请回到课程平台重新打开本作业")
    with db.write() as con:
        row = con.execute(sa.select(STATES).where(STATES.c.state == state)).first()
        if row is None:
            raise LaunchRefused("启动请求的 state 无效或已用过：请回到课程平台重新打开本作业")
        if browser is None or not secrets.compare_digest(row.browser, browser_hash(browser)):
            # a state started in another browser: keep it for its own browser, refuse this one
            raise LaunchRefused("这次启动不是从这个浏览器发起的（state 与浏览器不符）：请回到课程平台重新打开本作业", 403)
        con.execute(sa.delete(STATES).where(STATES.c.state == state))
    if now - row.created_at > STATE_SECONDS:
        raise LaunchRefused("启动请求已过期：请回到课程平台重新打开本作业")
    return row


def validate(db: Database, keys: PlatformKeys, id_token: str, state: str, browser: str | None,
             now: float | None = None) -> Launch:
    """The verified launch of a posted ``id_token`` (see the module's docstring); LaunchRefused otherwise."""
    now = now or time.time()
    if not id_token or len(id_token) > MAX_TOKEN:
        raise LaunchRefused("启动请求缺少 id_token 或过大")
    row = _consume_state(db, state, browser, now)
    platform = registry.get(db, row.platform_id)
    if platform is None:
        raise LaunchRefused("这个课程平台已被移除；请联系管理员", 403)
    try:
        header = jwt.get_unverified_header(id_token)
    except jwt.PyJWTError:
        raise LaunchRefused("id_token 不是合法的 JWT") from None
    if header.get("alg") != "RS256":
        raise LaunchRefused(f"id_token 的签名算法 {str(header.get('alg'))[:20]} 不被接受（只接受 RS256）")
    try:
        key = keys.key(platform, header.get("kid"))
    except (httpx.HTTPError, ValueError, jwt.PyJWTError) as exc:
        raise LaunchRefused(f"无法取得课程平台的公钥（{type(exc).__name__}）；请稍后再试", 502) from None
    if key is None:
        raise LaunchRefused("id_token 的签名密钥（kid）不是这个课程平台公布的密钥", 403)
    claims = _decode(id_token, key, platform, now)
    if claims.get("azp") is not None and claims["azp"] != platform.client_id:
        raise LaunchRefused("id_token 的 azp 不是本工具", 403)
    if isinstance(claims.get("aud"), list) and len(claims["aud"]) > 1 and "azp" not in claims:
        raise LaunchRefused("id_token 有多个 aud 却没有 azp", 403)
    if now - float(claims["iat"]) > MAX_AGE:
        raise LaunchRefused("id_token 签发得太早，已不能使用")
    nonce = claims.get("nonce")
    if not isinstance(nonce, str) or not secrets.compare_digest(nonce, row.nonce):
        raise LaunchRefused("id_token 的 nonce 与这次登录不符（重放的启动）", 403)
    with db.write() as con:
        if con.execute(sa.select(NONCES.c.nonce).where(NONCES.c.nonce == nonce)).first():
            raise LaunchRefused("这个 id_token 已经用过（重放的启动）", 403)
        con.execute(sa.delete(NONCES).where(NONCES.c.used_at < now - MAX_AGE - LEEWAY))
        con.execute(sa.insert(NONCES).values(nonce=nonce, used_at=now))
    return launch_of(platform, claims)


def _decode(token: str, key: jwt.PyJWK, platform: Platform, now: float) -> dict[str, Any]:
    try:
        return jwt.decode(token, key, algorithms=["RS256"], audience=platform.client_id, issuer=platform.issuer,
                          leeway=LEEWAY, options={"require": ["iss", "aud", "exp", "iat", "sub", "nonce"]})
    except jwt.ExpiredSignatureError:
        raise LaunchRefused("id_token 已过期：请回到课程平台重新打开本作业") from None
    except jwt.ImmatureSignatureError:
        raise LaunchRefused("id_token 的签发时间在未来（课程平台与本服务的时钟相差太多）") from None
    except jwt.InvalidAudienceError:
        raise LaunchRefused("id_token 的 aud 不是本工具（client id 不符）", 403) from None
    except jwt.InvalidIssuerError:
        raise LaunchRefused("id_token 的 iss 不是注册的课程平台", 403) from None
    except jwt.InvalidSignatureError:
        raise LaunchRefused("id_token 的签名不正确", 403) from None
    except jwt.MissingRequiredClaimError as exc:
        raise LaunchRefused(f"id_token 缺少声明 {exc.claim}") from None
    except jwt.PyJWTError as exc:
        raise LaunchRefused(f"id_token 无效（{type(exc).__name__}）", 403) from None


def context_role(roles: Any) -> Role | None:
    """The course role a launch's verified context roles give: a teaching assistant's sub-role first (Canvas
    sends it beside ``Instructor``), then ``Instructor`` or the context's ``Administrator``, then ``Learner``;
    None for anyone else (an observer, a content developer, a launch without context roles)."""
    if not isinstance(roles, list):
        return None
    names = {r for r in roles if isinstance(r, str)}
    if names & TA_ROLES:
        return Role.TA
    if names & INSTRUCTOR_ROLES:
        return Role.INSTRUCTOR
    if names & LEARNER_ROLES:
        return Role.STUDENT
    return None


def _text(value: Any, limit: int = 200) -> str:
    return value[:limit] if isinstance(value, str) else ""


def launch_of(platform: Platform, claims: dict[str, Any]) -> Launch:
    """What a verified token's ``claims`` say (LaunchRefused for a message this tool does not take)."""
    if claims.get(LTI + "version") != "1.3.0":
        raise LaunchRefused(f"LTI 版本 {str(claims.get(LTI + 'version'))[:20]} 不被支持（需要 1.3.0）")
    kind = claims.get(LTI + "message_type")
    if kind not in (RESOURCE_LINK, DEEP_LINKING):
        raise LaunchRefused(f"不支持的消息类型 {str(kind)[:60]}")
    deployment = claims.get(LTI + "deployment_id")
    if not isinstance(deployment, str) or deployment not in platform.deployments:
        raise LaunchRefused(f"部署 {str(deployment)[:100]} 没有在本服务注册；请联系管理员", 403)
    sub = claims.get("sub")
    if not isinstance(sub, str) or not sub or len(sub) > 255:
        raise LaunchRefused("id_token 的 sub 缺失（匿名启动不被支持）")
    context = claims.get(LTI + "context") if isinstance(claims.get(LTI + "context"), dict) else {}
    link = claims.get(LTI + "resource_link") if isinstance(claims.get(LTI + "resource_link"), dict) else {}
    if kind == RESOURCE_LINK and not _text(link.get("id"), 255):
        raise LaunchRefused("资源链接启动缺少 resource_link.id")
    if kind == DEEP_LINKING and not isinstance(claims.get(DL + "deep_linking_settings"), dict):
        raise LaunchRefused("深度链接请求缺少 deep_linking_settings")
    lis = claims.get("https://purl.imsglobal.org/spec/lti/claim/lis")
    custom = claims.get(LTI + "custom")
    name = _text(claims.get("name")) or " ".join(x for x in (_text(claims.get("given_name")), _text(claims.get("family_name"))) if x)
    return Launch(platform=platform, claims=claims, message_type=kind, deployment_id=deployment, sub=sub,
                  role=context_role(claims.get(LTI + "roles")), name=name, email=_text(claims.get("email")),
                  sourcedid=_text(lis.get("person_sourcedid"), 100) if isinstance(lis, dict) else "",
                  context_id=_text(context.get("id"), 255), context_title=_text(context.get("title"), 400),
                  resource_link_id=_text(link.get("id"), 255), custom=custom if isinstance(custom, dict) else {})
