"""Ten bakes with --log through the real CLI: the log verifies, each out/ verifies with its
inclusion proof, `verify --log` proves consistency with the latest checkpoint, and
sigstore-python (what Rekor clients run) accepts every inclusion proof and checkpoint."""

from __future__ import annotations

import base64
import json
import shutil
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from sigstore._internal.merkle import verify_merkle_inclusion
from sigstore._internal.rekor.checkpoint import SignedCheckpoint, verify_checkpoint
from sigstore._internal.trust import Keyring, RekorKeyring
from sigstore.errors import VerificationError
from sigstore.models import TransparencyLogEntry
from sigstore_models.common import v1 as common_v1
from sigstore_models.rekor.v1 import TransparencyLogEntry as RekorEntry

from compliance_bake.log import note
from compliance_bake.log.entry import entry_bytes
from tests.conftest import invoke
from tests.log._log_helpers import ORIGIN, bake, bake_env, failures, log_verify, mint, verify_out


@pytest.fixture(scope="module")
def ten(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, list[Path]]:
    """Ten bakes into ten out/ folders, one log."""
    tmp = tmp_path_factory.mktemp("ten")
    with bake_env():
        private, public = mint(tmp, "operator")
        outs = []
        for day in range(1, 11):
            out = tmp / f"out{day}"
            result = bake(out, tmp / "log", private, day)
            assert result.exit_code == 0, result.output
            assert json.loads(result.stdout)["log"]["index"] == day - 1
            outs.append(out)
    return tmp / "log", public, outs


def sigstore_entry(out: Path, public: Path) -> tuple[TransparencyLogEntry, RekorKeyring]:
    """out/log/ as a Rekor entry, and the log's key as a sigstore keyring."""
    proof = json.loads((out / "log" / "inclusion.json").read_text())
    checkpoint = (out / "log" / "checkpoint").read_text()
    pem = serialization.load_pem_public_key(public.read_bytes())
    note_key_id = note.key_id(ORIGIN, note.ALG_ED25519, pem)  # type: ignore[arg-type]
    b64 = lambda data: base64.b64encode(data).decode()  # noqa: E731
    inner = RekorEntry.from_dict({
        "logIndex": str(proof["logIndex"]),
        "logId": {"keyId": b64(note_key_id)},
        "kindVersion": {"kind": "compliance-bake", "version": "1"},
        "inclusionProof": {
            "logIndex": str(proof["logIndex"]),
            "rootHash": b64(bytes.fromhex(proof["rootHash"])),
            "treeSize": str(proof["treeSize"]),
            "hashes": [b64(bytes.fromhex(h)) for h in proof["hashes"]],
            "checkpoint": {"envelope": checkpoint},
        },
        "canonicalizedBody": b64(entry_bytes(proof["entry"])),
    })  # fmt: skip
    der = pem.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    key = common_v1.PublicKey.from_json(
        json.dumps({"rawBytes": b64(der), "keyDetails": "PKIX_ED25519"})
    )
    return TransparencyLogEntry(inner), RekorKeyring(Keyring([key]))


def test_the_log_verifies_and_lists_the_ten_entries(ten: tuple[Path, Path, list[Path]]) -> None:
    log, public, outs = ten
    result = log_verify(log, public)
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["ok"] and doc["size"] == 10 and doc["origin"] == ORIGIN and doc["problems"] == []
    assert [e["generatedAt"][:10] for e in doc["entries"]] == [
        f"2026-11-{day:02d}" for day in range(1, 11)
    ]
    assert all(e["verdict"]["ok"] and e["target"] for e in doc["entries"])
    shown = invoke("log", "show", str(log), "3", "--public-key", str(public))
    assert shown.exit_code == 0 and json.loads(shown.stdout)["generatedAt"].startswith("2026-11-04")


def test_each_out_verifies_with_its_inclusion_proof(ten: tuple[Path, Path, list[Path]]) -> None:
    log, public, outs = ten
    for out in outs:
        result = verify_out(out, public)
        assert result.exit_code == 0, result.output
        applied = json.loads(result.stdout)["applied"]
        assert any(a.startswith("transparency log: entry ") for a in applied), applied


def test_an_out_whose_api_folder_is_a_file_fails_the_entry_check_without_a_crash(
    ten: tuple[Path, Path, list[Path]], tmp_path: Path
) -> None:
    """A file where out/api/ should be: the logged entry names a snapshot that cannot be read,
    a failed finding (exit 1) like a missing one, not an internal error."""
    _, public, outs = ten
    out = tmp_path / "out"
    shutil.copytree(outs[0], out)
    shutil.rmtree(out / "api")
    (out / "api").write_text("not a folder\n", encoding="utf-8")
    result = verify_out(out, public)
    assert result.exit_code == 1, result.output
    assert "log/inclusion.json: the entry names api/compliance.json, which is unreadable" in (
        failures(result)
    )


