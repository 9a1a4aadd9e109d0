"""The jq + openssl recipe of docs/signing.md, run exactly as documented (tests/_recipes.py),
recomputes every digest and HMAC, and exits non-zero when one fails."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests._recipes import Run, run
from tests.conftest import OTHER_SECRET, SECRET


def test_auditor_tools_are_installed() -> None:
    # `make test` installs them; a missing tool must fail here, never skip the recipe.
    assert shutil.which("jq") and shutil.which("openssl")


def run_recipe(folder: Path, secret: str) -> Run:
    return run("verify", folder, REPORT_SIGNING_SECRET=secret)


def test_recipe_confirms_a_fresh_bake(baked: Path) -> None:
    done = run_recipe(baked.parent, SECRET)
    assert done.code == 0, done.stderr
    assert len(done.checks) == 9 and done.failing == set(), done.checks


def test_recipe_catches_the_wrong_secret(baked: Path) -> None:
    done = run_recipe(baked.parent, OTHER_SECRET)
    assert done.code != 0
    assert done.failing == {"shadow.proof.hmac", "integrity.proof.hmac"}


def test_recipe_catches_an_edited_row(baked: Path) -> None:
    path = baked / "registry" / "compliance-shadow.json"
    doc = json.loads(path.read_text())
    doc["rows"][0]["realAllowed"] = not doc["rows"][0]["realAllowed"]
    path.write_text(json.dumps(doc, indent=2))
    done = run_recipe(baked.parent, SECRET)
    assert done.code != 0
    assert done.failing == {"shadow.proof.digest", "registry shadow"}
