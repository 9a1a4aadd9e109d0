"""A wager's decision: `decide(registry, question, now)`. Pure: no I/O, no clock.

The rules, in order; the first that blocks gives the decision, its rule and its reason (the
words services of this kind answer):

1. licence: an `active` licence in the state ("Partner not licensed in NJ"); `suspended`,
   `revoked`, `expired` and no licence block;
2. wager-type: the state lists the wager type ("Wager type soccer.totals not permitted in MA");
3. the limit row (`PolicyRegistry.row_for`): none, and only the default minimum age applies;
4. max-wager: an amount above the maximum ("Exceeds max wager $5000"); the maximum is allowed;
5. min-wager: an amount below the minimum ("Below min wager $0.5"); the minimum is allowed;
6. bet-type: a bet type outside the row's list ("Bet type 'teaser' not allowed in MA");
7. identity: the row requires identity verification and the partner is not verified
   ("Identity verification required in NJ");
8. age: a bettor younger than the row's minimum age, 21 by default ("Minimum age 21 required
   in MA (got 20)");
9. zip-prefix: the row lists ZIP prefixes and the ZIP starts with none of them ("ZIP 07001 not
   in allowed prefixes for NJ").

A rule that reads a field the question does not carry (amount, bet type, age, ZIP) is not
applied. Amounts print as `amounts.format_amount` does (5000, 0.5).
"""

from __future__ import annotations

from collections.abc import Sequence

from compliance_bake.policy.amounts import format_amount
from compliance_bake.policy.model import (
    DEFAULT_MIN_AGE,
    LICENCE_ACTIVE,
    PolicyRegistry,
    Prediction,
    Question,
    Rule,
)

ALLOWED = Prediction(True, Rule.NONE, None)


def not_licensed_reason(state: str) -> str:
    return f"Partner not licensed in {state}"


def wager_type_reason(wager_type: str, state: str) -> str:
    return f"Wager type {wager_type} not permitted in {state}"


def decide(registry: PolicyRegistry, question: Question, now: int) -> Prediction:
    """The registry's decision of `question` at `now` (Unix seconds)."""
    state = question.state
    licences = registry.licences
    rules = licences.state(state)
    if rules is None or licences.licence_status(question.partner, state) != LICENCE_ACTIVE:
        return Prediction(False, Rule.LICENCE, not_licensed_reason(state))
    if question.wager_type not in rules.wager_types:
        return Prediction(False, Rule.WAGER_TYPE, wager_type_reason(question.wager_type, state))
    row = registry.row_for(question, now)
    if row is None:
        return _age(question, DEFAULT_MIN_AGE) or ALLOWED
    amount = question.amount
    if amount is not None:
        if row.max_wager is not None and amount > row.max_wager:
            return Prediction(
                False, Rule.MAX_WAGER, f"Exceeds max wager ${format_amount(row.max_wager)}"
            )
        if row.min_wager is not None and amount < row.min_wager:
            return Prediction(
                False, Rule.MIN_WAGER, f"Below min wager ${format_amount(row.min_wager)}"
            )
    bet_type = question.bet_type
    if (
        bet_type is not None
        and row.allowed_bet_types is not None
        and bet_type not in row.allowed_bet_types
    ):
        return Prediction(False, Rule.BET_TYPE, f"Bet type '{bet_type}' not allowed in {state}")
    special = row.special_rules
    if special.require_identity_verification and not registry.identity_verified(question.partner):
        return Prediction(False, Rule.IDENTITY, f"Identity verification required in {state}")
    blocked = _age(question, DEFAULT_MIN_AGE if special.min_age is None else special.min_age)
    if blocked is not None:
        return blocked
    zip_code, prefixes = question.zip_code, special.allowed_zip_prefixes
    if zip_code is not None and prefixes is not None and not zip_code.startswith(prefixes):
        return Prediction(
            False, Rule.ZIP_PREFIX, f"ZIP {zip_code} not in allowed prefixes for {state}"
        )
    return ALLOWED


def _age(question: Question, min_age: int) -> Prediction | None:
    age = question.age
    if age is None or age >= min_age:
        return None
    return Prediction(
        False, Rule.AGE, f"Minimum age {min_age} required in {question.state} (got {age})"
    )


def predict_column(
    registry: PolicyRegistry, state: str, wager_type: str, partners: Sequence[str], now: int
) -> list[bool]:
    """`decide(...).allowed` of each partner's headline question (`Question.headline`) in one
    state, in order. Without limit rows for (state, wager type), the decision is the licence
    and the state's wager types alone, so the column is set lookups (the shadow matrix's 500,000
    predictions cost nothing more); with rows, each partner is decided."""
    rules = registry.licences.state(state)
    if rules is None or wager_type not in rules.wager_types:
        return [False] * len(partners)
    if not registry.has_rows(state, wager_type):
        return list(map(registry.active_partners(state).__contains__, partners))
    return [
        decide(registry, Question.headline(partner, state, wager_type), now).allowed
        for partner in partners
    ]
