"""The schema's verdict on shadow rows asked of their kinds (report/row_kinds.py
`rows_meet_schema`) is the validator's: every row constraint (pattern, enum, minLength, type, the
reason's if/then/else) refuses alike, on rows read from a file and on rows built in memory (the
bake's), and `snapshot_schema_outcome` gives the words of the plain validation in every case.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compliance_bake.inputs import schemas
from compliance_bake.inputs.jsonio import dumps_pretty, loads_strict
from compliance_bake.report import layout
from compliance_bake.report.models import ShadowRow
from compliance_bake.report.row_kinds import row_kinds, rows_meet_schema
from compliance_bake.signing.secret import Secret
from compliance_bake.verify.document import ParsedSnapshot, parse_snapshot
from compliance_bake.verify.source import (
    KeyMaterial,
    read_snapshot,
    schema_outcome,
    snapshot_schema_outcome,
)
from tests._resign import resign
from tests.conftest import SECRET, invoke

# The definitions `rows_meet_schema` was written for. A change to them must change it too.
SHADOW_ROW = {
    "type": "object",
    "additionalProperties": False,
    "required": ["state", "partner", "licenseStatus", "realAllowed", "shadowAllowed", "match"],
    "properties": {
        "state": {"$ref": "#/$defs/stateCode"},
        "partner": {"type": "string", "minLength": 1},
        "licenseStatus": {
            "enum": ["active", None],
            "description": "spec 2.3 and 3: active, or null",
        },
        "realAllowed": {"type": "boolean"},
        "shadowAllowed": {"type": "boolean"},
        "match": {"type": "boolean"},
        "reason": {
            "type": "string",
            "minLength": 1,
            "description": "the target's own reason for a block, as given; the specification's "
            "form is Partner not licensed in <state>, and a reason of another form, or a block "
            "without one, is counted in shadow.disagreements",
        },
    },
    "if": {"properties": {"realAllowed": {"const": True}}},
    "then": {"not": {"required": ["reason"]}},
}
STATE_CODE = {"type": "string", "pattern": "^[A-Z]{2}$"}
ROWS = {"type": "array", "items": {"$ref": "#/$defs/shadowRow"}}


def test_the_row_definition_is_the_one_the_typed_check_asks() -> None:
    definitions = schemas.schema(schemas.SNAPSHOT)["$defs"]
    assert definitions["shadowRow"] == SHADOW_ROW
    assert definitions["stateCode"] == STATE_CODE
    # Only `items` is asked of the rows: the rest of the document validates without them.
    assert definitions["shadow"]["properties"]["rows"] == ROWS


@pytest.fixture
def raw(baked: Path) -> bytes:
    return (baked / layout.API_FILE).read_bytes()


def _typed(raw: bytes) -> ParsedSnapshot:
    parsed = parse_snapshot(raw)
    assert isinstance(parsed, ParsedSnapshot)
    return parsed


def _with_rows(raw: bytes, edit: Any) -> ParsedSnapshot:
    """The baked snapshot, its rows edited and still in the baked layout: read the typed way."""
    doc = loads_strict(raw)
    edit(doc["shadow"]["rows"])
    parsed = _typed(dumps_pretty(doc))
    assert parsed.rows is not None and parsed.in_layout, "not read the typed way"
    return parsed


def _meets(rows: list[ShadowRow]) -> bool:
    return rows_meet_schema(row_kinds(rows), [row.partner for row in rows])


def _outcome(parsed: ParsedSnapshot) -> Any:
    kinds = None if parsed.rows is None else row_kinds(parsed.rows)
    return snapshot_schema_outcome(parsed.document, kinds)


def _blocked(rows: list[dict[str, Any]]) -> dict[str, Any]:
    return next(row for row in rows if row["realAllowed"] is False)


def _allowed(rows: list[dict[str, Any]]) -> dict[str, Any]:
    return next(row for row in rows if row["realAllowed"] is True)


def test_a_baked_snapshot_meets_the_schema_the_typed_way(raw: bytes) -> None:
    parsed = _typed(raw)
    assert parsed.rows is not None and _meets(parsed.rows)
    assert _outcome(parsed) is None
    assert schema_outcome(schemas.SNAPSHOT, parsed.document) is None


# Each breaks one constraint of one row. `newline`: Python's `$` (the reference validator's)
# matches before a final newline, JSON Schema's does not: the validator in use refuses it.
BAD_ROWS = {
    "state-lowercase": (lambda rows: rows[0].update(state="al"), False),
    "state-three": (lambda rows: rows[0].update(state="ALA"), False),
    "state-one": (lambda rows: rows[0].update(state="A"), False),
    "state-accented": (lambda rows: rows[0].update(state="ÀL"), False),
    "state-newline": (lambda rows: rows[0].update(state="AL\n"), True),
    "status-revoked": (lambda rows: rows[0].update(licenseStatus="revoked"), False),
    "status-capital": (lambda rows: rows[0].update(licenseStatus="Active"), False),
    "allowed-with-reason": (
        lambda rows: _allowed(rows).update(reason="Partner not licensed in AL"),
        False,
    ),
    "reason-empty": (lambda rows: _blocked(rows).update(reason=""), False),
    "last-row": (lambda rows: rows[-1].update(state="zz"), False),
}


@pytest.mark.parametrize(("edit", "newline"), BAD_ROWS.values(), ids=BAD_ROWS.keys())
def test_a_row_off_its_schema_is_refused_with_the_validators_words(
    raw: bytes, edit: Any, newline: bool
) -> None:
    parsed = _with_rows(raw, edit)
    assert parsed.rows is not None and not _meets(parsed.rows)
    plain = schema_outcome(schemas.SNAPSHOT, parsed.document)
    assert plain is not None and not isinstance(plain, str)
    assert plain.path.startswith("$.shadow.rows[")
    assert _outcome(parsed) == plain
    reference = schemas.first_violation_reference(schemas.SNAPSHOT, parsed.document)
    assert (reference is None) is newline


def test_an_empty_partner_is_refused_by_the_typed_reading_with_the_validators_words(
    raw: bytes,
) -> None:
    """`ShadowRow.partner` holds the schema's `minLength: 1`: the typed decode refuses the row,
    and the whole document goes to the validator, which names the place."""
    doc = loads_strict(raw)
    doc["shadow"]["rows"][3]["partner"] = ""
    parsed = _typed(dumps_pretty(doc))
    assert parsed.rows is None
    plain = schema_outcome(schemas.SNAPSHOT, parsed.document)
    assert plain is not None and not isinstance(plain, str)
    assert plain.path == "$.shadow.rows[3].partner"
    assert _outcome(parsed) == plain


@pytest.mark.parametrize(
    "edit",
    [
        lambda d: d.update(mode="live"),
        lambda d: d["shadow"].update(base=""),
        lambda d: d["shadow"]["summary"].update(allow=-1),
        lambda d: d["shadow"].pop("summary"),
        lambda d: d["shadow"].update(extra=1),
    ],
    ids=["mode", "shadow-base", "summary", "no-summary", "shadow-member"],
)
def test_typed_rows_in_a_document_off_its_schema_give_the_validators_words(
    raw: bytes, edit: Any
) -> None:
    doc = loads_strict(raw)
    edit(doc)
    parsed = _typed(dumps_pretty(doc))
    plain = schema_outcome(schemas.SNAPSHOT, parsed.document)
    assert plain is not None
    assert _outcome(parsed) == plain


_rows = st.builds(
    ShadowRow,
    state=st.sampled_from(["AL", "MA", "al", "A", "ALA", "A1", "AL\n", "ÀL", ""]),
    partner=st.sampled_from(["p-1", "x y", "", "\U0001f600"]),
    license_status=st.sampled_from(["active", None, "revoked", "Active", ""]),
    real_allowed=st.booleans(),
    shadow_allowed=st.booleans(),
    match=st.booleans(),
    reason=st.sampled_from(
        [
            None,
            "Partner not licensed in AL",
            "Partner not licensed in ZZ",
            "Partner not licensed in al",
            "Partner not licensed in AL\n",
            "Partner not licensed in ALA",
            "",
        ]
    ),
)


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(_rows, min_size=1, max_size=4))
def test_the_typed_verdict_is_the_validators_on_any_rows(raw: bytes, rows: list[ShadowRow]) -> None:
    doc = loads_strict(raw)
    doc["shadow"]["rows"] = msgspec.to_builtins(rows)
    parsed = _typed(dumps_pretty(doc))
    if any(row.partner == "" for row in rows):
        assert parsed.rows is None  # the decode refuses an empty partner (ShadowRow.partner)
    else:
        assert parsed.rows == rows  # read the typed way, these very rows
    valid = schemas.first_violation(schemas.SNAPSHOT, parsed.document) is None
    assert _meets(rows) is valid
    plain = schema_outcome(schemas.SNAPSHOT, parsed.document)
    assert _outcome(parsed) == plain


# Rows as the bake builds them in memory, where nothing has checked a field's type: a valid
# row with one field set to any value (a number, a boolean or None where another type stands).
_ANY = st.sampled_from([None, True, False, 0, 1, "", "AL", "active", "p-1"])
_FIELDS = list(ShadowRow.__struct_fields__)


@st.composite
def _built_rows(draw: st.DrawFn) -> ShadowRow:
    real = draw(st.booleans())
    row = ShadowRow("AL", "p-1", draw(st.sampled_from(["active", None])), real, real, True)
    field = draw(st.sampled_from(_FIELDS))
    return msgspec.structs.replace(row, **{field: draw(_ANY)})


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(_built_rows(), min_size=1, max_size=3))
def test_the_verdict_on_rows_built_in_memory_is_the_validators(
    raw: bytes, rows: list[ShadowRow]
) -> None:
    doc = loads_strict(raw)
    doc["shadow"]["rows"] = msgspec.to_builtins(rows)
    valid = schemas.first_violation(schemas.SNAPSHOT, doc) is None
    assert _meets(rows) is valid


def test_a_resigned_snapshot_with_a_row_off_its_schema_fails_verify(baked: Path) -> None:
    """End to end: a forger with the secret re-signs a row the schema forbids; the one path
    reads its rows the typed way, and `verify` names the row and the rule it breaks."""
    path = baked / layout.API_FILE
    doc = loads_strict(path.read_bytes())
    doc["shadow"]["rows"][0]["licenseStatus"] = "revoked"
    path.write_bytes(dumps_pretty(resign(doc, SECRET)))
    reading = read_snapshot(str(path), KeyMaterial(Secret(SECRET, "test")))
    assert reading.rows is not None and reading.in_layout
    assert reading.schema == schema_outcome(schemas.SNAPSHOT, reading.document)
    result = invoke("verify", str(path))
    assert result.exit_code == 1, result.output
    assert "$.shadow.rows[0].licenseStatus" in result.output, result.output
