"""The reference compliance service: the engine and a baked `out/` over HTTP (docs/service-api.md).

FastAPI gives the OpenAPI document from the same declarations that route and validate requests, so
the document cannot drift from the code. Handlers answer with pre-encoded orjson bodies: the
response models exist for the document, not for per-request serialization.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson
from fastapi import FastAPI, Request
from fastapi.responses import Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from compliance_bake import __version__
from compliance_bake.inputs.files import LeavesFolder, NotRegular, TooLarge, read_bounded
from compliance_bake.policy.amounts import parse_amount
from compliance_bake.policy.model import Question
from compliance_bake.policy.questions import QUESTION_FIELDS as QUESTION
from compliance_bake.report import layout
from compliance_bake.report.escape import visible
from compliance_bake.service import models
from compliance_bake.service.auth import AgentAuth, KeyLookup, Unauthorized
from compliance_bake.service.openapi import install_document
from compliance_bake.service.protocol import HeadAsGet
from compliance_bake.signing.attestation import ATTESTATION_FILE
from compliance_bake.targets.engine import Engine

JSON = "application/json; charset=utf-8"  # as docs/service-api.md documents every JSON body
MAX_PARAM = 128
SERVED_MAX_BYTES = 1024 * 1024 * 1024  # a baked file larger than this is not served
_NO_STORE = {"Cache-Control": "no-store"}
# (pattern, words) of the question's fields that have a shape; all are optional on the check route.
_SHAPES = {
    "amount": (r"(0|[1-9][0-9]{0,11})(\.[0-9]{1,2})?", "a number of whole cents, e.g. 2500.01"),
    "age": ("[0-9]{1,3}", "a whole number of years, e.g. 21"),
    "zipCode": ("[0-9]{5}", "5 digits, e.g. 07030"),
}
# How a decision route refuses a request, as its OpenAPI document says after its 200.
_REFUSALS: dict[int | str, dict[str, Any]] = {
    400: {"model": models.ErrorBody, "description": "A parameter is bad."},
    401: {"model": models.ErrorBody, "description": "No valid agent key."},
}
_PORTAL_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'",
    "X-Content-Type-Options": "nosniff",
}


def _json(body: Any, status: int = 200, headers: Mapping[str, str] | None = None) -> Response:
    return Response(orjson.dumps(body), status_code=status, media_type=JSON, headers=headers)


def error_response(
    status: int, code: str, message: str, headers: Mapping[str, str] | None = None
) -> Response:
    return _json({"error": {"code": code, "message": message}}, status, headers)


class BadRequest(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _params(request: Request, *names: str, optional: tuple[str, ...] = ()) -> list[str]:
    """Each named query parameter, present once, 1 to MAX_PARAM characters; `optional` ones
    may be sent too, by the same rules (`_found` reads each).

    Parsed by hand rather than by FastAPI's validation: on the check route that validation cost
    half the throughput (measured with wrk), and the rules are three lines.
    """
    _no_unknown(request, names + optional)
    values = []
    for name in names:
        found = _found(request, name)
        if not found:
            raise BadRequest(f"query parameter {name} is missing; send it once")
        values.append(found[0])
    return values


def _found(request: Request, name: str) -> list[str]:
    found = request.query_params.getlist(name)
    if len(found) > 1:
        raise BadRequest(f"query parameter {name} is repeated; send it once")
    if found and not 1 <= len(found[0]) <= MAX_PARAM:
        raise BadRequest(f"query parameter {name} must be 1 to {MAX_PARAM} characters")
    return found


def _no_unknown(request: Request, names: tuple[str, ...] = ()) -> None:
    """Refuse a query parameter the route does not document: the document forbids it, and a
    misspelt parameter must not pass for an absent one."""
    unknown = sorted(set(request.query_params.keys()) - set(names))
    if unknown:
        documented = ", ".join(names) if names else "none"
        raise BadRequest(f"unknown query parameter {unknown[0]}; this route takes: {documented}")


def _documented_query(*names: str, optional: tuple[str, ...] = ()) -> dict[str, Any]:
    """The OpenAPI description of what `_params` accepts, and of the agent key it needs."""
    parameters = []
    for name in names + optional:
        schema = {"type": "string", "minLength": 1, "maxLength": MAX_PARAM}
        if name in _SHAPES:
            schema["pattern"] = f"^{_SHAPES[name][0]}$"
        parameters.append(
            {"name": name, "in": "query", "required": name in names, "schema": schema}
        )
    return {"parameters": parameters, "security": [{"agentKey": []}]}


def _check(engine: Engine, request: Request) -> Response:
    """The check's answer: the spec's question (partner, state, wagerType), or with any of the
    question's fields sent, that whole question, decided by `Engine.ask` as a bake's are."""
    partner, state, wager_type = _params(
        request, "partner", "state", "wagerType", optional=QUESTION
    )
    sent = {name: found[0] for name in QUESTION if (found := _found(request, name))}
    if sent:
        decision = engine.ask(question_of(partner, state, wager_type, sent))
    else:
        decision = engine.check(partner, state, wager_type)
    body = decision.as_json()
    body.update(partner=partner, state=state, wagerType=wager_type, **sent)
    return _json(body, decision.status, _NO_STORE)


def question_of(partner: str, state: str, wager_type: str, sent: Mapping[str, str]) -> Question:
    """The question the check's parameters ask (`sent`: the question's fields sent, by name):
    sport and market, when sent, are the wager's (a bake sends wagerType's own parts), else
    wagerType's parts. BadRequest naming the first field of a wrong shape."""
    for name, (pattern, shape) in _SHAPES.items():
        if name in sent and not re.fullmatch(pattern, sent[name]):
            raise BadRequest(f"query parameter {name} must be {shape}")
    sport, _, market = wager_type.partition(".")
    amount, age = sent.get("amount"), sent.get("age")
    return Question(
        state,
        partner,
        sent.get("sport", sport),
        sent.get("market", market),
        None if amount is None else parse_amount(amount),
        sent.get("betType"),
        None if age is None else int(age),
        sent.get("zipCode"),
    )


