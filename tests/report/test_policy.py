"""The policy's questions through the real CLI: asked of the in-process engine at every
boundary, recorded in registry/compliance-policy.json, re-decided by `verify`, and each
disagreement named by its rule (report/policy.py, verify/policy_file.py)."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from compliance_bake.inputs.jsonio import dumps_pretty
from compliance_bake.signing import proofs
from tests._inputs_helpers import CASES
from tests.conftest import NOW, SECRET, invoke

GOOD = CASES / "good" / "limits-and-identity"
POLICY = "registry/compliance-policy.json"


def _bake(out: Path, *extra: str, registry: Path = GOOD) -> Any:
    return invoke(
        "bake", "snapshot", "--registry", str(registry), "--out", str(out), "--now", NOW, *extra
    )


def _record(out: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((out / POLICY).read_text())
    return loaded


def _service(tmp_path: Path, edit: Any) -> Path:
    """A service folder: the registry's licences and its limit rows, edited by `edit`."""
    folder = tmp_path / "service"
    folder.mkdir()
    shutil.copy(GOOD / "licences.json", folder / "licences.json")
    limits = json.loads((GOOD / "limits.json").read_text())
    edit(limits["limits"])
    (folder / "limits.json").write_text(json.dumps(limits))
    return folder


def test_every_boundary_is_asked_and_agrees_and_verify_re_decides(tmp_path: Path) -> None:
    out = tmp_path / "out"
    run = _bake(out)
    assert run.exit_code == 0, run.output
    record = _record(out)
    kinds = Counter(q["kind"] for q in record["questions"])
    every = ("max", "max+0.01", "min", "min-0.01", "bet-type", "bet-type-refused", "age-min",
             "age-min-1", "zip-inside", "zip-outside", "no-row", "unlicensed")  # fmt: skip
    for kind in every:
        assert kinds[kind], kind
    rules = {q["expected"]["rule"] for q in record["questions"]}
    assert rules >= {"none", "max-wager", "min-wager", "bet-type", "identity", "age", "zip-prefix"}
    assert record["summary"]["agree"] == record["summary"]["questions"] > 0
    assert record["asked"] is True
    # The partner's own row (corridor's maximum 4000) is asked, not the state-wide 5000.
    corridor = [
        q for q in record["questions"]
        if (q["state"], q["partner"], q["kind"]) == ("MA", "node-corridor-03", "max+0.01")
    ]  # fmt: skip
    assert [q["question"]["amount"] for q in corridor] == ["4000.01"]
    assert corridor[0]["expected"]["reason"] == "Exceeds max wager $4000"
    # The expired NJ row is recorded and asked about nowhere: NJ's limits are the 2500 row's.
    assert {
        q["question"].get("amount")
        for q in record["questions"]
        if q["kind"] == "max" and q["state"] == "NJ"
    } == {"2500.00"}
    assert "Policy questions" in run.output
    page = (out / "portal" / "compliance" / "index.html").read_text()
    assert 'id="policy-verdict">PASS: Policy questions' in page
    checked = invoke("verify", str(out))
    assert checked.exit_code == 0, checked.output


def test_a_service_maximum_above_the_registry_s_fails_as_max_wager_not_enforced(
    tmp_path: Path,
) -> None:
    def raise_corridor(rows: list[dict[str, Any]]) -> None:
        rows[1]["max_wager"] = 5000  # the registry holds corridor to 4000

    out = tmp_path / "out"
    run = _bake(out, "--service-fixtures", str(_service(tmp_path, raise_corridor)))
    assert run.exit_code == 1, run.output
    failing = [q for q in _record(out)["questions"] if q["disagreements"]]
    assert [
        (q["partner"], q["kind"], q["question"]["amount"], q["disagreements"]) for q in failing
    ] == [("node-corridor-03", "max+0.01", "4000.01", ["maxWagerNotEnforced"])]
    assert "max wager not enforced" in run.output
    page = (out / "portal" / "compliance" / "index.html").read_text()
    assert "<li>policy: max wager not enforced (1 question)</li>" in page
    assert '<table id="policy-failing">' in page and "4000.01" in page
    checked = invoke("verify", str(out))
    assert checked.exit_code == 1
    assert "recorded disagreement max wager not enforced" in checked.output
    assert "portal page" not in checked.output.split("short summary")[1]  # the page re-renders


def test_a_limit_one_cent_short_fails_as_blocked_within_the_policy_at_the_limit(
    tmp_path: Path,
) -> None:
    def shave(rows: list[dict[str, Any]]) -> None:
        rows[0]["max_wager"] = 4999.99

    out = tmp_path / "out"
    run = _bake(out, "--service-fixtures", str(_service(tmp_path, shave)))
    assert run.exit_code == 1, run.output
    failing = [q for q in _record(out)["questions"] if "blockedWithinPolicy" in q["disagreements"]]
    assert {(q["kind"], q["question"]["amount"]) for q in failing} == {("max", "5000.00")}
    # One cent above, both block, with other words: reported, not failed.
    above = [q for q in _record(out)["questions"] if q["kind"] == "max+0.01" and q["disagreements"]]
    assert {tuple(q["disagreements"]) for q in above} == {("blockedForAnotherReason",)}
    assert all(q["real"]["reason"] == "Exceeds max wager $4999.99" for q in failing)
    assert "blocked within the policy" in run.output


def test_verify_fails_a_file_whose_expected_does_not_follow_from_its_rows(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert _bake(out).exit_code == 0
    record = _record(out)
    question = next(q for q in record["questions"] if q["kind"] == "max+0.01")
    question["expected"] = {"allowed": True, "rule": "none", "reason": None}
    question["disagreements"] = []
    proofs.seal_policy(
        record, record["proof"]["bunVersion"], record["proof"]["generatedAt"], SECRET
    )
    (out / POLICY).write_bytes(dumps_pretty(record))
    checked = invoke("verify", str(out))
    assert checked.exit_code == 1
    assert "do not follow from the recorded rows" in checked.output
    assert "authentic: yes" in checked.output  # resealed with the secret: the rows catch it


def test_verify_fails_an_edited_policy_file_by_its_digest(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert _bake(out).exit_code == 0
    record = _record(out)
    record["questions"][0]["real"]["reason"] = "edited"
    (out / POLICY).write_bytes(dumps_pretty(record))
    checked = invoke("verify", str(out))
    assert checked.exit_code == 1
    assert "not the record's sha3-256" in checked.output


def test_a_registry_without_limits_asks_nothing_beyond_the_headline(tmp_path: Path) -> None:
    out = tmp_path / "out"
    run = _bake(out, registry=CASES / "good" / "minimal")
    assert run.exit_code == 0
    assert "Policy" not in run.output  # nothing to show: today's output
    record = _record(out)
    assert record["questions"] == [] and record["asked"] is True
    assert record["registry"]["limits"] == []


@pytest.mark.parametrize("missing", [True])
def test_verify_fails_a_folder_without_the_policy_file(tmp_path: Path, missing: bool) -> None:
    out = tmp_path / "out"
    assert _bake(out).exit_code == 0
    (out / POLICY).unlink()
    checked = invoke("verify", str(out))
    assert checked.exit_code == 1
    assert "compliance-policy.json" in checked.output
