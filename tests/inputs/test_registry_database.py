"""A registry in the operator's database (`--registry sqlite:PATH`, `--registry postgresql://`,
`--registry-map FILE`): compliance_bake/inputs/registry_database.py.

The same registry (tests/inputs/_registry_db.py) as a fixtures folder, in a real SQLite file and
in the run's real PostgreSQL cluster bakes, through the real CLI and the in-process engine, into
snapshots whose decisions and policy questions are the folder's; `verify` passes. A bad registry
is one line, exit 2, and no out folder.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from compliance_bake.inputs.jurisdictions import NAMES
from compliance_bake.inputs.zipindex import zip_index
from tests.conftest import NOW, invoke
from tests.inputs import _registry_db as reg

pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")

# Other names for every table and a few columns, for the map.
OTHER_NAMES = {
    "partner_state_licenses": "op_licences",
    "regulatory_limits": "op_limits",
    "partner_geo_profiles": "op_profiles",
    "partner_profile_bindings": "op_bindings",
}
OTHER_COLUMNS = {
    "partner_state_licenses": {"node_id": "partner", "status": "licence_state"},
    "regulatory_limits": {"state_code": "jurisdiction", "max_wager": "stake_cap"},
    "partner_geo_profiles": {"zip_code": "postal"},
    "partner_profile_bindings": {"metadata_json": "meta"},
}
MAP_TOML = """
states = ["MA", "NJ"]

[partner_state_licenses]
table = "op_licences"
columns = { node_id = "partner", status = "licence_state" }

[regulatory_limits]
table = "op_limits"
[regulatory_limits.columns]
state_code = "jurisdiction"
max_wager = "stake_cap"

[partner_geo_profiles]
query = "SELECT node_id, state_code, age, location, postal FROM op_profiles"
columns = { zip_code = "postal" }

[partner_profile_bindings]
table = "op_bindings"
columns = { metadata_json = "meta" }
"""


def bake(out: Path, *registry: str) -> Any:
    return invoke("bake", "snapshot", "--registry", *registry, "--out", str(out), "--now", NOW)


def _json(path: Path) -> Any:
    return json.loads(path.read_text())


def decisions(out: Path) -> dict[str, Any]:
    """What the bake decided and asked, in an order of its own (a database registry lists its
    partners by node id, the folder as licences.json does), without where it was read."""
    snapshot = _json(out / "api" / "compliance.json")
    policy = _json(out / "registry" / "compliance-policy.json")
    key = lambda row: json.dumps(row, sort_keys=True)  # noqa: E731
    registry = dict(policy["registry"])
    source = registry.pop("source")
    for name, value in registry.items():
        if isinstance(value, list):
            registry[name] = sorted(value, key=key)
    return {
        "board": snapshot["enhancements"]["rows"],
        "rows": sorted(snapshot["shadow"]["rows"], key=key),
        "summary": snapshot["shadow"]["summary"],
        "geo": sorted(snapshot["geo"]["partners"], key=key),
        "questions": sorted(policy["questions"], key=key),
        "policy_summary": policy["summary"],
        "registry": registry,
        "asked": policy["asked"],
        "source": source,
    }


def _without_source(found: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in found.items() if k != "source"}


@pytest.fixture(scope="module")
def folder_bake(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    base = tmp_path_factory.mktemp("folder")
    folder = reg.write_folder(base / "registry")
    mp = pytest.MonkeyPatch()
    mp.setenv("REPORT_SIGNING_SECRET", "test-secret-0123456789abcdef0123456789abcdef")
    try:
        run = bake(base / "out", str(folder))
    finally:
        mp.undo()
    assert run.exit_code == 0, run.output
    found = decisions(base / "out")
    assert found["source"] == str(folder)
    # The registry asks real boundaries: a fractional minimum, a partner's row, bet types.
    assert {q["kind"] for q in found["questions"]} >= {
        "max+0.01",
        "min-0.01",
        "bet-type-refused",
        "zip-outside",
        "age-min-1",
    }
    assert found["policy_summary"]["questions"] > 100
    return found


def _same_as_folder(out: Path, folder_bake: dict[str, Any], source: str) -> None:
    found = decisions(out)
    assert found["source"] == source
    assert _without_source(found) == _without_source(folder_bake)
    verified = invoke("verify", str(out))
    assert verified.exit_code == 0, verified.output


def test_a_sqlite_registry_bakes_the_folders_decisions_and_verifies(
    tmp_path: Path, folder_bake: dict[str, Any]
) -> None:
    database = reg.write_sqlite(tmp_path / "registry.db")
    run = bake(tmp_path / "out", f"sqlite:{database}")
    assert run.exit_code == 0, run.output
    _same_as_folder(tmp_path / "out", folder_bake, f"sqlite:{database}")
    recorded = _json(tmp_path / "out" / "registry" / "compliance-policy.json")["registry"]
    minimum = next(r for r in recorded["limits"] if r["policy_key"] == "ma-nba-totals")
    assert minimum["min_wager"] == "0.49"  # REAL 0.49, never 0.48999999999999999


def test_a_sqlite_registry_through_a_map_with_other_names_bakes_the_same(
    tmp_path: Path, folder_bake: dict[str, Any]
) -> None:
    database = reg.write_sqlite(tmp_path / "registry.db", names=OTHER_NAMES, columns=OTHER_COLUMNS)
    (tmp_path / "map.toml").write_text(MAP_TOML)
    run = bake(tmp_path / "out", f"sqlite:{database}", "--registry-map", str(tmp_path / "map.toml"))
    assert run.exit_code == 0, run.output
    _same_as_folder(tmp_path / "out", folder_bake, f"sqlite:{database}")


def test_without_the_map_the_other_names_are_a_missing_table(tmp_path: Path) -> None:
    database = reg.write_sqlite(tmp_path / "registry.db", names=OTHER_NAMES)
    run = bake(tmp_path / "out", f"sqlite:{database}")
    assert run.exit_code == 2
    assert len(run.output.strip().splitlines()) == 1
    assert "partner_state_licenses" in run.output and "no such table" in run.output
    assert not (tmp_path / "out").exists()


def test_every_jurisdiction_of_the_zip_index_has_a_name() -> None:
    assert set(NAMES) == set(zip_index().jurisdictions)
