"""inputs/jsonpieces.py: a document parsed in pieces is exactly `orjson.loads` of it, or the
very error `orjson.loads` raises; the pieces are used on the pretty layout and never trusted
where they could read the bytes otherwise than the whole parse does."""

from __future__ import annotations

import sys
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compliance_bake.inputs import jsonpieces
from compliance_bake.inputs.jsonio import dumps_pretty

SMALL = 256  # bytes per piece in these tests: many pieces from a few rows


def _rows(count: int) -> list[dict[str, Any]]:
    return [
        {
            "state": "MA",
            "partner": f"p-{i:05d}",
            "licenseStatus": None if i % 3 else "active",
            "match": bool(i % 2),
        }
        for i in range(count)
    ]


def _snapshot(count: int = 60) -> dict[str, Any]:
    return {
        "ok": True,
        "enhancements": {"rows": [{"feature": "f", "states": ["AK", "AL"]}], "total": 1},
        "shadow": {"generatedAt": "t", "rows": _rows(count), "summary": {"allow": 1}},
        "geo": {"states": ["MA"], "zip": {"02101": "MA"}},
    }


def _outcome(raw: bytes) -> tuple[str, Any]:
    try:
        return "value", orjson.loads(raw)
    except orjson.JSONDecodeError as error:
        return "error", str(error)


def _pieces(raw: bytes, piece_bytes: int = SMALL) -> tuple[str, Any]:
    try:
        return "value", jsonpieces.loads_in_pieces(raw, piece_bytes=piece_bytes, min_bytes=0)
    except orjson.JSONDecodeError as error:
        return "error", str(error)


def test_the_pretty_layout_is_read_in_pieces_to_the_same_value() -> None:
    raw = dumps_pretty(_snapshot())
    found = jsonpieces._in_pieces(raw, b"rows", SMALL)
    assert found is not None  # the pieces were used, not the fallback
    assert found[0] == orjson.loads(raw)
    assert found[0]["shadow"]["rows"] == _rows(60)


def test_the_largest_array_of_the_key_is_the_one_cut() -> None:
    raw = dumps_pretty(_snapshot())
    start, end, indent = jsonpieces._largest_array(raw, b"rows") or (0, 0, b"")
    assert indent == b"    "
    assert orjson.loads(b"[" + raw[start:end] + b"]") == _rows(60)


def test_many_cuts_are_made() -> None:
    raw = dumps_pretty(_snapshot())
    start, end, indent = jsonpieces._largest_array(raw, b"rows") or (0, 0, b"")
    cuts = jsonpieces._cuts(raw, start, end, b"\n" + indent + b"  },", SMALL)
    assert len(cuts) > 10
    assert all(raw[cut : cut + 1] == b"," for cut in cuts)


def test_small_or_unshaped_documents_are_one_parse() -> None:
    compact = orjson.dumps(_snapshot())
    assert jsonpieces._in_pieces(compact, b"rows", SMALL) is None  # no newline after `[`
    assert _pieces(compact) == _outcome(compact)
    assert jsonpieces.loads_in_pieces(dumps_pretty([1, 2])) == [1, 2]


@pytest.mark.parametrize(
    ("before", "after"),
    [
        # a duplicate `rows`: orjson keeps the last, so the array cut is not the one read
        (b'"summary": {', b'"rows": [], "summary": {'),
        # an element with a member at the elements' indent, closed by a `},` line there
        (b'"match": false\n      },', b'"match": {\n      },\n      "x": 1\n      },'),
        # a trailing comma before the closing bracket (a last piece of no element)
        (b'}\n    ],\n    "summary"', b'},\n    ],\n    "summary"'),
        # an empty element between two commas
        (b"},\n      {", b"},\n      ,{"),
        # bytes that are not UTF-8 inside a row
        (b'"p-00042"', b'"p-\xff0042"'),
        # a closing bracket at the rows' indent inside an element's string-free region
        (b'"match": true\n      },', b'"match": true\n    ]\n      },'),
    ],
)
def test_crafted_documents_read_as_the_whole_parse_reads_them(before: bytes, after: bytes) -> None:
    raw = dumps_pretty(_snapshot())
    assert before in raw
    edited = raw.replace(before, after, 1)
    for piece_bytes in range(40, 400, 3):  # cuts falling on every element, the edited one too
        assert _pieces(edited, piece_bytes) == _outcome(edited), piece_bytes


