"""The public attestation on real bakes: what the bake writes, and `check_attestation` on fresh
and tampered `out/` folders (wrong key, an edited byte, a removed or added file, a forged
envelope). Bakes go through the real CLI; keys are minted by `signing-key mint`."""

from __future__ import annotations

import base64
import json
import os
from dataclasses import replace
from pathlib import Path

import pytest
from securesystemslib.dsse import Envelope
from securesystemslib.signer import SSlibKey

from compliance_bake.errors import InputError
from compliance_bake.findings import KEY
from compliance_bake.inputs.jsonio import dumps_pretty
from compliance_bake.report.layout import PORTAL_FILE
from compliance_bake.report.portal import read_facts, render_portal
from compliance_bake.signing.attestation import ATTESTATION_FILE, PAYLOAD_TYPE, pae
from compliance_bake.signing.canon import canon
from compliance_bake.signing.signing_key import load_signing_key, parse_public_key
from compliance_bake.verify.attestation import AttestationResult, check_attestation
from tests._attest_helpers import KeyPair, bake, mint
from tests.conftest import NOW, invoke, snapshot_tree


def failed(result: AttestationResult) -> list[tuple[str, str]]:
    """(file, what) of each failure, once every finding is a failed key check."""
    assert all(not f.ok and f.kind == KEY for f in result.findings), result.findings
    return [(f.file, f.what) for f in result.failures]


SUBJECTS = [
    "api/compliance.json",
    "portal/compliance/index.html",
    "registry/compliance-enhancements.json",
    "registry/compliance-policy.json",
    "registry/compliance-shadow.json",
]


def _statement(out: Path) -> dict:  # type: ignore[type-arg]
    envelope = json.loads((out / ATTESTATION_FILE).read_text())
    return json.loads(base64.b64decode(envelope["payload"]))  # type: ignore[no-any-return]


def test_a_fresh_bake_verifies_with_its_key(attested: Path, key: KeyPair) -> None:
    result = check_attestation(attested, [key.public_pem])
    assert result.ok and result.key_id == key.key_id and result.findings == []


def test_the_statement_names_every_other_file_with_its_sha256(attested: Path) -> None:
    import hashlib

    statement = _statement(attested)
    assert statement["_type"] == "https://in-toto.io/Statement/v1"
    assert [s["name"] for s in statement["subject"]] == SUBJECTS
    for subject in statement["subject"]:
        data = (attested / subject["name"]).read_bytes()
        assert subject["digest"] == {"sha256": hashlib.sha256(data).hexdigest()}


def test_the_predicate_summarises_the_snapshot(tmp_path: Path, key: KeyPair) -> None:
    plays = Path(__file__).resolve().parents[2] / "fixtures" / "plays.csv"
    out = bake(tmp_path / "out", key, "--deep-audit", str(plays))
    snap = json.loads((out / "api/compliance.json").read_text())
    assert _statement(out)["predicate"] == {
        "generatedAt": "2026-11-22T04:06:00.000Z",
        "board": {"passed": 8, "total": 8},
        "shadow": {"rows": 8, "allow": 4, "block": 4, "mismatches": 0},
        "deepAudit": {"ok": True},
        "proofs": {
            "shadow": snap["shadow"]["proof"]["digest"],
            "integrity": snap["integrity"]["proof"]["digest"],
        },
    }
    assert check_attestation(out, [key.public_pem]).ok
    without = _statement(bake(tmp_path / "plain", key))["predicate"]
    assert "deepAudit" not in without


def test_the_envelope_is_dsse_as_securesystemslib_reads_it(attested: Path, key: KeyPair) -> None:
    data = json.loads((attested / ATTESTATION_FILE).read_text())
    assert data["payloadType"] == PAYLOAD_TYPE
    envelope = Envelope.from_dict(json.loads((attested / ATTESTATION_FILE).read_text()))
    assert envelope.pae() == pae(PAYLOAD_TYPE, base64.b64decode(data["payload"]))
    public = parse_public_key(key.public_pem)
    accepted = envelope.verify([SSlibKey.from_crypto(public, keyid=key.key_id)], 1)
    assert list(accepted) == [key.key_id]


def test_rebakes_are_byte_identical(tmp_path: Path, key: KeyPair) -> None:
    # Folders of one name: the page's verify command names the folder baked.
    first = snapshot_tree(bake(tmp_path / "a" / "out", key))
    second = snapshot_tree(bake(tmp_path / "b" / "out", key))
    assert first == second and ATTESTATION_FILE in first


