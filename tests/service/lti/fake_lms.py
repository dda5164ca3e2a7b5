"""The tests' fake LTI 1.3 platform: the product's demo LMS (:class:`DemoPlatform`) plus what only tests need.

It adds outages (``mode``: ``"down"`` answers 503, ``"busy"`` 429 with Retry-After, on the token and service
endpoints), a Moodle-shaped launch (``flavour``), key rotation and signing with any key, an in-process view of the
tool's key set (``tool_jwks``), a token audience of its own (``audience``, as Brightspace), NRPS members other
than the enrolments (``members``), what a deep-linking request accepts and carries (``accept_types``,
``deep_link_data``), and logs of what it verified or refused.  It uses only the names the demo module exports.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import jwt
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from autograder.commands.lti_demo import INSTRUCTOR, LEARNER, LIS, TEACHING_ASSISTANT, DemoPlatform, User, new_key

__all__ = ["FakePlatform", "User", "LIS", "LEARNER", "INSTRUCTOR", "TEACHING_ASSISTANT", "new_key"]

LTI = "https://purl.imsglobal.org/spec/lti/claim/"


@dataclass
class FakePlatform(DemoPlatform):
    """A :class:`DemoPlatform` whose behaviour a test sets through the fields below."""

    flavour: str = "canvas"  # "canvas" | "moodle": the shape of the launch payloads
    mode: str = "up"  # "up" | "down" (503) | "busy" (429)
    members: dict[str, list[dict]] = field(default_factory=dict)  # context -> NRPS members (else its enrolments)
    assertions: list[dict] = field(default_factory=list)  # verified client assertions
    deep_link_responses: list[dict] = field(default_factory=list)  # verified deep-linking responses
    accept_types: list[str] | None = field(default_factory=lambda: ["ltiResourceLink"])  # of a deep-linking request
    deep_link_data: Any = None  # the deep-linking request's ``data`` (None: an opaque string, as Canvas sends)
    refused_requests: int = 0  # authorization and token requests refused
    audience: str | None = None  # the aud it requires in client assertions (Brightspace: not the token URL)
    tool_jwks: Any = None  # in-process tests: a callable giving the tool's key set (else fetched from the tool)

    @property
    def name(self) -> str:
        return f"假平台 {self.flavour}"

    def registration(self) -> dict[str, Any]:
        return super().registration() | {"auth_audience": self.audience}

    def cli_args(self) -> list[str]:
        """The registration as ``autograder lti add-platform`` options."""
        return ["--name", self.name, "--issuer", self.issuer, "--client-id", self.client_id,
                "--deployment-id", self.deployment_id, "--auth-login-url", self.auth_url, "--auth-token-url", self.token_url,
                "--jwks-url", self.jwks_url]

    # ---- keys

    def rotate(self) -> str:
        """A new signing key (the old ones stay published); its key id."""
        self.keys.append(new_key())
        return self.keys[-1][0]

    def sign(self, claims: dict, kid: str | None = None, pem: bytes | None = None) -> str:
        """``claims`` signed with key ``kid`` (default the newest), or with ``pem`` under that key's id (a forgery)."""
        k = self.keys[-1] if kid is None else next(k for k in self.keys if k[0] == kid)
        return jwt.encode(claims, pem or k[1], algorithm="RS256", headers={"kid": kid or k[0]})

    def tool_key(self, kid: str) -> Any:
        if self.tool_jwks is None:
            return super().tool_key(kid)
        return jwt.PyJWKSet.from_dict(self.tool_jwks())[kid]

    # ---- launches

    def deep_linking_settings(self, context: str) -> dict[str, Any]:
        settings = super().deep_linking_settings(context) | {"accept_types": self.accept_types}
        if self.deep_link_data is not None:
            settings["data"] = self.deep_link_data
        return settings

    def product_claims(self, user, context: str) -> dict[str, Any]:
        if self.flavour == "canvas":
            return super().product_claims(user, context)
        return {  # Moodle sends aud only (no azp)
            LTI + "lis": {"person_sourcedid": user.sourcedid, "course_section_sourcedid": ""},
            LTI + "tool_platform": {"product_family_code": "moodle", "version": "2024100700", "guid": self.host,
                                    "name": "假 Moodle", "description": "Moodle"},
            LTI + "launch_presentation": {"locale": "zh_cn", "document_target": "iframe",
                                          "return_url": f"{self.base}/mod/lti/return.php?course={context}"},
            LTI + "ext": {"user_username": user.sourcedid or user.sub, "lms": "moodle-2"},
        }

    def members_of(self, ctx: str) -> list[dict]:
        return self.members.get(ctx) or super().members_of(ctx)

    # ---- what it checks, and its outages

    def assertion_audience(self) -> str:
        return self.audience or self.token_url

    def verify_assertion(self, form: FormData) -> dict:
        claims = super().verify_assertion(form)
        self.assertions.append(claims)
        return claims

    def verify_deep_link(self, token: str) -> dict:
        claims = super().verify_deep_link(token)
        self.deep_link_responses.append(claims)
        return claims

    def unavailable(self) -> Response | None:
        if self.mode == "down":
            return JSONResponse({"error": "maintenance"}, status_code=503)
        if self.mode == "busy":
            return JSONResponse({"error": "rate limited"}, status_code=429, headers={"Retry-After": "1"})
        return None

    async def serve_auth(self, request: Request) -> Response:
        response = await super().serve_auth(request)
        if response.status_code == 400:
            self.refused_requests += 1
        return response

    async def serve_token(self, request: Request) -> Response:
        response = await super().serve_token(request)
        if response.status_code == 401:
            self.refused_requests += 1
        return response

