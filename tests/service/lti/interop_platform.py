"""An LTI 1.3 platform that nobody on this project wrote: the package ``lti1p3platform``, served on loopback.

The package is the platform's logic - the registration, the OIDC login initiation, the signed ``id_token`` and
its auto-submitting form (its own template), the deep-linking request and its verification of the tool's
response against the tool's published key set, the token endpoint's verification of the tool's client assertion,
the AGS and NRPS endpoints (their bearer-token checks, media types, ``Link`` paging).  What is here is only what
its framework adapters would be for Starlette (it ships Django and FastAPI ones): the routes, a request object
for its generic :class:`lti1p3platform.request.Request`, the mapping of its :class:`~lti1p3platform.response.Response`
to HTTP (as its Django adapter's ``wrap_json_resp`` does), and the storage its abstract services leave to the
platform (people, line items, scores, members: plain lists).

Routes: ``/start`` (a person opens a link or the deep-linking picker: the library's login initiation),
``/auth`` (its launch), ``/jwks``, ``/token``, ``/deep_link_return``, ``/{context}/lineitems[/{id}[/scores]]``,
``/{context}/memberships``.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

import jwt
import uvicorn
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from lti1p3platform import exceptions as lib_errors
from lti1p3platform.constants import LTI_DEEP_LINKING_ACCEPTED_TYPES
from lti1p3platform.framework.templates import template
from lti1p3platform.ltiplatform import LTI1P3PlatformConfAbstract
from lti1p3platform.membership import Context
from lti1p3platform.message_launch import LTIAdvantageMessageLaunchAbstract
from lti1p3platform.oidc_login import OIDCLoginAbstract
from lti1p3platform.registration import Registration
from lti1p3platform.request import Request as LibraryRequest
from lti1p3platform.request import TRequest
from lti1p3platform.response import Response as LibraryResponse
from lti1p3platform.response import generate_next_link
from lti1p3platform.score import UpdateScoreStatus
from lti1p3platform.service_connector import AssignmentsGradesService, NamesRoleProvisioningService, TPage
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from ..server import free_port
from .fake_lms import User

CONTEXT_TYPE = "http://purl.imsglobal.org/vocab/lis/v2/course#CourseOffering"


def new_pem() -> str:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption()).decode()


def public_pem(private: str) -> str:
    key = serialization.load_pem_private_key(private.encode(), password=None)
    return key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode()


class Config(LTI1P3PlatformConfAbstract):
    """The library's platform configuration: one registration (the tool)."""

    def init_platform_config(self, **kwargs: Any) -> None:
        self._registration = kwargs["registration"]

    def get_registration_by_params(self, **kwargs: Any) -> Registration:
        return self._registration


class GlueRequest(LibraryRequest):
    """The library's generic request, built from what :func:`read` took from Starlette's."""

    def build_metadata(self, request: TRequest) -> TRequest:
        return request


async def read(request: Request) -> GlueRequest:
    body = await request.body()
    ctype = request.headers.get("content-type", "")
    form = {k: v for k, v in (await request.form()).items() if isinstance(v, str)} if "form" in ctype else {}
    # Query values that are numbers go to the library as ints: its paging does ``page + 1`` on the ``page`` it is
    # given (service_connector: handle_get_members, handle_get_lineitems): with its own Django adapter, which passes
    # the query's strings, the request for the second page fails with a TypeError whenever a third page exists.
    query = {k: int(v) if k in ("page", "limit") and v.isdigit() else v for k, v in request.query_params.items()}
    return GlueRequest({"method": request.method, "form_data": form, "get_data": query, "headers": request.headers,
                        "content_type": ctype, "path": request.url.path,
                        "json": json.loads(body) if body and "json" in ctype else None})