def test_the_key_adds_a_file_and_changes_no_other_byte(tmp_path: Path, key: KeyPair) -> None:
    """...but the portal page's signer section, which names the key."""
    keyed_out = bake(tmp_path / "keyed", key)
    keyed = snapshot_tree(keyed_out)
    plain = snapshot_tree(bake(tmp_path / "plain", None))
    assert sorted(plain) == SUBJECTS
    unsigned = (ATTESTATION_FILE, PORTAL_FILE)
    assert {k: v for k, v in keyed.items() if k not in unsigned} == {
        k: v for k, v in plain.items() if k != PORTAL_FILE
    }
    assert keyed[ATTESTATION_FILE][0] & 0o777 == 0o644
    page = (keyed_out / PORTAL_FILE).read_bytes()
    facts = read_facts(page)
    assert facts is not None and facts.key_id == key.key_id
    snapshot = json.loads((keyed_out / "api/compliance.json").read_bytes())
    policy = json.loads((keyed_out / "registry/compliance-policy.json").read_bytes())
    unkeyed = replace(facts, key_id=None, folder="plain")
    as_unsigned = render_portal(snapshot, facts=unkeyed, policy=policy)
    assert as_unsigned == (tmp_path / "plain" / PORTAL_FILE).read_bytes()


def test_a_keyless_rebake_removes_the_stale_attestation(attested: Path) -> None:
    bake(attested, None)
    assert not (attested / ATTESTATION_FILE).exists()
    assert sorted(snapshot_tree(attested)) == SUBJECTS


def test_key_rotation_any_given_key_may_verify(
    attested: Path, tmp_path: Path, key: KeyPair
) -> None:
    other = mint(tmp_path / "other")
    result = check_attestation(attested, [other.public_pem, key.public_pem])
    assert result.ok and result.key_id == key.key_id


def test_a_wrong_key_fails(attested: Path, key: KeyPair, tmp_path: Path) -> None:
    other = mint(tmp_path / "other")
    result = check_attestation(attested, [other.public_pem])
    assert not result.ok and result.key_id is None
    assert result.failures[0].file == ATTESTATION_FILE
    assert f"signed by key {key.key_id}; the given key {other.key_id} is another key" in (
        result.failures[0].what
    )


@pytest.mark.parametrize("name", SUBJECTS)
def test_one_edited_byte_fails_naming_the_file(attested: Path, key: KeyPair, name: str) -> None:
    path = attested / name
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))
    result = check_attestation(attested, [key.public_pem])
    assert not result.ok
    assert failed(result) == [(name, "sha256 differs from the attestation (changed after signing)")]


@pytest.mark.parametrize("name", SUBJECTS)
def test_a_removed_file_fails(attested: Path, key: KeyPair, name: str) -> None:
    (attested / name).unlink()
    result = check_attestation(attested, [key.public_pem])
    assert not result.ok
    assert failed(result) == [(name, "missing: the attestation names it, out/ lacks it")]


@pytest.mark.parametrize("name", ["extra.json", "registry/other.json", ".hidden", "audit/x.json"])
def test_an_added_file_fails(attested: Path, key: KeyPair, name: str) -> None:
    (attested / name).parent.mkdir(parents=True, exist_ok=True)
    (attested / name).write_text("{}\n")
    result = check_attestation(attested, [key.public_pem])
    assert not result.ok
    assert failed(result) == [(name, "extra: in out/, not named by the attestation")]


def test_a_symbolic_link_fails(attested: Path, key: KeyPair) -> None:
    os.symlink(attested / "api", attested / "api-link")
    os.symlink(attested / "api/compliance.json", attested / "registry/link.json")
    failures = failed(check_attestation(attested, [key.public_pem]))
    assert ("api-link", "not a regular file (a bake writes none)") in failures
    assert ("registry/link.json", "not a regular file (a bake writes none)") in failures


def test_a_subject_replaced_by_a_link_to_the_same_bytes_fails(attested: Path, key: KeyPair) -> None:
    name = "registry/compliance-shadow.json"
    outside = attested.parent / "elsewhere.json"
    (attested / name).rename(outside)
    os.symlink(outside, attested / name)
    result = check_attestation(attested, [key.public_pem])
    assert failed(result) == [(name, "not a regular file (a bake writes none)")]


def test_the_audit_report_and_an_empty_gitkeep_are_not_subjects(
    attested: Path, key: KeyPair
) -> None:
    plays = Path(__file__).resolve().parents[2] / "fixtures" / "plays.csv"
    audit = invoke("audit", "deep", "--plays", str(plays), "--now", NOW, "--out", str(attested))
    assert audit.exit_code == 0, audit.output
    assert (attested / "audit/zip-window.json").is_file()
    (attested / ".gitkeep").write_bytes(b"")
    assert check_attestation(attested, [key.public_pem]).ok
    (attested / ".gitkeep").write_bytes(b"smuggled\n")
    result = check_attestation(attested, [key.public_pem])
    assert failed(result) == [(".gitkeep", "extra: in out/, not named by the attestation")]


