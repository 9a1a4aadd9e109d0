"""The interface the core talks to, whichever service answers (so the core never asks which).

The in-process engine (`inprocess.py`) and the HTTP service implement it alike; transport
problems are turned into `TargetError` at the edge, never leaked as library exceptions.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import NamedTuple, Protocol

from compliance_bake.inputs.models import Decision, Health, StatusPanel
from compliance_bake.policy.model import Question

Progress = Callable[[int], None]


class CheckRequest(NamedTuple):
    """One check to make. A named tuple, not a dataclass: the shadow matrix makes hundreds of
    thousands, and its fields are check()'s arguments in order."""

    partner: str
    state: str
    wager_type: str


@dataclass(frozen=True, slots=True)
class CheckMatrix:
    """Every partner checked in every state, states outer: the shadow matrix's requests.

    Any target reads it as the iterable of CheckRequest it is (made lazily, one at a time). The
    in-process target also reads its columns, and asks its engine's `check` column by column
    with no request object per check (500,000 of them cost more than the checks themselves).
    """

    columns: tuple[tuple[str, str], ...]  # (state, wager type), in order
    partners: tuple[str, ...]  # node ids, in order

    def __len__(self) -> int:
        return len(self.columns) * len(self.partners)

    def __iter__(self) -> Iterator[CheckRequest]:
        for state, wager_type in self.columns:
            for partner in self.partners:
                yield CheckRequest(partner, state, wager_type)


class Target(Protocol):
    @property
    def base(self) -> str:
        """The address written into `shadow.base`."""

    def runtime(self) -> str:
        """The runtime of the answering service, written into every proof's `bunVersion`."""

    def health(self) -> Health: ...

    def check(self, partner: str, state: str, wager_type: str) -> Decision: ...

    def check_many(
        self, requests: Iterable[CheckRequest], progress: Progress | None = None
    ) -> Iterator[Decision]:
        """Decisions in the order of the requests; an HTTP target may run them concurrently."""

    @property
    def has_shadow(self) -> bool:
        """Whether the target gives its own shadow decision (a profile's `[shadow]`)."""

    def shadow_many(
        self, requests: Iterable[CheckRequest], progress: Progress | None = None
    ) -> Iterator[Decision]:
        """The target's own shadow decisions, in request order; only when `has_shadow`."""

    @property
    def question_fields(self) -> frozenset[str] | None:
        """The question fields (`policy.questions.FIELDS`) the target's requests carry besides
        sport and market; None when it cannot be asked the policy's questions (a profile
        without `[questions]`): then only the headline questions are asked."""

    def ask_many(
        self, questions: Sequence[Question], progress: Progress | None = None
    ) -> Iterator[Decision]:
        """The decisions of whole questions, in order; only when `question_fields` is set."""

    def shadow_ask_many(
        self, questions: Sequence[Question], progress: Progress | None = None
    ) -> Iterator[Decision]:
        """The target's own shadow decisions of the questions; only with `has_shadow`."""

    @property
    def wager_types(self) -> tuple[str, ...]:
        """The wager types a profile's `[wagers]` tables name, in its order (a database
        registry's states take them); none without a profile."""

    def wager_types_missing(self, wager_types: Iterable[str]) -> None:
        """InputError (exit 2) when the target cannot ask about one of these wager types (a
        profile's `{wager.NAME}` without its `[wagers."TYPE"]` table); before any request."""

    def question(self, partner: str, state: str, wager_type: str) -> str:
        """The check's question as the target is asked it, for notes and reports."""

    def status(self, state: str, partner: str) -> StatusPanel: ...

    def close(self) -> None: ...