def create_app(
    engine: Engine, keys: KeyLookup, out_dir: Path, runtime: str, log_dir: Path | None = None
) -> FastAPI:
    """The service over `engine`, accepting the keys of `keys`, serving the files of `out_dir`."""
    app = FastAPI(
        title="compliance-bake service",
        version=__version__,
        description="Licence decisions for regulated sports betting, and the baked snapshot "
        "(read-only). The contract is `compliance-bake docs service-api`.",
        docs_url=None,
        redoc_url=None,
        openapi_url=None,  # served below, as every JSON answer, with its charset
    )
    app.add_middleware(HeadAsGet)
    auth = AgentAuth(keys)
    health_body = orjson.dumps(
        {"ok": True, "states": list(engine.health().states), "runtime": runtime}
    )

    @app.exception_handler(Unauthorized)
    async def _unauthorized(_: Request, __: Unauthorized) -> Response:
        return auth.refusal()

    @app.exception_handler(BadRequest)
    async def _bad_request(_: Request, exc: BadRequest) -> Response:
        return error_response(400, "bad_request", exc.message)

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException) -> Response:
        if exc.status_code == 405:
            allowed = _allowed_methods(exc.headers)
            return error_response(
                405,
                "method_not_allowed",
                f"method not allowed; use {' or '.join(allowed)}",
                {**(exc.headers or {}), "Allow": ", ".join(allowed)},
            )
        if exc.status_code == 404:
            return error_response(404, "not_found", "no such route; see /openapi.json")
        return error_response(exc.status_code, "http_error", str(exc.detail))

    @app.get("/health", response_model=models.HealthAnswer, tags=["service"])
    async def health(request: Request) -> Response:
        """Liveness, the regulated states, and the runtime that answers."""
        _no_unknown(request)
        return Response(health_body, media_type=JSON)

    @app.get(
        "/api/compliance/check",
        tags=["decisions"],
        responses={
            200: {"model": models.CheckAnswer, "description": "Allowed."},
            **_REFUSALS,
            403: {"model": models.CheckAnswer, "description": "Blocked, with the reason."},
        },
        response_class=Response,
        openapi_extra=_documented_query("partner", "state", "wagerType", optional=QUESTION),
    )
    async def check(request: Request) -> Response:
        """May `partner` take a `wagerType` wager in `state`? 200 allowed, 403 blocked."""
        auth.require(request)
        return _check(engine, request)

    @app.get(
        "/api/compliance/status",
        tags=["decisions"],
        responses={
            200: {"model": models.StatusAnswer, "description": "The status panel."},
            **_REFUSALS,
        },
        response_class=Response,
        openapi_extra=_documented_query("state", "partner"),
    )
    async def status(request: Request) -> Response:
        """The status panel of `partner` in `state`."""
        auth.require(request)
        state, partner = _params(request, "state", "partner")
        panel = engine.status(state, partner)
        body = {
            "ok": panel.ok,
            "state": panel.state,
            "licenseStatus": panel.license_status,
            "hasLimits": panel.has_limits,
        }
        return _json(body, 200, _NO_STORE)

    _add_snapshot_routes(app, out_dir)
    if log_dir is not None:
        from compliance_bake.service.log_files import add_log_route

        add_log_route(app, log_dir, lambda: error_response(404, "not_found", "no such log file"))
    install_document(app)

    @app.get("/openapi.json", include_in_schema=False)
    async def openapi(request: Request) -> Response:
        _no_unknown(request)
        return _json(app.openapi())

    return app