def test_verify_log_proves_consistency_with_the_latest_checkpoint(
    ten: tuple[Path, Path, list[Path]],
) -> None:
    log, public, outs = ten
    for out in (outs[0], outs[4], outs[9]):
        result = verify_out(out, public, "--log", str(log))
        assert result.exit_code == 0, result.output


def test_sigstore_accepts_every_inclusion_proof_and_checkpoint(
    ten: tuple[Path, Path, list[Path]],
) -> None:
    log, public, outs = ten
    for out in outs:
        entry, keyring = sigstore_entry(out, public)
        verify_merkle_inclusion(entry)
        verify_checkpoint(keyring, entry)
        parsed = SignedCheckpoint.from_text((out / "log" / "checkpoint").read_text()).checkpoint
        assert parsed.origin == ORIGIN
        assert parsed.log_size == entry._inner.inclusion_proof.tree_size


def test_sigstore_refuses_what_we_refuse(
    ten: tuple[Path, Path, list[Path]], tmp_path: Path
) -> None:
    """The independent check can fail: an edited entry, or a checkpoint by another key."""
    log, public, outs = ten
    out = tmp_path / "out"
    shutil.copytree(outs[6], out)
    proof = json.loads((out / "log" / "inclusion.json").read_text())
    proof["entry"]["verdict"]["ok"] = False
    (out / "log" / "inclusion.json").write_text(json.dumps(proof))
    entry, keyring = sigstore_entry(out, public)
    with pytest.raises(VerificationError):
        verify_merkle_inclusion(entry)
    assert any("inclusion" in line for line in failures(verify_out(out, public)))
    _, other = mint(tmp_path, "other")
    entry, keyring = sigstore_entry(outs[6], other)
    with pytest.raises(VerificationError):
        verify_checkpoint(keyring, entry)


def test_a_bake_without_a_signing_key_or_origin_is_refused_and_writes_nothing(
    tmp_path: Path,
) -> None:
    result = invoke("bake", "snapshot", "--out", str(tmp_path / "out"), "--log",
                    str(tmp_path / "log"), "--log-origin", ORIGIN)  # fmt: skip
    assert result.exit_code == 2 and "signing key" in result.output
    private, _ = mint(tmp_path, "k")
    result = invoke("bake", "snapshot", "--out", str(tmp_path / "out"), "--signing-key",
                    str(private), "--log", str(tmp_path / "log"))  # fmt: skip
    assert result.exit_code == 2 and "--log-origin" in result.output
    assert not (tmp_path / "out").exists() and not (tmp_path / "log" / "checkpoint").exists()


def test_a_failed_bake_appends_nothing(tmp_path: Path) -> None:
    private, public = mint(tmp_path, "k")
    assert bake(tmp_path / "out", tmp_path / "log", private, 1).exit_code == 0
    before = (tmp_path / "log" / "checkpoint").read_bytes()
    bad = tmp_path / "fixtures"
    bad.mkdir()  # no fixture files: bad input, exit 2
    result = bake(tmp_path / "out2", tmp_path / "log", private, 2, "--fixtures", str(bad))
    assert result.exit_code == 2
    assert (tmp_path / "log" / "checkpoint").read_bytes() == before
    assert json.loads(log_verify(tmp_path / "log", public).stdout)["size"] == 1


def test_a_bake_refuses_a_log_its_key_does_not_keep_as_log_verify_does(tmp_path: Path) -> None:
    """The bake reads the log's checkpoint through the readers' own check (log/check.py): the
    same finding, raised as bad input before anything is written."""
    private, public = mint(tmp_path, "k")
    other, other_public = mint(tmp_path, "other")
    assert bake(tmp_path / "out", tmp_path / "log", private, 1).exit_code == 0
    before = (tmp_path / "log" / "checkpoint").read_bytes()
    result = bake(tmp_path / "out2", tmp_path / "log", other, 2)
    assert result.exit_code == 2 and "Traceback" not in result.output
    refused = log_verify(tmp_path / "log", other_public)
    assert refused.exit_code == 1
    problem = json.loads(refused.stdout)["problems"][0]  # "checkpoint: checkpoint ... is not ..."
    assert problem.split(": ", 1)[1].split(" (")[0] in result.output, (problem, result.output)
    assert (tmp_path / "log" / "checkpoint").read_bytes() == before
    assert not (tmp_path / "out2").exists()


def test_a_rebake_without_log_removes_the_old_proof(tmp_path: Path) -> None:
    """out/log/ belongs to the snapshot it proves: a later bake into the same out/ without
    --log must not leave a proof of the previous snapshot beside the new one."""
    private, public = mint(tmp_path, "k")
    assert bake(tmp_path / "out", tmp_path / "log", private, 1).exit_code == 0
    result = invoke("bake", "snapshot", "--out", str(tmp_path / "out"), "--signing-key",
                    str(private), "--now", "2026-11-02T04:06:00Z")  # fmt: skip
    assert result.exit_code == 0
    assert not (tmp_path / "out" / "log" / "inclusion.json").exists()
    assert verify_out(tmp_path / "out", public).exit_code == 0


