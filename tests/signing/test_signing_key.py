"""`signing-key mint` and how a bake finds and refuses signing keys, through the real CLI."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from compliance_bake.signing.attestation import ATTESTATION_FILE
from tests._attest_helpers import bake, mint
from tests.conftest import NOW, invoke, snapshot_tree

REPO = Path(__file__).resolve().parents[2]


def test_mint_writes_a_private_and_a_public_key_and_prints_the_key_id(tmp_path: Path) -> None:
    private = tmp_path / "keys" / "attest.pem"
    result = invoke("signing-key", "mint", "--key-file", str(private))
    assert result.exit_code == 0, result.output
    public = tmp_path / "keys" / "attest.pub.pem"
    assert private.stat().st_mode & 0o777 == 0o600
    assert public.stat().st_mode & 0o777 == 0o644
    assert private.read_text().startswith("-----BEGIN PRIVATE KEY-----\n")  # PKCS#8
    assert public.read_text().startswith("-----BEGIN PUBLIC KEY-----\n")  # SubjectPublicKeyInfo
    key = serialization.load_pem_private_key(private.read_bytes(), password=None)
    assert isinstance(key, Ed25519PrivateKey)
    pub = serialization.load_pem_public_key(public.read_bytes())
    assert isinstance(pub, Ed25519PublicKey)
    der = pub.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    assert result.stdout == hashlib.sha256(der).hexdigest() + "\n"
    assert pub.public_bytes_raw() == key.public_key().public_bytes_raw()
    body = "".join(private.read_text().splitlines()[1:-1])
    assert body not in result.output and body[:20] not in result.output


def test_the_key_id_is_what_openssl_and_sha256sum_compute(tmp_path: Path) -> None:
    pair = mint(tmp_path)
    der = subprocess.run(
        ["openssl", "pkey", "-pubin", "-in", str(pair.public), "-outform", "DER"],
        capture_output=True,
        check=True,
    ).stdout
    assert hashlib.sha256(der).hexdigest() == pair.key_id


def test_mint_refuses_to_overwrite_unless_forced(tmp_path: Path) -> None:
    pair = mint(tmp_path)
    before = snapshot_tree(tmp_path)
    again = invoke("signing-key", "mint", "--key-file", str(pair.private))
    assert again.exit_code == 2
    assert again.stdout == "" and len(again.stderr.splitlines()) == 1
    assert "already exists" in again.stderr and "--force" in again.stderr
    assert snapshot_tree(tmp_path) == before
    pair.private.unlink()  # a lone public key is refused too: it would be orphaned
    assert invoke("signing-key", "mint", "--key-file", str(pair.private)).exit_code == 2
    forced = invoke("signing-key", "mint", "--key-file", str(pair.private), "--force")
    assert forced.exit_code == 0 and forced.stdout.strip() != pair.key_id


def test_the_default_key_is_git_ignored_and_signs_bakes(tmp_path: Path) -> None:
    minted = invoke("signing-key", "mint")
    assert minted.exit_code == 0, minted.output
    assert Path(".compliance-bake/signing-key.pem").stat().st_mode & 0o777 == 0o600
    assert Path(".compliance-bake/signing-key.pub.pem").is_file()
    ignored = subprocess.run(
        ["git", "check-ignore", "-q", "--no-index", ".compliance-bake/signing-key.pem"], cwd=REPO
    )
    assert ignored.returncode == 0, ".gitignore must keep the signing key out of git"
    out = tmp_path / "out"
    result = invoke("bake", "snapshot", "--out", str(out), "--now", NOW, "--json")
    assert result.exit_code == 0, result.output
    key_id = minted.stdout.strip()
    assert json.loads(result.stdout)["attestation"] == {"file": ATTESTATION_FILE, "keyId": key_id}
    envelope = json.loads((out / ATTESTATION_FILE).read_text())
    assert envelope["signatures"][0]["keyid"] == key_id


def test_the_environment_names_the_key_file(tmp_path: Path) -> None:
    pair = mint(tmp_path)
    out = tmp_path / "out"
    result = invoke(
        "bake", "snapshot", "--out", str(out), "--now", NOW,
        env={"COMPLIANCE_SIGNING_KEY_FILE": str(pair.private)},
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert json.loads((out / ATTESTATION_FILE).read_text())["signatures"][0]["keyid"] == pair.key_id


def _pem(key: rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def _encrypted_ed25519() -> bytes:
    return Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.BestAvailableEncryption(b"correct horse"),
    )


BAD_KEYS = {
    "not PEM": (b"hello, I am not a key\n", 0o600, "not a PEM private key"),
    "RSA": (_pem(rsa.generate_private_key(65537, 2048)), 0o600, "not an Ed25519 key"),
    "EC": (_pem(ec.generate_private_key(ec.SECP256R1())), 0o600, "not an Ed25519 key"),
    "encrypted": (_encrypted_ed25519(), 0o600, "is encrypted"),
    "readable by others": (None, 0o644, "readable by others"),
}


@pytest.mark.parametrize("case", sorted(BAD_KEYS))
def test_a_bad_key_file_is_refused_and_nothing_is_written(tmp_path: Path, case: str) -> None:
    content, mode, words = BAD_KEYS[case]
    pair = mint(tmp_path)
    out = bake(tmp_path / "out", None)  # an earlier bake stays as it was
    before = snapshot_tree(out)
    if content is not None:
        pair.private.write_bytes(content)
    pair.private.chmod(mode)
    result = invoke("bake", "snapshot", "--out", str(out), "--signing-key", str(pair.private))
    assert result.exit_code == 2
    assert result.stdout == "" and len(result.stderr.splitlines()) == 1, result.stderr
    assert words in result.stderr and str(pair.private) in result.stderr
    assert "(fix: " in result.stderr and "Traceback" not in result.stderr
    assert snapshot_tree(out) == before


def test_a_missing_key_file_is_refused(tmp_path: Path) -> None:
    result = invoke("bake", "snapshot", "--out", str(tmp_path / "out"),
                    "--signing-key", str(tmp_path / "nope.pem"))  # fmt: skip
    assert result.exit_code == 2 and len(result.stderr.splitlines()) == 1
    assert "does not exist" in result.stderr and "signing-key mint" in result.stderr
    assert not (tmp_path / "out").exists()


def test_public_keys_come_from_the_options_else_the_environment(tmp_path: Path) -> None:
    from compliance_bake.signing.signing_key import SigningKeyError, public_keys_from

    old, new = mint(tmp_path / "old"), mint(tmp_path / "new")
    assert public_keys_from([old.public, new.public], {}) == [old.public_pem, new.public_pem]
    both = {"COMPLIANCE_PUBLIC_KEY_FILE": f"{old.public}:{new.public}"}
    assert public_keys_from([], both) == [old.public_pem, new.public_pem]
    assert public_keys_from([new.public], both) == [new.public_pem]  # the option wins
    assert public_keys_from([], {}) == []
    with pytest.raises(SigningKeyError, match=r"\$COMPLIANCE_PUBLIC_KEY_FILE: cannot read"):
        public_keys_from([], {"COMPLIANCE_PUBLIC_KEY_FILE": str(tmp_path / "gone.pub.pem")})
    with pytest.raises(SigningKeyError, match="--public-key: .* is not a PEM public key"):
        public_keys_from([old.private], {})  # the private key is not a public key
