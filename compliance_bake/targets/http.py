"""The HTTP target: the Target interface over a live compliance service (docs/service-api.md).

Threading model: the core is synchronous, aiohttp is asynchronous. The target owns one event
loop running in one daemon thread, started on first use, with one `ClientSession` on a keep-alive
`TCPConnector`. Sync methods hand a coroutine to that loop and wait for its result; no caller
ever runs or sees the loop. `close()` cancels what is left, closes the session, stops the loop
and joins the thread.

`check_many` reads the requests lazily in chunks and keeps at most two chunks in flight (the next
one runs while the caller consumes the current one), each drained by a fixed number of workers
under one semaphore of `concurrency` slots: a 500,000-request matrix never holds more than two
chunks of requests and answers, and results come back in request order.

Every request is a GET, so every request may be retried: a refused or reset connection, a
timeout, a body cut short, a 429 or a 5xx is retried up to `retries` times with exponential
backoff and full jitter (a `Retry-After` is honoured, up to `retry_after_cap`). Redirects are never
followed. Each aiohttp or asyncio failure becomes a `TargetError` here, at the edge.
"""

from __future__ import annotations

import asyncio
import random
import threading
from collections import deque
from collections.abc import Callable, Coroutine, Iterable, Iterator
from concurrent.futures import Future
from dataclasses import dataclass
from itertools import islice
from typing import Any, TypeVar

import aiohttp
from yarl import URL

from compliance_bake import __version__
from compliance_bake.errors import TargetError
from compliance_bake.inputs.models import Decision, Health, StatusPanel
from compliance_bake.targets import wire
from compliance_bake.targets.interface import CheckRequest, Progress

T = TypeVar("T")
_IN_FLIGHT_CHUNKS = 2
_REFUSED_ERRNO_NAMES = {111: "connection refused", 104: "connection reset", 110: "timed out"}


@dataclass(frozen=True, slots=True)
class HttpSettings:
    timeout: float = 10.0  # seconds per request, connect to last byte
    concurrency: int = 32  # checks in flight
    retries: int = 3  # further attempts after the first
    retry_after_cap: float = 5.0  # longest Retry-After honoured, seconds
    max_body: int = 1 << 20  # bytes
    backoff_base: float = 0.1  # seconds; attempt n waits up to base * 2**n ...
    backoff_cap: float = 2.0  # ... and never more than this
    chunk: int = 2048  # checks per chunk of check_many (progress granularity)


class _Transient(Exception):
    """A failure worth another attempt; `delay` is the server's Retry-After, if any."""

    def __init__(self, problem: str, delay: float | None = None) -> None:
        super().__init__(problem)
        self.problem = problem
        self.delay = delay


