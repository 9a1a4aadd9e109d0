"""Faithful to the service that answered, against a second real Bun service written from a
description of such a service (tests/targets/services/bun_regulatory.ts): no auth, a POST check
whose question differs per wager type, its own shadow decision (`?shadow=true`), blocks for
identity and stakes with its own reasons, fractional limits, no runtime on /health. Through its
profile (tests/targets/profiles/bun_regulatory.toml, the second example of
docs/target-profiles.md) the snapshot must say what that service said.
"""

from __future__ import annotations

import json
import socket
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import NOW, diagnostics, invoke
from tests.targets.bun_services import REGULATORY, bun_running

HERE = Path(__file__).resolve().parent
PROFILE = HERE / "profiles" / "bun_regulatory.toml"
FAST = ("--timeout", "10", "--retries", "1")
OTHER_REASON = "blocked for another reason with an active licence"


@pytest.fixture
def service() -> Iterator[str]:
    """A fresh service per test: one test tells it a partner's identity is not verified."""
    with bun_running(REGULATORY) as url:
        yield url


def _post(url: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def _question(partner: str, state: str) -> dict[str, Any]:
    """The question the profile sends for the matrix's wager type (basketball.totals)."""
    return {
        "nodeId": partner,
        "stateCode": state,
        "sportId": "basketball",
        "marketId": "totals",
        "wagerAmount": 100,
        "betType": "straight",
    }


def _bake(out: Path, url: str, *extra: str, profile: Path = PROFILE) -> Any:
    return invoke(
        "bake", "snapshot", "--target", url, "--target-profile", str(profile),
        "--out", str(out), "--now", NOW, *FAST, *extra,
    )  # fmt: skip


def _snapshot(out: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((out / "api" / "compliance.json").read_text())
    return loaded


def test_a_bake_through_the_profile_holds_the_service_s_shadow_and_reasons(
    service: str, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    result = _bake(out, service)
    assert result.exit_code == 0, result.output
    shadow = _snapshot(out)["shadow"]
    assert shadow["sources"] == {
        "realAllowed": "target",
        "shadowAllowed": "target shadow check",
        "licenseStatus": "licence registry",
        "reason": "target",
    }
    assert set(shadow["disagreements"].values()) == {0}
    blocked = 0
    for row in shadow["rows"]:
        question = _question(row["partner"], row["state"])
        status, said = _post(f"{service}/v1/regulatory/check?shadow=true", question)
        assert status == 200  # the shadow path always answers 200
        assert row["shadowAllowed"] is said["regulatory"]["allowed"], row
        if not row["realAllowed"]:
            blocked += 1
            _, real = _post(f"{service}/v1/regulatory/check", question)
            assert row["reason"] == real["regulatory"]["reason"], row
    assert blocked == 4
    # The service reports no runtime: the proof says so, it does not make one up.
    assert shadow["proof"]["bunVersion"] == "unknown (the service did not report its runtime)"
    verified = invoke("verify", str(out))
    assert verified.exit_code == 0, verified.output


def test_an_identity_block_is_named_with_the_service_s_words_by_bake_and_verify(
    service: str, tmp_path: Path
) -> None:
    before = tmp_path / "before"
    assert _bake(before, service).exit_code == 0
    status, _ = _post(f"{service}/test/identity", {"nodeId": "node-corridor-03", "verified": False})
    assert status == 200
    out = tmp_path / "out"
    result = _bake(out, service)
    assert result.exit_code == 1, result.output
    rows = {(r["state"], r["partner"]): r for r in _snapshot(out)["shadow"]["rows"]}
    row = rows[("NJ", "node-corridor-03")]
    assert row["licenseStatus"] == "active" and row["realAllowed"] is False
    assert row["reason"] == "Identity verification required in NJ"
    summary = " ".join(result.output.split("short summary")[1].split())
    assert (
        f"{OTHER_REASON}; reason not in the specification's form: NJ node-corridor-03: real "
        'block, shadow block (licence active), reason "Identity verification required in NJ"'
    ) in summary
    assert result.output.rstrip().splitlines()[-1].startswith(f"FAIL: {OTHER_REASON}")
    verified = invoke("verify", str(out))
    assert verified.exit_code == 1, verified.output
    assert (
        f"recorded disagreement {OTHER_REASON}: 2 rows: MA node-corridor-03 "
        '("Identity verification required in MA"); NJ node-corridor-03 '
        '("Identity verification required in NJ")'
    ) in verified.output
    assert "rule " not in verified.output.split("short summary")[1]  # recorded, not malformed
    page = (out / "portal" / "compliance" / "index.html").read_text()
    assert f"The service disagrees: {OTHER_REASON}." in page
    assert f"<li><strong>{OTHER_REASON}</strong>" in page
    assert "Identity verification required in NJ" in page  # the mismatched pair, its words
    assert "the service's shadow decision (its own shadow check" in page
    diffed = invoke("diff", str(before), str(out))
    assert diffed.exit_code == 1, diffed.output
    assert f"{OTHER_REASON}: 0 -> 2 rows" in diffed.output


def test_check_explain_shows_the_wager_table_s_question_numbers_as_numbers(
    service: str,
) -> None:
    args = ("check", "--target", service, "--target-profile", str(PROFILE), "--explain")
    who = ("--partner", "node-bay-01", "--state", "MA")
    result = invoke(*args, *who, "--wager-type", "basketball.totals", "--json")
    assert result.exit_code == 0, result.output
    body = (
        '{"nodeId":"node-bay-01","stateCode":"MA","sportId":"basketball","marketId":"totals",'
        '"wagerAmount":100,"betType":"straight"}'
    )
    assert body in result.stderr  # --explain: the request as sent
    assert json.loads(result.stdout)["question"] == f"POST /v1/regulatory/check {body}"
    soccer = invoke(*args, *who, "--wager-type", "soccer.moneyline")
    assert '"sportId":"soccer","marketId":"moneyline","wagerAmount":12.5' in soccer.stderr
    assert "asked: POST /v1/regulatory/check" in soccer.stdout and "12.5" in soccer.stdout


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def test_a_missing_wager_table_is_exit_2_before_any_request(tmp_path: Path) -> None:
    text = PROFILE.read_text()
    cut = text.index('[wagers."basketball.totals"]')
    profile = tmp_path / "no-totals.toml"
    profile.write_text(text[:cut] + text[cut:].split("\n\n", 1)[1])
    # Nothing listens there: a request sent would be exit 3, not 2.
    url = f"http://127.0.0.1:{_free_port()}"
    result = _bake(tmp_path / "out", url, profile=profile)
    assert result.exit_code == 2, result.output
    line = diagnostics(result.stderr).splitlines()[0]
    assert '[wagers."basketball.totals"]' in line and "'basketball.totals'" in line
    assert not (tmp_path / "out").exists()
    check = invoke(
        "check", "--target", url, "--target-profile", str(profile), "--partner", "p",
        "--state", "MA", "--wager-type", "basketball.totals",
    )  # fmt: skip
    assert check.exit_code == 2, check.output


def test_a_fraction_unmapped_passes_and_mapped_is_exit_3_naming_the_expression(
    service: str, tmp_path: Path
) -> None:
    # The status panel's limits hold 0.5 and the check's stake echo holds 12.5: no expression
    # reads them, and the bake of the first test passed with them. Mapped, 12.5 is refused.
    profile = tmp_path / "mapped.toml"
    text = PROFILE.read_text()
    head, shadow = text.split("\n[shadow]\n")
    head = head.replace(
        'status = "body.regulatory.status"', 'status = "body.regulatory.stake.amount"'
    )
    profile.write_text(head + "\n[shadow]\n" + shadow)
    args = ("check", "--target", service, "--target-profile", str(profile))
    result = invoke(*args, "--partner", "p", "--state", "NJ", "--wager-type", "soccer.moneyline")
    assert result.exit_code == 3, result.output
    line = diagnostics(result.stderr).splitlines()[0]
    assert "`body.regulatory.stake.amount` yielded what is not strict JSON" in line
    assert "12.5 is not a whole number" in line


def test_a_runtime_the_profile_declares_is_recorded_as_declared(
    service: str, tmp_path: Path
) -> None:
    profile = tmp_path / "declared.toml"
    profile.write_text(
        PROFILE.read_text().replace(
            'states = "body.regulatory.states"',
            'states = "body.regulatory.states"\nruntime = "\'Bun 1.1\'"',
        )
    )
    out = tmp_path / "out"
    result = _bake(out, service, profile=profile)
    assert result.exit_code == 0, result.output
    proof = _snapshot(out)["shadow"]["proof"]
    assert proof["bunVersion"] == (
        "Bun 1.1 (declared by the target profile, not reported by the service)"
    )


def test_each_board_row_says_what_it_measured(service: str, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert _bake(out, service).exit_code == 0
    notes = {r["feature"]: r["notes"] for r in _snapshot(out)["enhancements"]["rows"]}
    for feature in ("health.states", "status.ma_licensed_shape"):
        assert notes[feature].endswith("; measured on the target"), notes[feature]
    assert '"wagerAmount":100' in notes["check.ma_licensed_nba_totals"]
    assert '"wagerAmount":12.5' in notes["check.nj_unlicensed_block"]
    for feature in (
        "identity.agent_key_prefix",
        "runtime.deepEquals.strict_vs_loose",
        "runtime.deepEquals.docs_matrix",
        "runtime.escapeHTML",
    ):
        assert "measured in compliance-bake itself" in notes[feature], notes[feature]
    page = (out / "portal" / "compliance" / "index.html").read_text()
    assert "measured in compliance-bake itself (the portal&#39;s escaper)" in page or (
        "measured in compliance-bake itself (the portal&#x27;s escaper)" in page
    )
