"""Every shell recipe in docs/ runs as printed, from a fresh `secret mint` and `signing-key mint`
in the folder that holds `out/`: under `sh` without `-e` it exits 0 on a fresh signed bake, writes
nothing outside its temporary folder (so `verify out --public-key` still passes after it), says
what it checked, and exits non-zero on a tampered bake. Before: the inclusion recipe read
`../../signing-key.pub.pem`, exited 0 after openssl failed and left note.txt, note.sig and
entry.json in out/log/ (then `verify out --public-key` failed); the verify recipe exited 0 on
FAIL lines and failed its HMAC lines silently without the secret."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from tests._recipes import DOCS, RECIPES, SECRET_VARIABLES, run, tree
from tests.conftest import NOW, run_cli

ORIGIN = "compliance.example.com/registry"
PUBLIC = ".compliance-bake/signing-key.pub.pem"


def _env() -> dict[str, str]:
    drop = (*SECRET_VARIABLES, "COMPLIANCE_SIGNING_KEY_FILE", "COMPLIANCE_PUBLIC_KEY_FILE")
    return {k: v for k, v in os.environ.items() if k not in drop}


def _cli(cwd: Path, *args: str) -> None:
    done = run_cli(*args, cwd=cwd, env=_env())
    assert done.returncode == 0, done.stderr


@pytest.fixture
def fresh(tmp_path: Path) -> Path:
    """A folder as a new operator leaves it: the minted secret and key, and a signed bake with
    --log into out/ (each file where the commands put it by default)."""
    _cli(tmp_path, "secret", "mint")
    _cli(tmp_path, "signing-key", "mint")
    _cli(tmp_path, "bake", "snapshot", "--now", NOW, "--log", "log", "--log-origin", ORIGIN, "-q")
    assert (tmp_path / "out" / "attestation" / "compliance.intoto.json").is_file()
    assert (tmp_path / "out" / "log" / "inclusion.json").is_file()
    return tmp_path


def _verify_out(folder: Path) -> int:
    return run_cli("verify", "out", "--public-key", PUBLIC, cwd=folder, env=_env()).returncode


@pytest.mark.parametrize("name", sorted(RECIPES))
def test_a_recipe_passes_on_a_fresh_signed_bake_and_writes_nothing(fresh: Path, name: str) -> None:
    before = tree(fresh)
    done = run(name, fresh)
    assert done.code == 0, (done.checks, done.summary, done.stderr)
    assert done.checks and done.failing == set(), done.checks
    assert done.summary.endswith(": 0 failed") and str(len(done.checks)) in done.summary
    assert tree(fresh) == before  # nothing written, moved or left behind outside its $T
    assert _verify_out(fresh) == 0


def _tamper_row(out: Path) -> None:
    path = out / "registry" / "compliance-shadow.json"
    doc = json.loads(path.read_text())
    doc["rows"][0]["realAllowed"] = not doc["rows"][0]["realAllowed"]
    path.write_text(json.dumps(doc, indent=2))


def _tamper_entry(out: Path) -> None:
    path = out / "log" / "inclusion.json"
    doc = json.loads(path.read_text())
    doc["entry"]["verdict"]["ok"] = False
    path.write_text(json.dumps(doc))


TAMPER = {"verify": _tamper_row, "attestation": _tamper_row, "inclusion": _tamper_entry}


@pytest.mark.parametrize("name", sorted(RECIPES))
def test_a_recipe_exits_non_zero_on_a_tampered_bake(fresh: Path, name: str) -> None:
    TAMPER[name](fresh / "out")
    done = run(name, fresh)
    assert done.code != 0, (done.checks, done.summary)
    assert done.failing, done.checks
    assert not done.summary.endswith(": 0 failed")


@pytest.mark.parametrize("name", sorted(RECIPES))
def test_a_recipe_run_elsewhere_fails_rather_than_passes(tmp_path: Path, name: str) -> None:
    """In a folder with no out/ (a failed step at every line) it exits non-zero, under sh
    without -e: a recipe never reports a pass for what it could not read."""
    done = run(name, tmp_path)
    assert done.code != 0 and done.failing == set(done.checks), done.checks
    assert tree(tmp_path) == {}


def test_the_verify_recipe_names_a_missing_secret(fresh: Path) -> None:
    (fresh / ".compliance-bake" / "report-signing.secret").unlink()
    done = run("verify", fresh)
    assert done.code != 0
    assert done.failing == {"report signing secret", "shadow.proof.hmac", "integrity.proof.hmac"}


def test_every_recipe_in_the_docs_is_run_here() -> None:
    """A recipe added to docs/ without a runner here would go untested."""
    markers = {
        (page.name, marker)
        for page in DOCS.glob("*.md")
        for marker in re.findall(r"<!-- recipe:?\s?[a-z-]+ -->", page.read_text())
    }
    assert markers == set(RECIPES.values())
