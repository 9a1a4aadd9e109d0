"""Progress and phases on stderr: a bar on a terminal, one plain line per phase elsewhere.

The core calls a phase callback with each phase's name as it starts (compliance_bake.progress).
`reporting` gives the command a progress sink and that callback. With a terminal, rich draws the
bar and prints each phase above it; with no terminal (CI), each phase is one line on stderr as
it ends, `compliance-bake: bake: matrix 0.41 s`, and a last line with the total time. Nothing
under --quiet or --json.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any


def err_console() -> Any:
    from rich.console import Console

    from compliance_bake.cli.terminal import width

    return Console(file=sys.stderr, highlight=False, width=width())


HEARTBEAT = 30.0  # seconds between "still running" lines of one long phase


@dataclass
class PhaseLines:
    """The phase callback: a line as each phase ends, with its time; a last line with the total.

    Lines are printed as phases end, not as they start, so bad input (found while loading)
    still gives exactly one line on stderr: the error. A phase still running after HEARTBEAT
    seconds says so every HEARTBEAT seconds (`sign still running, 30 s`), so a long run in CI is
    never silent. On a terminal the running phase is also the label of a live spinner.
    """

    command: str
    enabled: bool
    console: Any = None  # a rich console above a live bar; None: plain lines on stderr
    live: Any = None  # the rich Progress, to show the running phase
    started: float = field(default_factory=time.monotonic)
    current: str | None = None
    since: float = 0.0
    seen: list[str] = field(default_factory=list)
    _task: Any = None
    _counted: bool = False
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _stop: threading.Event = field(default_factory=threading.Event)
    _beat: threading.Thread | None = None

    def _line(self, text: str) -> None:
        if not self.enabled:
            return
        line = f"compliance-bake: {self.command}: {text}"
        if self.console is not None:
            self.console.print(line, markup=False, highlight=False)
        else:
            print(line, file=sys.stderr, flush=True)

    def _end_current(self, now: float) -> None:
        if self.current is not None:
            self._line(f"{self.current} {now - self.since:,.2f} s")

    def _heartbeat(self) -> None:
        while not self._stop.wait(HEARTBEAT):
            with self._lock:
                if self.current is not None:
                    running = time.monotonic() - self.since
                    self._line(f"{self.current} still running, {running:,.0f} s")

    def __call__(self, name: str) -> None:
        with self._lock:
            now = time.monotonic()
            self._end_current(now)
            self.current, self.since = name, now
            self.seen.append(name)
            if self.live is not None:
                if self._task is None or self._counted:
                    # rich cannot set a counted row back to no total: a fresh spinner row
                    if self._task is not None:
                        self.live.remove_task(self._task)
                    self._task = self.live.add_task(name, total=None)
                    self._counted = False
                else:
                    self.live.update(self._task, description=name)
        if self.enabled and self._beat is None:
            self._beat = threading.Thread(target=self._heartbeat, daemon=True)
            self._beat.start()

    # The progress sink: counted work (the matrix, the audit's read) fills the running phase's
    # own row, so a terminal shows one bar, never a finished bar beside a live one.
    def begin(self, label: str, total: int) -> None:
        with self._lock:
            if self.live is None:
                return
            if self._task is None:
                self._task = self.live.add_task(label, total=total)
            else:
                self.live.update(self._task, description=label, total=total, completed=0)

    def advance(self, amount: int) -> None:
        if self.live is not None and self._task is not None:
            self.live.advance(self._task, amount)

    def end(self) -> None:
        with self._lock:
            if self.live is not None and self._task is not None:
                # the finished count is drawn once, then the row waits for the next phase
                self.live.refresh()
                self._counted = True

    def stop(self) -> None:
        """End the heartbeat (always, on success or error)."""
        self._stop.set()
        if self._beat is not None:
            self._beat.join()

    def done(self) -> None:
        self.stop()
        with self._lock:
            now = time.monotonic()
            self._end_current(now)
            self.current = None
            self._line(f"done in {now - self.started:,.2f} s")


@contextmanager
def reporting(command: str, *, enabled: bool) -> Iterator[tuple[Any, PhaseLines]]:
    """(progress sink, phase callback) for a command; `enabled` is False under --json/--quiet."""
    from compliance_bake.progress import NoProgress

    if not enabled or not sys.stderr.isatty():
        phases = PhaseLines(command, enabled)
        try:
            yield NoProgress(), phases
        finally:
            phases.stop()
        phases.done()
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err_console(),
        transient=True,
    ) as progress:
        phases = PhaseLines(command, enabled, console=progress.console, live=progress)
        try:
            yield phases, phases
        finally:
            phases.stop()
        phases.done()
