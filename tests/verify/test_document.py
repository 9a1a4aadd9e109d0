"""The strict parse of a snapshot (verify/document.py): the reading that types the shadow rows
as it reads them says what the plain strict reading says, and refuses what it refuses, with the
same words; a baked snapshot is read the typed way.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compliance_bake.findings import Refusal
from compliance_bake.inputs.jsonio import dumps_pretty, loads_strict
from compliance_bake.report import layout
from compliance_bake.report.models import ShadowRow
from compliance_bake.verify.document import (
    ParsedSnapshot,
    parse_snapshot,
    parse_snapshot_bytes,
)


def _plain(raw: bytes) -> ParsedSnapshot | Refusal:
    parsed = parse_snapshot_bytes(raw)
    return parsed if isinstance(parsed, Refusal) else ParsedSnapshot(parsed[0], parsed[1], None)


def _keys(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [k for key, child in value.items() for k in (key, *_keys(child))]
    if isinstance(value, list):
        return [k for child in value for k in _keys(child)]
    return []


def _same_reading(raw: bytes) -> ParsedSnapshot | Refusal:
    """parse_snapshot(raw), asserted equal to the plain strict reading (values, types, key
    order, layout verdict, or the refusal's words), with its rows typed when it typed them."""
    got, plain = parse_snapshot(raw), _plain(raw)
    if isinstance(plain, Refusal):
        assert got == plain
        return got
    assert not isinstance(got, Refusal), got
    assert got.document == plain.document and _keys(got.document) == _keys(plain.document)
    assert dumps_pretty(got.document) == dumps_pretty(plain.document)  # True is not 1
    assert got.in_layout == plain.in_layout
    if got.rows is not None:
        assert got.rows == msgspec.convert(got.document["shadow"]["rows"], list[ShadowRow])
    return got


@pytest.fixture
def raw(baked: Path) -> bytes:
    return (baked / layout.API_FILE).read_bytes()


def test_a_baked_snapshot_is_read_with_its_rows_typed(raw: bytes) -> None:
    got = _same_reading(raw)
    assert isinstance(got, ParsedSnapshot) and got.in_layout and got.rows
    assert got.document == loads_strict(raw)


def _edited(raw: bytes, edit: Any) -> bytes:
    doc = loads_strict(raw)
    edit(doc)
    return dumps_pretty(doc)


def _row(doc: dict[str, Any]) -> dict[str, Any]:
    row: dict[str, Any] = doc["shadow"]["rows"][0]
    return row


@pytest.mark.parametrize(
    ("edit", "refusal"),
    [
        (lambda d: _row(d).update(reason=1.5), "not JSON at $.shadow.rows[0].reason: 1.5 is"),
        (lambda d: _row(d).update(state=-2.0), "not JSON at $.shadow.rows[0].state: -2.0 is"),
        (lambda d: d["geo"]["partners"][0].update(zip=1e20), "1e+20 is not a whole number"),
        (lambda d: d["enhancements"]["rows"][0].update(actualState={"n": 0.5}), "0.5 is not"),
        (lambda d: d["proton"].update(big=2**64), "an integer outside the 64-bit range"),
        (lambda d: d["shadow"].update(summary=1.0), "not JSON at $.shadow.summary: 1.0 is"),
    ],
    ids=["row-float", "row-state-float", "geo-float", "board-float", "big-int", "summary"],
)
def test_a_number_the_strict_parse_refuses_is_refused_alike(
    raw: bytes, edit: Any, refusal: str
) -> None:
    doc = loads_strict(raw)
    edit(doc)
    try:
        edited = dumps_pretty(doc)
    except TypeError:  # past 64 bits: orjson writes none, so the bytes are spliced by hand
        edited = dumps_pretty({**doc, "proton": {**doc["proton"], "big": 0}}).replace(
            b'"big": 0', f'"big": {2**64}'.encode()
        )
    got = _same_reading(edited)
    assert isinstance(got, Refusal) and refusal in got.message and not got.not_json, got


def _twice(raw: bytes, line_start: bytes) -> bytes:
    """The first line that starts with `line_start`, written twice, the first time "x"."""
    at = raw.index(line_start)
    return raw[:at] + line_start + b'"x",' + raw[at:]


@pytest.mark.parametrize(
    ("line", "refusal"),
    [
        (b'\n  "mode": ', "not JSON at $.mode: duplicate key 'mode'"),
        (b'\n        "state": ', "not JSON at $.shadow.rows[0].state: duplicate key 'state'"),
        (b'\n    "base": ', "not JSON at $.shadow.base: duplicate key 'base'"),
    ],
    ids=["top", "row", "shadow-block"],
)
def test_a_duplicate_key_is_refused_alike(raw: bytes, line: bytes, refusal: str) -> None:
    got = _same_reading(_twice(raw, line))
    assert isinstance(got, Refusal) and got.message == refusal and not got.not_json


@pytest.mark.parametrize(
    "edit",
    [
        lambda d: _row(d).update(reason=None),  # null where the bake leaves the member out
        lambda d: _row(d).update(extra=True),  # a member the row type does not have
        lambda d: _row(d).update(realAllowed=1),  # 1 is not True
        lambda d: d["shadow"].update(rows=[*d["shadow"]["rows"], "row"]),
        lambda d: d["shadow"].update(rows={}),
        lambda d: d.update(shadow=list(d["shadow"])),
        lambda d: d.pop("links"),
        lambda d: d.update(extra={"a": 1}),
        lambda d: d.update(deepAudit=None),
        lambda d: d.update(mode="x: 1.5"),  # looks like a float to the scan: read strictly
        lambda d: d.update(dict(reversed(list(d.items())))),
    ],
    ids=[
        "null-reason",
        "row-member",
        "one-for-true",
        "row-str",
        "rows-object",
        "shadow-list",
        "no-links",
        "extra-member",
        "null-deep-audit",
        "float-lookalike",
        "reordered",
    ],  # fmt: skip
)
def test_any_other_snapshot_reads_as_the_plain_strict_parse_reads_it(raw: bytes, edit: Any) -> None:
    _same_reading(_edited(raw, edit))


def test_another_layout_reads_alike_and_is_not_the_baked_one(raw: bytes) -> None:
    compact = msgspec.json.encode(loads_strict(raw))
    got = _same_reading(compact)
    assert isinstance(got, ParsedSnapshot) and not got.in_layout
    got = _same_reading(raw.replace(b"\n", b"\r\n"))
    assert isinstance(got, ParsedSnapshot) and not got.in_layout
    assert _same_reading(b"\xef\xbb\xbf" + raw) == _plain(b"\xef\xbb\xbf" + raw)


_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**64), 2**65)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=6,
)
_members = st.sampled_from(
    ["state", "partner", "licenseStatus", "realAllowed", "shadowAllowed", "match", "reason"]
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.dictionaries(_members, _json, max_size=3), st.booleans())
def test_any_row_value_reads_as_the_plain_strict_parse_reads_it(
    raw: bytes, values: dict[str, Any], drop: bool
) -> None:
    doc = loads_strict(raw)
    row = _row(doc)
    row.update(values)
    if drop:
        row.pop("partner")
    try:
        edited = dumps_pretty(doc)
    except TypeError:  # a lone surrogate or an integer past 64 bits: orjson writes neither
        edited = msgspec.json.encode(doc)
    _same_reading(edited)
