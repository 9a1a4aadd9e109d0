"""One request, retried when worth it and allowed: the HTTP client of a target and a fetch alike.

A GET, and a POST whose profile operation says `retry = true`, may be retried: a refused or
reset connection, a body cut short, a 429 or a 5xx is retried up to `retries` times by
tenacity, with exponential backoff and full jitter (a `Retry-After` replaces the wait, up to
`retry_after_cap`). Any other POST is sent once: the service may not take it twice.
A target's request has ONE deadline, `timeout` seconds from its first attempt (`longest_request`):
every attempt and every wait falls inside it, so a retry gets only the time left, and a service
that accepts the connection and never answers is named down after `timeout` seconds, never
asked again at full length (a timeout is the deadline spent, not a failure in passing).
The first attempt runs outside tenacity, which costs client CPU on every call even when nothing
fails (`make bench-retry`, docs/benchmarks.md); tenacity takes over from the first
failure, which it sees as its own first attempt, so the policy is tenacity's whole. Redirects
are never followed.
Each aiohttp or asyncio failure becomes a `TargetError` here, at the edge.

The HTTP target (`Transport`) and the fetcher of published documents (`fetch.py`) share the
session (`client_session`), one attempt (`attempt`: the capped read and what counts as worth
another try) and the retries (`with_retries`); each keeps its own words for a final answer it
does not take.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

import aiohttp
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception_type,
    stop_after_attempt,
    wait_random_exponential,
)
from yarl import URL

from compliance_bake.errors import TargetError
from compliance_bake.targets.answers import Answer, error_detail
from compliance_bake.targets.refusals import (
    parse_retry_after,
    redirected,
    unauthorized,
    unexpected,
)
from compliance_bake.targets.routes import DEFAULT_TIMEOUT, TargetUrl, shown

T = TypeVar("T")
_ERRNO_NAMES = {111: "connection refused", 104: "connection reset", 110: "timed out"}
_JSON = {"Content-Type": "application/json"}

# What the target asks `request` for: decode (status, headers, body) into T; observe the
# answer first (the --explain record), whatever it is.
Decode = Callable[[int, Mapping[str, str], bytes], T]
Observe = Callable[[int, Mapping[str, str], bytes], None]


@dataclass(frozen=True, slots=True)
class HttpSettings:
    timeout: float = DEFAULT_TIMEOUT  # seconds per request, connect to last byte
    concurrency: int = 32  # checks in flight
    retries: int = 3  # further attempts after the first
    retry_after_cap: float = 5.0  # longest Retry-After honoured, seconds
    max_body: int = 1 << 20  # bytes
    backoff_base: float = 0.1  # seconds; attempt n waits up to base * 2**n ...
    backoff_cap: float = 2.0  # ... and never more than this
    chunk: int = 2048  # checks per chunk of check_many (progress granularity)


def longest_request(settings: HttpSettings) -> float:
    """The longest one request to a target takes, every attempt and wait included: its one
    deadline (see above). A bake whose service accepts connections and never answers ends at
    its first request (GET /health), in exit 3, within that."""
    return settings.timeout


class Transient(Exception):
    """A failure worth another attempt; `delay` is the server's Retry-After, if any."""

    def __init__(self, problem: str, delay: float | None = None) -> None:
        super().__init__(problem)
        self.problem = problem
        self.delay = delay


class RetryPolicy:
    """The waits between attempts: the server's Retry-After (capped), else full jitter."""

    def __init__(self, settings: HttpSettings) -> None:
        self._cap = settings.retry_after_cap
        self._jitter = wait_random_exponential(
            multiplier=settings.backoff_base, max=settings.backoff_cap
        )
        self._stop = stop_after_attempt(settings.retries + 1)
        self._retry = retry_if_exception_type(Transient)

    def wait(self, state: RetryCallState) -> float:
        failure = state.outcome.exception() if state.outcome is not None else None
        if isinstance(failure, Transient) and failure.delay is not None:
            return min(failure.delay, self._cap)
        return float(self._jitter(state))

    def retrying(self) -> AsyncRetrying:
        return AsyncRetrying(stop=self._stop, wait=self.wait, retry=self._retry, reraise=True)


