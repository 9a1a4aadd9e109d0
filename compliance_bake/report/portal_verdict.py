"""The portal's verdict: what failed, counted as every report counts it, and the self-checks
in plain words. Its own module so that the page (report/portal.py) and the waivers' view of it
(report/portal_waivers.py) both read it, and neither imports the other."""

from __future__ import annotations

from dataclasses import dataclass

from compliance_bake.report.models import BoardRow, IntegrityCheck


@dataclass(frozen=True, slots=True)
class StateField:
    """One field of a board row's expected and actual states, each shown as JSON text."""

    name: str
    expected: str
    actual: str
    differs: bool


@dataclass(frozen=True, slots=True)
class BoardView:
    """A board row in plain words, and its fields side by side for the disclosure."""

    row: BoardRow
    plain: str
    fields: list[StateField]
    differing: list[str]


@dataclass(frozen=True, slots=True)
class Verdict:
    """PASS (`ok`), or FAIL with what failed, counted as the terminal, JUnit and the other
    reports count it (cli/outcome.py): each board row, each integrity check, each state with a
    decision that differs from the registry's, each failing disagreement kind
    (report/disagreements.py, named as the bake and `verify` name it), and each reason a play
    breaks the window for."""

    ok: bool
    failed: tuple[IntegrityCheck, ...]
    ids: list[str]
    board: list[BoardView]
    states: list[tuple[str, int]]
    reasons: list[tuple[str, int]]
    disagreements: list[str]
    # Every kind with rows, failing or reported: (label, rows, fails)
    kinds: list[tuple[str, int, bool]]
    # The policy's failing questions by kind: (words, questions, the first one's words)
    policy: list[tuple[str, int, str]]

    @property
    def count(self) -> int:
        return (
            len(self.board)
            + len(self.failed)
            + len(self.states)
            + len(self.reasons)
            + len(self.policy)
        )
