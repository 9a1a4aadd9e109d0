"""Fetch one published document (a snapshot at /api/compliance) with the HTTP target's rules.

One GET, no redirect followed (a 3xx is a failure, as for the HTTP target), a size cap checked on
Content-Length and again while reading, and ONE deadline over the whole exchange: connecting, the
request, the status line, the headers and the body. A peer that drips a byte at a time cannot
stretch it: every read waits at most for what is left of the deadline. A body that ends before its
Content-Length is a failure too. Every failure is a TargetError naming the URL as `shown_url`
shows it (no user name or password), exit 3. Every URL the tool reads comes through here: a
snapshot (verify/source.py, for verify, diff and bake --previous), the transparency log's files,
a target's OpenAPI document; so does every URL it shows (`shown_url`).
"""

from __future__ import annotations

import http.client
import socket
import ssl
import time
from typing import Any
from urllib.parse import urlsplit

from compliance_bake import __version__
from compliance_bake.errors import TargetError
from compliance_bake.inputs.redaction import redacted

# A 500,000-row snapshot is about 80 MB; the cap leaves room for three times that.
SNAPSHOT_MAX_BYTES = 256 * 1024 * 1024
DEFAULT_TIMEOUT = 30.0
URL_PREFIXES = ("http://", "https://")
_CHUNK = 1 << 20


def is_url(source: str) -> bool:
    return source.startswith(URL_PREFIXES)


def shown_url(source: str) -> str:
    """`source` as every output shows it: a URL without its user name, password, query or
    fragment (any of them may carry a credential; `inputs/redaction.py`, the one function that
    removes secrets); a path as given."""
    return redacted(source)


class _Deadline:
    """Seconds left until the exchange's end; TimeoutError once none are."""

    def __init__(self, seconds: float) -> None:
        self.start = time.monotonic()
        self.end = self.start + seconds

    def left(self) -> float:
        left = self.end - time.monotonic()
        if left <= 0:
            raise TimeoutError
        return left

    def elapsed(self) -> float:
        return time.monotonic() - self.start


class _BoundedSocket(socket.socket):
    """A socket whose every read and write waits at most until the deadline."""

    deadline: _Deadline

    def recv_into(self, buffer: Any, nbytes: int = 0, flags: int = 0) -> int:
        self.settimeout(self.deadline.left())
        return super().recv_into(buffer, nbytes, flags)

    def recv(self, bufsize: int, flags: int = 0) -> bytes:
        self.settimeout(self.deadline.left())
        return super().recv(bufsize, flags)

    def sendall(self, data: Any, flags: int = 0) -> None:
        self.settimeout(self.deadline.left())
        super().sendall(data, flags)


class _BoundedSSLSocket(ssl.SSLSocket):
    """The same bound over TLS (CPython bounds one TLS read by its timeout as a whole)."""

    deadline: _Deadline

    def recv_into(self, buffer: Any, nbytes: int | None = None, flags: int = 0) -> int:
        self.settimeout(self.deadline.left())
        return super().recv_into(buffer, nbytes, flags)

    def recv(self, buflen: int = 1024, flags: int = 0) -> bytes:
        self.settimeout(self.deadline.left())
        return super().recv(buflen, flags)

    def sendall(self, data: Any, flags: int = 0) -> None:
        self.settimeout(self.deadline.left())
        super().sendall(data, flags)


def _bounded(sock: socket.socket, deadline: _Deadline) -> _BoundedSocket:
    bounded = _BoundedSocket(sock.family, sock.type, sock.proto, fileno=sock.detach())
    bounded.deadline = deadline
    bounded.settimeout(deadline.left())
    return bounded


class _Connection(http.client.HTTPConnection):
    def __init__(self, host: str, port: int | None, deadline: _Deadline) -> None:
        super().__init__(host, port, timeout=deadline.left())
        self.deadline = deadline

    def connect(self) -> None:
        sock = socket.create_connection((self.host, self.port), self.deadline.left())
        self.sock = _bounded(sock, self.deadline)


class _TLSConnection(http.client.HTTPSConnection):
    def __init__(self, host: str, port: int | None, deadline: _Deadline) -> None:
        context = ssl.create_default_context()
        context.sslsocket_class = _BoundedSSLSocket
        super().__init__(host, port, timeout=deadline.left(), context=context)
        self.deadline = deadline
        self.context = context

    def connect(self) -> None:
        sock = _bounded(
            socket.create_connection((self.host, self.port), self.deadline.left()), self.deadline
        )
        wrapped = self.context.wrap_socket(
            sock, server_hostname=self.host, do_handshake_on_connect=False
        )
        assert isinstance(wrapped, _BoundedSSLSocket)
        wrapped.deadline = self.deadline
        wrapped.settimeout(self.deadline.left())
        wrapped.do_handshake()
        self.sock = wrapped


def _fail(url: str, what: str, hint: str = "check the URL and that the service answers") -> None:
    raise TargetError(f"{shown_url(url)}: {what}", hint)


def fetch_document(url: str, *, timeout: float, max_bytes: int) -> bytes:
    """The body of `GET url` when it answers 200, whole, within `timeout` seconds and
    `max_bytes`."""
    body = _fetch(url, timeout, max_bytes, absent_ok=False)
    assert body is not None  # a 404 is a failure here
    return body


def fetch_if_published(url: str, *, timeout: float, max_bytes: int) -> bytes | None:
    """As `fetch_document`, with the same limits, but None when the server answers 404: for a
    file that may be absent from a publication (the caller names what is missing)."""
    return _fetch(url, timeout, max_bytes, absent_ok=True)


def _fetch(url: str, timeout: float, max_bytes: int, *, absent_ok: bool) -> bytes | None:
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        port = -1
    if parts.scheme not in ("http", "https") or not parts.hostname or port == -1:
        _fail(url, "not an http(s) URL", "pass a URL such as https://host/api/compliance")
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    deadline = _Deadline(timeout)
    kind = _TLSConnection if parts.scheme == "https" else _Connection
    connection = kind(parts.hostname or "", port, deadline)
    response: http.client.HTTPResponse | None = None
    try:
        connection.request(
            "GET",
            path,
            headers={"Accept": "application/json", "User-Agent": f"compliance-bake/{__version__}"},
        )
        response = connection.getresponse()
        if 300 <= response.status < 400:
            _fail(
                url, f"answered {response.status} (a redirect, not followed)", "use the final URL"
            )
        if response.status == 404 and absent_ok:
            return None
        if response.status != 200:
            _fail(url, f"answered {response.status} {response.reason}")
        length = response.getheader("Content-Length")
        expected = int(length) if length is not None and length.isdigit() else None
        if expected is not None and expected > max_bytes:
            _fail(url, f"the document is {length} bytes, over the cap of {max_bytes}")
        body = bytearray()
        while chunk := response.read(_CHUNK):
            body += chunk
            if len(body) > max_bytes:
                _fail(url, f"the document is over the cap of {max_bytes} bytes")
        if expected is not None and len(body) != expected:
            _fail(url, f"the body ended after {len(body)} of its {expected} bytes (cut short)")
        return bytes(body)
    except TimeoutError:
        _fail(url, f"timed out after {deadline.elapsed():.1f} s (the limit is {timeout:g} s)")
    except http.client.IncompleteRead as exc:
        _fail(url, f"the body was cut short ({len(exc.partial)} bytes read)")
    except (OSError, http.client.HTTPException) as exc:
        _fail(url, f"cannot fetch: {type(exc).__name__}: {exc}")
    finally:
        if response is not None:
            response.close()
        connection.close()
    raise AssertionError("unreachable")  # every branch above returns or raises
