"""`verify --public-key`: the Ed25519 attestation as key material, without the HMAC secret."""

from __future__ import annotations

from pathlib import Path

from tests._attest_helpers import KeyPair, bake, mint
from tests.conftest import invoke

NO_SECRET: dict[str, str] = {"REPORT_SIGNING_SECRET": None}  # type: ignore[dict-item]


def _keyed_bake(tmp_path: Path) -> tuple[Path, KeyPair]:
    key = mint(tmp_path)
    return bake(tmp_path / "out", key), key


def test_a_public_key_alone_authenticates_a_keyed_bake(tmp_path: Path) -> None:
    out, key = _keyed_bake(tmp_path)
    result = invoke("verify", str(out), "--public-key", str(key.public), env=NO_SECRET)
    assert result.exit_code == 0, result.output
    assert f"authentic: yes, Ed25519 key {key.key_id}" in result.output
    assert "verified" in result.output
    by_env = invoke(
        "verify", str(out), env={**NO_SECRET, "COMPLIANCE_PUBLIC_KEY_FILE": str(key.public)}
    )
    assert by_env.exit_code == 0, by_env.output


def test_both_keys_are_named(tmp_path: Path) -> None:
    out, key = _keyed_bake(tmp_path)
    result = invoke("verify", str(out), "--public-key", str(key.public))
    assert result.exit_code == 0, result.output
    assert "HMAC-SHA3-256 with REPORT_SIGNING_SECRET" in result.output
    assert f"Ed25519 key {key.key_id}" in result.output


def test_a_wrong_public_key_is_not_authentic(tmp_path: Path) -> None:
    out, _ = _keyed_bake(tmp_path)
    other = mint(tmp_path, "other.pem")
    result = invoke("verify", str(out), "--public-key", str(other.public), env=NO_SECRET)
    assert result.exit_code == 1, result.output
    assert "authentic: NO" in result.output and "attestation" in result.output


def test_an_added_file_fails_both_ways(tmp_path: Path) -> None:
    out, key = _keyed_bake(tmp_path)
    (out / "api" / "extra.json").write_text("{}")
    result = invoke("verify", str(out), "--public-key", str(key.public), env=NO_SECRET)
    assert result.exit_code == 1
    assert "FAIL api/extra.json: not a file the tool writes" in result.output


def test_a_public_key_cannot_authenticate_a_single_file(tmp_path: Path) -> None:
    out, key = _keyed_bake(tmp_path)
    single = str(out / "api" / "compliance.json")
    result = invoke("verify", single, "--public-key", str(key.public), env=NO_SECRET)
    assert result.exit_code == 2
    assert "out/ folder" in result.stderr


def test_an_empty_gitkeep_is_allowed_a_full_one_is_not(baked: Path) -> None:
    (baked / ".gitkeep").write_bytes(b"")
    assert invoke("verify", str(baked)).exit_code == 0
    (baked / ".gitkeep").write_bytes(b"hello")
    result = invoke("verify", str(baked))
    assert result.exit_code == 1 and "FAIL .gitkeep" in result.output
