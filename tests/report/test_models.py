"""The typed snapshot reads a baked file and writes it back to the same bytes.

`from_json` then `to_json` must give the same JSON value: the same keys in the same order and the
same types (a `True` that came back as `1` would render `1`), so the test compares rendered
bytes, not values (`True == 1` in Python).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from compliance_bake.inputs import schemas
from compliance_bake.inputs.jsonio import dumps_pretty, loads_strict
from compliance_bake.report.models import (
    Board,
    BoardRow,
    DeepAudit,
    Geo,
    IntegrityCheck,
    Proof,
    Shadow,
    ShadowRow,
    Snapshot,
)
from tests.conftest import bake_deep_demo


def _document(out: Path, name: str) -> tuple[bytes, dict]:  # type: ignore[type-arg]
    data = (out / name).read_bytes()
    return data, loads_strict(data)


@pytest.fixture(scope="module")
def deep_baked(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return bake_deep_demo(tmp_path_factory.mktemp("deep") / "out")


def test_a_baked_snapshot_round_trips_to_its_own_bytes(baked: Path) -> None:
    data, doc = _document(baked, "api/compliance.json")
    snapshot = Snapshot.from_json(doc)
    assert snapshot.deep_audit is None
    assert dumps_pretty(snapshot.to_json()) == data


def test_a_snapshot_with_a_deep_audit_round_trips(deep_baked: Path) -> None:
    data, doc = _document(deep_baked, "api/compliance.json")
    snapshot = Snapshot.from_json(doc)
    assert isinstance(snapshot.deep_audit, DeepAudit)
    assert snapshot.deep_audit.zip_window.days == 90
    assert [c.id for c in snapshot.integrity.checks][-1] == "zip-window"
    assert dumps_pretty(snapshot.to_json()) == data


def test_the_registry_files_round_trip(baked: Path) -> None:
    data, doc = _document(baked, "registry/compliance-enhancements.json")
    assert dumps_pretty(Board.from_json(doc).to_json()) == data
    data, doc = _document(baked, "registry/compliance-shadow.json")
    assert dumps_pretty(Shadow.from_json(doc).to_json()) == data


def test_the_parts_are_typed(baked: Path) -> None:
    snapshot = Snapshot.from_json(_document(baked, "api/compliance.json")[1])
    assert all(isinstance(row, BoardRow) for row in snapshot.board.rows)
    assert all(isinstance(row, ShadowRow) for row in snapshot.shadow.rows)
    assert isinstance(snapshot.geo, Geo) and snapshot.geo.partners[0].zip_code.isdigit()
    assert isinstance(snapshot.shadow.proof, Proof)
    assert isinstance(snapshot.integrity.proof, Proof)
    assert all(isinstance(check, IntegrityCheck) for check in snapshot.integrity.checks)
    assert snapshot.integrity.holds and not snapshot.integrity.failed
    blocked = [row for row in snapshot.shadow.rows if not row.real_allowed]
    allowed = [row for row in snapshot.shadow.rows if row.real_allowed]
    assert blocked and all(row.reason == f"Partner not licensed in {row.state}" for row in blocked)
    assert allowed and all(row.reason is None for row in allowed)


def test_booleans_stay_booleans_and_order_stays_the_documents() -> None:
    row = {
        "state": "MA",
        "partner": "p1",
        "licenseStatus": None,
        "realAllowed": False,
        "shadowAllowed": False,
        "match": True,
        "reason": "Partner not licensed in MA",
    }
    back = ShadowRow.from_json(row).to_json()
    assert list(back) == list(row)
    assert [type(value) for value in back.values()] == [type(value) for value in row.values()]
    check = {"id": "hmac", "ok": True, "label": "x"}
    assert type(IntegrityCheck.from_json(check).to_json()["ok"]) is bool


def test_a_model_that_changes_is_seen(baked: Path) -> None:
    """The round trip compares something that can fail: a changed field renders other bytes."""
    from dataclasses import replace

    data, doc = _document(baked, "api/compliance.json")
    snapshot = Snapshot.from_json(doc)
    changed = replace(snapshot, integrity=replace(snapshot.integrity, score_hint="other"))
    assert dumps_pretty(changed.to_json()) != data


def _key_orders(value: Any, schema: dict[str, Any], root: dict[str, Any], at: str) -> list[str]:
    """Where an object's keys are not in the order its schema lists its properties (the
    specification's order), walking the value beside its schema."""
    while "$ref" in schema:
        schema = root["$defs"][schema["$ref"].removeprefix("#/$defs/")]
    found = []
    if isinstance(value, dict) and "properties" in schema:
        listed = [key for key in schema["properties"] if key in value]
        if list(value) != listed:
            found.append(f"{at}: {list(value)} is not {listed}")
        for key, item in value.items():
            found += _key_orders(item, schema["properties"].get(key, {}), root, f"{at}.{key}")
    elif isinstance(value, list) and "items" in schema:
        for index, item in enumerate(value):
            found += _key_orders(item, schema["items"], root, f"{at}[{index}]")
    return found


def test_to_json_writes_every_object_in_the_specifications_order(deep_baked: Path) -> None:
    """Held against the schema, not against a file the same models wrote."""
    snapshot = Snapshot.from_json(_document(deep_baked, "api/compliance.json")[1])
    root = schemas.schema(schemas.SNAPSHOT)
    assert _key_orders(snapshot.to_json(), root, root, "$") == []
