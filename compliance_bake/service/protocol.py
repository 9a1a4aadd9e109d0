"""The HTTP/1.1 connection under the service: a guard on each request head in front of uvicorn.

uvicorn answers a request its parser refuses with a plain-text 400 and sets no limit on the size
of a request head or on the time a client takes to send it. `GuardedHttp` is the protocol class
handed to uvicorn (`uvicorn.Config(http=...)`, which takes any asyncio protocol class and builds
it with its own arguments). It holds each request head back until it is whole, checks it, and
only then passes the bytes, unchanged and in order, to uvicorn's own protocol, which it wraps
rather than extends: no uvicorn method is overridden, so an upgrade of uvicorn cannot silently
bypass a limit. The guard answers (docs/service-api.md, "Limits of the HTTP layer"):

- a request target (path and query) over MAX_TARGET_BYTES: 414 `uri_too_long`;
- header names and values over MAX_HEADER_BYTES in all: 431 `headers_too_large`;
- a head HTTP/1.1 does not allow (a method outside RFC 9110's, a NUL or another control
  character in a header, a malformed request line or header line, a bad Content-Length, a
  Transfer-Encoding: the service takes no request body): 400 `bad_request`;
- a request not received whole within the client timeout (`serve --client-timeout`, default
  CLIENT_TIMEOUT seconds) of its first byte, or of the connection for the first request: 408
  `request_timeout` when its head is incomplete, else the connection is closed. An idle
  keep-alive connection is closed by uvicorn after the same timeout (its `timeout_keep_alive`).

Each of those answers has the JSON error body of every other error and closes the connection.

`HeadAsGet`, an ASGI middleware, gives HEAD to every GET route.
"""

from __future__ import annotations

import asyncio
import http
import re
from email.utils import formatdate
from typing import Any, cast

import orjson

MAX_TARGET_BYTES = 8 * 1024
MAX_HEADER_BYTES = 16 * 1024
CLIENT_TIMEOUT = 10

_METHODS = frozenset(
    (b"GET", b"HEAD", b"POST", b"PUT", b"DELETE", b"CONNECT", b"OPTIONS", b"TRACE", b"PATCH")
)
_REQUEST_LINE = re.compile(rb"([A-Z]+) ([\x21-\x7e]+) HTTP/1\.[01]")
_HEADER_LINE = re.compile(rb"([!#$%&'*+\-.^_`|~0-9A-Za-z]+):[ \t]*([^\x00-\x08\x0a-\x1f\x7f]*)")
_HEAD_END = b"\r\n\r\n"
# A head still incomplete past this many bytes is over a limit, whatever its lines turn out to be.
_RAW_CAP = MAX_TARGET_BYTES + 3 * MAX_HEADER_BYTES
_LINGER_BYTES = 4 * 1024 * 1024  # dropped after an error answer before the connection is cut
_BAD_HEAD = (
    "the request head is not HTTP/1.1 this service accepts (unknown method, a malformed request "
    "line or header, a control character, or a request body); see "
    "`compliance-bake docs service-api`"
)


class _Refused(Exception):
    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def _uri_too_long() -> _Refused:
    message = f"the request target is over {MAX_TARGET_BYTES} bytes; shorten the query"
    return _Refused(414, "uri_too_long", message)


def _headers_too_large() -> _Refused:
    message = f"the request headers are over {MAX_HEADER_BYTES} bytes in all; send fewer"
    return _Refused(431, "headers_too_large", message)


def _check_sizes(head: bytes) -> None:
    """Refuse a head, whole or not, that is already over a limit."""
    line, found, rest = head.partition(b"\r\n")
    if not found:
        if len(line) > MAX_TARGET_BYTES + 32:  # the method and version take fewer bytes
            raise _uri_too_long()
        return
    parts = line.split(b" ")
    if len(parts) == 3 and len(parts[1]) > MAX_TARGET_BYTES:
        raise _uri_too_long()
    if len(head) > _RAW_CAP:
        raise _headers_too_large()
    fields = sum(len(field) - 2 for field in rest.split(b"\r\n") if field)  # less ": "
    if fields > MAX_HEADER_BYTES:
        raise _headers_too_large()


