"""Helpers of test_diff.py: bakes of fixtures that differ in known ways. Not a test module."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from compliance_bake.bake import run_bake
from compliance_bake.inputs import schemas
from compliance_bake.inputs.models import Decision
from compliance_bake.resources import demo_fixtures_dir
from compliance_bake.targets.engine import Engine
from compliance_bake.targets.inprocess import InProcessTarget
from tests.conftest import NOW, invoke

DIFF_SCHEMA = "compliance-diff.schema.json"
Edit = Callable[[dict[str, Any], dict[str, Any]], None]


def fixtures_with(root: Path, name: str, edit: Edit | None = None) -> Path:
    """A copy of the demo fixtures under root/name, its licences and geo documents edited."""
    folder = root / name
    shutil.copytree(demo_fixtures_dir(), folder)
    if edit is not None:
        licences = json.loads((folder / "licences.json").read_text())
        geo = json.loads((folder / "geo.json").read_text())
        edit(licences, geo)
        (folder / "licences.json").write_text(json.dumps(licences, indent=2))
        (folder / "geo.json").write_text(json.dumps(geo, indent=2))
    return folder


def bake(fixtures: Path, out: Path, *extra: str, now: str = NOW) -> Path:
    result = invoke(
        "bake", "snapshot", "--fixtures", str(fixtures), "--out", str(out), "--now", now, *extra
    )
    assert result.exit_code in (0, 1), result.output
    return out


class LyingEngine(Engine):
    """The engine patched to allow one partner in one state where it holds no licence."""

    def __init__(self, registry: Any, partner: str, state: str) -> None:
        super().__init__(registry)
        self._lie = (partner, state)

    def check(self, partner: str, state: str, wager_type: str) -> Decision:
        if (partner, state) == self._lie:
            return Decision(True, 200)
        return super().check(partner, state, wager_type)


def bake_lying(fixtures: Path, out: Path, partner: str, state: str) -> Path:
    """The real bake pipeline against a service that starts lying about one pair."""
    from compliance_bake.inputs.fixtures import load_fixtures

    registry = load_fixtures(fixtures).policy  # the whole policy: only the one pair lies
    run_bake(
        fixtures_dir=fixtures,
        out_dir=out,
        now=NOW,
        secret_file=None,
        console_depth=2,
        target=InProcessTarget(LyingEngine(registry, partner, state)),
    )
    return out


def diff_json(*args: str, env: dict[str, str] | None = None) -> tuple[int, dict[str, Any]]:
    """`diff --json`: the exit code and the document, checked against its schema."""
    result = invoke("diff", *args, "--json", env=env)
    document = json.loads(result.stdout)
    problem = schemas.first_violation(DIFF_SCHEMA, document)
    assert problem is None, problem
    assert schemas.first_violation_reference(DIFF_SCHEMA, document) is None
    return result.exit_code, document


def kinds(document: dict[str, Any]) -> list[tuple[str, str, dict[str, str]]]:
    return [(c["class"], c["kind"], c["concerns"]) for c in document["changes"]]
