"""The openssl + jq + base64 + sha256sum recipe for the attestation in docs/signing.md, run
exactly as documented on fresh and tampered keyed bakes."""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path

import pytest

from compliance_bake.signing.attestation import ATTESTATION_FILE
from compliance_bake.signing.canon import canon
from tests._attest_helpers import KeyPair, mint
from tests._recipes import run
from tests.conftest import NOW, invoke

ROOT = Path(__file__).resolve().parents[2]
SIGNING_DOC = ROOT / "docs" / "signing.md"
SUBJECTS = [
    "api/compliance.json",
    "portal/compliance/index.html",
    "registry/compliance-enhancements.json",
    "registry/compliance-policy.json",
    "registry/compliance-shadow.json",
]
CHECKS = ["payloadType", "keyid", "signature", "statement", "subjects"]
ALL_LINES = [*CHECKS, *(f"sha256 {name}" for name in SUBJECTS), "files = subjects"]


def run_recipe(out: Path, public: Path) -> dict[str, bool]:
    """{check: ok} from the recipe's lines; it exits 0 exactly when every check holds."""
    done = run("attestation", out.parent, PUB=str(public))
    assert (done.code == 0) == (not done.failing), (done.code, done.checks, done.stderr)
    return done.checks


def failing(results: dict[str, bool]) -> set[str]:
    return {check for check, ok in results.items() if not ok}


def test_the_recipe_confirms_a_fresh_bake(attested: Path, key: KeyPair) -> None:
    results = run_recipe(attested, key.public)
    assert list(results) == ALL_LINES and all(results.values()), results


def test_the_audit_report_and_an_empty_gitkeep_do_not_disturb_it(
    attested: Path, key: KeyPair
) -> None:
    plays = ROOT / "fixtures" / "plays.csv"
    audit = invoke("audit", "deep", "--plays", str(plays), "--now", NOW, "--out", str(attested))
    assert audit.exit_code == 0, audit.output
    (attested / ".gitkeep").write_bytes(b"")
    assert failing(run_recipe(attested, key.public)) == set()


@pytest.mark.parametrize("name", SUBJECTS)
def test_the_recipe_catches_an_edited_byte(attested: Path, key: KeyPair, name: str) -> None:
    path = attested / name
    data = bytearray(path.read_bytes())
    data[-2] ^= 0x20
    path.write_bytes(bytes(data))
    assert failing(run_recipe(attested, key.public)) == {f"sha256 {name}"}


def test_the_recipe_catches_a_removed_file(attested: Path, key: KeyPair) -> None:
    (attested / "registry/compliance-shadow.json").unlink()
    assert failing(run_recipe(attested, key.public)) == {
        "sha256 registry/compliance-shadow.json",
        "files = subjects",
    }


@pytest.mark.parametrize("name", ["registry/extra.json", ".gitkeep", "audit/other.json"])
def test_the_recipe_catches_an_added_file(attested: Path, key: KeyPair, name: str) -> None:
    (attested / name).parent.mkdir(parents=True, exist_ok=True)
    (attested / name).write_text("{}\n")
    assert failing(run_recipe(attested, key.public)) == {"files = subjects"}


def test_the_recipe_catches_the_wrong_key(attested: Path, tmp_path: Path) -> None:
    other = mint(tmp_path / "other")
    assert failing(run_recipe(attested, other.public)) == {"keyid", "signature"}


def test_the_recipe_catches_a_re_encoded_payload(attested: Path, key: KeyPair) -> None:
    """A forger who edits a file and rewrites its subject digest cannot re-sign."""
    path = attested / "registry/compliance-enhancements.json"
    assert b'"passed": 8' in path.read_bytes()
    path.write_bytes(path.read_bytes().replace(b'"passed": 8', b'"passed": 7'))
    envelope = json.loads((attested / ATTESTATION_FILE).read_text())
    statement = json.loads(base64.b64decode(envelope["payload"]))
    for subject in statement["subject"]:
        data = (attested / subject["name"]).read_bytes()
        subject["digest"]["sha256"] = hashlib.sha256(data).hexdigest()
    envelope["payload"] = base64.b64encode(canon(statement)).decode()
    (attested / ATTESTATION_FILE).write_text(json.dumps(envelope, indent=2))
    assert failing(run_recipe(attested, key.public)) == {"signature"}


@pytest.mark.parametrize("trusted_at", [0, 1])
def test_the_recipe_passes_when_any_signature_is_by_the_trusted_key(
    attested: Path, key: KeyPair, tmp_path: Path, trusted_at: int
) -> None:
    """A rotation envelope: the trusted signature first or second, as `verify` accepts both."""
    from compliance_bake.signing.attestation import envelope as sign_envelope
    from compliance_bake.signing.signing_key import load_signing_key

    other = mint(tmp_path / "other")
    envelope = json.loads((attested / ATTESTATION_FILE).read_text())
    # the same statement signed by the other key, as a rotation's second signer signs it
    theirs = sign_envelope(
        base64.b64decode(envelope["payload"]), load_signing_key(other.private, "test")
    )
    if trusted_at == 1:
        envelope["signatures"] = theirs["signatures"] + envelope["signatures"]
    else:
        envelope["signatures"] = envelope["signatures"] + theirs["signatures"]
    (attested / ATTESTATION_FILE).write_text(json.dumps(envelope, indent=2))
    assert invoke("verify", str(attested), "--public-key", str(key.public)).exit_code == 0
    assert failing(run_recipe(attested, key.public)) == set()
    third = mint(tmp_path / "third")
    assert failing(run_recipe(attested, third.public)) == {"keyid", "signature"}
