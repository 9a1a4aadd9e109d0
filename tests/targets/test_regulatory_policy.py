"""The whole policy against the regulatory Bun service (tests/targets/services/bun_regulatory.ts
with LIMITS): asked at every boundary through a profile's `[questions]`
(tests/targets/profiles/bun_regulatory_questions.toml), real and shadow. The unbroken service
passes; each of its nine broken-rule switches fails the bake naming the rule, and `verify`
names it too; a registry maximum below the service's fails at an amount between them.
"""

from __future__ import annotations

import json
import shutil
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from compliance_bake.policy.amounts import amount_json
from compliance_bake.policy.recorded import question_from_json
from tests.conftest import NOW, invoke
from tests.targets.bun_services import REGISTRY, regulatory_running

pytestmark = pytest.mark.service

HERE = Path(__file__).resolve().parent
PROFILE = HERE / "profiles" / "bun_regulatory_questions.toml"
HEADLINE_PROFILE = HERE / "profiles" / "bun_regulatory.toml"
POLICY = "registry/compliance-policy.json"


@pytest.fixture
def service() -> Iterator[str]:
    with regulatory_running() as url:
        yield url


def _bake(out: Path, url: str, profile: Path = PROFILE, registry: Path = REGISTRY) -> Any:
    return invoke(
        "bake", "snapshot", "--target", url, "--target-profile", str(profile),
        "--registry", str(registry), "--out", str(out), "--now", NOW,
        "--timeout", "10", "--retries", "1",
    )  # fmt: skip


def _record(out: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((out / POLICY).read_text())
    return loaded


def _ask(url: str, item: dict[str, Any]) -> dict[str, Any]:
    """The question as the profile sends it, asked again by hand."""
    question = question_from_json(item["state"], item["partner"], item["question"])
    body: dict[str, Any] = {
        "nodeId": question.partner,
        "stateCode": question.state,
        "sportId": question.sport,
        "marketId": question.market,
    }
    if question.amount is not None:
        body["wagerAmount"] = amount_json(question.amount)
    optional = {"betType": question.bet_type, "age": question.age, "zipCode": question.zip_code}
    body.update({key: value for key, value in optional.items() if value is not None})
    request = urllib.request.Request(
        f"{url}/v1/regulatory/check?shadow=true",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        said: dict[str, Any] = json.loads(answer.read())["regulatory"]
        return said


def test_the_unbroken_service_passes_every_boundary_and_verify_agrees(
    service: str, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    run = _bake(out, service)
    assert run.exit_code == 0, run.output
    record = _record(out)
    assert record["asked"] is True
    assert record["fields"] == ["age", "amount", "betType", "zipCode"]
    questions = record["questions"]
    assert questions and all(q["disagreements"] == [] for q in questions)
    assert all(q["shadow"] is not None for q in questions)
    # Every active limit row that applies has its boundary questions.
    kinds = {(q["state"], q["partner"], q["question"]["sport"], q["kind"]) for q in questions}
    for state, partner, sport in (("MA", "node-bay-01", "basketball"),
                                  ("MA", "node-corridor-03", "basketball"),
                                  ("NJ", "node-shore-02", "soccer"),
                                  ("NJ", "node-corridor-03", "soccer")):  # fmt: skip
        for kind in ("max", "max+0.01", "min", "min-0.01", "bet-type-refused", "age-min-1"):
            assert (state, partner, sport, kind) in kinds, (state, partner, kind)
    # Every recorded real answer is the service's own (asked again, its shadow path: no effect).
    for item in questions:
        said = _ask(service, item)
        assert said["allowed"] is item["real"]["allowed"], item
        assert said.get("reason") == item["real"]["reason"], item
    verified = invoke("verify", str(out))
    assert verified.exit_code == 0, verified.output


# switch -> (the disagreement's words in the outputs, its key in the record, the kinds of
# question that show it)
SWITCHES = {
    "licence": ("allowed without an active licence", "allowedWithoutLicence", {"unlicensed"}),
    "suspended": ("allowed without an active licence", "allowedWithoutLicence", {"unlicensed"}),
    "max": ("max wager not enforced", "maxWagerNotEnforced", {"max+0.01"}),
    "max-exclusive": ("blocked within the policy", "blockedWithinPolicy", {"max"}),
    "min": ("min wager not enforced", "minWagerNotEnforced", {"min-0.01"}),
    "min-exclusive": ("blocked within the policy", "blockedWithinPolicy", {"min"}),
    "bet-type": ("bet type not enforced", "betTypeNotEnforced", {"bet-type-refused"}),
    "age": ("age not enforced", "ageNotEnforced", {"age-min-1"}),
    "identity": ("identity not enforced", "identityNotEnforced", None),
}


@pytest.mark.parametrize("switch", list(SWITCHES))
def test_each_broken_rule_fails_the_bake_and_verify_naming_it(switch: str, tmp_path: Path) -> None:
    words, key, kinds = SWITCHES[switch]
    out = tmp_path / "out"
    with regulatory_running(broken=switch) as url:
        run = _bake(out, url)
    assert run.exit_code == 1, run.output
    failing = [q for q in _record(out)["questions"] if key in q["disagreements"]]
    assert failing, switch
    if kinds is not None:
        assert kinds <= {q["kind"] for q in failing}
    summary = run.output.split("short summary")[1]
    assert words in summary
    verified = invoke("verify", str(out))
    assert verified.exit_code == 1, verified.output
    assert f"recorded disagreement {words}" in verified.output


def test_a_registry_maximum_below_the_service_s_fails_between_them(tmp_path: Path) -> None:
    """The registry holds NJ soccer to 4000; the service takes up to 5000."""
    registry = tmp_path / "registry"
    shutil.copytree(REGISTRY, registry)
    rows = json.loads((REGISTRY / "limits.json").read_text())
    service_rows = json.loads(json.dumps(rows))
    for row in rows["limits"]:
        if row["policy_key"] == "nj-soccer":
            row["max_wager"] = 4000
    for row in service_rows["limits"]:
        if row["policy_key"] == "nj-soccer":
            row["max_wager"] = 5000
    (registry / "limits.json").write_text(json.dumps(rows))
    service_limits = tmp_path / "service-limits.json"
    service_limits.write_text(json.dumps(service_rows))
    out = tmp_path / "out"
    with regulatory_running(limits=service_limits) as url:
        run = _bake(out, url, registry=registry)
    assert run.exit_code == 1, run.output
    failing = [q for q in _record(out)["questions"] if "maxWagerNotEnforced" in q["disagreements"]]
    assert failing
    assert {q["question"]["amount"] for q in failing} == {"4000.01"}
    assert all(4000 < float(q["question"]["amount"]) < 5000 for q in failing)
    assert "max wager not enforced" in run.output


def test_without_questions_the_bake_asks_the_headline_alone_and_says_the_limits_were_not_asked(
    service: str, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    run = _bake(out, service, profile=HEADLINE_PROFILE)
    assert run.exit_code == 0, run.output
    record = _record(out)
    assert record["asked"] is False and record["questions"] == []
    assert "limits not asked" in run.output
    assert "limits not asked" in record["summary"]["label"]
    page = (out / "portal" / "compliance" / "index.html").read_text()
    assert 'id="policy-not-asked"' in page and "nothing here says they hold" in page
    assert invoke("verify", str(out)).exit_code == 0