def _envelope(out: Path) -> dict:  # type: ignore[type-arg]
    return json.loads((out / ATTESTATION_FILE).read_text())  # type: ignore[no-any-return]


def _write_envelope(out: Path, envelope: object) -> None:
    (out / ATTESTATION_FILE).write_bytes(dumps_pretty(envelope))


def _resigned(out: Path, key: KeyPair, statement: object) -> dict:  # type: ignore[type-arg]
    """An envelope over `statement`, properly signed with the key: a signer who lies."""
    from compliance_bake.signing.attestation import envelope

    signing = load_signing_key(key.private, "test")
    return envelope(canon(statement), signing)


def _forged_payload(env: dict) -> None:  # type: ignore[type-arg]
    statement = json.loads(base64.b64decode(env["payload"]))
    statement["predicate"]["board"]["passed"] = 7
    env["payload"] = base64.b64encode(canon(statement)).decode()


def _flipped_signature(env: dict) -> None:  # type: ignore[type-arg]
    sig = bytearray(base64.b64decode(env["signatures"][0]["sig"]))
    sig[0] ^= 0x80
    env["signatures"][0]["sig"] = base64.b64encode(bytes(sig)).decode()


TAMPERED_ENVELOPES = {
    "payload re-encoded with a change": (_forged_payload, "the envelope changed after signing"),
    "signature flipped": (_flipped_signature, "the envelope changed after signing"),
    "payloadType": (
        lambda env: env.update(payloadType="application/json"),
        "payloadType is not application/vnd.in-toto+json",
    ),
    "keyid": (
        lambda env: env["signatures"][0].update(keyid="0" * 64),
        "keyid does not name the key that signed",
    ),
    "no signatures": (lambda env: env.update(signatures=[]), "signatures are not [{keyid, sig}]"),
    "payload not base64": (lambda env: env.update(payload="%%%"), "payload is not base64"),
    "extra member": (lambda env: env.update(note="trust me"), "not a DSSE envelope"),
}


@pytest.mark.parametrize("case", sorted(TAMPERED_ENVELOPES))
def test_a_tampered_envelope_fails(attested: Path, key: KeyPair, case: str) -> None:
    change, words = TAMPERED_ENVELOPES[case]
    env = _envelope(attested)
    change(env)
    _write_envelope(attested, env)
    result = check_attestation(attested, [key.public_pem])
    assert not result.ok
    assert result.failures[0].file == ATTESTATION_FILE and words in result.failures[0].what


def test_a_missing_or_broken_attestation_fails(attested: Path, key: KeyPair) -> None:
    (attested / ATTESTATION_FILE).write_text('{"payloadType": ')
    result = check_attestation(attested, [key.public_pem])
    assert not result.ok and "not strict JSON" in result.failures[0].what
    (attested / ATTESTATION_FILE).unlink()
    result = check_attestation(attested, [key.public_pem])
    assert not result.ok and result.key_id is None
    assert failed(result) == [
        (ATTESTATION_FILE, "missing (baked without a signing key, or removed)")
    ]


def test_a_signed_statement_that_lies_still_fails(attested: Path, key: KeyPair) -> None:
    statement = _statement(attested)
    statement["predicate"]["board"]["passed"] = 7
    _write_envelope(attested, _resigned(attested, key, statement))
    result = check_attestation(attested, [key.public_pem])
    assert not result.ok and result.key_id == key.key_id
    assert failed(result) == [
        (ATTESTATION_FILE, "predicate does not summarise api/compliance.json")
    ]

    statement = _statement(bake(attested, key))
    statement["subject"].append({"name": "../outside.json", "digest": {"sha256": "0" * 64}})
    _write_envelope(attested, _resigned(attested, key, statement))
    result = check_attestation(attested, [key.public_pem])
    assert not result.ok and "a subject is not {name, digest: {sha256}}" in result.failures[0].what


def test_no_key_or_a_bad_public_key_is_bad_usage(attested: Path, key: KeyPair) -> None:
    with pytest.raises(InputError, match="no public key given"):
        check_attestation(attested, [])
    with pytest.raises(InputError, match="public key 2 is not a PEM public key"):
        check_attestation(attested, [key.public_pem, b"not a key"])
    with pytest.raises(InputError, match="not Ed25519"):
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import ec

        ec_pem = (
            ec.generate_private_key(ec.SECP256R1())
            .public_key()
            .public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
            )
        )
        check_attestation(attested, [ec_pem])
