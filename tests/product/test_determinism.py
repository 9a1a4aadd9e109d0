"""Same inputs, secret and clock: byte-identical files. Another secret: only the HMACs move."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from compliance_bake.inputs.jsonio import loads_strict
from compliance_bake.report.layout import PORTAL_FILE
from compliance_bake.signing.attestation import ATTESTATION_FILE
from tests._attest_helpers import mint
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


@pytest.mark.parametrize("signed", [False, True], ids=["hmac-only", "signing-key"])
def test_rebakes_are_byte_identical_whatever_the_folder_is_called(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, signed: bool
) -> None:
    """`a` given relative and `x/y/b` given absolute: `diff -r` finds nothing, with and
    without the attestation. The page names no folder: its verify command is the URL form."""
    monkeypatch.chdir(tmp_path)
    extra = ["--signing-key", str(mint(tmp_path).private)] if signed else []
    _bake(Path("a"), None, "--now", NOW, *extra)
    _bake(tmp_path / "x" / "y" / "b", None, "--now", NOW, *extra)
    compared = subprocess.run(["diff", "-r", "a", "x/y/b"], capture_output=True, text=True)
    assert compared.returncode == 0 and compared.stdout == "", compared.stdout
    one, other = snapshot_tree(tmp_path / "a"), snapshot_tree(tmp_path / "x" / "y" / "b")
    assert one == other and (ATTESTATION_FILE in one) is signed
    page = one[PORTAL_FILE][1].decode()
    assert "compliance-bake verify https://HOST/api/compliance.json" in page
    assert "verify a" not in page and "&#34;folder&#34;" not in page


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
