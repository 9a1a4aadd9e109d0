"""The shadow rows as columns, read once, for the rules that look at every row.

A rule over 500,000 rows walked in Python takes about a second; the same question asked of
columns (`map`, `set`, slices) or of the rows' distinct kinds takes a few milliseconds. A row's
kind is its members but the partner: (state, licenseStatus, realAllowed, shadowAllowed, match,
reason), with how many rows have it. Every rule but coverage and geo reads a row through its
kind alone, and a matrix has few kinds (two or three per state), so they are asked once each,
and the rows are read into two columns and one count of kinds rather than seven columns.
Each fast check only ever says "the rule holds": when it cannot show that, the rule walks the
rows one by one and names the places, so the findings are the row-by-row ones in every case.
`shadow_columns` is None unless every row converts to a typed row (report/models.py
`ShadowRow`: every field the rules read, of its type); a rule then walks, and fails closed.
"""

from __future__ import annotations

import itertools
import operator
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import msgspec

from compliance_bake.gc_pause import gc_paused
from compliance_bake.report.disagreements import RowKind
from compliance_bake.report.models import ShadowRow
from compliance_bake.report.row_kinds import row_kinds


@dataclass(frozen=True, slots=True)
class MatrixLayout:
    """Rows laid out as the bake writes them: runs of `width` rows, each of one state and each
    holding the same partners in the same order, no partner twice in a run."""

    width: int
    states: list[Any]  # each run's state, in order (not known to be distinct)
    partners: list[Any]  # the partners of every run, in order


def _matrix_layout(state: list[Any], partner: list[Any]) -> MatrixLayout | None:
    """The layout the rows are in, or None (then the rules count pair by pair)."""
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
    return MatrixLayout(width, state[::width], first)


@dataclass(frozen=True, slots=True)
class ShadowColumns:
    state: list[str]
    partner: list[str]
    kinds: Counter[RowKind]  # the rows of each kind, the kinds in the order they first appear
    # the rows as the bake lays them out, when they are (`_matrix_layout`)
    layout: MatrixLayout | None

    def __len__(self) -> int:
        return len(self.state)


def shadow_columns(
    snap: dict[str, Any],
    typed: Sequence[ShadowRow] | None = None,
    kinds: Counter[RowKind] | None = None,
) -> ShadowColumns | None:
    """The rows of `snap` as columns and kinds, read from the typed rows (`typed`: the rows of
    the typed snapshot, when the caller has built it, and `kinds` theirs, when the reading has
    counted them; otherwise they are converted and counted here).

    The typed rows are read, not the JSON objects: one conversion at C speed checks every
    row's types (a string where a string stands, True or False where a boolean does), which
    the rules would otherwise check with a pass of their own, and the typed snapshot the portal
    is rendered from holds these very rows. None when a row does not convert (then a rule walks
    the JSON rows, and names the place)."""
    if typed is None:
        try:
            rows = snap["shadow"]["rows"]
            if type(rows) is not list:
                return None
            typed = msgspec.convert(rows, list[ShadowRow])
        except (KeyError, TypeError, msgspec.ValidationError):
            return None
    with gc_paused(keep=True):  # lists of 500,000 values: collections would walk them
        state = [row.state for row in typed]
        partner = [row.partner for row in typed]
        if kinds is None:
            kinds = row_kinds(typed)
    return ShadowColumns(state, partner, kinds, layout=_matrix_layout(state, partner))


def covers(states: list[Any], columns: ShadowColumns) -> bool:
    """Every pair's state is regulated, no pair twice, and as many pairs as states x partners:
    then every state x partner is there (the pairs lie within them, and are that many). On the
    bake's layout: each regulated state has a run of its own, and no other run."""
    try:
        regulated = set(states)
        if columns.layout is not None:
            heads = columns.layout.states
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
    layout = columns.layout
    return dict.fromkeys(columns.partner if layout is None else layout.partners)


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
    return {kind.license_status for kind in columns.kinds} <= set(allowed)


def licence_decides(columns: ShadowColumns, shadow_from_registry: bool = True) -> bool:
    """match is (realAllowed is shadowAllowed) on every row, and, when the shadow decision is
    the licence registry's, shadowAllowed is (licenseStatus == "active"): on every kind."""
    return all(
        (not shadow_from_registry or k.shadow_allowed is (k.license_status == "active"))
        and k.match is (k.real_allowed is k.shadow_allowed)
        for k in columns.kinds
    )


def decisions(columns: ShadowColumns) -> tuple[int, int]:
    """(rows whose realAllowed is True, rows whose match is True)."""
    kinds = columns.kinds.items()
    allow = sum(count for kind, count in kinds if kind.real_allowed is True)
    matches = sum(count for kind, count in kinds if kind.match is True)
    return allow, matches
