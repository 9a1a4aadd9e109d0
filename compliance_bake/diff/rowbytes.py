"""Shadow pairs compared by key over their rows' JSON bytes, without parsing OLD's rows.

When OLD is read in its own process (split.py), its rows come back as chunks of JSON arrays
serialised with sorted keys (the canonical bytes its authentication made, or made the same
way), with the (state, partners) runs of the matrix; NEW's rows have the same chunks here.
`pair_changes_by_bytes` gives exactly what `pairs.pair_changes` gives on the parsed rows, for
rows that do not line up position by position (a partner or a state added or removed):

- each row's bytes are cut out of its chunk (`row_pieces`): a row is a flat object, so rows
  are separated by `},{`, and the cut counts as exact only when it yields one piece per row
  (a `},{` inside a string would add a piece: never fewer);
- two rows of a snapshot the schema accepts (strings, booleans and null, no number) are equal
  exactly when their sorted-key bytes are, so a state's rows are compared by a C-level pass
  over bytes: position by position when both sides list the same partners in the same
  order, else through the state's partners on the OLD side;
- only the rows that differ are parsed, and the changes are made by pairs.py's functions, in
  pairs.py's order.

It declines (None: the caller parses OLD's rows and calls `pair_changes`) when the cut is
not exact or a state's rows are not one run, or a run lists a partner twice (pairs.py
refuses that side). The bytes are trusted only as far as the sides are: nothing compared here
is reported before both sides have passed their schema and authenticity checks.
"""

from __future__ import annotations

from itertools import compress, groupby, repeat
from operator import itemgetter, ne, not_
from typing import Any

import orjson

from compliance_bake.diff.model import Change
from compliance_bake.diff.pairs import grouped, pair_change

Run = tuple[str, list[str]]  # a state and its partners, in the rows' order
_STATE = itemgetter("state")
_PARTNER = itemgetter("partner")
_SPLIT = b"},{"


def runs_of(rows: list[dict[str, Any]]) -> list[Run]:
    """The rows' runs of one state each, in order, with their partners."""
    return [(state, list(map(_PARTNER, group))) for state, group in groupby(rows, _STATE)]


def row_pieces(chunks: list[bytes], count: int) -> list[bytes] | None:
    """Each row's bytes without its braces, in order, or None when the cut is not exact."""
    pieces: list[bytes] = []
    for chunk in chunks:
        if not (chunk.startswith(b"[{") and chunk.endswith(b"}]")):
            return None
        pieces += chunk[2:-2].split(_SPLIT)
    return pieces if len(pieces) == count else None


def _row(piece: bytes) -> dict[str, Any]:
    row: dict[str, Any] = orjson.loads(b"{%b}" % piece)
    return row


Spans = dict[str, tuple[list[str], int]]  # state -> (its partners, its first row)


def _spans(runs: list[Run]) -> Spans | None:
    spans: Spans = {}
    start = 0
    for state, partners in runs:
        if state in spans or len(set(partners)) != len(partners):
            return None  # a state in two runs, or a pair twice: pairs.py decides
        spans[state] = (partners, start)
        start += len(partners)
    return spans


def _partners(spans: Spans) -> set[str]:
    every: set[str] = set()
    for partners, _ in spans.values():
        every.update(partners)
    return every


def pair_changes_by_bytes(
    old_runs: list[Run],
    old_pieces: list[bytes],
    new_rows: list[dict[str, Any]],
    new_pieces: list[bytes],
) -> list[Change] | None:
    """`pairs.pair_changes(OLD's rows, new_rows)` from OLD's runs and row bytes, and NEW's
    rows with their bytes; None when it declines (see above)."""
    olds, news = _spans(old_runs), _spans(runs_of(new_rows))
    if olds is None or news is None or len(new_pieces) != len(new_rows):
        return None
    if sum(len(partners) for partners, _ in olds.values()) != len(old_pieces):
        return None
    # Pairs whose row differs or is new, in NEW's order (pairs._keyed's `differ`).
    keys: list[tuple[str, str]] = []
    befores: list[bytes | None] = []
    afters: list[dict[str, Any]] = []
    for state, (partners, start) in news.items():
        end = start + len(partners)
        mine = new_pieces[start:end]
        was, at = olds.get(state, (None, 0))
        if was is None:
            theirs: list[bytes | None] = [None] * len(partners)
        elif was == partners:
            theirs = list(old_pieces[at : at + len(was)])
        else:
            by_partner = dict(zip(was, old_pieces[at : at + len(was)], strict=True))
            theirs = list(map(by_partner.get, partners))
        moved = list(map(ne, theirs, mine))
        keys += zip(repeat(state), compress(partners, moved))
        befores += compress(theirs, moved)
        afters += compress(new_rows[start:end], moved)
    # Pairs only on OLD's side, in OLD's order.
    removed: list[tuple[str, str]] = []
    removed_rows: list[dict[str, Any]] = []
    for state, (was, at) in olds.items():
        partners = news.get(state, ([], 0))[0]
        if was == partners:
            continue
        gone = list(map(not_, map(set(partners).__contains__, was)))
        removed += zip(repeat(state), compress(was, gone))
        removed_rows += map(_row, compress(old_pieces[at : at + len(was)], gone))
    added = [i for i, before in enumerate(befores) if before is None]
    changes: list[Change] = []
    if added:
        changes += grouped(
            "added", [keys[i] for i in added], [afters[i] for i in added], olds.keys(),
            _partners(olds),
        )  # fmt: skip
    if removed:
        changes += grouped("removed", removed, removed_rows, news.keys(), _partners(news))
    changes += [
        pair_change("pair-changed", key, _row(before), after)
        for key, before, after in zip(keys, befores, afters, strict=True)
        if before is not None
    ]
    return changes