def test_a_bake_that_records_failures_is_logged_like_any_other(tmp_path: Path) -> None:
    """That is the point: a failing day cannot be dropped by baking again."""
    from tests._plays_helpers import play, write_csv

    private, public = mint(tmp_path, "k")
    plays = write_csv(tmp_path / "plays.csv", [play("clean"), play("zip-of-nj", zip="07102")])
    result = bake(tmp_path / "out", tmp_path / "log", private, 22, "--deep-audit", str(plays))
    assert result.exit_code == 1
    assert json.loads(result.stdout)["log"]["index"] == 0
    entry = json.loads(log_verify(tmp_path / "log", public).stdout)["entries"][0]
    assert entry["verdict"]["ok"] is False and entry["verdict"]["deepAuditOk"] is False
    verified = verify_out(tmp_path / "out", public, "--allow-recorded-failures")
    assert verified.exit_code == 0, verified.output


def test_the_log_options_come_from_the_environment_too(tmp_path: Path) -> None:
    private, public = mint(tmp_path, "k")
    env = {"COMPLIANCE_LOG_DIR": str(tmp_path / "log"), "COMPLIANCE_LOG_ORIGIN": ORIGIN}
    result = invoke("bake", "snapshot", "--out", str(tmp_path / "out"), "--signing-key",
                    str(private), "--json", env=env)  # fmt: skip
    assert result.exit_code == 0, result.output
    assert json.loads(log_verify(tmp_path / "log", public).stdout)["origin"] == ORIGIN


def test_log_checks_without_a_public_key_are_refused(tmp_path: Path) -> None:
    private, _ = mint(tmp_path, "k")
    assert bake(tmp_path / "out", tmp_path / "log", private, 1).exit_code == 0
    result = invoke("verify", str(tmp_path / "out"), "--log", str(tmp_path / "log"))
    assert result.exit_code == 2 and "--public-key" in result.output


def test_two_bakes_at_once_append_one_after_the_other(tmp_path: Path) -> None:
    """The lock on DIR: both entries land, in some order, and the log holds together. Both bake
    the same instant: one dated earlier than the other would be refused when it appends second
    (an entry never goes back in time, test below)."""
    import os
    import subprocess
    import sys

    private, public = mint(tmp_path, "k")
    runs = [
        subprocess.Popen(
            [sys.executable, "-m", "compliance_bake", "bake", "snapshot", "--out",
             str(tmp_path / f"out{day}"), "--signing-key", str(private), "--log",
             str(tmp_path / "log"), "--log-origin", ORIGIN, "--now",
             "2026-11-01T04:06:00Z", "-q"],
            env=dict(os.environ), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        for day in (1, 2)
    ]  # fmt: skip
    assert [run.wait(timeout=120) for run in runs] == [0, 0]
    doc = json.loads(log_verify(tmp_path / "log", public).stdout)
    assert doc["ok"] and doc["size"] == 2
    for day in (1, 2):
        assert (
            verify_out(tmp_path / f"out{day}", public, "--log", str(tmp_path / "log")).exit_code
            == 0
        )


def test_an_entry_dated_before_the_latest_is_refused_and_nothing_is_appended(
    tmp_path: Path,
) -> None:
    """Day 3, then day 2 into the same log: refused (exit 2, one line naming both instants),
    the log and the second out/ untouched; the same instant again (a rebake) and a later one
    are appended, and the log verifies."""
    private, public = mint(tmp_path, "operator")
    log = tmp_path / "log"
    assert bake(tmp_path / "out3", log, private, 3).exit_code == 0
    before = {p.relative_to(log): p.read_bytes() for p in log.rglob("*") if p.is_file()}
    result = bake(tmp_path / "out2", log, private, 2)
    assert result.exit_code == 2, result.output
    assert json.loads(result.stdout)["code"] == 2  # --json: the error object
    (line,) = result.stderr.strip().splitlines()
    assert "2026-11-02T04:06:00.000Z is earlier than the log's latest entry" in line, line
    assert "2026-11-03T04:06:00.000Z" in line
    after = {p.relative_to(log): p.read_bytes() for p in log.rglob("*") if p.is_file()}
    assert after == before  # nothing appended
    assert not [p for p in (tmp_path / "out2").rglob("*") if p.is_file()]  # nothing written
    assert bake(tmp_path / "again", log, private, 3).exit_code == 0  # the same instant
    assert bake(tmp_path / "out4", log, private, 4).exit_code == 0
    checked = log_verify(log, public)
    assert checked.exit_code == 0 and json.loads(checked.stdout)["size"] == 3, checked.output
