"""The shadow rows as columns, read once at C speed, for the rules that look at every row.

A rule over 500,000 rows walked in Python takes about a second; the same question asked of
columns (`map`, `set`, `list.count`) takes a few milliseconds. Each fast check only ever says
"the rule holds": when it cannot show that, the rule walks the rows one by one and names the
places, so the findings are the row-by-row ones in every case. `shadow_columns` is None unless
every row converts to a typed row (report/models.py `ShadowRow`: every field the rules read, of
its type); a rule then walks, and fails closed.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import msgspec

from compliance_bake.memory import gc_paused
from compliance_bake.report.models import ShadowRow


@dataclass(frozen=True, slots=True)
class Grid:
    """Rows laid out as the bake writes them: runs of `width` rows, each of one state and each
    holding the same partners in the same order, no partner twice in a run."""

    width: int
    states: list[Any]  # each run's state, in order (not known to be distinct)
    partners: list[Any]  # the partners of every run, in order


def _grid(state: list[Any], partner: list[Any]) -> Grid | None:
    """The Grid the rows are, or None (then the rules count pair by pair)."""
    if not state:
        return None
    width = state.count(state[0])  # the first run's width, when its state has no other run
    starts = range(0, len(state), width)
    if len(state) % width or not all(
        state[at : at + width].count(state[at]) == width for at in starts
    ):
        return None
    first = partner[:width]
    try:
        if len(set(first)) != width:
            return None
    except TypeError:  # a partner that cannot be hashed
        return None
    if not all(partner[at : at + width] == first for at in starts[1:]):
        return None
    return Grid(width, state[::width], first)


@dataclass(frozen=True, slots=True)
class ShadowColumns:
    state: list[Any]
    partner: list[Any]
    licence: list[Any]  # licenseStatus
    real: list[Any]  # realAllowed
    shadow: list[Any]  # shadowAllowed
    match: list[Any]
    reason: list[Any]  # None where the row has no reason
    booleans: bool  # realAllowed, shadowAllowed and match hold True or False, nothing else
    states_str: bool  # every state is a string
    grid: Grid | None  # the rows as the bake lays them out, when they are (`_grid`)

    def __len__(self) -> int:
        return len(self.state)


def shadow_columns(
    snap: dict[str, Any], typed: Sequence[ShadowRow] | None = None
) -> ShadowColumns | None:
    """The rows of `snap` as columns, read from the typed rows (`typed`: the rows of the typed
    snapshot, when the caller has built it; otherwise they are converted here).

    The typed rows are read, not the JSON objects: one conversion at C speed checks every
    row's types (a string where a string stands, True or False where a boolean does), which
    the columns would otherwise check with a pass of their own over each, and the typed
    snapshot the portal is rendered from holds these very rows. None when a row does not
    convert (then a rule walks the JSON rows, and names the place)."""
    if typed is None:
        try:
            rows = snap["shadow"]["rows"]
            if type(rows) is not list:
                return None
            typed = msgspec.convert(rows, list[ShadowRow])
        except (KeyError, TypeError, msgspec.ValidationError):
            return None
    with gc_paused(keep=True):  # seven lists of 500,000 values: collections would walk them
        state = [row.state for row in typed]
        partner = [row.partner for row in typed]
        licence = [row.license_status for row in typed]
        real = [row.real_allowed for row in typed]
        shadow = [row.shadow_allowed for row in typed]
        match = [row.match for row in typed]
        reason = [row.reason for row in typed]
    return ShadowColumns(
        state,
        partner,
        licence,
        real,
        shadow,
        match,
        reason,
        booleans=True,  # by the rows' type
        states_str=True,
        grid=_grid(state, partner),
    )


def covers(states: list[Any], columns: ShadowColumns) -> bool:
    """Every pair's state is regulated, no pair twice, and as many pairs as states x partners:
    then every state x partner is there (the pairs lie within them, and are that many). On the
    bake's grid: each regulated state has a run of its own, and no other run."""
    try:
        regulated = set(states)
        if columns.grid is not None:
            heads = columns.grid.states
            return len(set(heads)) == len(heads) and set(heads) == regulated
        partners, present = set(columns.partner), set(columns.state)
    except TypeError:  # a state or partner that cannot be hashed
        return False
    return (
        present <= regulated
        and len(columns) == len(regulated) * len(partners)
        and _pairs_unique(columns.state, columns.partner, len(present))
    )


