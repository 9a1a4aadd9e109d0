"""How the core reports progress on long work without knowing about terminals.

Two small channels: a `ProgressSink` for counted work (the shadow matrix, the audit's read), and
a phase callback, `Phases`, called with the name of each phase as it starts (`load`, `matrix`,
`sign`, `validate`, `write`; verify: `read`, `digests`, `rules`). The CLI turns them into a bar
on a terminal and one plain line per phase elsewhere; the core never knows which.
"""

from __future__ import annotations

import threading
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


class PercentBar:
    """A sink's bar in percent of work done, only ever moving forward, held at 99 until the work
    ends: an engine's own figure may go back, or reach the end before the work has."""

    def __init__(self, progress: ProgressSink) -> None:
        self.progress = progress
        self.shown = 0
        self.lock = threading.Lock()

    def show(self, done: int, total: int) -> None:
        if total <= 0:
            return
        value = min(99, 100 * done // total)
        with self.lock:
            if value > self.shown:
                self.progress.advance(value - self.shown)
                self.shown = value


def no_phases(name: str) -> None:
    """The phase callback that reports nothing."""
    return None
