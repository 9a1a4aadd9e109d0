"""`diff` over the policy files beside two snapshots (compliance_bake/diff/policy.py): a
suspension reads `active -> suspended`, and a limit the service stopped enforcing is named by
its rule, counted in questions."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from compliance_bake.resources import demo_fixtures_dir
from tests.conftest import NOW, invoke


def _registry(tmp_path: Path, name: str) -> Path:
    folder = tmp_path / name
    shutil.copytree(demo_fixtures_dir(), folder, ignore=shutil.ignore_patterns("drifted", "*.csv"))
    return folder


def _bake(out: Path, *extra: str) -> None:
    run = invoke("bake", "snapshot", "--out", str(out), "--now", NOW, *extra)
    assert run.exit_code in (0, 1), run.output


def test_a_suspended_licence_is_diffed_as_suspended_not_as_none(tmp_path: Path) -> None:
    registry = _registry(tmp_path, "suspended")
    licences = json.loads((registry / "licences.json").read_text())
    licences["partners"][0]["licences"][0]["status"] = "suspended"  # node-bay-01 in MA
    (registry / "licences.json").write_text(json.dumps(licences))
    _bake(tmp_path / "old")
    _bake(tmp_path / "new", "--registry", str(registry))
    policy = json.loads((tmp_path / "new" / "registry" / "compliance-policy.json").read_text())
    asked = [q for q in policy["questions"] if q["partner"] == "node-bay-01" and q["state"] == "MA"]
    assert [q["expected"]["rule"] for q in asked] == ["licence"]  # predicted blocked by licence
    run = invoke("diff", str(tmp_path / "old"), str(tmp_path / "new"))
    assert run.exit_code == 1
    assert "licence active -> suspended" in " ".join(run.output.split())
    assert "active -> none" not in run.output


def test_a_limit_no_longer_enforced_is_named_by_rule(tmp_path: Path) -> None:
    service = tmp_path / "service"
    service.mkdir()
    shutil.copy(demo_fixtures_dir() / "licences.json", service / "licences.json")
    limits = json.loads((demo_fixtures_dir() / "limits.json").read_text())
    for row in limits["limits"]:
        row["max_wager"] = None  # the service holds no maximum
    (service / "limits.json").write_text(json.dumps(limits))
    _bake(tmp_path / "old")
    _bake(tmp_path / "new", "--service-fixtures", str(service))
    run = invoke("diff", str(tmp_path / "old"), str(tmp_path / "new"))
    assert run.exit_code == 1
    assert "policy max wager not enforced: 0 -> " in run.output
