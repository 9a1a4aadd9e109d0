"""The HTTP/1.1 connection under the service: uvicorn's httptools protocol with our limits.

uvicorn answers a request its parser refuses with a plain-text 400 and sets no limit on the size
of a request head or on the time a client takes to send it. This protocol keeps everything else
of uvicorn's and adds (docs/service-api.md, "Limits of the HTTP layer"):

- a request target (path and query) over MAX_TARGET_BYTES: 414 `uri_too_long`;
- header names and values over MAX_HEADER_BYTES in all: 431 `headers_too_large`;
- a request the parser refuses (an unknown method such as BREW, a NUL or a newline in a header,
  a malformed request line): 400 `bad_request`;
- a request not received whole within the client timeout (`serve --client-timeout`, default
  CLIENT_TIMEOUT seconds) of its first byte, or of the connection for the first request: 408
  `request_timeout` when its head is incomplete, else the connection is closed. An idle
  keep-alive connection is closed by uvicorn after the same timeout (its `timeout_keep_alive`,
  which this protocol reads as its own).

Each of those answers has the JSON error body of every other error and closes the connection.

`HeadAsGet`, an ASGI middleware, gives HEAD to every GET route.
"""

from __future__ import annotations

import asyncio
import http
from typing import Any

import orjson
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

MAX_TARGET_BYTES = 8 * 1024
MAX_HEADER_BYTES = 16 * 1024
CLIENT_TIMEOUT = 10


class _TooLarge(Exception):
    """Raised from a parser callback; the parser wraps it and uvicorn calls send_400_response."""


class LimitedHttpProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with a size limit on the request head and a time limit on
    the whole request, and JSON error bodies for what the parser refuses."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._head_bytes = 0
        self._head_done = False
        self._refusal: tuple[int, str, str] | None = None
        self._request_timer: asyncio.TimerHandle | None = None

    # --- the request timer -------------------------------------------------------------------

    def _arm(self) -> None:
        if self._request_timer is None:
            self._request_timer = self.loop.call_later(self.timeout_keep_alive, self._too_slow)

    def _disarm(self) -> None:
        if self._request_timer is not None:
            self._request_timer.cancel()
            self._request_timer = None

    def _too_slow(self) -> None:
        self._request_timer = None
        if self.transport.is_closing():
            return
        if self._head_done:
            self.transport.close()
            return
        within = f"{self.timeout_keep_alive:g} s"
        message = f"the request was not received within {within}; send it whole"
        self._send_error(408, "request_timeout", message)

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    # --- parser callbacks --------------------------------------------------------------------

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._head_bytes = 0
        self._head_done = False
        self._arm()

    def on_url(self, url: bytes) -> None:
        super().on_url(url)
        if len(self.url) > MAX_TARGET_BYTES:
            self._refusal = (
                414,
                "uri_too_long",
                f"the request target is over {MAX_TARGET_BYTES} bytes; shorten the query",
            )
            raise _TooLarge

    def on_header(self, name: bytes, value: bytes) -> None:
        self._head_bytes += len(name) + len(value)
        if self._head_bytes > MAX_HEADER_BYTES:
            self._refusal = (
                431,
                "headers_too_large",
                f"the request headers are over {MAX_HEADER_BYTES} bytes in all; send fewer",
            )
            raise _TooLarge
        super().on_header(name, value)

    def on_headers_complete(self) -> None:
        self._head_done = True
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        self._disarm()
        super().on_message_complete()

    # --- answers uvicorn gives itself --------------------------------------------------------

    def send_400_response(self, msg: str) -> None:
        self._disarm()
        status, code, message = self._refusal or (
            400,
            "bad_request",
            "the HTTP parser refused the request (unknown method, or a malformed request line "
            "or header); see docs/service-api.md",
        )
        self._send_error(status, code, message)

    def _send_error(self, status: int, code: str, message: str) -> None:
        body = orjson.dumps({"error": {"code": code, "message": message}})
        phrase = http.HTTPStatus(status).phrase
        head = [f"HTTP/1.1 {status} {phrase}".encode("ascii")]
        head += [name + b": " + value for name, value in self.server_state.default_headers]
        head += [
            b"content-type: application/json; charset=utf-8",
            b"content-length: " + str(len(body)).encode("ascii"),
            b"connection: close",
        ]
        self.transport.write(b"\r\n".join(head) + b"\r\n\r\n" + body)
        self.transport.close()


class HeadAsGet:
    """HEAD on every GET route (RFC 9110 9.3.2): the GET answer's status and headers, no body.

    Load balancers probe with HEAD. Routing sees a GET; the body is dropped here (uvicorn drops
    it too), and the route table and the OpenAPI document stay as declared.
    """

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "HEAD":
            await self.app(scope, receive, send)
            return

        async def send_headers_only(message: Any) -> None:
            if message["type"] == "http.response.body":
                message = {**message, "body": b""}
            await send(message)

        await self.app({**scope, "method": "GET"}, receive, send_headers_only)