def answer(resp: LibraryResponse) -> Response:
    """The library's service response over HTTP, as its Django adapter's ``wrap_json_resp`` makes it."""
    if not 200 <= resp.code < 300:
        return JSONResponse({"error": resp.message}, status_code=resp.code)
    if resp.code == 204:
        return Response(status_code=204)
    result = resp.result
    data = result["content"] if isinstance(result, dict) and "content" in result else result
    headers = {"Link": generate_next_link(result["next"])} if isinstance(result, dict) and result.get("next") else {}
    return Response(json.dumps(data), status_code=resp.code, media_type=resp.media_type, headers=headers)


class Login(OIDCLoginAbstract):
    def set_lti_message_hint(self, **kwargs: Any) -> None:
        self._lti_message_hint = kwargs["hint"]

    def get_redirect(self, url: str) -> Response:
        return RedirectResponse(url, status_code=302)


class Launch(LTIAdvantageMessageLaunchAbstract):
    """The library's launch; :meth:`prepare_launch` says who launches what, from the login's hints."""

    def __init__(self, request: GlueRequest, lms: "LibraryPlatform") -> None:
        super().__init__(request, lms.config)
        self.lms = lms

    def prepare_launch(self, preflight_response: dict[str, Any]) -> None:
        # the person is the login hint's (the library leaves who is signed in to the platform; here, nobody is)
        person = self.lms.people[preflight_response["login_hint"]]
        hint = json.loads(preflight_response["lti_message_hint"])
        context = hint["context"]
        self.set_user_data(person.sub, self.lms.enrolments[context][preflight_response["login_hint"]], person.name, person.email)
        self.set_launch_context_claim(context, [CONTEXT_TYPE], self.lms.contexts[context], context)
        if hint.get("deep_linking"):
            accepted = self.lms.accept_types or sorted(LTI_DEEP_LINKING_ACCEPTED_TYPES)
            self.set_dl(self.lms.url("/deep_link_return"), title="添加作业", accept_types=set(accepted),
                        extra_data=self.lms.deep_link_data)
            self.lms.config.set_accepted_deeplinking_types(accepted)  # what its response check accepts
        else:
            self.set_resource_link_claim(hint["link"], title=hint["link"])
            self.set_custom_parameters_claim(self.lms.custom[hint["link"]])
        self.set_ags(self.lms.url(f"/{context}/lineitems"))
        self.set_nrps(self.lms.url(f"/{context}/memberships") + self.lms.memberships_query)

    def render_launch_form(self, launch_data: dict[str, Any], **kwargs: Any) -> Response:
        return HTMLResponse(template.render(launch_data))


class Gradebook(AssignmentsGradesService):
    """The library's AGS endpoints of one context over the platform's line items and scores."""

    def __init__(self, request: GlueRequest, lms: "LibraryPlatform", context: str) -> None:
        super().__init__(request, lms.config, lms.url(f"/{context}/lineitems"))
        self.lms, self.context = lms, context

    def _items(self) -> list[dict]:
        return self.lms.lineitems.setdefault(self.context, [])

    def _item(self, line_item_id: str) -> dict:
        found = [li for li in self._items() if li["id"] == f"{self.ags.lineitems_url}/{line_item_id}"]
        if not found:
            raise lib_errors.LineItemNotFoundException(line_item_id)
        return found[0]

    def find_lineitems(self, page: int = 1, limit: int | None = None, line_item_id: str | None = None,
                       resource_link_id: str | None = None, resource_id: str | None = None, tag: str | None = None) -> TPage:
        wanted = {"resourceLinkId": resource_link_id, "resourceId": resource_id, "tag": tag}
        items = [li for li in self._items() if all(v is None or li.get(k) == v for k, v in wanted.items())]
        return {"content": items, "has_next": False}

    def find_lineitem(self, line_item_id: str) -> dict:
        return self._item(line_item_id)

    def create_lineitem(self, creation_data: dict) -> dict:
        item = {**creation_data, "id": f"{self.ags.lineitems_url}/{len(self._items()) + 1}"}
        self._items().append(item)
        return item

    def update_lineitem(self, update_data: dict) -> dict:
        item = self._item(update_data["id"])
        item.update({k: v for k, v in update_data.items() if k != "id"})
        return item

    def delete_lineitem(self, line_item_id: str) -> None:
        self._items().remove(self._item(line_item_id))

    def update_score(self, line_item_id: str, score: dict) -> UpdateScoreStatus:
        self._item(line_item_id)
        assert self.request is not None
        self.lms.scores.append({**score, "context": self.context, "lineitem": line_item_id,
                                "content_type": self.request.content_type})
        return UpdateScoreStatus.SUCCESS

    def get_results(self, line_item_id: str, page: int = 1, limit: int | None = None, user_id: str | None = None) -> TPage:
        self._item(line_item_id)
        return {"content": [], "has_next": False}


