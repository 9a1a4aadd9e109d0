"""One asyncio event loop in one daemon thread, for synchronous callers (the HTTP target).

The core is synchronous, aiohttp is asynchronous. `LoopThread` starts its loop on first use,
runs an opening coroutine on it before anyone may submit work, hands coroutines to it and waits
for their results; no caller ever runs or sees the loop. `close()` runs a closing coroutine,
stops the loop and joins the thread.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine
from concurrent.futures import Future
from typing import Any, TypeVar

T = TypeVar("T")
Opening = Callable[[], Coroutine[Any, Any, None]]


class LoopThread:
    def __init__(self, name: str, opening: Opening, closing: Opening) -> None:
        self._name = name
        self._opening = opening
        self._closing = closing
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._closed = False

    def loop(self) -> asyncio.AbstractEventLoop:
        """The running loop, started (and opened) on first use."""
        with self._lock:
            if self._closed:
                raise RuntimeError(f"{self._name} used after close()")
            if self._loop is None:
                loop = _new_loop()
                thread = threading.Thread(
                    target=_run_loop, args=(loop,), name=self._name, daemon=True
                )
                thread.start()
                self._loop, self._thread = loop, thread
                # Under the lock: nobody submits work before the opening has run.
                asyncio.run_coroutine_threadsafe(self._opening(), loop).result()
            return self._loop

    def submit(self, coro: Coroutine[Any, Any, T]) -> Future[T]:
        try:
            return asyncio.run_coroutine_threadsafe(coro, self.loop())
        except BaseException:
            coro.close()
            raise

    def call(self, coro: Coroutine[Any, Any, T]) -> T:
        return wait(self.submit(coro))

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

    async def _shutdown(self) -> None:
        current = asyncio.current_task()
        others = [task for task in asyncio.all_tasks() if task is not current]
        for task in others:
            task.cancel()
        await asyncio.gather(*others, return_exceptions=True)
        await self._closing()


def wait(future: Future[T]) -> T:
    """The future's result; an interrupt while waiting cancels the work too."""
    try:
        return future.result()
    except BaseException:
        future.cancel()
        raise


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