def test_the_nesting_limit_applies_as_in_the_whole_parse() -> None:
    rows = _rows(40)
    raw = dumps_pretty({"shadow": {"rows": rows}})
    kinds = set()
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(10_000)  # == on values 1,000 levels deep
    try:
        for depth in (1019, 1020, 1021, 1022, 1023):  # around orjson's limit of 1024 levels
            deep = b"[" * depth + b"1" + b"]" * depth
            edited = raw.replace(b'"match": true', b'"match": ' + deep, 1)
            expected = _outcome(edited)
            assert _pieces(edited) == expected, depth
            kinds.add(expected[0])
    finally:
        sys.setrecursionlimit(limit)
    assert kinds == {"value", "error"}  # both sides of the limit were tried


@settings(max_examples=300, deadline=None)
@given(
    count=st.integers(min_value=0, max_value=40),
    edits=st.lists(
        st.tuples(st.floats(0, 1), st.integers(0, 3), st.binary(max_size=4)), max_size=3
    ),
)
def test_any_edit_reads_the_same_as_the_whole_parse(
    count: int, edits: list[tuple[float, int, bytes]]
) -> None:
    """Bytes replaced anywhere in a pretty document: the pieces give orjson's value or its
    error, never anything else."""
    raw = dumps_pretty(_snapshot(count))
    for where, width, replacement in edits:
        at = int(where * len(raw))
        raw = raw[:at] + replacement + raw[at + width :]
    assert _pieces(raw) == _outcome(raw)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from([b"\n", b"  }", b",", b"]", b"[", b"{", b'"rows": [\n']), max_size=6)
)
def test_layout_tokens_inserted_read_the_same(tokens: list[bytes]) -> None:
    raw = dumps_pretty(_snapshot(30))
    for number, token in enumerate(tokens):
        at = (len(raw) * (number + 1)) // (len(tokens) + 1)
        raw = raw[:at] + token + raw[at:]
    assert _pieces(raw) == _outcome(raw)


def test_a_document_nested_to_orjsons_limit_outside_the_rows_is_read() -> None:
    """The search for the array's holder walks the rest of the document with a stack of its
    own: nesting past Python's recursion limit (and within orjson's) is read, not a crash."""
    raw = dumps_pretty({"deep": 1, "shadow": {"rows": _rows(60)}})
    for depth in (1010, 1022, 1023):
        deep = b"[" * depth + b"]" * depth
        edited = raw.replace(b'"deep": 1', b'"deep": ' + deep, 1)
        assert jsonpieces._in_pieces(edited, b"rows", SMALL) is not None, depth
        assert _pieces(edited)[0] == _outcome(edited)[0] == "value", depth


def test_documents_made_of_brackets_are_one_parse_without_a_long_search(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Past MAX_BRACKETS brackets, or MAX_ARRAYS arrays of the key, the pieces are not tried."""
    monkeypatch.setattr(jsonpieces, "MAX_BRACKETS", 50)
    rows = [{"state": "MA", "tags": [1, 2]} for _ in range(60)]  # a `[` and `]` in every row
    raw = dumps_pretty({"shadow": {"rows": rows}, "after": [3]})
    assert jsonpieces._largest_array(raw, b"rows") is None  # 60 brackets to look at
    assert _pieces(raw) == _outcome(raw)
    many = dumps_pretty({f"k{i}": {"rows": [i, i]} for i in range(20)} | {"x": {"rows": _rows(9)}})
    monkeypatch.setattr(jsonpieces, "MAX_BRACKETS", 10_000)
    assert jsonpieces._largest_array(many, b"rows") is None  # 21 arrays of `rows`
    assert _pieces(many) == _outcome(many)
    monkeypatch.setattr(jsonpieces, "MAX_ARRAYS", 21)
    assert jsonpieces._largest_array(many, b"rows") is not None
