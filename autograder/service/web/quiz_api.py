"""The quizzes' part of the HTTP API (mounted with :mod:`.api` at ``/api/v1``); JSON in and out.

=======  =============================================  ==============================================================
method   path                                           what
=======  =============================================  ==============================================================
GET      /api/v1/quizzes                                the course's quizzes and exams, with the caller's attempts
POST     /api/v1/quizzes/{quiz}/attempts                start the next attempt (or resume the open one) -> 201 attempt
GET      /api/v1/quiz-attempts/{id}                     one attempt (its student's, or anyone's for the staff)
PUT      /api/v1/quiz-attempts/{id}/answers/{position}  save one answer: ``{"answer": "B", "seq": 17}``
POST     /api/v1/quiz-attempts/{id}/submit              submit: graded and counted now -> the graded attempt
GET      /api/v1/quizzes/{quiz}/statistics              item statistics (staff)
POST     /api/v1/quizzes/{quiz}/regrade                 grade again after a template was fixed (staff who regrade)
=======  =============================================  ==============================================================

Authentication as for the rest of the API (:mod:`.api`); a state-changing request with the session cookie carries
the CSRF token in ``X-CSRF-Token``.  Bodies are small (:data:`MAX_BODY`, 413 beyond).  Every rule is the core's
(:class:`~autograder.service.quizzes.Quizzes`): another student's attempt answers like one that does not exist, a
body naming a seed, a template or a variant is refused, as are a save older than the stored one, a second
submission and anything after the attempt's end by the server's clock.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..errors import Invalid
from ..roles import Permission
from . import auth
from .api import api_base
from .forms import read_capped

MAX_BODY = 2048  # an answer is a letter or a number: far below


def _json(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse(data, status_code=status, headers=headers)


async def _body(request: Request) -> Any:
    body = await read_capped(request, MAX_BODY)
    if not body.strip():
        return None
    try:
        return json.loads(body.decode("utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise Invalid("请求体不是合法的 JSON") from None


def listing(request: Request) -> Response:
    service = auth.service_of(request)
    account = auth.caller(request).account
    quizzes = service.quizzes
    out = []
    for name in service.policy.quizzes:
        if account.is_staff:
            out.append(service.policy.quizzes[name].to_json())
            continue
        card = quizzes.card(account.login, name)
        out.append({**card["quiz"].to_json(), "attempts_used": card["used"], "refusal": card["refusal"],
                    "open_attempt": card["open"].id if card["open"] else None,
                    "counting_score": card["counting"].score if card["counting"] else None})
    return _json({"quizzes": out})


def _attempt_json(request: Request, attempt_id: str, viewer) -> dict[str, Any]:
    service = auth.service_of(request)
    return service.quizzes.attempt(viewer, attempt_id).to_json(service.now())


async def start(request: Request) -> Response:
    service = auth.service_of(request)
    who = await run_in_threadpool(auth.checked_caller, request)
    service.quizzes.check_fields(await _body(request))  # the variants are the server's to choose: nothing is taken
    attempt_id = await run_in_threadpool(service.quizzes.start, who.account, request.path_params["quiz"])
    data = await run_in_threadpool(_attempt_json, request, attempt_id, who.account)
    return _json(data, 201, {"Location": f"{api_base(request)}/quiz-attempts/{attempt_id}"})


def attempt(request: Request) -> Response:
    who = auth.caller(request)
    return _json(_attempt_json(request, request.path_params["id"], who.account))


async def save(request: Request) -> Response:
    service = auth.service_of(request)
    who = await run_in_threadpool(auth.checked_caller, request)
    payload = await _body(request)
    saved = await run_in_threadpool(service.quizzes.save, who.account, request.path_params["id"],
                                    request.path_params["position"], payload)
    return _json(saved)


async def submit(request: Request) -> Response:
    service = auth.service_of(request)
    who = await run_in_threadpool(auth.checked_caller, request)
    service.quizzes.check_fields(await _body(request))  # the answers were saved one by one: nothing else is taken
    await run_in_threadpool(service.quizzes.submit, who.account, request.path_params["id"])
    return _json(await run_in_threadpool(_attempt_json, request, request.path_params["id"], who.account))


def statistics(request: Request) -> Response:
    auth.staff(auth.caller(request), "只有教师和助教可以查看小测的统计")
    stats = auth.service_of(request).quizzes.statistics(request.path_params["quiz"])
    return _json({"items": [asdict(s) for s in stats]})


async def regrade(request: Request) -> Response:
    service = auth.service_of(request)
    who = auth.permitted(await run_in_threadpool(auth.checked_caller, request), Permission.REGRADE,
                         "只有教师和助教可以重新评分")
    report = await run_in_threadpool(service.quizzes.regrade, who.account.login, request.path_params["quiz"])
    return _json({"templates": report.templates, "items": report.items,
                  "changes": [{"student_id": s, "number": n, "old": old, "new": new} for s, n, old, new in report.changes]})


ROUTES = [
    Route("/quizzes", listing, methods=["GET"]),
    Route("/quizzes/{quiz}/attempts", start, methods=["POST"]),
    Route("/quizzes/{quiz}/statistics", statistics, methods=["GET"]),
    Route("/quizzes/{quiz}/regrade", regrade, methods=["POST"]),
    Route("/quiz-attempts/{id}", attempt, methods=["GET"]),
    Route("/quiz-attempts/{id}/answers/{position:int}", save, methods=["PUT"]),
    Route("/quiz-attempts/{id}/submit", submit, methods=["POST"]),
]
