"""docs/transparency-log.md's by-hand inclusion check, run as written (tests/_recipes.py: sh, jq,
openssl, xxd, python3) on a real bake, and shown to fail, exiting non-zero, when the entry is
edited or the key is another."""

from __future__ import annotations

import json
from pathlib import Path

from tests._recipes import run
from tests.log._log_helpers import bake, mint

CHECKS = [
    "checkpoint signed by PUB",
    "tree size",
    "root hash",
    "leaf hash",
    "inclusion path",
    "entry names out/'s attestation",
]


def test_the_by_hand_recipe_verifies_a_real_inclusion_proof(tmp_path: Path) -> None:
    private, public = mint(tmp_path, "signing-key")
    for day in (1, 2, 3):
        assert bake(tmp_path / "out", tmp_path / "log", private, day).exit_code == 0
    done = run("inclusion", tmp_path, PUB=str(public))
    assert done.code == 0, done.stderr
    assert list(done.checks) == CHECKS and done.failing == set(), done.checks
    _, other = mint(tmp_path, "other-key")
    assert run("inclusion", tmp_path, PUB=str(other)).failing == {"checkpoint signed by PUB"}
    proof = tmp_path / "out" / "log" / "inclusion.json"
    doc = json.loads(proof.read_text())
    doc["entry"]["verdict"]["ok"] = False
    proof.write_text(json.dumps(doc))
    edited = run("inclusion", tmp_path, PUB=str(public))
    assert edited.code != 0 and edited.failing == {"leaf hash", "inclusion path"}, edited.checks
