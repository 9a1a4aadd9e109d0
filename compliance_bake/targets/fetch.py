"""Fetch one published document (a snapshot at /api/compliance) with the HTTP target's rules.

One GET, a timeout on every socket operation and on the whole transfer, no redirect followed
(a 3xx is a failure, as for the HTTP target), and a size cap checked on Content-Length and
again while reading. Every failure is a TargetError naming the URL (exit 3).
"""

from __future__ import annotations

import http.client
import time
from urllib.parse import urlsplit

from compliance_bake import __version__
from compliance_bake.errors import TargetError

# A 500,000-row snapshot is about 80 MB; the cap leaves room for three times that.
SNAPSHOT_MAX_BYTES = 256 * 1024 * 1024
DEFAULT_TIMEOUT = 30.0
_CHUNK = 1 << 20


def _fail(url: str, what: str, hint: str = "check the URL and that the service answers") -> None:
    raise TargetError(f"{url}: {what}", hint)


def fetch_document(url: str, *, timeout: float, max_bytes: int) -> bytes:
    """The body of `GET url` when it answers 200 within `timeout` seconds and `max_bytes`."""
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        port = -1
    if parts.scheme not in ("http", "https") or not parts.hostname or port == -1:
        _fail(url, "not an http(s) URL", "pass a URL such as https://host/api/compliance")
    connection_type = (
        http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    )
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    deadline = time.monotonic() + timeout
    connection = connection_type(parts.hostname or "", port, timeout=timeout)
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
        if response.status != 200:
            _fail(url, f"answered {response.status} {response.reason}")
        length = response.getheader("Content-Length")
        if length is not None and length.isdigit() and int(length) > max_bytes:
            _fail(url, f"the document is {length} bytes, over the cap of {max_bytes}")
        body = bytearray()
        while chunk := response.read(_CHUNK):
            body += chunk
            if len(body) > max_bytes:
                _fail(url, f"the document is over the cap of {max_bytes} bytes")
            if time.monotonic() > deadline:
                _fail(url, f"timed out after {timeout:g} s")
        return bytes(body)
    except TimeoutError:
        _fail(url, f"timed out after {timeout:g} s")
    except (OSError, http.client.HTTPException) as exc:
        _fail(url, f"cannot fetch: {type(exc).__name__}: {exc}")
    finally:
        if response is not None:
            response.close()
        connection.close()
    raise AssertionError("unreachable")  # every branch above returns or raises