def matrix_partners(columns: ShadowColumns) -> dict[Any, None]:
    """The partners of the matrix in the order they first appear (`dict.fromkeys`)."""
    grid = columns.grid
    return dict.fromkeys(columns.partner if grid is None else grid.partners)


def _pairs_unique(state: list[Any], partner: list[Any], states: int) -> bool:
    """No (state, partner) twice. When each state's rows stand together, as the bake writes
    them, each run's partners must be distinct; otherwise the distinct pairs are counted."""
    bounds = _runs(state, states)
    if bounds is not None:
        return all(len(set(partner[a:b])) == b - a for a, b in itertools.pairwise(bounds))
    return len(set(zip(state, partner, strict=True))) == len(state)


def _runs(column: list[Any], most: int) -> list[int] | None:
    """Where the runs of equal values start, and the end; None past `most` runs (then some
    value stands in two runs)."""
    changes = list(map(operator.ne, column[1:], column[:-1]))
    bounds, at = [0], 0
    while len(bounds) <= most:
        try:
            at = changes.index(True, at) + 1
        except ValueError:
            return [*bounds, len(column)] if column else [0]
        bounds.append(at)
    return None


def statuses_within(columns: ShadowColumns, allowed: tuple[Any, ...]) -> bool:
    try:
        return set(columns.licence) <= set(allowed)
    except TypeError:  # a status that cannot be hashed is none of them
        return False


def licence_decides(columns: ShadowColumns) -> bool:
    """shadowAllowed is (licenseStatus == "active"), and match is (realAllowed is
    shadowAllowed), on every row; lists of booleans compare as `is` would."""
    if not columns.booleans:
        return False
    active = list(map(operator.eq, columns.licence, itertools.repeat("active")))
    same = list(map(operator.is_, columns.real, columns.shadow))
    return active == columns.shadow and same == columns.match


def reasons_hold(columns: ShadowColumns, wanted: Callable[[str], str]) -> bool:
    """An allowed row (realAllowed truthy) has no reason; a blocked one `wanted(its state)`."""
    if not columns.states_str:
        return False
    grid = columns.grid
    if grid is not None and columns.booleans:  # run by run: each row's reason from its decision
        for at, state in zip(range(0, len(columns), grid.width), grid.states, strict=True):
            end = at + grid.width
            reason_of = {True: None, False: wanted(state)}.__getitem__
            if columns.reason[at:end] != list(map(reason_of, columns.real[at:end])):
                return False
        return True
    allowed = list(itertools.compress(columns.reason, columns.real))
    if allowed.count(None) != len(allowed):
        return False
    blocked = list(map(operator.not_, columns.real))
    reasons = {state: wanted(state) for state in set(columns.state)}
    expected = list(map(reasons.__getitem__, itertools.compress(columns.state, blocked)))
    return list(itertools.compress(columns.reason, blocked)) == expected


def state_totals(columns: ShadowColumns) -> dict[Any, dict[str, int]] | None:
    """The portal's totals per state (report/portal.py `state_totals`), counted run by run on a
    grid of booleans whose runs' states are distinct; None otherwise (the portal counts them).

    Kept because `verify` has the columns already and the portal's own count is a pass over
    every typed row, which `make bench`'s verify-against-bake figure shows;
    tests/verify/test_fast_paths.py holds it equal to the portal's count."""
    grid = columns.grid
    try:
        if grid is None or not columns.booleans or len(set(grid.states)) != len(grid.states):
            return None
    except TypeError:  # a state that cannot be hashed
        return None
    totals = {}
    for at, state in zip(range(0, len(columns), grid.width), grid.states, strict=True):
        allow = columns.real[at : at + grid.width].count(True)
        mismatches = columns.match[at : at + grid.width].count(False)
        totals[state] = {"allow": allow, "block": grid.width - allow, "mismatches": mismatches}
    return totals
