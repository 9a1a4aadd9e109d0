"""The in-process engine's decisions, reasons and panels on a small registry."""

from __future__ import annotations

from decimal import Decimal

from compliance_bake.inputs.fixtures import load_fixtures
from compliance_bake.inputs.models import LicenceRegistry, Partner, StateRules
from compliance_bake.policy.decide import decide, predict_column
from compliance_bake.policy.model import PolicyRegistry, Question, Rule
from compliance_bake.policy.rows import limit_row_from_columns
from compliance_bake.targets.engine import Engine, as_decision
from tests._inputs_helpers import CASES


def _registry() -> LicenceRegistry:
    return LicenceRegistry(
        states=(
            StateRules("MA", "Massachusetts", ("basketball.totals",), {"maxStakeUsd": 1}),
            StateRules("NJ", "New Jersey", ("soccer.moneyline",), {}),
        ),
        partners=(Partner("p1", {"MA": "active", "NJ": "suspended"}), Partner("p2", {})),
    )


def test_engine_decisions() -> None:
    engine = Engine(_registry())
    assert engine.check("p1", "MA", "basketball.totals").as_json() == {
        "allowed": True,
        "status": 200,
    }
    assert engine.check("p1", "NJ", "soccer.moneyline").as_json() == {
        "allowed": False,
        "status": 403,
        "reason": "Partner not licensed in NJ",
    }
    assert engine.check("p2", "MA", "basketball.totals").status == 403
    assert (
        engine.check("p1", "MA", "soccer.moneyline").reason
        == "Wager type soccer.moneyline not permitted in MA"
    )
    assert engine.check("p1", "NY", "basketball.totals").status == 403
    assert engine.health().states == ("MA", "NJ")
    panel = engine.status("NJ", "p2")
    assert (panel.ok, panel.license_status, panel.has_limits) == (True, "unlicensed", False)


def _policy() -> PolicyRegistry:
    """The good case with limit rows, and an identity rule on a headline wager type."""
    loaded = load_fixtures(CASES / "good" / "limits-and-identity")
    extra = limit_row_from_columns(
        len(loaded.policy.limits),
        {
            "policy_key": "nj-basketball-totals",
            "status": "active",
            "state_code": "NJ",
            "sport_id": "basketball",
            "market_id": "totals",
            "special_rules": {"require_identity_verification": True},
            "effective_from": 0,
        },
    )
    policy = loaded.policy
    return PolicyRegistry(policy.licences, (*policy.limits, extra), policy.facts)


def test_every_check_is_the_policy_s_decision_of_its_headline_question() -> None:
    policy = _policy()
    now = 1_780_000_000
    engine = Engine(policy, now)
    partners = [p.node_id for p in policy.licences.partners] + ["stranger"]
    wagers = {w for s in policy.licences.states for w in s.wager_types} | {"hockey.totals"}
    seen_rows = seen_identity = 0
    for state in (*policy.licences.regulated_states, "CT"):
        for wager_type in sorted(wagers):
            column = predict_column(policy, state, wager_type, partners, now)
            for partner, predicted in zip(partners, column, strict=True):
                expected = decide(policy, Question.headline(partner, state, wager_type), now)
                assert engine.check(partner, state, wager_type) == as_decision(expected)
                assert predicted is expected.allowed
                seen_rows += policy.has_rows(state, wager_type)
                seen_identity += expected.rule is Rule.IDENTITY
    assert seen_rows and seen_identity  # the rows' path was taken, and identity blocked


def test_ask_decides_the_whole_question_at_the_engine_s_clock() -> None:
    policy = _policy()
    question = Question("MA", "node-corridor-03", "basketball", "totals", Decimal("4000.01"))
    assert Engine(policy, 1_780_000_000).ask(question).reason == "Exceeds max wager $4000"
    assert Engine(policy, 1_780_000_000).ask(question._replace(amount=Decimal(4000))).allowed
