"""Waivers over the policy's questions, against the regulatory Bun service with its max-wager
rule broken (tests/targets/test_regulatory_policy.py's setup): a waiver naming the rule id
waives each pair's failing question and verify re-derives it from the folder's policy record;
one narrowed to an amount no question has is unused and waives nothing."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import NOW, invoke
from tests.targets.bun_services import REGISTRY, regulatory_running
from tests.targets.test_regulatory_policy import PROFILE

pytestmark = pytest.mark.service

# The pairs whose max+0.01 question the broken service allows (node-shore-02 is not identity
# verified: the service blocks it for that instead, a disagreement that does not fail).
PAIRS = (("MA", "node-bay-01"), ("MA", "node-corridor-03"), ("NJ", "node-corridor-03"))


@pytest.fixture
def broken() -> Iterator[str]:
    with regulatory_running(broken="max") as url:
        yield url


def _waiver(state: str, partner: str, extra: str = "") -> str:
    return f"""
[[waiver]]
state = "{state}"
partner = "{partner}"
kind = "max-wager"
{extra}justification = "limit raise approved, registry update pending"
expires = 2026-12-05
approvedBy = "a.smith"
"""


def _bake(out: Path, url: str, waivers: Path) -> Any:
    return invoke(
        "bake", "snapshot", "--target", url, "--target-profile", str(PROFILE),
        "--registry", str(REGISTRY), "--out", str(out), "--now", NOW,
        "--timeout", "10", "--retries", "1", "--waivers", str(waivers),
    )  # fmt: skip


def test_a_rule_id_waives_the_policy_questions_and_verify_rederives_them(
    broken: str, tmp_path: Path
) -> None:
    file = tmp_path / "waivers.toml"
    file.write_text("".join(_waiver(s, p) for s, p in PAIRS))
    out = tmp_path / "out"
    result = _bake(out, broken, file)
    assert result.exit_code == 0, result.output
    assert "\nPASS with 3 waivers (until 2026-12-05)\n" in result.output
    assert "agree; 3 waived" in result.output  # not listed as failing questions
    assert "Failing policy questions" not in result.output
    record = json.loads((out / "api" / "compliance.json").read_text())["waivers"]
    matched = [m for w in record["waivers"] for m in w["matched"]]
    assert len(matched) == 3 and {m["in"] for m in matched} == {"policy"}
    assert {m["kind"] for m in matched} == {"maxWagerNotEnforced"}
    policy = json.loads((out / "registry" / "compliance-policy.json").read_text())
    for m in matched:  # each names a question that fails on the max-wager rule
        question = policy["questions"][m["index"]]
        assert "maxWagerNotEnforced" in question["disagreements"]
        assert question["expected"]["rule"] == "max-wager"
    verified = invoke("verify", str(out))
    assert verified.exit_code == 0, verified.output
    assert "compliant with 3 waivers (until 2026-12-05)" in verified.output


def test_a_waiver_narrowed_to_another_amount_is_unused_and_the_bake_fails(
    broken: str, tmp_path: Path
) -> None:
    file = tmp_path / "waivers.toml"
    file.write_text(_waiver("MA", "node-bay-01", 'amount = "1.23"\n'))
    result = _bake(tmp_path / "out", broken, file)
    assert result.exit_code == 1, result.output
    assert "the waiver MA node-bay-01 max-wager [amount=1.23] matches no failing item" in (
        result.output
    )
    assert "max wager not enforced" in result.output.rsplit("FAIL: ", 1)[1]