class HttpTarget:
    def __init__(
        self,
        url: str | wire.TargetUrl,
        agent_key: str | None = None,
        settings: HttpSettings | None = None,
    ) -> None:
        self._url = wire.parse_target_url(url) if isinstance(url, str) else url
        self._settings = settings or HttpSettings()
        self._headers = {
            "Accept": "application/json",
            "User-Agent": f"compliance-bake/{__version__}",
        }
        if agent_key is not None:
            self._headers["Authorization"] = f"Bearer {agent_key}"
        self._has_key = agent_key is not None
        self._check_answer = wire.Answer(f"GET {wire.ROUTE_CHECK}", self.base)
        self._runtime: str | None = None
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._session: aiohttp.ClientSession | None = None
        self._slots: asyncio.Semaphore | None = None
        self._closed = False

    def __repr__(self) -> str:  # never the key
        return f"HttpTarget({self.base!r})"

    # -- the Target protocol ---------------------------------------------------------------

    @property
    def base(self) -> str:
        return self._url.base

    def runtime(self) -> str:
        if self._runtime is None:
            self.health()
        assert self._runtime is not None
        return self._runtime

    def health(self) -> Health:
        answer = wire.Answer(f"GET {wire.ROUTE_HEALTH}", self.base)
        health, runtime = self._call(
            self._get(
                answer, wire.ROUTE_HEALTH, "", lambda _s, raw: wire.decode_health(answer, raw)
            )
        )
        self._runtime = runtime
        return health

    def check(self, partner: str, state: str, wager_type: str) -> Decision:
        return self._call(self._check(CheckRequest(partner, state, wager_type)))

    def check_many(
        self, requests: Iterable[CheckRequest], progress: Progress | None = None
    ) -> Iterator[Decision]:
        self._start()
        source = iter(requests)
        pending: deque[Future[list[Decision]]] = deque()
        try:
            while chunk := list(islice(source, self._settings.chunk)):
                pending.append(self._submit(self._check_chunk(chunk)))
                if len(pending) >= _IN_FLIGHT_CHUNKS:
                    yield from self._chunk_done(pending.popleft(), progress)
            while pending:
                yield from self._chunk_done(pending.popleft(), progress)
        finally:
            for future in pending:
                future.cancel()

    def status(self, state: str, partner: str) -> StatusPanel:
        answer = wire.Answer(f"GET {wire.ROUTE_STATUS}", self.base)
        query = wire.status_query(state, partner)
        return self._call(
            self._get(
                answer,
                wire.ROUTE_STATUS,
                query,
                lambda _s, raw: wire.decode_status(answer, raw, state),
            )
        )

    def close(self) -> None:
        with self._lock:
            self._closed = True
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
        if loop is None or thread is None:
            return
        try:
            asyncio.run_coroutine_threadsafe(self._shutdown(), loop).result(timeout=10)
        except TimeoutError:  # a stuck loop: stop it anyway; the thread is a daemon
            pass
        finally:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout=10)

    def __enter__(self) -> HttpTarget:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the loop thread -------------------------------------------------------------------

    def _start(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._closed:
                raise RuntimeError("HttpTarget used after close()")
            if self._loop is None:
                loop = _new_loop()
                thread = threading.Thread(
                    target=_run_loop, args=(loop,), name="compliance-bake-http", daemon=True
                )
                thread.start()
                self._loop, self._thread = loop, thread
                # Under the lock: nobody submits a request before the session exists.
                asyncio.run_coroutine_threadsafe(self._open(), loop).result()
            return self._loop

    async def _open(self) -> None:
        settings = self._settings
        # The semaphore, not the connector's queue, holds back the requests beyond
        # `concurrency`: a request's timeout starts when it has a connection, so waiting for
        # its turn behind 31 others is never mistaken for a slow service.
        self._slots = asyncio.Semaphore(settings.concurrency)
        self._session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(
                limit=settings.concurrency, keepalive_timeout=30, enable_cleanup_closed=False
            ),
            headers=self._headers,
            timeout=aiohttp.ClientTimeout(total=settings.timeout),
            cookie_jar=aiohttp.DummyCookieJar(),
            raise_for_status=False,
        )

    async def _shutdown(self) -> None:
        current = asyncio.current_task()
        others = [task for task in asyncio.all_tasks() if task is not current]
        for task in others:
            task.cancel()
        await asyncio.gather(*others, return_exceptions=True)
        if self._session is not None:
            await self._session.close()

    def _submit(self, coro: Coroutine[Any, Any, T]) -> Future[T]:
        return asyncio.run_coroutine_threadsafe(coro, self._start())

    def _call(self, coro: Coroutine[Any, Any, T]) -> T:
        try:
            future = self._submit(coro)
        except BaseException:
            coro.close()
            raise
        return _wait(future)

    def _chunk_done(
        self, future: Future[list[Decision]], progress: Progress | None
    ) -> list[Decision]:
        decisions = _wait(future)
        if progress is not None:
            progress(len(decisions))
        return decisions

    # -- requests (on the loop) ------------------------------------------------------------

    async def _check_chunk(self, chunk: list[CheckRequest]) -> list[Decision]:
        results: list[Decision | None] = [None] * len(chunk)
        work = iter(enumerate(chunk))

        async def worker() -> None:
            for index, request in work:  # shared: each request is taken by one worker
                results[index] = await self._check(request)

        workers = [
            asyncio.ensure_future(worker())
            for _ in range(min(self._settings.concurrency, len(chunk)))
        ]
        try:
            done, _ = await asyncio.wait(workers, return_when=asyncio.FIRST_EXCEPTION)
        finally:
            for task in workers:
                task.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
        for task in done:
            if not task.cancelled() and (error := task.exception()) is not None:
                raise error
        return results  # type: ignore[return-value]  # every slot is filled when none failed

    async def _check(self, request: CheckRequest) -> Decision:
        answer = self._check_answer
        return await self._get(
            answer,
            wire.ROUTE_CHECK,
            wire.check_query(request),
            lambda status, raw: wire.decode_check(answer, status, raw, request),
            wire.CHECK_STATUSES,
        )

    async def _get(
        self,
        answer: wire.Answer,
        route: str,
        query: str,
        decode: Callable[[int, bytes], T],
        accept: frozenset[int] = frozenset((200,)),
    ) -> T:
        """Decode the answer whose status is in `accept`; retry transient failures."""
        url = URL(self._url.url(route, query), encoded=True)
        settings = self._settings
        attempt = 0
        while True:
            try:
                status, raw = await self._fetch(answer, url)
            except _Transient as transient:
                problem, server_delay = transient.problem, transient.delay
            else:
                if status in accept:
                    return decode(status, raw)
                raise wire.unexpected(answer, status, raw, self.base)
            if attempt >= settings.retries:
                tries = f" (after {attempt + 1} attempts)" if attempt else ""
                raise TargetError(
                    f"{answer.label}: {problem}{tries}",
                    f"is the compliance service running and healthy at {self.base}?",
                )
            if server_delay is not None:
                delay = min(server_delay, settings.retry_after_cap)
            else:  # exponential backoff, full jitter
                ceiling = min(settings.backoff_cap, settings.backoff_base * 2**attempt)
                delay = random.uniform(0.0, ceiling)
            attempt += 1
            await asyncio.sleep(delay)

    async def _fetch(self, answer: wire.Answer, url: URL) -> tuple[int, bytes]:
        """One attempt: (status, body) of a final answer, or _Transient, or TargetError."""
        session, slots = self._session, self._slots
        assert session is not None and slots is not None
        settings = self._settings
        try:
            async with slots, session.get(url, allow_redirects=False) as response:
                status = response.status
                if 300 <= status < 400:
                    raise wire.redirected(
                        answer, str(url), status, response.headers.get("Location")
                    )
                if status == 401:
                    raise wire.unauthorized(answer, self._has_key)
                raw = await _read_capped(answer, response, settings.max_body)
                if status == 429 or status >= 500:
                    raise _Transient(
                        f"HTTP {status}{wire.error_detail(raw)}",
                        wire.parse_retry_after(response.headers.get("Retry-After")),
                    )
                return status, raw
        except TimeoutError:
            raise _Transient(f"no complete answer within {settings.timeout:g} s") from None
        except aiohttp.ClientPayloadError:
            raise _Transient("the answer's body was cut short") from None
        except aiohttp.ClientConnectorError as exc:
            raise _Transient(
                f"cannot connect to {self._url.host}:{self._url.port} ({_os_problem(exc)})"
            ) from None
        except aiohttp.ServerDisconnectedError:
            raise _Transient("the service closed the connection without an answer") from None
        except aiohttp.ClientOSError as exc:
            raise _Transient(f"connection failed ({_os_problem(exc)})") from None
        except (aiohttp.ClientConnectionError, ConnectionError) as exc:
            raise _Transient(f"connection failed ({type(exc).__name__})") from None
        except aiohttp.ClientResponseError as exc:
            raise answer.fail(f"not a valid HTTP answer ({wire.shown(exc.message)})") from None
        except aiohttp.ClientError as exc:
            raise answer.fail(f"HTTP client error ({type(exc).__name__})") from None


