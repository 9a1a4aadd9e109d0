"""The schemas are valid Draft 2020-12, and both validators agree on good and broken reports."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from compliance_bake.inputs import schemas
from compliance_bake.inputs.jsonio import loads_strict
from compliance_bake.report import layout


@pytest.mark.parametrize(
    "name", sorted(p.name for p in schemas.schemas_dir().glob("*.schema.json"))
)
def test_schema_is_valid_draft_2020_12(name: str) -> None:
    document = schemas.schema(name)
    Draft202012Validator.check_schema(document)
    assert document["$schema"] == "https://json-schema.org/draft/2020-12/schema"


def test_baked_files_validate_with_both_validators(baked: Path) -> None:
    for name, schema_name in layout.JSON_FILES.items():
        doc = loads_strict((baked / name).read_bytes())
        assert schemas.first_violation(schema_name, doc) is None
        assert schemas.first_violation_reference(schema_name, doc) is None


def _breaks() -> dict[str, Any]:
    def drop(key: str) -> Any:
        return lambda s: s.pop(key)

    return {
        "missing proton": drop("proton"),
        "extra top-level field": lambda s: s.update(extra=1),
        "mode not snapshot": lambda s: s.update(mode="live"),
        "schemaVersion 2": lambda s: s.update(schemaVersion=2),
        "timestamp without millis": lambda s: s.update(generatedAt="2026-11-22T04:06:00Z"),
        "short hmac": lambda s: s["shadow"]["proof"].update(hmac="abc"),
        "upper-case digest": lambda s: s["integrity"]["proof"].update(digest="A" * 64),
        "unknown feature": lambda s: s["enhancements"]["rows"][0].update(feature="made.up"),
        "actualState of another shape": lambda s: s["enhancements"]["rows"][1].update(
            actualState={"allowed": "yes", "status": 200}
        ),
        "blocked row with an empty reason": lambda s: next(
            r for r in s["shadow"]["rows"] if not r["realAllowed"]
        ).update(reason=""),
        "allowed row with reason": lambda s: next(
            r for r in s["shadow"]["rows"] if r["realAllowed"]
        ).update(reason="Partner not licensed in MA"),
        "a disagreement count as text": lambda s: s["shadow"]["disagreements"].update(
            realShadowDiffer="0"
        ),
        "a shadow source nobody gave": lambda s: s["shadow"]["sources"].update(
            shadowAllowed="engine"
        ),
        "ZIP as a number": lambda s: s["geo"]["partners"][0].update(zipCode=2108),
        "wrong sha3 label": lambda s: s["integrity"]["checks"][2].update(label="sha3"),
        "wrong link": lambda s: s["links"].update(api="/api/other"),
        "readOnly false": lambda s: s.update(readOnly=False),
    }


@pytest.mark.parametrize("name", sorted(_breaks()))
def test_both_validators_reject_a_broken_snapshot(baked: Path, name: str) -> None:
    snap = copy.deepcopy(loads_strict((baked / "api" / "compliance.json").read_bytes()))
    _breaks()[name](snap)
    assert schemas.first_violation(schemas.SNAPSHOT, snap) is not None
    assert schemas.first_violation_reference(schemas.SNAPSHOT, snap) is not None


@pytest.mark.parametrize(
    ("name", "block"),
    [(schemas.REGISTRY_BOARD, "enhancements"), (schemas.REGISTRY_SHADOW, "shadow")],
)
def test_registry_schemas_are_the_snapshot_blocks_by_reference(name: str, block: str) -> None:
    # bake.validate_documents relies on this to validate each registry block once.
    document = schemas.schema(name)
    constraints = {k: v for k, v in document.items() if k not in ("$schema", "$id", "title")}
    assert constraints == {"$ref": f"{schemas.SNAPSHOT}#/$defs/{block}"}
