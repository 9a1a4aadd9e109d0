"""`verify --log` checks every field of the logged entry against the snapshot it names. An
operator holding the signing key who logs an entry that contradicts the snapshot (a production
URL as the target of a rehearsal bake, `verdict.ok` true for a failing one, another time, an
extra field), re-signed so that the inclusion proof and the checkpoint verify, is caught: the
field is named. A check that compared fewer fields would let such an entry verify like the
honest one (exit 0)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from compliance_bake.log import append
from compliance_bake.signing.signing_key import load_signing_key
from tests.log._log_helpers import ORIGIN, bake, failures, mint, verify_out

Edit = Callable[[dict[str, Any]], None]


def _target(entry: dict[str, Any]) -> None:
    entry["target"] = "https://compliance.prod.example"


def _ok(entry: dict[str, Any]) -> None:
    entry["verdict"]["ok"] = not entry["verdict"]["ok"]


def _time(entry: dict[str, Any]) -> None:
    entry["generatedAt"] = "2026-11-23T04:06:00Z"


def _board(entry: dict[str, Any]) -> None:
    entry["verdict"]["board"]["total"] += 1


def _extra_verdict(entry: dict[str, Any]) -> None:
    entry["verdict"]["deepAuditOk"] = True


def _extra_field(entry: dict[str, Any]) -> None:
    entry["approvedBy"] = "the regulator"


def _digest(entry: dict[str, Any]) -> None:
    entry["integrityDigest"] = "sha256:" + "0" * 64


CASES: list[tuple[Edit, str]] = [
    (_target, "target"),
    (_ok, "verdict.ok"),
    (_time, "generatedAt"),
    (_board, "verdict.board"),
    (_extra_verdict, "verdict.deepAuditOk"),
    (_extra_field, "approvedBy"),
    (_digest, "integrityDigest"),
]


def _relog(tmp: Path, out: Path, private: Path, edit: Edit | None) -> Path:
    """A new log holding out/'s entry (edited), and out/log/ rewritten to prove it: what an
    operator with the key can do."""
    doc = json.loads((out / append.OUT_INCLUSION).read_text())
    entry = doc["entry"]
    if edit is not None:
        edit(entry)
    log = tmp / "relog"
    appended = append.append_entry(log, ORIGIN, entry, load_signing_key(private, "test"))
    for name, data in appended.out_files().items():
        (out / name).write_bytes(data)
    return log


def test_the_honest_entry_verifies_re_logged(tmp_path: Path) -> None:
    private, public = mint(tmp_path, "operator")
    out = tmp_path / "out"
    assert bake(out, tmp_path / "log", private, 22).exit_code == 0
    log = _relog(tmp_path, out, private, None)
    result = verify_out(out, public, "--log", str(log))
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize(("edit", "field"), CASES, ids=[f for _, f in CASES])
def test_an_entry_contradicting_the_snapshot_fails_naming_the_field(
    tmp_path: Path, edit: Edit, field: str
) -> None:
    private, public = mint(tmp_path, "operator")
    out = tmp_path / "out"
    assert bake(out, tmp_path / "log", private, 22).exit_code == 0
    log = _relog(tmp_path, out, private, edit)
    result = verify_out(out, public, "--log", str(log))
    assert result.exit_code == 1, result.output
    wrong = [line for line in failures(result) if line.startswith(append.OUT_INCLUSION)]
    assert len(wrong) == 1 and field in wrong[0].split("differ")[0], failures(result)
