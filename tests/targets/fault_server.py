"""A real HTTP/1.1 server on a loopback port that misbehaves on purpose (HTTP target tests).

Raw asyncio sockets, not a web framework, so it can do what no framework lets a handler do: lie
in Content-Length and hang up, hang forever, send a body without a length. Unless told to
misbehave it answers as docs/service-api.md says, over the real `Engine` and the demo fixtures
(the policy's questions included).
With `spec_only=True` it answers with exactly the specification's shapes and nothing more:
`{ok, states}`, `{allowed, status}` and the status panel's four fields (no runtime, no echo, no
reason), the minimal valid target. With `shape="path"` it is a service of other choices, reached
only through a target profile (PATH_PROFILE): the question in the path
(`GET /v1/partners/{partner}/states/{state}/wagers/{wagerType}`), the key in `X-Api-Key`, answers
inside a `result` envelope with the decision in the HTTP status, and a /v1/health whose runtime is
in the `Server` header. Faults on it are keyed "check", "status" or "/v1/health".

It runs its own event loop in a thread; `stop()` (or leaving the `with` block) cancels every
connection and joins the thread. Each request is recorded (`seen`) with its headers.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import threading
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from compliance_bake.inputs.fixtures import load_fixtures
from compliance_bake.resources import demo_fixtures_dir
from compliance_bake.service.app import QUESTION, question_of
from compliance_bake.targets.engine import Engine

AGENT_KEY = "tstky.secret-part-of-the-agent-key-0123456789abcdefgh"
RUNTIME = "FaultServer 1.0"
REASONS = {200: "OK", 302: "Found", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found"}
PATH_PROFILE = """
[auth]
header = "X-Api-Key"
value = "{key}"

[health]
path = "/v1/health"
ok = "body.status == 'up'"
states = "body.regulated"
runtime = "http.headers.server"

[check]
path = "/v1/partners/{partner}/states/{state}/wagers/{wagerType}"
allowed = "body.result.allowed"
status = "http.status"
reason = "body.result.reason"
partner = "body.result.partner"
state = "body.result.state"
wagerType = "body.result.wagerType"

