"""The HTTP target: the Target interface over a live compliance service (docs/service-api.md).

Threading model: the core is synchronous, aiohttp is asynchronous. The target owns one event
loop in one daemon thread (`loop_thread.py`), started on first use, with one keep-alive session
(`transport.py`, which also retries). Sync methods hand a coroutine to that loop and wait for its
result; `close()` cancels what is left, closes the session, stops the loop and joins the thread.

`check_many` reads the requests lazily in chunks and keeps at most two chunks in flight (the next
one runs while the caller consumes the current one), each drained by a fixed number of workers
under one semaphore of `concurrency` slots: a 500,000-request matrix never holds more than two
chunks of requests and answers, and results come back in request order.

What counts as an answer is `contract.py` (the shapes `serve` publishes) and `answers.py`.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future
from itertools import islice

from compliance_bake import __version__
from compliance_bake.inputs.models import Decision, Health, StatusPanel
from compliance_bake.targets import answers, routes
from compliance_bake.targets.interface import CheckRequest, Progress
from compliance_bake.targets.loop_thread import LoopThread, wait
from compliance_bake.targets.routes import TargetUrl
from compliance_bake.targets.transport import HttpSettings, Transport

__all__ = ["HttpSettings", "HttpTarget"]
_IN_FLIGHT_CHUNKS = 2


class HttpTarget:
    def __init__(
        self,
        url: str | TargetUrl,
        agent_key: str | None = None,
        settings: HttpSettings | None = None,
    ) -> None:
        self._url = routes.parse_target_url(url) if isinstance(url, str) else url
        self._settings = settings or HttpSettings()
        headers = {"Accept": "application/json", "User-Agent": f"compliance-bake/{__version__}"}
        if agent_key is not None:
            headers["Authorization"] = f"Bearer {agent_key}"
        self._transport = Transport(self._url, headers, self._settings)
        self._loop = LoopThread(
            "compliance-bake-http", self._transport.open, self._transport.close
        )
        self._check_answer = answers.Answer(f"GET {routes.ROUTE_CHECK}", self.base)
        self._runtime: str | None = None

    def __repr__(self) -> str:  # never the key
        return f"HttpTarget({self.base!r})"

    @property
    def base(self) -> str:
        return self._url.base

    def runtime(self) -> str:
        """The runtime /health reports, or `contract.RUNTIME_UNKNOWN` when it reports none."""
        if self._runtime is None:
            self.health()
        assert self._runtime is not None
        return self._runtime

    def health(self) -> Health:
        answer = answers.Answer(f"GET {routes.ROUTE_HEALTH}", self.base)
        health, runtime = self._loop.call(
            self._transport.get(
                answer, routes.ROUTE_HEALTH, "", lambda _s, raw: answers.decode_health(answer, raw)
            )
        )
        self._runtime = runtime
        return health

    def check(self, partner: str, state: str, wager_type: str) -> Decision:
        return self._loop.call(self._check(CheckRequest(partner, state, wager_type)))

    def check_many(
        self, requests: Iterable[CheckRequest], progress: Progress | None = None
    ) -> Iterator[Decision]:
        self._loop.loop()  # start now: a closed target fails here, not in a chunk
        source = iter(requests)
        pending: deque[Future[list[Decision]]] = deque()
        try:
            while chunk := list(islice(source, self._settings.chunk)):
                pending.append(self._loop.submit(self._check_chunk(chunk)))
                if len(pending) >= _IN_FLIGHT_CHUNKS:
                    yield from _chunk_done(pending.popleft(), progress)
            while pending:
                yield from _chunk_done(pending.popleft(), progress)
        finally:
            for future in pending:
                future.cancel()

    def status(self, state: str, partner: str) -> StatusPanel:
        answer = answers.Answer(f"GET {routes.ROUTE_STATUS}", self.base)
        return self._loop.call(
            self._transport.get(
                answer,
                routes.ROUTE_STATUS,
                routes.status_query(state, partner),
                lambda _s, raw: answers.decode_status(answer, raw, state),
            )
        )

    def close(self) -> None:
        self._loop.close()

    def __enter__(self) -> HttpTarget:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- on the loop -----------------------------------------------------------------------

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
        return await self._transport.get(
            answer,
            routes.ROUTE_CHECK,
            routes.check_query(request),
            lambda status, raw: answers.decode_check(answer, status, raw, request),
            routes.CHECK_STATUSES,
        )


def _chunk_done(future: Future[list[Decision]], progress: Progress | None) -> list[Decision]:
    decisions = wait(future)
    if progress is not None:
        progress(len(decisions))
    return decisions
