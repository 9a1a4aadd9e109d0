"""A minimal stand-in for `compliance-bake serve`: raw ASGI over the real Engine, for benchmarks.

    uvicorn bench.stand_in_service:app  (fixtures folder in $STAND_IN_FIXTURES, key in
    $STAND_IN_KEY)

Answers /health, the check route and the status route as docs/service-api.md says, in the
compact JSON a FastAPI service sends, with the Bearer key compared in constant time, and
nothing else: the floor of what a Python ASGI service costs per check, so the HTTP target can be
measured before (or apart from) the real service. It also answers the check the way the Bun
service of docs/target-profiles.md does (`POST /v2/wagers/eligibility`, a JSON body, the key in
`X-Agent-Key`, HTTP 200 with the decision inside `data`), so a bake through a target profile is
measured against the same service (bench/target_bench.py, --profile-rows).
"""

from __future__ import annotations

import hmac
import json
import os
import platform
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

from compliance_bake.inputs.fixtures import load_fixtures
from compliance_bake.targets.engine import Engine

_ENGINE = Engine(load_fixtures(Path(os.environ["STAND_IN_FIXTURES"])).registry)
_KEY = f"Bearer {os.environ.get('STAND_IN_KEY', '')}".encode()
_RAW_KEY = os.environ.get("STAND_IN_KEY", "").encode()
_RUNTIME = f"{platform.python_implementation()} {platform.python_version()}"
_JSON = [(b"content-type", b"application/json")]


def _dumps(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def _answer(path: str, query: dict[str, list[str]]) -> tuple[int, Any]:
    def one(name: str) -> str:
        return query.get(name, [""])[0]

    if path == "/api/compliance/check":
        partner, state, wager = one("partner"), one("state"), one("wagerType")
        decision = _ENGINE.check(partner, state, wager)
        return decision.status, {
            **decision.as_json(),
            "partner": partner,
            "state": state,
            "wagerType": wager,
        }
    if path == "/api/compliance/status":
        panel = _ENGINE.status(one("state"), one("partner"))
        return 200, {
            "ok": panel.ok,
            "state": panel.state,
            "licenseStatus": panel.license_status,
            "hasLimits": panel.has_limits,
        }
    return 404, {"error": {"code": "not_found", "message": "no such route"}}


def _eligibility(raw: bytes) -> tuple[int, Any]:
    asked = json.loads(raw)
    decision = _ENGINE.check(asked["nodeId"], asked["stateCode"], asked["wager"]["type"])
    return 200, {"data": decision.as_json(), "meta": {"api": "v2"}}


async def _body(receive: Any) -> bytes:
    chunks = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            return b"".join(chunks)


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    path = scope["path"]
    asked = dict(scope["headers"])
    if path == "/health":
        status, body = (
            200,
            {"ok": True, "states": list(_ENGINE.health().states), "runtime": _RUNTIME},
        )
    elif not (
        hmac.compare_digest(asked.get(b"authorization", b""), _KEY)
        or (_RAW_KEY and hmac.compare_digest(asked.get(b"x-agent-key", b""), _RAW_KEY))
    ):
        message = "A valid agent key is required: Authorization: Bearer <key>"
        status, body = 401, {"error": {"code": "unauthorized", "message": message}}
    elif path == "/v2/wagers/eligibility" and scope["method"] == "POST":
        status, body = _eligibility(await _body(receive))
    else:
        status, body = _answer(path, parse_qs(scope["query_string"].decode()))
    raw = _dumps(body)
    headers = [*_JSON, (b"content-length", str(len(raw)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": raw})
