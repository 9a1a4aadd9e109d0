"""docs/transparency-log.md's by-hand inclusion check, run as written (bash, jq, openssl, xxd,
python3) on a real bake, and shown to fail when the entry is edited."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from tests.log._log_helpers import bake, mint

DOC = Path(__file__).resolve().parents[2] / "docs" / "transparency-log.md"


def recipe() -> str:
    found = re.search(r"<!-- recipe: inclusion -->\n```sh\n(.*?)```", DOC.read_text(), re.S)
    assert found is not None, "the recipe block is missing from docs/transparency-log.md"
    return found.group(1).replace("python3 -", f"{sys.executable} -")


def run(root: Path) -> str:
    result = subprocess.run(
        ["bash", "-e", "-c", recipe()], cwd=root, capture_output=True, text=True, timeout=60
    )
    return result.stdout + result.stderr


def test_the_by_hand_recipe_verifies_a_real_inclusion_proof(tmp_path: Path) -> None:
    private, _ = mint(tmp_path, "signing-key")
    for day in (1, 2, 3):
        assert bake(tmp_path / "out", tmp_path / "log", private, day).exit_code == 0
    output = run(tmp_path)
    assert "Signature Verified Successfully" in output, output
    assert "inclusion proof verifies" in output, output
    hexes = [line for line in output.splitlines() if re.fullmatch(r"[0-9a-f]{64}", line)]
    assert len(hexes) == 4 and hexes[0] == hexes[1] and hexes[2] == hexes[3], output
    proof = tmp_path / "out" / "log" / "inclusion.json"
    doc = json.loads(proof.read_text())
    doc["entry"]["verdict"]["ok"] = False
    proof.write_text(json.dumps(doc))
    assert "FAILS" in run(tmp_path)
