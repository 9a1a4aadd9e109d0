"""Fetch one published document (a snapshot at /api/compliance) with the HTTP target's rules.

One GET on the HTTP target's client (aiohttp), no redirect followed (a 3xx is a failure, as for
the HTTP target), a size cap checked on Content-Length and again while reading, and ONE
deadline over the whole exchange (aiohttp's total timeout): connecting, the request, the status
line, the headers and the body. A peer that drips a byte at a time cannot stretch it. A body that
ends before its Content-Length is a failure too. Every failure is a TargetError naming the URL as
`shown_url` shows it (no user name or password), exit 3. Every URL the tool reads comes through
here: a snapshot (verify/source.py, for verify, diff and bake --previous), the transparency log's
files, a published attestation, a target's OpenAPI document; so does every URL it shows
(`shown_url`).
"""

from __future__ import annotations

import asyncio
import time
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
    import aiohttp

    start = time.monotonic()
    try:
        return asyncio.run(_get(url, timeout, max_bytes, absent_ok))
    except TimeoutError:
        elapsed = time.monotonic() - start
        _fail(url, f"timed out after {elapsed:.1f} s (the limit is {timeout:g} s)")
    except aiohttp.ClientPayloadError:
        _fail(url, "the body was cut short")
    except (OSError, aiohttp.ClientError, ValueError) as exc:
        _fail(url, f"cannot fetch: {type(exc).__name__}: {redacted(str(exc))}")
    raise AssertionError("unreachable")  # every branch above returns or raises


async def _get(url: str, timeout: float, max_bytes: int, absent_ok: bool) -> bytes | None:
    import aiohttp
    from yarl import URL

    headers = {"Accept": "application/json", "User-Agent": f"compliance-bake/{__version__}"}
    limit = aiohttp.ClientTimeout(total=timeout)
    async with (
        aiohttp.ClientSession(timeout=limit, auto_decompress=False) as session,
        session.get(URL(url, encoded=True), headers=headers, allow_redirects=False) as response,
    ):
        if 300 <= response.status < 400:
            _fail(
                url, f"answered {response.status} (a redirect, not followed)", "use the final URL"
            )
        if response.status == 404 and absent_ok:
            return None
        if response.status != 200:
            _fail(url, f"answered {response.status} {response.reason}")
        length = response.headers.get("Content-Length")
        expected = int(length) if length is not None and length.isdigit() else None
        if expected is not None and expected > max_bytes:
            _fail(url, f"the document is {length} bytes, over the cap of {max_bytes}")
        body = bytearray()
        async for chunk in response.content.iter_chunked(_CHUNK):
            body += chunk
            if len(body) > max_bytes:
                _fail(url, f"the document is over the cap of {max_bytes} bytes")
        if expected is not None and len(body) != expected:
            _fail(url, f"the body ended after {len(body)} of its {expected} bytes (cut short)")
        return bytes(body)
