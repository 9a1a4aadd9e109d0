"""The in-process target: the engine called directly, the embedded default."""

from __future__ import annotations

import platform
from collections.abc import Iterable, Iterator, Sequence
from itertools import chain, islice, repeat, starmap

from compliance_bake.inputs.models import Decision, Health, StatusPanel
from compliance_bake.policy.model import Question
from compliance_bake.policy.questions import FIELDS
from compliance_bake.targets.engine import Engine
from compliance_bake.targets.interface import CheckMatrix, CheckRequest, Progress

IN_PROCESS_BASE = "in-process://compliance-bake"
_PROGRESS_EVERY = 4096


def python_runtime() -> str:
    return f"{platform.python_implementation()} {platform.python_version()}"


class InProcessTarget:
    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self.wager_types: tuple[str, ...] = ()  # no profile, no [wagers]

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
        if isinstance(requests, CheckMatrix):
            return chain.from_iterable(self._matrix_chunks(requests, progress))
        return self._check_each(requests, progress)

    def _check_each(
        self, requests: Iterable[CheckRequest], progress: Progress | None
    ) -> Iterator[Decision]:
        decisions = starmap(self._engine.check, requests)
        if progress is None:
            yield from decisions
            return
        while chunk := list(islice(decisions, _PROGRESS_EVERY)):
            yield from chunk
            progress(len(chunk))

    def _matrix_chunks(
        self, matrix: CheckMatrix, progress: Progress | None
    ) -> Iterator[list[Decision]]:
        """The engine's own `check` (looked up now: whatever the class holds), mapped over each
        column in chunks of _PROGRESS_EVERY partners."""
        check = self._engine.check
        partners = matrix.partners
        for state, wager_type in matrix.columns:
            for start in range(0, len(partners), _PROGRESS_EVERY):
                chunk = partners[start : start + _PROGRESS_EVERY]
                size = len(chunk)
                decisions = list(map(check, chunk, repeat(state, size), repeat(wager_type, size)))
                if progress is not None:
                    progress(size)
                yield decisions

    @property
    def has_shadow(self) -> bool:
        return False  # the engine has one decision; the shadow is the licence registry's

    def shadow_many(
        self, requests: Iterable[CheckRequest], progress: Progress | None = None
    ) -> Iterator[Decision]:
        raise RuntimeError("the in-process engine has no shadow decision")

    @property
    def question_fields(self) -> frozenset[str]:
        return frozenset(FIELDS)  # the engine is asked every question whole

    def ask_many(
        self, questions: Sequence[Question], progress: Progress | None = None
    ) -> Iterator[Decision]:
        decisions = list(map(self._engine.ask, questions))
        if progress is not None:
            progress(len(decisions))
        return iter(decisions)

    def shadow_ask_many(
        self, questions: Sequence[Question], progress: Progress | None = None
    ) -> Iterator[Decision]:
        raise RuntimeError("the in-process engine has no shadow decision")

    def wager_types_missing(self, wager_types: Iterable[str]) -> None:
        return None  # the engine takes any wager type

    def question(self, partner: str, state: str, wager_type: str) -> str:
        return f"engine check(partner={partner}, state={state}, wagerType={wager_type})"

    def status(self, state: str, partner: str) -> StatusPanel:
        return self._engine.status(state, partner)

    def close(self) -> None:
        return None
