"""`bake snapshot --target` against a real `serve` asks the policy's questions through the
built-in profile, as the in-process bake asks them, and a serve whose registry enforces another
limit fails the bake by that rule (docs/service-api.md, docs/target-profiles.md)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from compliance_bake.identity.keyfile import mint_key
from tests.conftest import NOW, invoke
from tests.support.live_service import LiveService

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def _bake_against(serve_fixtures: Path | None, tmp_path: Path) -> tuple[Any, Path]:
    keys_file = tmp_path / "agent-keys.json"
    key = mint_key(keys_file, "test")
    out = tmp_path / "out"
    with LiveService(
        keys_file=keys_file, out_dir=tmp_path / "served", fixtures_dir=serve_fixtures, cwd=tmp_path
    ) as serve:
        args = ("bake", "snapshot", "--target", serve.url, "--out", str(out), "--now", NOW)
        run = invoke(*args, env={"COMPLIANCE_AGENT_KEY": key})
    return run, out


def _policy(out: Path) -> dict[str, Any]:
    policy: dict[str, Any] = json.loads((out / "registry" / "compliance-policy.json").read_text())
    return policy


def test_a_bake_against_serve_records_the_questions_the_in_process_bake_records(
    tmp_path: Path,
) -> None:
    run, out = _bake_against(None, tmp_path)
    assert run.exit_code == 0, run.output
    local = tmp_path / "local"
    assert invoke("bake", "snapshot", "--out", str(local), "--now", NOW).exit_code == 0
    remote, expected = _policy(out), _policy(local)
    assert remote["asked"] is True and remote["fields"] == expected["fields"]
    assert len(remote["questions"]) > 40
    # Every question, its prediction and serve's real answer (status and reason) as in process.
    assert remote["questions"] == expected["questions"]
    assert remote["summary"] == expected["summary"] and remote["registry"] == expected["registry"]
    kinds = {question["kind"] for question in remote["questions"]}
    assert {"max+0.01", "min-0.01", "bet-type-refused", "age-min-1", "zip-outside"} <= kinds
    verified = invoke("verify", str(out))
    assert verified.exit_code == 0, verified.output


def test_a_serve_that_enforces_another_maximum_fails_the_bake_by_its_rule(tmp_path: Path) -> None:
    """serve's registry takes NJ soccer up to 3000 (fixtures/drifted's limit); the bake's
    registry says 2500: the question one cent above 2500 is allowed, and named."""
    drifted = tmp_path / "drifted"
    shutil.copytree(FIXTURES, drifted, ignore=shutil.ignore_patterns("drifted", "*.csv"))
    shutil.copy(FIXTURES / "drifted" / "limits.json", drifted / "limits.json")
    run, out = _bake_against(drifted, tmp_path)
    assert run.exit_code == 1, run.output
    failing = [q for q in _policy(out)["questions"] if "maxWagerNotEnforced" in q["disagreements"]]
    assert {(q["state"], q["question"]["amount"]) for q in failing} == {("NJ", "2500.01")}
    assert all(q["real"]["allowed"] and not q["expected"]["allowed"] for q in failing)
    assert "max wager not enforced" in run.output.split("short summary")[1]
    verified = invoke("verify", str(out))
    assert verified.exit_code == 1 and "max wager not enforced" in verified.output
