"""The in-process target: the engine called directly, the embedded default."""

from __future__ import annotations

import platform
from collections.abc import Iterable, Iterator
from itertools import islice, starmap

from compliance_bake.inputs.models import Decision, Health, StatusPanel
from compliance_bake.targets.engine import Engine
from compliance_bake.targets.interface import CheckRequest, Progress

IN_PROCESS_BASE = "in-process://compliance-bake"
_PROGRESS_EVERY = 4096


def python_runtime() -> str:
    return f"{platform.python_implementation()} {platform.python_version()}"


class InProcessTarget:
    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    @property
    def base(self) -> str:
        return IN_PROCESS_BASE

    def runtime(self) -> str:
        return python_runtime()

    def health(self) -> Health:
        return self._engine.health()

    def check(self, partner: str, state: str, wager_type: str) -> Decision:
        return self._engine.check(partner, state, wager_type)

    def check_many(
        self, requests: Iterable[CheckRequest], progress: Progress | None = None
    ) -> Iterator[Decision]:
        decisions = starmap(self._engine.check, requests)
        if progress is None:
            yield from decisions
            return
        while chunk := list(islice(decisions, _PROGRESS_EVERY)):
            yield from chunk
            progress(len(chunk))

    def status(self, state: str, partner: str) -> StatusPanel:
        return self._engine.status(state, partner)

    def close(self) -> None:
        return None
