"""Same inputs, secret and clock: byte-identical files. Another secret: only the HMACs move."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from compliance_bake.inputs.jsonio import loads_strict
from compliance_bake.report.layout import PORTAL_FILE
from tests.conftest import NOW, OTHER_SECRET, invoke, snapshot_tree


def _bake(out: Path, env: dict[str, str] | None = None, *extra: str) -> None:
    result = invoke("bake", "snapshot", "--out", str(out), *extra, env=env)
    assert result.exit_code == 0, result.output


def _leaves(value: Any, path: str = "$") -> dict[str, Any]:
    if isinstance(value, dict):
        return {
            k: v for key, child in value.items() for k, v in _leaves(child, f"{path}.{key}").items()
        }
    if isinstance(value, list):
        return {
            k: v for i, child in enumerate(value) for k, v in _leaves(child, f"{path}[{i}]").items()
        }
    return {path: value}


def test_two_bakes_are_byte_identical(tmp_path: Path) -> None:
    # Two folders of one name: the page's verify command names the folder baked.
    _bake(tmp_path / "a" / "out", None, "--now", NOW)
    _bake(tmp_path / "b" / "out", None, "--now", NOW)
    assert snapshot_tree(tmp_path / "a" / "out") == snapshot_tree(tmp_path / "b" / "out")


def test_the_folder_baked_changes_only_the_pages_verify_command(tmp_path: Path) -> None:
    _bake(tmp_path / "out", None, "--now", NOW)
    _bake(tmp_path / "out-fail", None, "--now", NOW)
    one, other = snapshot_tree(tmp_path / "out"), snapshot_tree(tmp_path / "out-fail")
    assert set(one) == set(other)
    assert [name for name in one if one[name] != other[name]] == [PORTAL_FILE]
    page = other[PORTAL_FILE][1].decode()
    assert (
        page.replace("verify out-fail", "verify out").replace(
            ",&#34;folder&#34;:&#34;out-fail&#34;", ""
        )
        == one[PORTAL_FILE][1].decode()
    )


def test_source_date_epoch_pins_the_clock(tmp_path: Path) -> None:
    env = {"SOURCE_DATE_EPOCH": "1795320360"}
    _bake(tmp_path / "a" / "out", env)
    _bake(tmp_path / "b" / "out", env)
    assert snapshot_tree(tmp_path / "a" / "out") == snapshot_tree(tmp_path / "b" / "out")
    snap = loads_strict((tmp_path / "a" / "out" / "api" / "compliance.json").read_bytes())
    assert snap["generatedAt"] == "2026-11-22T04:06:00.000Z"


def test_another_secret_changes_only_the_hmacs(tmp_path: Path) -> None:
    _bake(tmp_path / "a", None, "--now", NOW)
    _bake(tmp_path / "b", {"REPORT_SIGNING_SECRET": OTHER_SECRET}, "--now", NOW)
    files = (
        "api/compliance.json",
        "registry/compliance-enhancements.json",
        "registry/compliance-shadow.json",
    )
    changed: dict[str, set[str]] = {}
    for name in files:
        a = _leaves(loads_strict((tmp_path / "a" / name).read_bytes()))
        b = _leaves(loads_strict((tmp_path / "b" / name).read_bytes()))
        assert a.keys() == b.keys()
        changed[name] = {path for path in a if a[path] != b[path]}
    assert changed["registry/compliance-enhancements.json"] == set()
    assert changed["registry/compliance-shadow.json"] == {"$.proof.hmac"}
    # The integrity digest covers the whole snapshot, shadow.proof.hmac included (docs/spec.md,
    # 2.6), so it moves with the secret too; no other field does.
    assert changed["api/compliance.json"] == {
        "$.shadow.proof.hmac",
        "$.integrity.proof.hmac",
        "$.integrity.proof.digest",
    }
