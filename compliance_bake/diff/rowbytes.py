"""Shadow pairs compared over their rows' JSON bytes, without parsing the rows.

When the sides are read in their own processes (split.py), their rows come back as chunks of
JSON arrays serialised with sorted keys (the canonical bytes their authentication made, or made
the same way), with the (state, partners) runs of the matrix when asked. `compare_rows` first
compares chunk by chunk when the sides have as many rows (equal bytes, equal rows: only the
chunks that differ are parsed); otherwise `pair_changes_by_bytes` gives exactly what
`pairs.pair_changes` gives on the parsed rows, for rows that do not line up position by
position (a partner or a state added or removed):

- each row's bytes are cut out of its chunk (`row_pieces`): a row is a flat object, so rows
  are separated by `},{`, and the cut counts as exact only when it yields one piece per row
  (a `},{` inside a string would add a piece: never fewer);
- two rows of a snapshot the schema accepts (strings, booleans and null, no number) are equal
  exactly when their sorted-key bytes are, so a state's rows are compared by a C-level pass
  over bytes: position by position when both sides list the same partners in the same
  order, else through the state's partners on the OLD side;
- only the rows that differ are parsed, and the changes are made by pairs.py's functions, in
  pairs.py's order.

It declines (None: both sides' rows are parsed for `pair_changes`) when the cut is not exact,
a state's rows are not one run, or a run lists a partner twice (pairs.py refuses that side).
The bytes are trusted only as far as the sides are: nothing compared here is reported before
both sides have passed their schema and authenticity checks.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import compress, groupby, repeat
from operator import itemgetter, ne, not_
from typing import Any

import orjson

from compliance_bake.diff.model import Change
from compliance_bake.diff.pairs import grouped, pair_change, pair_changes

Run = tuple[str, list[str]]  # a state and its partners, in the rows' order
_KEY = itemgetter("state", "partner")
_STATE = itemgetter("state")
_PARTNER = itemgetter("partner")
_SPLIT = b"},{"


@dataclass(frozen=True, slots=True)
class SideRows:
    """A side's rows as its process sends them (split.py), before its outcome."""

    rest: dict[str, Any]  # the side with `shadow.rows` empty
    count: int  # its rows
    chunks: list[bytes]  # its rows: JSON arrays of digest.CHUNK_ROWS rows with sorted keys
    runs: list[Run] | None  # its (state, partners) runs; None when its rows have no such keys


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


def _spans(runs: list[Run], count: int) -> Spans | None:
    spans: Spans = {}
    start = 0
    for state, partners in runs:
        if state in spans or len(set(partners)) != len(partners):
            return None  # a state in two runs, or a pair twice: pairs.py decides
        spans[state] = (partners, start)
        start += len(partners)
    return spans if start == count else None


def _partners(spans: Spans) -> set[str]:
    every: set[str] = set()
    for partners, _ in spans.values():
        every.update(partners)
    return every


def pair_changes_by_bytes(
    old_runs: list[Run], old_pieces: list[bytes], new_runs: list[Run], new_pieces: list[bytes]
) -> list[Change] | None:
    """`pairs.pair_changes` of the two sides' rows, from their runs and rows' bytes; None when
    it declines (see above)."""
    olds, news = _spans(old_runs, len(old_pieces)), _spans(new_runs, len(new_pieces))
    if olds is None or news is None:
        return None
    # Pairs whose row differs or is new, in NEW's order (pairs._keyed's `differ`).
    keys: list[tuple[str, str]] = []
    befores: list[bytes | None] = []
    afters: list[bytes] = []
    for state, (partners, start) in news.items():
        mine = new_pieces[start : start + len(partners)]
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
        afters += compress(mine, moved)
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
            "added", [keys[i] for i in added], [_row(afters[i]) for i in added], olds.keys(),
            _partners(olds),
        )  # fmt: skip
    if removed:
        changes += grouped("removed", removed, removed_rows, news.keys(), _partners(news))
    changes += [
        pair_change("pair-changed", key, _row(before), _row(after))
        for key, before, after in zip(keys, befores, afters, strict=True)
        if before is not None
    ]
    return changes


def _parsed(chunks: list[bytes]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for chunk in chunks:
        rows += orjson.loads(chunk)
    return rows


Compared = tuple[list[Change] | None, list[dict[str, Any]], list[dict[str, Any]]]


def compare_rows(old: SideRows, new: SideRows) -> Compared:
    """(the shadow matrix's changes, [], []) when the bytes settle them; else (None, OLD's
    rows, NEW's rows), parsed whole, for `compare` to match."""
    if old.count == new.count and len(old.chunks) == len(new.chunks):  # the same grid
        differ = list(compress(range(len(new.chunks)), map(ne, old.chunks, new.chunks)))
        old_part = _parsed([old.chunks[i] for i in differ])
        new_part = _parsed([new.chunks[i] for i in differ])
        if len(old_part) == len(new_part) and all(
            _KEY(a) == _KEY(b) for a, b in zip(old_part, new_part, strict=True) if a != b
        ):
            return pair_changes(old_part, new_part), [], []  # the rows line up
    if old.runs is not None and new.runs is not None:
        old_pieces = row_pieces(old.chunks, old.count)
        new_pieces = row_pieces(new.chunks, new.count)
        if old_pieces is not None and new_pieces is not None:
            found = pair_changes_by_bytes(old.runs, old_pieces, new.runs, new_pieces)
            if found is not None:
                return found, [], []
    return None, _parsed(old.chunks), _parsed(new.chunks)
