"""`verify` accepts a fresh bake and rejects every kind of tampering, naming the file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from compliance_bake.inputs.jsonio import dumps_pretty, loads_strict
from compliance_bake.signing import proofs as signing
from tests.conftest import OTHER_SECRET, invoke

FILES = [
    "api/compliance.json",
    "registry/compliance-enhancements.json",
    "registry/compliance-shadow.json",
    "portal/compliance/index.html",
]


def _verify(out: Path, *extra: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    result = invoke("verify", str(out), *extra, env=env)
    return result.exit_code, result.output


def _edit(path: Path, change: Any) -> None:
    doc = loads_strict(path.read_bytes())
    change(doc)
    path.write_bytes(dumps_pretty(doc))


def test_fresh_bake_verifies(baked: Path) -> None:
    code, output = _verify(baked)
    assert code == 0, output
    assert "verified" in output


def test_json_output(baked: Path) -> None:
    result = invoke("verify", str(baked), "--json")
    report = json.loads(result.stdout)
    assert result.exit_code == 0
    assert report["ok"] is True and report["hmacChecked"] is True and report["failures"] == []


@pytest.mark.parametrize("name", FILES)
@pytest.mark.parametrize("where", [0.1, 0.5, 0.9])
def test_one_changed_byte_in_any_file_fails(baked: Path, name: str, where: float) -> None:
    path = baked / name
    data = bytearray(path.read_bytes())
    index = int(len(data) * where)
    while chr(data[index]) in " \n":  # a byte that carries content, not layout
        index += 1
    data[index] = ord("x") if data[index] != ord("x") else ord("y")
    path.write_bytes(bytes(data))
    code, output = _verify(baked)
    assert code == 1
    assert name in output


def test_whitespace_edit_fails(baked: Path) -> None:
    path = baked / "registry" / "compliance-shadow.json"
    path.write_bytes(path.read_bytes().replace(b"\n  ", b"\n\t", 1))
    code, output = _verify(baked)
    assert code == 1 and "registry/compliance-shadow.json" in output and "layout" in output


def test_block_edited_and_digest_recomputed_without_the_secret(baked: Path) -> None:
    def forge(shadow: dict[str, Any]) -> None:
        row = shadow["rows"][-1]
        row["realAllowed"] = row["shadowAllowed"] = True
        row.pop("reason", None)
        shadow["summary"] = {
            "allow": shadow["summary"]["allow"] + 1,
            "block": shadow["summary"]["block"] - 1,
            "mismatches": 0,
        }
        shadow["proof"]["digest"] = shadow["signature"] = signing.shadow_digest(shadow)

    _edit(baked / "registry" / "compliance-shadow.json", forge)
    _edit(baked / "api" / "compliance.json", lambda snap: forge(snap["shadow"]))

    def reseal(snap: dict[str, Any]) -> None:
        snap["integrity"]["proof"]["digest"] = signing.integrity_digest(snap)

    _edit(baked / "api" / "compliance.json", reseal)
    code, output = _verify(baked)
    assert code == 1
    assert "shadow.proof.hmac" in output and "api/compliance.json" in output


def test_registry_copy_differing_from_snapshot(baked: Path) -> None:
    _edit(baked / "registry" / "compliance-enhancements.json", lambda d: d.update(consoleDepth=3))
    code, output = _verify(baked)
    assert code == 1
    assert "registry/compliance-enhancements.json" in output


@pytest.mark.parametrize("how", ["removed", "emptied"])
@pytest.mark.parametrize("which", ["shadow", "integrity"])
def test_hmac_removed_or_emptied(baked: Path, how: str, which: str) -> None:
    def strip(snap: dict[str, Any]) -> None:
        if how == "removed":
            del snap[which]["proof"]["hmac"]
        else:
            snap[which]["proof"]["hmac"] = ""

    _edit(baked / "api" / "compliance.json", strip)
    code, output = _verify(baked)
    assert code == 1
    assert "api/compliance.json" in output and "hmac" in output


def test_wrong_secret(baked: Path) -> None:
    code, output = _verify(baked, env={"REPORT_SIGNING_SECRET": OTHER_SECRET})
    assert code == 1
    assert "api/compliance.json" in output and "another secret" in output


def test_without_a_secret_checks_digests_and_says_so(baked: Path) -> None:
    result = invoke("verify", str(baked), env={"REPORT_SIGNING_SECRET": None})  # type: ignore[dict-item]
    assert result.exit_code == 0
    assert "HMACs not" in result.stderr


def test_missing_folder_is_bad_input(tmp_path: Path) -> None:
    result = invoke("verify", str(tmp_path / "nowhere"))
    assert result.exit_code == 2
    assert len(result.stderr.strip().splitlines()) == 1
