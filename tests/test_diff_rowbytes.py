"""diff/rowbytes.py: the shadow matrix compared as bytes gives exactly `pairs.pair_changes`."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compliance_bake.diff import digest, rowbytes
from compliance_bake.diff.pairs import pair_changes
from compliance_bake.diff.rowbytes import (
    SideRows,
    compare_rows,
    pair_changes_by_bytes,
    row_pieces,
    runs_of,
)
from compliance_bake.errors import InputError

STATES = ["MA", "NJ", "NY"]
PARTNERS = ["a", "b", "c", "d"]


def _row(state: str, partner: str, real: bool, status: str | None, reason: str) -> Any:
    return {
        "state": state,
        "partner": partner,
        "licenseStatus": status,
        "realAllowed": real,
        "shadowAllowed": real,
        "match": True,
        "reason": reason,
    }


def _matrix(states: list[str], partners: list[str]) -> list[dict[str, Any]]:
    return [_row(s, p, True, "active", "Licensed") for s in states for p in partners]


_rows = st.lists(
    st.builds(
        _row,
        st.sampled_from(STATES),
        st.sampled_from(PARTNERS),
        st.booleans(),
        st.sampled_from([None, "active", "suspended"]),
        st.sampled_from(["Licensed", "Partner not licensed", "odd },{ reason"]),
    ),
    max_size=14,
)


@st.composite
def _sides(draw: st.DrawFn) -> tuple[list[Any], list[Any]]:
    """Full matrices edited the ways a bake changes (pairs revoked, states and partners added
    or removed, partners reordered), or rows drawn at random (repeats, split runs)."""
    if draw(st.booleans()):
        return draw(_rows), draw(_rows)
    old = _matrix(draw(st.lists(st.sampled_from(STATES), unique=True, max_size=3)),
                  draw(st.lists(st.sampled_from(PARTNERS), unique=True, max_size=4)))  # fmt: skip
    new = _matrix(draw(st.lists(st.sampled_from(STATES), unique=True, max_size=3)),
                  draw(st.lists(st.sampled_from(PARTNERS), unique=True, max_size=4)))  # fmt: skip
    for row in (r for r in new if draw(st.integers(0, 3)) == 0):
        row.update(realAllowed=False, licenseStatus=None, reason="Partner not licensed")
    return old, new


def _side(rows: list[Any], chunk: int) -> SideRows:
    chunks = [
        orjson.dumps(rows[at : at + chunk], option=orjson.OPT_SORT_KEYS)
        for at in range(0, len(rows), chunk)
    ]
    return SideRows({}, len(rows), chunks, orjson.loads(orjson.dumps(runs_of(rows))))  # as sent


def _expected(old: list[Any], new: list[Any]) -> Any:
    try:
        return pair_changes(old, new)
    except InputError as error:
        return error.message


@settings(max_examples=500, deadline=None)
@given(_sides(), st.integers(1, 5))
def test_bytes_give_exactly_pair_changes(sides: tuple[list[Any], list[Any]], chunk: int) -> None:
    old, new = sides
    expected = _expected(old, new)
    old_side, new_side = _side(old, chunk), _side(new, chunk)
    old_pieces = row_pieces(old_side.chunks, len(old))
    new_pieces = row_pieces(new_side.chunks, len(new))
    assert old_side.runs is not None and new_side.runs is not None
    if old_pieces is not None and new_pieces is not None:
        found = pair_changes_by_bytes(old_side.runs, old_pieces, new_side.runs, new_pieces)
        if found is not None:
            assert found == expected
        # It declines only where pairs.py must see the rows: a pair twice, a split state.
        unique = all(len(set(p)) == len(p) for rows in (old, new) for _, p in runs_of(rows))
        one_run = all(len({s for s, _ in runs_of(rows)}) == len(runs_of(rows))
                      for rows in (old, new))  # fmt: skip
        assert (found is None) == (not unique or not one_run)
    else:
        assert any("},{" in row["reason"] for row in old + new)  # the cut is not exact
    # The whole comparison: the bytes' answer, or both sides parsed for `compare`.
    grid, digest.CHUNK_ROWS = digest.CHUNK_ROWS, chunk  # the grid the chunks were cut on
    try:
        pairs, old_rows, new_rows = compare_rows(old_side, new_side)
    except InputError as error:
        assert error.message == expected
        return
    finally:
        digest.CHUNK_ROWS = grid
    if pairs is None:
        assert (old_rows, new_rows) == (old, new)
        assert _expected(old_rows, new_rows) == expected
    else:
        assert pairs == expected and (old_rows, new_rows) == ([], [])


def test_a_removed_partner_is_compared_without_parsing_the_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    old = _matrix(STATES, PARTNERS)
    new = [dict(r) for r in old if r["partner"] != "c"]
    new[0].update(realAllowed=False, reason="Partner not licensed")

    def refused(chunks: list[bytes]) -> list[Any]:
        raise AssertionError("parsed whole")

    monkeypatch.setattr(rowbytes, "_parsed", refused)
    pairs, _, _ = compare_rows(_side(old, 2), _side(new, 5))
    assert pairs == pair_changes(old, new)
    assert [(c.kind, c.concerns) for c in pairs] == [
        ("partner-removed", {"partner": "c"}),
        ("pair-changed", {"state": "MA", "partner": "a"}),
    ]


def test_a_cut_that_is_not_exact_is_refused() -> None:
    rows = [_row("MA", "a", True, None, "x},{y"), _row("MA", "b", True, None, "z")]
    chunk = orjson.dumps(rows, option=orjson.OPT_SORT_KEYS)
    assert row_pieces([chunk], 2) is None
    assert row_pieces([chunk], 3) is not None  # three pieces: one too many, never too few
    assert row_pieces([b"[1,2]"], 2) is None
