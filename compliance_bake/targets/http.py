"""The HTTP target: the Target interface over a live compliance service, asked as its target
profile says (`profile.py`; without one, the built-in profile of docs/service-api.md).

Threading model: the core is synchronous, aiohttp is asynchronous. The target runs one event loop
in one thread through anyio's blocking portal, started on first use, with one keep-alive session
(`transport.py`, which also retries). Sync methods hand a coroutine to the portal and wait for its
result; `close()` cancels what is left, closes the session and stops the portal's thread.

`check_many` reads the requests lazily in chunks and keeps at most two chunks in flight (the next
one runs while the caller consumes the current one), each drained by a fixed number of workers
under one semaphore of `concurrency` slots: a 500,000-request matrix never holds more than two
chunks of requests and answers, and results come back in request order.

What counts as an answer is `contract.py` (the shapes `serve` publishes) and `answers.py`.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future
from contextlib import AbstractContextManager
from itertools import islice
from typing import Any, TypeVar

from anyio.from_thread import BlockingPortal, start_blocking_portal

from compliance_bake import __version__
from compliance_bake.errors import TargetError
from compliance_bake.inputs.models import Decision, Health, StatusPanel
from compliance_bake.policy.amounts import amount_json
from compliance_bake.policy.model import Question
from compliance_bake.policy.questions import FIELDS
from compliance_bake.targets import answers, explain, routes
from compliance_bake.targets.interface import CheckRequest, Progress
from compliance_bake.targets.profile import Operation, Profile, refuse_unsafe
from compliance_bake.targets.profile_file import builtin_profile
from compliance_bake.targets.routes import TargetUrl
from compliance_bake.targets.transport import HttpSettings, Observe, Request, Transport

__all__ = ["HttpSettings", "HttpTarget"]
T = TypeVar("T")
THREAD_NAME = "compliance-bake-http"
_IN_FLIGHT_CHUNKS = 2


def _uvloop() -> dict[str, bool]:
    """uvloop where it is installed (not on Windows): measured here it carries about three
    times the checks per second of the default loop with the same aiohttp code."""
    try:
        import uvloop  # noqa: F401
    except ImportError:  # pragma: no cover - Windows
        return {}
    return {"use_uvloop": True}


class HttpTarget:
    def __init__(
        self,
        url: str | TargetUrl,
        agent_key: str | None = None,
        settings: HttpSettings | None = None,
        profile: Profile | None = None,
        explain_to: explain.Explain | None = None,
    ) -> None:
        self._url = routes.parse_target_url(url) if isinstance(url, str) else url
        self._settings = settings or HttpSettings()
        self._profile = profile or builtin_profile()
        self.wager_types = tuple(self._profile.wagers or ())
        auth = self._profile.auth
        headers = {"Accept": "application/json", "User-Agent": f"compliance-bake/{__version__}"}
        self._shown_headers = dict(headers)
        if agent_key is not None:
            headers[auth.header] = auth.render(agent_key)
            self._shown_headers[auth.header] = auth.render(answers.KEY_SHOWN)
        self._transport = Transport(self._url, headers, self._settings, auth.header)
        self._explain = explain_to
        self._key = agent_key
        self._explained: set[str] = set()
        self._portal_cm: AbstractContextManager[BlockingPortal] | None = None
        self._portal: BlockingPortal | None = None
        self._closed = False
        self._running: set[Future[Any]] = set()
        profile_ = self._profile
        self._secrets = (agent_key,) if agent_key else ()
        self._check_answer = answers.Answer(profile_.check, self.base, profile_, self._secrets)
        self._shadow_answer = (
            None
            if profile_.shadow is None
            else answers.Answer(profile_.shadow, self.base, profile_, self._secrets)
        )
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
        operation = self._profile.health
        answer = answers.Answer(operation, self.base, self._profile, self._secrets)
        found: tuple[Health, str] = self._call(
            self._send,
            answer,
            {},
            lambda status, headers, raw: answers.decode_health(answer, status, headers, raw),
        )
        health, self._runtime = found
        return health

    def check(self, partner: str, state: str, wager_type: str) -> Decision:
        return self._call(self._check, CheckRequest(partner, state, wager_type))

    def check_many(
        self, requests: Iterable[CheckRequest], progress: Progress | None = None
    ) -> Iterator[Decision]:
        return self._many(self._check_answer, requests, progress)

    @property
    def has_shadow(self) -> bool:
        """Whether the profile has `[shadow]`: the service's own shadow decision."""
        return self._shadow_answer is not None

    def shadow_many(
        self, requests: Iterable[CheckRequest], progress: Progress | None = None
    ) -> Iterator[Decision]:
        """The service's shadow decisions, asked as `[shadow]` says, in request order."""
        if self._shadow_answer is None:
            raise RuntimeError("shadow_many without [shadow]: ask has_shadow first")
        return self._many(self._shadow_answer, requests, progress)

    @property
    def question_fields(self) -> frozenset[str] | None:
        """The fields the profile's `[questions]` maps besides sport and market; None without
        the table (the headline questions alone are asked)."""
        mapped = self._profile.questions
        if mapped is None:
            return None
        return frozenset(field for field, _ in mapped) & frozenset(FIELDS)

    def ask_many(
        self, questions: Sequence[Question], progress: Progress | None = None
    ) -> Iterator[Decision]:
        """The service's decisions of whole questions, each filled in as `[questions]` says."""
        if self._profile.questions is None:
            raise RuntimeError("ask_many without [questions]: ask question_fields first")
        return self._many(self._check_answer, questions, progress)

    def shadow_ask_many(
        self, questions: Sequence[Question], progress: Progress | None = None
    ) -> Iterator[Decision]:
        if self._profile.questions is None or self._shadow_answer is None:
            raise RuntimeError("shadow_ask_many without [questions] and [shadow]")
        return self._many(self._shadow_answer, questions, progress)

    def _question_operation(self, operation: Operation, question: Question) -> Operation:
        """The operation that asks `question`: its wager type's `[wagers]` values, then the
        question's own fields as `[questions]` maps them; a field the question leaves empty
        is left out of the request."""
        if operation.for_values is None:
            return operation
        wagers = self._profile.wagers or {}
        values: dict[str, object] = dict(wagers.get(question.wager_type, {}))
        carried: dict[str, object | None] = {
            "sport": question.sport,
            "market": question.market,
            "amount": None if question.amount is None else amount_json(question.amount),
            "betType": question.bet_type,
            "age": question.age,
            "zipCode": question.zip_code,
        }
        for field, name in self._profile.questions or ():
            value = carried[field]
            if value is None:
                values.pop(name, None)
            else:
                values[name] = value
        return operation.for_values(tuple(sorted(values.items())))

    def wager_types_missing(self, wager_types: Iterable[str]) -> None:
        """InputError (exit 2) when a wager type to be asked has no `[wagers."TYPE"]` table
        that the profile's questions need; called before any request."""
        self._profile.missing_wagers(wager_types)

    def question(self, partner: str, state: str, wager_type: str) -> str:
        """The check's question as sent for these values: method, path and query, body."""
        values = {"partner": partner, "state": state, "wagerType": wager_type}
        request = _request(self._profile.check, values)
        body = "" if request.body is None else " " + request.body.decode("utf-8", "replace")
        return f"{request.method} {request.target}{body}"

    def _many(
        self,
        answer: answers.Answer,
        requests: Iterable[CheckRequest | Question],
        progress: Progress | None,
    ) -> Iterator[Decision]:
        portal = self._open()  # now: a closed target fails here, not in a chunk
        source = iter(requests)
        pending: deque[Future[list[Decision]]] = deque()
        try:
            while chunk := list(islice(source, self._settings.chunk)):
                pending.append(self._start(portal, self._check_chunk, answer, chunk))
                if len(pending) >= _IN_FLIGHT_CHUNKS:
                    yield from self._done(pending.popleft(), progress)
            while pending:
                yield from self._done(pending.popleft(), progress)
        finally:
            for future in pending:
                future.cancel()

    def status(self, state: str, partner: str) -> StatusPanel:
        operation = self._profile.status
        answer = answers.Answer(operation, self.base, self._profile, self._secrets)
        panel: StatusPanel = self._call(
            self._send,
            answer,
            {"state": state, "partner": partner},
            lambda status, headers, raw: answers.decode_status(answer, status, headers, raw, state),
        )
        return panel

    def close(self) -> None:
        self._closed = True
        portal_cm, portal = self._portal_cm, self._portal
        self._portal_cm = self._portal = None
        if portal_cm is None or portal is None:
            return
        for future in list(self._running):  # a request still waiting (another thread's)
            future.cancel()
        try:
            portal.call(self._transport.close)
        finally:
            portal_cm.__exit__(None, None, None)

    def __enter__(self) -> HttpTarget:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the portal ------------------------------------------------------------------------

    def _open(self) -> BlockingPortal:
        if self._closed:
            raise RuntimeError("HttpTarget used after close()")
        if self._portal is None:
            portal_cm = start_blocking_portal(backend_options=_uvloop(), name=THREAD_NAME)
            portal = portal_cm.__enter__()
            try:
                portal.call(self._transport.open)
            except BaseException:
                portal_cm.__exit__(None, None, None)
                raise
            self._portal_cm, self._portal = portal_cm, portal
        return self._portal

    def _start(
        self, portal: BlockingPortal, function: Callable[..., Awaitable[T]], *args: Any
    ) -> Future[T]:
        future: Future[T] = portal.start_task_soon(function, *args)
        self._running.add(future)
        future.add_done_callback(self._running.discard)
        return future

    def _call(self, function: Callable[..., Awaitable[T]], *args: Any) -> T:
        return _wait(self._start(self._open(), function, *args))

    @staticmethod
    def _done(future: Future[list[Decision]], progress: Progress | None) -> list[Decision]:
        decisions = _wait(future)
        if progress is not None:
            progress(len(decisions))
        return decisions

    # -- on the loop -----------------------------------------------------------------------

    def _observer(self, answer: answers.Answer, request: Request) -> Observe | None:
        """The --explain hook for the first request of each operation, else None."""
        name = answer.operation.name
        if self._explain is None or name in self._explained:
            return None
        self._explained.add(name)
        sink = self._explain
        headers = {**self._shown_headers, **(request.headers or {})}

        def observe(status: int, answer_headers: Mapping[str, str], raw: bytes) -> None:
            url = self._transport.url(request)
            record = explain.exchange(
                answer, url, headers, request.body, status, answer_headers, raw
            )
            sink(explain.masked(record, self._key))

        return observe

    async def _send(
        self,
        answer: answers.Answer,
        values: Mapping[str, str],
        decode: Callable[[int, Mapping[str, str], bytes], T],
        operation: Operation | None = None,
    ) -> T:
        operation = operation or answer.operation
        request = _request(operation, values)
        observe = self._observer(answer, request) if self._explain is not None else None
        try:
            return await self._transport.send(answer, request, decode, operation.answers, observe)
        except TargetError as error:
            # A message quotes what the service sent; a service that echoes the key back must
            # not get it printed (the transport's messages have not been through the answer).
            shown = answer.redacted(error.message)
            if shown != error.message:
                raise TargetError(shown, error.hint) from None
            raise

    async def _check_chunk(
        self, answer: answers.Answer, chunk: list[CheckRequest | Question]
    ) -> list[Decision]:
        results: list[Decision | None] = [None] * len(chunk)
        work = iter(enumerate(chunk))

        async def worker() -> None:
            for index, request in work:  # shared: each request is taken by one worker
                results[index] = await self._check(request, answer)

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

    async def _check(
        self, request: CheckRequest | Question, answer: answers.Answer | None = None
    ) -> Decision:
        answer = answer or self._check_answer
        operation = None
        if isinstance(request, Question):
            operation = self._question_operation(answer.operation, request)
            request = CheckRequest(request.partner, request.state, request.wager_type)
        partner, state, wager_type = request
        asked = request
        return await self._send(
            answer,
            {"partner": partner, "state": state, "wagerType": wager_type},
            lambda status, headers, raw: answers.decode_check(answer, status, headers, raw, asked),
            operation,
        )


def _request(operation: Operation, values: Mapping[str, str]) -> Request:
    if operation.by_wager is not None:
        operation = operation.for_wager(values["wagerType"])
    refuse_unsafe(operation, values)
    return Request(
        method=operation.method,
        target=operation.target(values),
        body=operation.body_bytes(values),
        headers=operation.header_values(values) if operation.headers else None,
        retry=operation.retry,
    )


def _wait(future: Future[T]) -> T:
    """The future's result; an interrupt while waiting cancels the work too."""
    try:
        return future.result()
    except BaseException:
        future.cancel()
        raise
