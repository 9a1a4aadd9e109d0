"""How the core reports progress on long work without knowing about terminals."""

from __future__ import annotations

from typing import Protocol


class ProgressSink(Protocol):
    def begin(self, label: str, total: int) -> None: ...

    def advance(self, amount: int) -> None: ...

    def end(self) -> None: ...


class NoProgress:
    def begin(self, label: str, total: int) -> None:
        return None

    def advance(self, amount: int) -> None:
        return None

    def end(self) -> None:
        return None
