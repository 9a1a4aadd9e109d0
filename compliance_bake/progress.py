"""How the core reports progress on long work without knowing about terminals.

Two small channels: a `ProgressSink` for counted work (the shadow matrix, the audit's read), and
a phase callback, `Phases`, called with the name of each phase as it starts (`load`, `matrix`,
`sign`, `validate`, `write`; verify: `read`, `digests`, `rules`). The CLI turns them into a bar
on a terminal and one plain line per phase elsewhere; the core never knows which.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

Phases = Callable[[str], None]


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


def no_phases(name: str) -> None:
    """The phase callback that reports nothing."""
    return None
