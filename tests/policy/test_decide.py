"""The one decision (compliance_bake/policy/decide.py): every rule, its boundary, its words."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compliance_bake.policy.amounts import format_amount
from compliance_bake.policy.decide import decide
from compliance_bake.policy.model import (
    LicenceRegistry,
    LimitRow,
    Partner,
    PartnerFacts,
    PolicyRegistry,
    PolicyValueError,
    Question,
    Rule,
    SpecialRules,
    StateRules,
)
from compliance_bake.policy.rows import limit_row_from_columns

NOW = 1_780_000_000
WAGERS = ("basketball.totals", "soccer.moneyline", "football.spread")


def _licences() -> LicenceRegistry:
    states = tuple(StateRules(code, code, WAGERS, {}) for code in ("MA", "NJ"))
    partners = (
        Partner("bay", {"MA": "active"}),
        Partner("both", {"MA": "active", "NJ": "active"}),
        Partner("held", {"MA": "suspended", "NJ": "revoked"}),
        Partner("gone", {"MA": "expired"}),
        Partner("none", {}),
    )
    return LicenceRegistry(states, partners)


def _row(**given: Any) -> LimitRow:
    columns: dict[str, Any] = {
        "policy_key": "ma-nba-totals",
        "status": "active",
        "state_code": "MA",
        "sport_id": "basketball",
        "market_id": "totals",
        "node_id": None,
        "max_wager": 5000,
        "min_wager": 0.5,
        "allowed_bet_types": ["straight", "parlay"],
        "special_rules": {"min_age": 21},
        "effective_from": NOW - 100,
        "effective_to": None,
    }
    columns.update(given)
    return limit_row_from_columns(0, columns)


def _registry(*rows: LimitRow, facts: tuple[PartnerFacts, ...] = ()) -> PolicyRegistry:
    return PolicyRegistry(_licences(), rows, facts)


def _ask(partner: str = "bay", state: str = "MA", **fields: Any) -> Question:
    amount = fields.pop("amount", None)
    return Question(
        state,
        partner,
        fields.pop("sport", "basketball"),
        fields.pop("market", "totals"),
        None if amount is None else Decimal(str(amount)),
        **fields,
    )


@pytest.mark.parametrize("partner", ["held", "gone", "none"])
def test_no_active_licence_blocks_by_licence(partner: str) -> None:
    got = decide(_registry(_row()), _ask(partner, amount=100, bet_type="straight"), NOW)
    assert got == (False, Rule.LICENCE, "Partner not licensed in MA")


def test_an_unregulated_state_blocks_by_licence() -> None:
    assert decide(_registry(), _ask(state="CT"), NOW) == (
        False,
        Rule.LICENCE,
        "Partner not licensed in CT",
    )


def test_a_wager_type_the_state_does_not_list_blocks() -> None:
    got = decide(_registry(), _ask(sport="soccer", market="totals"), NOW)
    assert got == (False, Rule.WAGER_TYPE, "Wager type soccer.totals not permitted in MA")


def test_the_maximum_is_allowed_and_one_cent_more_is_not() -> None:
    registry = _registry(_row())
    assert decide(registry, _ask(amount="5000", bet_type="straight"), NOW) == (
        True,
        Rule.NONE,
        None,
    )
    assert decide(registry, _ask(amount="5000.01", bet_type="straight"), NOW) == (
        False,
        Rule.MAX_WAGER,
        "Exceeds max wager $5000",
    )


def test_the_minimum_is_allowed_and_one_cent_less_is_not() -> None:
    registry = _registry(_row())
    assert decide(registry, _ask(amount="0.5"), NOW).allowed
    assert decide(registry, _ask(amount="0.49"), NOW) == (
        False,
        Rule.MIN_WAGER,
        "Below min wager $0.5",
    )


def test_max_is_checked_before_min_and_bet_type() -> None:
    registry = _registry(_row(max_wager=10, min_wager=10))
    assert decide(registry, _ask(amount=11, bet_type="teaser"), NOW).rule is Rule.MAX_WAGER
    assert decide(registry, _ask(amount=9, bet_type="teaser"), NOW).rule is Rule.MIN_WAGER
    assert decide(registry, _ask(amount=10, bet_type="teaser"), NOW).rule is Rule.BET_TYPE


def test_a_bet_type_outside_the_list_blocks() -> None:
    registry = _registry(_row())
    assert decide(registry, _ask(bet_type="parlay"), NOW).allowed
    assert decide(registry, _ask(bet_type="teaser"), NOW) == (
        False,
        Rule.BET_TYPE,
        "Bet type 'teaser' not allowed in MA",
    )


def test_no_bet_type_list_allows_any() -> None:
    assert decide(_registry(_row(allowed_bet_types=None)), _ask(bet_type="teaser"), NOW).allowed


def test_identity_required_blocks_an_unverified_partner_only() -> None:
    row = _row(special_rules={"require_identity_verification": True})
    verified = (PartnerFacts("both", identity_verified=True),)
    registry = _registry(row, facts=verified)
    assert decide(registry, _ask("both", amount=100), NOW).allowed
    assert decide(registry, _ask("bay", amount=100), NOW) == (
        False,
        Rule.IDENTITY,
        "Identity verification required in MA",
    )


def test_identity_comes_before_age_and_zip() -> None:
    row = _row(
        special_rules={
            "require_identity_verification": True,
            "min_age": 25,
            "allowed_zip_prefixes": ["021"],
        }
    )
    got = decide(_registry(row), _ask(age=18, zip_code="07001"), NOW)
    assert got.rule is Rule.IDENTITY


def test_the_minimum_age_is_allowed_and_one_year_less_is_not() -> None:
    registry = _registry(_row(special_rules={"min_age": 18}))
    assert decide(registry, _ask(age=18), NOW).allowed
    assert decide(registry, _ask(age=17), NOW) == (
        False,
        Rule.AGE,
        "Minimum age 18 required in MA (got 17)",
    )


def test_a_row_without_min_age_holds_the_default_21() -> None:
    registry = _registry(_row(special_rules=None))
    assert decide(registry, _ask(age=21), NOW).allowed
    assert decide(registry, _ask(age=20), NOW) == (
        False,
        Rule.AGE,
        "Minimum age 21 required in MA (got 20)",
    )


def test_zip_prefixes_allow_inside_and_block_outside() -> None:
    registry = _registry(_row(state_code="NJ", special_rules={"allowed_zip_prefixes": ["070"]}))
    assert decide(registry, _ask("both", "NJ", zip_code="07002"), NOW).allowed
    assert decide(registry, _ask("both", "NJ", zip_code="08001"), NOW) == (
        False,
        Rule.ZIP_PREFIX,
        "ZIP 08001 not in allowed prefixes for NJ",
    )


def test_no_row_allows_everything_but_the_default_age() -> None:
    registry = _registry()
    question = _ask(amount="99999999", bet_type="teaser", zip_code="99999")
    assert decide(registry, question, NOW) == (True, Rule.NONE, None)
    assert decide(registry, question._replace(age=20), NOW) == (
        False,
        Rule.AGE,
        "Minimum age 21 required in MA (got 20)",
    )
    assert decide(registry, question._replace(age=21), NOW).allowed


def test_a_partner_s_own_row_takes_precedence_over_the_state_wide_one() -> None:
    state_wide = _row(max_wager=5000)
    own = _row(policy_key="bay-own", node_id="bay", max_wager=4000)
    registry = _registry(state_wide, own)
    assert decide(registry, _ask("bay", amount="4000.01"), NOW) == (
        False,
        Rule.MAX_WAGER,
        "Exceeds max wager $4000",
    )
    assert decide(registry, _ask("both", amount="4000.01"), NOW).allowed


def test_an_expired_row_is_ignored_and_the_state_wide_one_applies() -> None:
    expired_own = _row(
        policy_key="bay-old", node_id="bay", max_wager=10, effective_from=0, effective_to=NOW
    )
    registry = _registry(_row(max_wager=5000), expired_own)
    assert decide(registry, _ask("bay", amount=100), NOW).allowed
    assert decide(registry, _ask("bay", amount=100), NOW - 1).rule is Rule.MAX_WAGER


def test_a_row_not_yet_in_effect_or_not_active_is_ignored() -> None:
    future = _row(max_wager=10, effective_from=NOW + 1)
    assert decide(_registry(future), _ask(amount=100), NOW).allowed
    assert decide(_registry(future), _ask(amount=100), NOW + 1).rule is Rule.MAX_WAGER
    inactive = _row(max_wager=10, status="inactive")
    assert decide(_registry(inactive), _ask(amount=100), NOW).allowed


def test_fields_a_question_does_not_carry_are_not_held_to_their_rule() -> None:
    row = _row(max_wager=10, special_rules={"min_age": 30, "allowed_zip_prefixes": ["021"]})
    assert decide(_registry(row), _ask(), NOW) == (True, Rule.NONE, None)


@given(cents=st.integers(min_value=0, max_value=10**12))
def test_amounts_print_as_the_service_prints_a_number(cents: int) -> None:
    amount = Decimal(cents) / 100
    text = format_amount(amount)
    assert Decimal(text) == amount
    assert "E" not in text and "e" not in text
    assert not ("." in text and text.endswith("0"))
    assert float(text) == cents / 100  # what a JavaScript number of the amount prints


@given(
    max_cents=st.integers(min_value=0, max_value=10**8),
    min_cents=st.integers(min_value=0, max_value=10**8),
    asked=st.integers(min_value=0, max_value=10**8),
)
def test_the_amount_rules_are_inclusive_bounds(max_cents: int, min_cents: int, asked: int) -> None:
    low, high = sorted((min_cents, max_cents))
    registry = _registry(_row(max_wager=Decimal(high) / 100, min_wager=Decimal(low) / 100))
    got = decide(registry, _ask(amount=Decimal(asked) / 100), NOW)
    assert got.allowed is (low <= asked <= high)
    if asked > high:
        assert got.rule is Rule.MAX_WAGER
    elif asked < low:
        assert got.rule is Rule.MIN_WAGER


def test_overlapping_windows_for_one_key_are_refused() -> None:
    first = _row(effective_from=0, effective_to=NOW)
    second = _row(policy_key="later", effective_from=NOW - 1, effective_to=None)
    with pytest.raises(PolicyValueError) as caught:
        _registry(first, second)
    assert caught.value.row == 1 and caught.value.field == "effective_from"
    assert "overlaps" in caught.value.problem
    # Adjacent windows, a partner's own row, and an inactive row do not overlap the key.
    _registry(first, _row(policy_key="next", effective_from=NOW))
    _registry(first, _row(policy_key="own", node_id="bay"))
    _registry(first, _row(policy_key="off", status="inactive"))


def test_a_row_of_an_unregulated_state_is_refused() -> None:
    with pytest.raises(PolicyValueError) as caught:
        _registry(_row(state_code="CT"))
    assert caught.value.field == "state_code"


def test_special_rules_default_when_absent() -> None:
    assert _row(special_rules=None).special_rules == SpecialRules()
