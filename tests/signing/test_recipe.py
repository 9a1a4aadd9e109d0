"""The jq + openssl recipe of docs/signing.md, run exactly as documented, recomputes every digest
and HMAC."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

from tests.conftest import OTHER_SECRET, SECRET

SIGNING_DOC = Path(__file__).resolve().parents[2] / "docs" / "signing.md"


def test_auditor_tools_are_installed() -> None:
    # `make test` installs them; a missing tool must fail here, never skip the recipe.
    assert shutil.which("jq") and shutil.which("openssl")


def recipe() -> str:
    text = SIGNING_DOC.read_text(encoding="utf-8")
    match = re.search(r"<!-- recipe:verify -->\n```sh\n(.*?)```", text, re.S)
    assert match, "docs/signing.md lost its verification recipe block"
    return match.group(1)


def run_recipe(folder: Path, secret: str) -> list[str]:
    env = {**os.environ, "REPORT_SIGNING_SECRET": secret}
    done = subprocess.run(
        ["bash", "-c", recipe()], cwd=folder, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_recipe_confirms_a_fresh_bake(baked: Path) -> None:
    lines = run_recipe(baked.parent, SECRET)
    assert len(lines) == 8
    assert all(line.startswith("ok   ") for line in lines), lines


def test_recipe_catches_the_wrong_secret(baked: Path) -> None:
    failing = {
        line[5:] for line in run_recipe(baked.parent, OTHER_SECRET) if line.startswith("FAIL")
    }
    assert failing == {"shadow.proof.hmac", "integrity.proof.hmac"}


def test_recipe_catches_an_edited_row(baked: Path) -> None:
    path = baked / "registry" / "compliance-shadow.json"
    doc = json.loads(path.read_text())
    doc["rows"][0]["realAllowed"] = not doc["rows"][0]["realAllowed"]
    path.write_text(json.dumps(doc, indent=2))
    failing = {line[5:] for line in run_recipe(baked.parent, SECRET) if line.startswith("FAIL")}
    assert failing == {"shadow.proof.digest", "registry shadow"}