@dataclass(frozen=True, slots=True)
class Request:
    """One request as the profile shapes it: method, path and query, body, extra headers."""

    method: str
    target: str  # path and query, already encoded
    body: bytes | None = None
    headers: Mapping[str, str] | None = None
    retry: bool = True


class Transport:
    """Requests on one keep-alive aiohttp session; runs on the target's event loop."""

    def __init__(
        self, url: TargetUrl, headers: dict[str, str], settings: HttpSettings, key_header: str
    ) -> None:
        self._url = url
        self._headers = headers
        self._key_header = key_header
        self._has_key = key_header in headers
        self._settings = settings
        self._policy = RetryPolicy(settings)
        self._session: aiohttp.ClientSession | None = None
        self._slots: asyncio.Semaphore | None = None

    async def open(self) -> None:
        settings = self._settings
        # The semaphore, not the connector's queue, holds back the requests beyond
        # `concurrency`: a request's timeout starts when it has a connection, so waiting for
        # its turn behind 31 others is never mistaken for a slow service.
        self._slots = asyncio.Semaphore(settings.concurrency)
        self._session = client_session(settings.timeout, settings.concurrency, self._headers)

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()

    def url(self, request: Request) -> str:
        return self._url.url(request.target)

    async def send(
        self,
        answer: Answer,
        request: Request,
        decode: Decode[T],
        accept: frozenset[int],
        observe: Observe | None = None,
    ) -> T:
        """Decode the answer whose status is in `accept`; retry transient failures."""
        url = URL(self.url(request), encoded=True)

        def failed(problem: str) -> TargetError:
            return TargetError(
                f"{answer.label}: {problem}",
                f"is the compliance service running and healthy at {self._url.base}?",
            )

        deadline: list[float] = []  # set when the first attempt has its connection slot
        status, headers, raw = await with_retries(
            self._policy,
            lambda: self._fetch(answer, url, request, deadline),
            request.retry,
            failed,
        )
        if observe is not None:
            observe(status, headers, raw)
        if 300 <= status < 400:
            raise redirected(answer, str(url), status, headers.get("Location"))
        if status == 401:
            raise unauthorized(answer, self._has_key, self._key_header)
        if status in accept:
            return decode(status, headers, raw)
        raise unexpected(answer, status, raw, self._url.base)

    async def _fetch(
        self, answer: Answer, url: URL, request: Request, deadline: list[float]
    ) -> tuple[int, Mapping[str, str], bytes]:
        """One attempt, within what is left of the request's deadline (started by the first
        attempt, once it has its slot: waiting behind `concurrency` others is not the
        service's slowness)."""
        session, slots = self._session, self._slots
        assert session is not None and slots is not None
        headers = request.headers
        if request.body is not None:
            headers = {**_JSON, **headers} if headers else _JSON
        async with slots:
            now = asyncio.get_running_loop().time()
            if not deadline:
                deadline.append(now + longest_request(self._settings))
            left = deadline[0] - now
            if left <= 0:  # a wait between attempts used what was left
                raise answer.fail(timed_out(self._settings))
            return await attempt(
                session,
                url,
                self._settings,
                answer.fail,
                method=request.method,
                body=request.body,
                headers=headers,
                timeout=left,
            )


def client_session(
    timeout: float | None, concurrency: int, headers: Mapping[str, str] | None = None
) -> aiohttp.ClientSession:
    """How every HTTP session is made: `timeout` seconds per request, connect to last byte
    (None: the caller keeps one deadline over all its requests); at most `concurrency`
    connections, kept alive; no cookie kept; no status raised (each caller reads its own)."""
    return aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(
            limit=concurrency, keepalive_timeout=30, enable_cleanup_closed=False
        ),
        headers=headers,
        timeout=aiohttp.ClientTimeout(total=timeout),
        cookie_jar=aiohttp.DummyCookieJar(),
        raise_for_status=False,
    )