[status]
path = "/v1/partners/{partner}/states/{state}"
ok = "body.result.ok"
state = "body.result.state"
licenseStatus = "body.result.licenseStatus"
hasLimits = "body.result.hasLimits"
"""


@dataclass
class Seen:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    at: float


@dataclass
class Fault:
    kind: str
    times: int | None  # None: every time
    params: dict[str, Any] = field(default_factory=dict)


def free_port() -> int:
    """A port nothing listens on (bound, then released): connecting to it is refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class FaultServer:
    def __init__(
        self,
        key: str | None = AGENT_KEY,
        host: str = "127.0.0.1",
        spec_only: bool = False,
        shape: str = "builtin",
    ) -> None:
        self.engine = Engine(load_fixtures(demo_fixtures_dir()).policy)
        self.key = key
        self.host = host
        self.spec_only = spec_only
        self.shape = shape
        self.port = 0
        self.seen: list[Seen] = []
        self._faults: dict[str, Fault] = {}
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._server: asyncio.Server | None = None
        self._handlers: set[asyncio.Task[None]] = set()

    # -- control, from the test's thread ---------------------------------------------------

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def fault(self, route: str, kind: str, times: int | None = None, **params: Any) -> None:
        """Misbehave on `route` (a path) `times` times (or always), then answer correctly."""
        self._faults[route] = Fault(kind, times, params)

    def start(self) -> FaultServer:
        self._thread.start()
        started = asyncio.run_coroutine_threadsafe(self._listen(), self._loop)
        self.port = started.result(timeout=10)
        return self

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self._close(), self._loop).result(timeout=10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()

    def __enter__(self) -> FaultServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def requests_to(self, path: str) -> list[Seen]:
        return [seen for seen in self.seen if seen.path == path]

    # -- the server, on its loop -----------------------------------------------------------

    async def _listen(self) -> int:
        self._server = await asyncio.start_server(self._connection, self.host, 0)
        return int(self._server.sockets[0].getsockname()[1])

    async def _close(self) -> None:
        """Close the listener and every connection, and let their transports finish closing
        before the loop stops: a transport left half-closed warns (ResourceWarning, an error
        under pytest) in whichever later test the garbage collector happens to run."""
        assert self._server is not None
        self._server.close()
        # A connection accepted just before the close starts its handler a turn later: repeat
        # until no handler is left (bounded; each round lets pending handlers start).
        for _ in range(10):
            await asyncio.sleep(0)
            if not self._handlers:
                break
            for task in list(self._handlers):
                task.cancel()
            await asyncio.gather(*self._handlers, return_exceptions=True)
        await self._server.wait_closed()
        for _ in range(3):  # the transports' connection_lost callbacks run on these turns
            await asyncio.sleep(0)

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._handlers.add(task)
        try:
            while await self._one_request(reader, writer):
                pass
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass
        finally:
            self._handlers.discard(task)
            writer.close()
            with contextlib.suppress(ConnectionError, asyncio.CancelledError):
                await writer.wait_closed()

    async def _one_request(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        line = await reader.readline()
        if not line:
            return False
        method, target, _version = line.decode("latin-1").split(" ", 2)
        headers: dict[str, str] = {}
        while (header := await reader.readline()) not in (b"\r\n", b"\n", b""):
            name, _, value = header.decode("latin-1").partition(":")
            headers[name.strip().lower()] = value.strip()
        parts = urlsplit(target)
        seen = Seen(method, parts.path, parse_qs(parts.query), headers, time.monotonic())
        self.seen.append(seen)
        return await self._answer(seen, writer)

    def _route(self, path: str) -> str:
        """The key faults are set on: the path, or for shape="path" the operation."""
        if self.shape != "path" or not path.startswith("/v1/partners/"):
            return path
        return "check" if "/wagers/" in path else "status"

    async def _reply(
        self,
        writer: asyncio.StreamWriter,
        status: int,
        body: Any,
        extra: dict[str, str] | None = None,
    ) -> bool:
        """Send, in this server's shape: shape="path" wraps answers in its envelope."""
        if self.shape == "path" and isinstance(body, dict) and "error" not in body:
            if "states" in body:
                body = {"status": "up" if body["ok"] else "down", "regulated": body["states"]}
            else:
                body = {"result": body, "api": "v1"}
            extra = {"Server": RUNTIME, **(extra or {})}
        return await _send(writer, status, body, extra)

    async def _answer(self, seen: Seen, writer: asyncio.StreamWriter) -> bool:
        if self.shape == "path":
            open_route, header, wanted = "/v1/health", "x-api-key", f"{self.key}"
        else:
            open_route, header, wanted = "/health", "authorization", f"Bearer {self.key}"
        if self.key and seen.path != open_route and seen.headers.get(header) != wanted:
            return await _send(writer, 401, _error("unauthorized", "A valid agent key"))
        fault = self._faults.get(self._route(seen.path))
        if fault is not None and fault.times is not None:
            if fault.times <= 0:
                fault = None
            else:
                fault.times -= 1
        status, body = self._correct(seen)
        checks = self._route(seen.path) in ("check", "/api/compliance/check")
        if fault is None or fault.kind == "wrong_decision" and not checks:
            return await self._reply(writer, status, body)
        return await self._misbehave(fault, seen, writer, status, body)

    async def _misbehave(
        self, fault: Fault, seen: Seen, writer: asyncio.StreamWriter, status: int, body: Any
    ) -> bool:
        kind, params = fault.kind, fault.params
        if kind == "hang":
            await asyncio.sleep(3600)
        if kind == "reset":
            return False
        if kind == "non_json":
            return await self._reply(writer, status, b"<html>Service Unavailable</html>")
        if kind == "raw":  # these exact bytes as the body (deep nesting, a huge integer ...)
            return await self._reply(writer, status, params["body"], params.get("headers"))
        if kind == "allowed_string":
            return await self._reply(
                writer, status, {**body, "allowed": str(body["allowed"]).lower()}
            )
        if kind == "blocked_because":  # every check blocked, with this reason
            reason = params["reason"]
            return await self._reply(
                writer, 403, {**body, "allowed": False, "status": 403, "reason": reason}
            )
        if kind == "forbidden_allowed":
            return await self._reply(writer, 403, {**body, "allowed": True, "status": 403})
        if kind == "wrong_decision":  # every check allowed, licensed or not
            body = {k: v for k, v in body.items() if k != "reason"}
            return await self._reply(writer, 200, {**body, "allowed": True, "status": 200})
        if kind == "truncated":
            raw = json.dumps(body).encode()
            head = _head(status, len(raw) + 40)
            writer.write(head + raw[: len(raw) // 2])
            await writer.drain()
            return False
        if kind == "redirect":
            return await self._reply(writer, 302, b"", {"Location": params["location"]})
        if kind == "status":
            extra = {"Retry-After": params["retry_after"]} if "retry_after" in params else {}
            return await self._reply(writer, params["code"], _error("busy", "try later"), extra)
        if kind == "oversize":
            return await self._reply(writer, status, {**body, "padding": "x" * params["size"]})
        if kind == "oversize_unframed":  # no Content-Length: the body ends when the socket does
            writer.write(f"HTTP/1.1 {status} OK\r\nConnection: close\r\n\r\n".encode())
            writer.write(json.dumps({**body, "padding": "x" * params["size"]}).encode())
            with contextlib.suppress(ConnectionError):
                await writer.drain()
            return False
        raise AssertionError(f"unknown fault {kind}")

    def _correct(self, seen: Seen) -> tuple[int, Any]:
        def one(name: str) -> str:
            return seen.query.get(name, [""])[0]

        if self.shape == "path":
            return self._correct_path(seen.path)
        if seen.path == "/health":
            health = self.engine.health()
            if self.spec_only:
                return 200, {"ok": health.ok, "states": list(health.states)}
            return 200, {"ok": health.ok, "states": list(health.states), "runtime": RUNTIME}
        if seen.path == "/api/compliance/check":
            partner, state, wager = one("partner"), one("state"), one("wagerType")
            sent = {name: one(name) for name in QUESTION if name in seen.query}
            if sent:  # a policy question, as `serve` takes it
                decision = self.engine.ask(question_of(partner, state, wager, sent))
            else:
                decision = self.engine.check(partner, state, wager)
            if self.spec_only:
                return decision.status, {"allowed": decision.allowed, "status": decision.status}
            answer = {**decision.as_json(), "partner": partner, "state": state, "wagerType": wager}
            return decision.status, answer | sent
        if seen.path == "/api/compliance/status":
            return 200, self._panel(one("state"), one("partner"))
        return 404, _error("not_found", "no such route")

    def _panel(self, state: str, partner: str) -> dict[str, Any]:
        panel = self.engine.status(state, partner)
        return {
            "ok": panel.ok,
            "state": panel.state,
            "licenseStatus": panel.license_status,
            "hasLimits": panel.has_limits,
        }

    def _correct_path(self, path: str) -> tuple[int, Any]:
        parts = [unquote(part) for part in path.split("/")]
        words = parts[1:3] + parts[4::2]  # v1, partners, states[, wagers]
        if path == "/v1/health":
            health = self.engine.health()
            return 200, {"ok": health.ok, "states": list(health.states)}
        if len(parts) == 8 and words == ["v1", "partners", "states", "wagers"]:
            partner, state, wager = parts[3], parts[5], parts[7]
            decision = self.engine.check(partner, state, wager)
            answer = {**decision.as_json(), "partner": partner, "state": state, "wagerType": wager}
            return decision.status, answer
        if len(parts) == 6 and words == ["v1", "partners", "states"]:
            return 200, self._panel(parts[5], parts[3])
        return 404, _error("not_found", "no such route")


def _error(code: str, message: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message}}


def _head(status: int, length: int, extra: dict[str, str] | None = None) -> bytes:
    lines = [f"HTTP/1.1 {status} {REASONS.get(status, 'Status')}"]
    lines += ["Content-Type: application/json; charset=utf-8", f"Content-Length: {length}"]
    lines += [f"{name}: {value}" for name, value in (extra or {}).items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


async def _send(
    writer: asyncio.StreamWriter, status: int, body: Any, extra: dict[str, str] | None = None
) -> bool:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    writer.write(_head(status, len(raw), extra) + raw)
    with contextlib.suppress(ConnectionError):
        await writer.drain()
    return True