def _body_length(head: bytes) -> int:
    """Check a whole head (without its blank line); return its Content-Length (0 if none)."""
    line, _, rest = head.partition(b"\r\n")
    request = _REQUEST_LINE.fullmatch(line)
    if request is None or request.group(1) not in _METHODS:
        raise _Refused(400, "bad_request", _BAD_HEAD)
    lengths = set()
    for field in rest.split(b"\r\n") if rest else ():
        header = _HEADER_LINE.fullmatch(field)
        if header is None:
            raise _Refused(400, "bad_request", _BAD_HEAD)
        name = header.group(1).lower()
        if name == b"transfer-encoding":
            raise _Refused(400, "bad_request", _BAD_HEAD)
        if name == b"content-length":
            value = header.group(2).strip()
            if not value.isdigit() or len(value) > 18:
                raise _Refused(400, "bad_request", _BAD_HEAD)
            lengths.add(int(value))
    if len(lengths) > 1:
        raise _Refused(400, "bad_request", _BAD_HEAD)
    return lengths.pop() if lengths else 0


class GuardedHttp(asyncio.Protocol):
    """uvicorn's httptools protocol behind a guard on the size, shape and time of each head."""

    def __init__(self, **uvicorn_arguments: Any) -> None:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

        self._inner = HttpToolsProtocol(**uvicorn_arguments)
        self._timeout = float(uvicorn_arguments["config"].timeout_keep_alive)
        self._loop = uvicorn_arguments.get("_loop") or asyncio.get_event_loop()
        self._transport: asyncio.Transport | None = None
        self._head = bytearray()  # the head received so far, held back
        self._body_left = 0  # bytes of the current request's body still to pass on
        self._timer: asyncio.TimerHandle | None = None
        self._done = False  # an error was sent: the rest is read and dropped, then closed
        self._discarded = 0

    # --- asyncio.Protocol ----------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports implement asyncio.Transport without subclassing it.
        self._transport = cast(asyncio.Transport, transport)
        self._inner.connection_made(self._transport)
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        self._inner.connection_lost(exc)

    def eof_received(self) -> bool | None:
        self._inner.eof_received()
        return None  # close the transport, as uvicorn's protocol does

    def pause_writing(self) -> None:
        self._inner.pause_writing()

    def resume_writing(self) -> None:
        self._inner.resume_writing()

    def data_received(self, data: bytes) -> None:
        if self._done:
            self._discarded += len(data)
            if self._discarded > _LINGER_BYTES and self._transport is not None:
                self._transport.close()
            return
        view = memoryview(data)
        while view and not self._done:
            if self._body_left:
                taken = min(self._body_left, len(view))
                self._body_left -= taken
                self._inner.data_received(bytes(view[:taken]))
                view = view[taken:]
                if not self._body_left:
                    self._disarm()
                continue
            view = self._take_head(view)

    # --- the guard -----------------------------------------------------------------------------

    def _take_head(self, view: memoryview) -> memoryview:
        if not self._head:
            self._arm()
        start = max(0, len(self._head) - 3)  # the blank line may straddle two reads
        self._head += view
        end = self._head.find(_HEAD_END, start)
        head = bytes(self._head if end < 0 else self._head[:end])
        try:
            _check_sizes(head)
            if end < 0:
                return view[len(view) :]
            length = _body_length(head)
        except _Refused as refused:
            self._send_error(refused.status, refused.code, refused.message)
            return view[len(view) :]
        whole = end + len(_HEAD_END)
        extra = len(self._head) - whole  # bytes of this read past the head
        self._inner.data_received(bytes(self._head[:whole]))
        self._head.clear()
        self._body_left = length
        if not length:
            self._disarm()
        return view[len(view) - extra :]

    def _arm(self) -> None:
        if self._timer is None:
            self._timer = self._loop.call_later(self._timeout, self._too_slow)

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _too_slow(self) -> None:
        self._timer = None
        if self._transport is None or self._transport.is_closing() or self._done:
            return
        if self._body_left:
            self._done = True
            self._transport.close()
            return
        message = f"the request was not received within {self._timeout:g} s; send it whole"
        self._send_error(408, "request_timeout", message)

    def _send_error(self, status: int, code: str, message: str) -> None:
        self._done = True
        self._disarm()
        assert self._transport is not None
        body = orjson.dumps({"error": {"code": code, "message": message}})
        head = [
            f"HTTP/1.1 {status} {http.HTTPStatus(status).phrase}",
            f"date: {formatdate(usegmt=True)}",
            "content-type: application/json; charset=utf-8",
            f"content-length: {len(body)}",
            "connection: close",
        ]
        self._transport.write(("\r\n".join(head) + "\r\n\r\n").encode("ascii") + body)
        # A lingering close: the client may still be sending the head refused, and closing with
        # unread bytes would reset the connection before it reads the answer. The answer ends
        # our side (EOF); what the client still sends is read and dropped, up to a bound.
        if self._transport.can_write_eof():
            self._transport.write_eof()
            self._loop.call_later(self._timeout, self._transport.close)
        else:
            self._transport.close()


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