class Members(NamesRoleProvisioningService):
    """The library's NRPS endpoint of one context over the platform's enrolments."""

    def __init__(self, request: GlueRequest, lms: "LibraryPlatform", context: str) -> None:
        super().__init__(request, lms.config, lms.url(f"/{context}/memberships"))
        self.lms, self.context = lms, context

    def get_member_data_page(self, page: int = 1, limit: int | None = None, role: str | None = None,
                             since: str | None = None) -> TPage:
        everyone = [{"user_id": p.sub, "name": p.name, "email": p.email, "roles": self.lms.enrolments[self.context][login]}
                    for login, p in self.lms.people.items() if login in self.lms.enrolments[self.context]]
        if limit is None:
            return {"content": everyone, "has_next": False}
        return {"content": everyone[(page - 1) * limit: page * limit], "has_next": page * limit < len(everyone)}

    def get_context_by_id(self) -> Context:
        return Context(id=self.context, label=self.context, title=self.lms.contexts[self.context])


@dataclass
class LibraryPlatform:
    """The library's platform on ``http://127.0.0.1:{port}``, registered with the tool at ``tool`` (its base URL)."""

    tool: str
    client_id: str = "lib-client-1"
    deployment_id: str = "lib-deployment-1"
    port: int = field(default_factory=free_port)
    people: dict[str, User] = field(default_factory=dict)  # login hint -> person
    contexts: dict[str, str] = field(default_factory=dict)  # context id -> title
    enrolments: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # context -> {login hint: roles}
    custom: dict[str, dict[str, str]] = field(default_factory=dict)  # resource link id -> custom parameters
    deep_link_data: dict[str, Any] | None = None  # the library takes a dict (``extra_data``) for the request's data
    accept_types: list[str] | None = None  # the deep-linking request's (None: every type the library knows)
    memberships_query: str = ""  # e.g. "?limit=2": the library pages members only when the request names a limit
    lineitems: dict[str, list[dict]] = field(default_factory=dict)
    scores: list[dict] = field(default_factory=list)
    tokens_issued: int = 0
    membership_pages: int = 0
    deep_link_responses: list[dict] = field(default_factory=list)  # the claims of every response the library verified

    def __post_init__(self) -> None:
        self.base = f"http://127.0.0.1:{self.port}"
        private = new_pem()
        registration = (Registration().set_iss(self.base).set_client_id(self.client_id)
                        .set_deployment_id(self.deployment_id).set_oidc_login_url(self.tool + "/lti/login")
                        .set_launch_url(self.tool + "/lti/launch").set_deeplink_launch_url(self.tool + "/lti/launch")
                        .set_tool_key_set_url(self.tool + "/lti/jwks.json")
                        .set_platform_private_key(private).set_platform_public_key(public_pem(private)))
        self.config = Config(registration=registration)
        self.config.get_registration()
        self._server: uvicorn.Server | None = None

    def url(self, path: str) -> str:
        return self.base + path

    def registration(self) -> dict[str, Any]:
        """The fields of :func:`autograder.service.lti.registry.add`."""
        return dict(name="lti1p3platform", issuer=self.base, client_id=self.client_id, deployments=[self.deployment_id],
                    auth_login_url=self.url("/auth"), auth_token_url=self.url("/token"), jwks_url=self.url("/jwks"))

    def start_url(self, person: str, context: str, link: str = "", deep_linking: bool = False) -> str:
        """Where ``person`` opens ``link`` (or the deep-linking picker) of ``context``."""
        return self.url("/start?" + urlencode({"person": person, "context": context, "link": link,
                                               "deep_linking": "1" if deep_linking else ""}))

    # ---- the routes

    async def _start(self, request: Request) -> Response:
        q = request.query_params
        login = Login(await read(request), self.config)
        if q["deep_linking"]:
            login.set_deeplinking_launch_url()
        login.set_lti_message_hint(hint=json.dumps({"context": q["context"], "link": q["link"], "deep_linking": bool(q["deep_linking"])}))
        return login.initiate_login(q["person"])

    async def _auth(self, request: Request) -> Response:
        return Launch(await read(request), self).lti_launch()

    async def _jwks(self, request: Request) -> Response:
        return JSONResponse(self.config.get_jwks())

    async def _token(self, request: Request) -> Response:
        form = (await read(request)).form_data
        try:
            issued = self.config.get_access_token(form)
        except (lib_errors.MissingRequiredClaim, lib_errors.UnsupportedGrantType) as exc:
            return JSONResponse({"error": "invalid_request", "error_description": str(exc)}, status_code=400)
        except (lib_errors.LtiException, jwt.PyJWTError) as exc:
            return JSONResponse({"error": "invalid_client", "error_description": str(exc)}, status_code=401)
        self.tokens_issued += 1
        return JSONResponse(issued)

    async def _deep_link_return(self, request: Request) -> Response:
        form = (await read(request)).form_data
        try:
            items = self.config.validate_deeplinking_resp(form)
            claims = self.config.tool_validate_and_decode(form["JWT"])
        except (lib_errors.LtiException, lib_errors.LtiDeepLinkingResponseException, jwt.PyJWTError, KeyError) as exc:
            return HTMLResponse(f"refused: {type(exc).__name__}: {exc}", status_code=400)
        self.deep_link_responses.append(claims)
        return HTMLResponse(f"<p id='added'>{len(items)}</p>")

    async def _lineitems(self, request: Request) -> Response:
        service = Gradebook(await read(request), self, request.path_params["context"])
        handler = service.handle_create_lineitem if request.method == "POST" else service.handle_get_lineitems
        return answer(service.handle_resp(handler))

    async def _lineitem(self, request: Request) -> Response:
        service = Gradebook(await read(request), self, request.path_params["context"])
        handler = {"GET": service.handle_get_lineitem, "PUT": service.handle_update_lineitem,
                   "DELETE": service.handle_delete_lineitem}[request.method]
        return answer(service.handle_resp(handler, line_item_id=request.path_params["item"]))

    async def _scores(self, request: Request) -> Response:
        service = Gradebook(await read(request), self, request.path_params["context"])
        return answer(service.handle_resp(service.handle_update_score, line_item_id=request.path_params["item"]))

    async def _memberships(self, request: Request) -> Response:
        service = Members(await read(request), self, request.path_params["context"])
        self.membership_pages += 1
        return answer(service.handle_resp(service.handle_get_members))

    def app(self) -> Starlette:
        return Starlette(routes=[
            Route("/start", self._start), Route("/auth", self._auth, methods=["GET", "POST"]), Route("/jwks", self._jwks),
            Route("/token", self._token, methods=["POST"]),
            Route("/deep_link_return", self._deep_link_return, methods=["POST"]),
            Route("/{context}/lineitems", self._lineitems, methods=["GET", "POST"]),
            Route("/{context}/lineitems/{item}", self._lineitem, methods=["GET", "PUT", "DELETE"]),
            Route("/{context}/lineitems/{item}/scores", self._scores, methods=["POST"]),
            Route("/{context}/memberships", self._memberships)])

    def start(self) -> "LibraryPlatform":
        self._server = serve(self.app(), self.port)
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True


def serve(app: Any, port: int) -> uvicorn.Server:
    """``app`` served on ``127.0.0.1:port`` by uvicorn in a thread (returned once it accepts connections)."""
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off"))
    threading.Thread(target=server.run, daemon=True).start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.02)
    return server