def _allowed_methods(headers: Mapping[str, str] | None) -> list[str]:
    """The route's methods for `Allow`, sorted: HEAD wherever GET is, since `HeadAsGet`
    answers it."""
    declared = {m.strip() for m in (headers or {}).get("Allow", "GET").split(",") if m.strip()}
    return sorted(declared | {"HEAD"} if "GET" in declared else declared)


_SNAPSHOT_ROUTES: list[tuple[str, str, str, str]] = [
    ("/api/compliance", layout.API_FILE, JSON, "The baked snapshot (spec 2.1)."),
    (
        "/registry/compliance-enhancements.json",
        layout.BOARD_FILE,
        JSON,
        "The registry copy of the enhancements block.",
    ),
    (
        "/registry/compliance-shadow.json",
        layout.SHADOW_FILE,
        JSON,
        "The registry copy of the shadow block.",
    ),
    (
        "/registry/compliance-policy.json",
        layout.POLICY_FILE,
        JSON,
        "The policy's questions, their predictions and the registry rows they came from.",
    ),
    ("/portal/compliance/", layout.PORTAL_FILE, "text/html; charset=utf-8", "The portal page."),
    # The names of the files in out/, which the portal links to: its links then resolve both
    # here and on a static server publishing out/ (where /api/compliance has no file).
    ("/api/compliance.json", layout.API_FILE, JSON, "The baked snapshot, by its file name."),
    (
        "/portal/compliance/index.html",
        layout.PORTAL_FILE,
        "text/html; charset=utf-8",
        "The portal page, by its file name (as the attestation names it).",
    ),
    (
        "/" + ATTESTATION_FILE,
        ATTESTATION_FILE,
        JSON,
        "The public-key attestation (a DSSE envelope), when the bake was signed.",
    ),
]


def _add_snapshot_routes(app: FastAPI, out_dir: Path) -> None:
    """Read-only files of the last bake, read at each request so a re-bake shows at once."""
    for path, relative, media_type, summary in _SNAPSHOT_ROUTES:
        schema = {"type": "object"} if media_type == JSON else {"type": "string"}
        content = {media_type: {"schema": schema}}
        app.add_api_route(
            path,
            _file_handler(out_dir, relative, media_type),
            methods=["GET"],  # HEAD too: `HeadAsGet` answers it on every GET route
            tags=["snapshot"],
            summary=summary,
            response_class=Response,
            responses={
                200: {"description": summary, "content": content},
                404: {"model": models.ErrorBody, "description": "Nothing is baked."},
            },
        )


_LOG = logging.getLogger("uvicorn.error")  # uvicorn's log, on stderr whatever --access-log says


def _file_handler(out_dir: Path, relative: str, media_type: str) -> Any:
    from starlette.concurrency import run_in_threadpool

    headers = _PORTAL_HEADERS if media_type.startswith("text/html") else None

    async def serve_file(request: Request) -> Response:
        _no_unknown(request)
        try:
            # In a worker thread: the event loop never waits on a disk; `read_bounded` refuses a
            # link, a FIFO or a device planted in out/ without following or blocking.
            data = await run_in_threadpool(read_bounded, relative, SERVED_MAX_BYTES, inside=out_dir)
        except LeavesFolder:
            _LOG.warning(
                "refused %s: %s in %s is or lies under a symlink, and served files stay "
                "inside --out (fix: bake into the folder, or remove the link)",
                visible(request.url.path),
                relative,
                visible(out_dir),
            )
            return error_response(404, "not_found", "no such file in the baked folder")
        except (NotRegular, TooLarge, OSError) as exc:
            if isinstance(exc, FileNotFoundError | NotADirectoryError):
                return error_response(
                    404,
                    "not_baked",
                    "nothing is baked here yet; run `compliance-bake bake snapshot --out DIR` "
                    "with the folder this service serves",
                )
            return error_response(
                500,
                "unreadable_file",
                "the baked file is not a regular file or cannot be read; bake again into "
                "the folder this service serves",
            )
        return Response(data, media_type=media_type, headers=headers)

    return serve_file
