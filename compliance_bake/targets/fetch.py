"""Fetch one published document (a snapshot at /api/compliance) with the HTTP target's rules.

One GET on the HTTP target's client (targets/transport.py: its session, its capped read, its
retries of a refused or reset connection, a body cut short, a 429 or a 5xx), no redirect
followed (a 3xx is a failure, as for the HTTP target), a size cap checked on Content-Length and
again while reading, and ONE deadline over the whole exchange, every attempt and wait
included: connecting, the request, the status line, the headers and the body. A peer that drips
a byte at a time cannot stretch it. Every failure is a TargetError naming the URL as
`shown_url` shows it (no user name or password), exit 3. Every published document the tool
reads comes through here: a snapshot (verify/source.py, for verify, diff and bake --previous),
the transparency log's files, a published attestation, a target's OpenAPI document (a
target's own questions go through the same client, from targets/http.py); so does every URL
the tool shows (`shown_url`)."""

from __future__ import annotations

import asyncio
import time
from http import HTTPStatus
from urllib.parse import urlsplit

from compliance_bake import __version__
from compliance_bake.errors import TargetError
from compliance_bake.inputs.redaction import redacted

# A 500,000-row snapshot is about 80 MB; the cap leaves room for three times that.
SNAPSHOT_MAX_BYTES = 256 * 1024 * 1024
URL_PREFIXES = ("http://", "https://")


def is_url(source: str) -> bool:
    return source.startswith(URL_PREFIXES)


def shown_url(source: str) -> str:
    """`source` as every output shows it: a URL without its user name, password, query or
    fragment (any of them may carry a credential: `inputs/redaction.py`); a path as given."""
    return redacted(source)


_HINT = "check the URL and that the service answers"
_HEADERS = {"Accept": "application/json", "User-Agent": f"compliance-bake/{__version__}"}


def _fail(url: str, what: str, hint: str = _HINT) -> None:
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
    start = time.monotonic()
    try:
        return asyncio.run(_get(url, timeout, max_bytes, absent_ok))
    except TimeoutError:
        elapsed = time.monotonic() - start
        _fail(url, f"timed out after {elapsed:.1f} s (the limit is {timeout:g} s)")
    except (OSError, ValueError) as exc:
        _fail(url, f"cannot fetch: {type(exc).__name__}: {redacted(str(exc))}")
    raise AssertionError("unreachable")  # every branch above returns or raises


async def _get(url: str, timeout: float, max_bytes: int, absent_ok: bool) -> bytes | None:
    """The HTTP target's client (targets/transport.py), one GET retried as the target's are,
    every attempt and every wait inside the one deadline."""
    from yarl import URL

    from compliance_bake.targets.transport import (
        HttpSettings,
        RetryPolicy,
        attempt,
        client_session,
        with_retries,
    )

    def failed(problem: str) -> TargetError:
        return TargetError(f"{shown_url(url)}: {problem}", _HINT)

    settings = HttpSettings(timeout=timeout, concurrency=1, max_body=max_bytes)
    # The URL's user name and password are dropped, never sent (aiohttp would send them as
    # Basic auth, in clear over http), as --target drops them (docs/service-api.md).
    address = URL(url, encoded=True).with_user(None)
    # The one deadline is asyncio's, over every attempt and wait; the session sets none of its
    # own (aiohttp's would turn the deadline's cancellation into one more failed attempt).
    async with (
        asyncio.timeout(timeout),
        client_session(None, settings.concurrency, _HEADERS) as session,
    ):
        status, _, body = await with_retries(
            RetryPolicy(settings), lambda: attempt(session, address, settings, failed), True, failed
        )
    if 300 <= status < 400:
        _fail(url, f"answered {status} (a redirect, not followed)", "use the final URL")
    if status == 404 and absent_ok:
        return None
    if status != 200:
        _fail(url, f"answered {status} {_phrase(status)}".rstrip())
    return body


def _phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ""