def _new_loop() -> asyncio.AbstractEventLoop:
    """uvloop where it is installed (not on Windows): measured here it carries about three times
    the checks per second of the default loop with the same aiohttp code."""
    try:
        import uvloop
    except ImportError:  # pragma: no cover - Windows
        return asyncio.new_event_loop()
    loop: asyncio.AbstractEventLoop = uvloop.new_event_loop()
    return loop


def _run_loop(loop: asyncio.AbstractEventLoop) -> None:
    asyncio.set_event_loop(loop)
    try:
        loop.run_forever()
    finally:
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.run_until_complete(loop.shutdown_default_executor())
        loop.close()


def _wait(future: Future[T]) -> T:
    try:
        return future.result()
    except BaseException:
        future.cancel()  # an interrupt while waiting: stop the work too
        raise


async def _read_capped(answer: wire.Answer, response: aiohttp.ClientResponse, cap: int) -> bytes:
    length = response.content_length
    if length is not None and length > cap:
        raise answer.fail(f"the answer is {length} bytes, over the {cap}-byte limit")
    if length is not None and "Content-Encoding" not in response.headers:
        return await response.read()  # exactly `length` bytes, or ClientPayloadError
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.content.iter_any():
        size += len(chunk)
        if size > cap:
            raise answer.fail(f"the answer is over the {cap}-byte limit")
        chunks.append(chunk)
    return b"".join(chunks)


def _os_problem(exc: aiohttp.ClientOSError) -> str:
    errno = exc.errno or 0
    return _REFUSED_ERRNO_NAMES.get(errno) or (exc.strerror or type(exc).__name__).lower()