async def with_retries(
    policy: RetryPolicy,
    once: Callable[[], Awaitable[T]],
    retry: bool,
    failed: Callable[[str], TargetError],
) -> T:
    """`once()`; when it fails in a way worth another try (`Transient`) and `retry` allows it,
    tenacity's further attempts, the first of which is the failure already seen. `failed`
    makes the error of the last failure, its attempts counted."""
    try:
        return await once()
    except Transient as caught:
        first = caught
    if not retry:
        raise failed(first.problem)
    tries = 0

    async def again() -> T:
        nonlocal tries
        tries += 1
        if tries == 1:
            raise first
        return await once()

    try:
        return await policy.retrying()(again)
    except Transient as last:
        after = f" (after {tries} attempts)" if tries > 1 else ""
        raise failed(last.problem + after) from None


async def attempt(
    session: aiohttp.ClientSession,
    url: URL,
    settings: HttpSettings,
    fail: Callable[[str], TargetError],
    *,
    method: str = "GET",
    body: bytes | None = None,
    headers: Mapping[str, str] | None = None,
    timeout: float | None = None,
) -> tuple[int, Mapping[str, str], bytes]:
    """One attempt: (status, headers, body) of a final answer (a redirect's body unread), or
    Transient (a refused or reset connection, a body cut short, a 429 or a 5xx), or what
    `fail` makes of an answer that is no HTTP answer, is over `settings.max_body`, or did not
    come within `timeout` seconds (what is left of the request's deadline; None: the
    session's, or the caller's own deadline): a timeout is final."""
    limit = session.timeout if timeout is None else aiohttp.ClientTimeout(total=timeout)
    try:
        async with session.request(
            method, url, data=body, headers=headers, allow_redirects=False, timeout=limit
        ) as response:
            status = response.status
            raw = (
                b""
                if 300 <= status < 400
                else await _read_capped(fail, response, settings.max_body)
            )
            if status == 429 or status >= 500:
                raise Transient(
                    f"HTTP {status}{error_detail(raw)}",
                    parse_retry_after(response.headers.get("Retry-After")),
                )
            return status, response.headers, raw
    except TimeoutError:
        raise fail(timed_out(settings)) from None
    except aiohttp.ClientPayloadError:
        raise Transient("the answer's body was cut short") from None
    except aiohttp.ClientConnectorError as exc:
        raise Transient(f"cannot connect to {url.host}:{url.port} ({_os_problem(exc)})") from None
    except aiohttp.ServerDisconnectedError:
        raise Transient("the service closed the connection without an answer") from None
    except aiohttp.ClientOSError as exc:
        raise Transient(f"connection failed ({_os_problem(exc)})") from None
    except (aiohttp.ClientConnectionError, ConnectionError) as exc:
        raise Transient(f"connection failed ({type(exc).__name__})") from None
    except aiohttp.ClientResponseError as exc:
        raise fail(f"not a valid HTTP answer ({shown(exc.message)})") from None
    except aiohttp.ClientError as exc:
        raise fail(f"HTTP client error ({type(exc).__name__})") from None


def timed_out(settings: HttpSettings) -> str:
    return f"no complete answer within {settings.timeout:g} s (a timeout is not retried)"


async def _read_capped(
    fail: Callable[[str], TargetError], response: aiohttp.ClientResponse, cap: int
) -> bytes:
    length = response.content_length
    if length is not None and length > cap:
        raise fail(f"the answer is {length} bytes, over the {cap}-byte limit")
    if length is not None and "Content-Encoding" not in response.headers:
        return await response.read()  # exactly `length` bytes, or ClientPayloadError
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.content.iter_any():
        size += len(chunk)
        if size > cap:
            raise fail(f"the answer is over the {cap}-byte limit")
        chunks.append(chunk)
    return b"".join(chunks)


def _os_problem(exc: aiohttp.ClientOSError) -> str:
    errno = exc.errno or 0
    return _ERRNO_NAMES.get(errno) or (exc.strerror or type(exc).__name__).lower()
