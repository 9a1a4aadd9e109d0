"""The registry rows a policy record holds, as JSON and back: what `verify` re-decides from.

A record holds the states (code and wager types), the licence of every pair it asks about, the
partners whose identity is verified, and every limit row (with the table's column names, the
amounts as exact decimal strings: `"0.50"` is never a binary float). `registry_from_json`
rebuilds the `PolicyRegistry` those make, through the same row reader as every source
(`rows.limit_row_from_columns`), so a recorded row that no source could give is refused the same
way (PolicyValueError).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any

from compliance_bake.policy.model import (
    LICENCE_ACTIVE,
    LicenceRegistry,
    LimitRow,
    Partner,
    PartnerFacts,
    PolicyRegistry,
    Prediction,
    Question,
    Rule,
    SpecialRules,
    StateRules,
)
from compliance_bake.policy.rows import limit_row_from_columns

NOT_PREDICTED = ("max_daily_total", "max_weekly_total")


def amount_text(amount: Decimal) -> str:
    """An amount as a record holds it: the exact decimal, to the cent (`"5000.01"`, `"0.50"`)."""
    return format(amount, "f")


def _amount(amount: Decimal | None) -> str | None:
    return None if amount is None else amount_text(amount)


def _special(rules: SpecialRules) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if rules.min_age is not None:
        out["min_age"] = rules.min_age
    if rules.require_identity_verification:
        out["require_identity_verification"] = True
    if rules.allowed_zip_prefixes is not None:
        out["allowed_zip_prefixes"] = list(rules.allowed_zip_prefixes)
    if rules.max_daily_total is not None:
        out["max_daily_total"] = amount_text(rules.max_daily_total)
    if rules.max_weekly_total is not None:
        out["max_weekly_total"] = amount_text(rules.max_weekly_total)
    return out


def row_json(row: LimitRow) -> dict[str, Any]:
    return {
        "policy_key": row.policy_key,
        "status": row.status,
        "state_code": row.state,
        "sport_id": row.sport,
        "market_id": row.market,
        "node_id": row.partner,
        "max_wager": _amount(row.max_wager),
        "min_wager": _amount(row.min_wager),
        "allowed_bet_types": None if row.allowed_bet_types is None else list(row.allowed_bet_types),
        "special_rules": _special(row.special_rules),
        "effective_from": row.effective_from,
        "effective_to": row.effective_to,
    }


def question_json(question: Question) -> dict[str, Any]:
    """{sport, market, amount?, betType?, age?, zipCode?}: the fields the question carries."""
    out: dict[str, Any] = {"sport": question.sport, "market": question.market}
    if question.amount is not None:
        out["amount"] = amount_text(question.amount)
    if question.bet_type is not None:
        out["betType"] = question.bet_type
    if question.age is not None:
        out["age"] = question.age
    if question.zip_code is not None:
        out["zipCode"] = question.zip_code
    return out


def question_from_json(state: str, partner: str, doc: Mapping[str, Any]) -> Question:
    amount = doc.get("amount")
    return Question(
        state,
        partner,
        doc["sport"],
        doc["market"],
        None if amount is None else Decimal(amount),
        doc.get("betType"),
        doc.get("age"),
        doc.get("zipCode"),
    )


def prediction_json(prediction: Prediction) -> dict[str, Any]:
    return {
        "allowed": prediction.allowed,
        "rule": prediction.rule.value,
        "reason": prediction.reason,
    }


def prediction_from_json(doc: Mapping[str, Any]) -> Prediction:
    return Prediction(doc["allowed"], Rule(doc["rule"]), doc["reason"])


def registry_json(
    registry: PolicyRegistry, pairs: Iterable[tuple[str, str]], source: str, read_at: str
) -> dict[str, Any]:
    """The rows the record's questions are predicted from: every state, the licence of each
    pair asked and every licence held that is not active (what `diff` names a suspension by),
    the verified partners among them, every limit row."""
    licences = registry.licences
    held = [
        (state, partner.node_id)
        for partner in licences.partners
        for state, status in partner.licences.items()
        if status != LICENCE_ACTIVE
    ]
    asked = list(dict.fromkeys([*pairs, *held]))
    partners = list(dict.fromkeys(partner for _, partner in asked))
    return {
        "source": source,
        "readAt": read_at,
        "states": [{"code": s.code, "wagerTypes": list(s.wager_types)} for s in licences.states],
        "licences": [
            {"state": state, "partner": partner, "status": licences.licence_status(partner, state)}
            for state, partner in asked
        ],
        "identityVerified": [p for p in partners if registry.identity_verified(p)],
        "limits": [row_json(row) for row in registry.limits],
        "notPredicted": list(NOT_PREDICTED),
    }


def registry_from_json(doc: Mapping[str, Any]) -> PolicyRegistry:
    """The registry a record's rows make; PolicyValueError (or KeyError, TypeError on a
    document that has not passed its schema) when they cannot make one."""
    states = tuple(
        StateRules(s["code"], s["code"], tuple(s["wagerTypes"]), {}) for s in doc["states"]
    )
    held: dict[str, dict[str, str]] = {}
    for licence in doc["licences"]:
        if licence["status"] is not None:
            held.setdefault(licence["partner"], {})[licence["state"]] = licence["status"]
        else:
            held.setdefault(licence["partner"], {})
    verified = set(doc["identityVerified"])
    partners = tuple(Partner(node, found) for node, found in held.items())
    facts = tuple(PartnerFacts(node, identity_verified=node in verified) for node in held)
    rows = tuple(limit_row_from_columns(i, row) for i, row in enumerate(doc["limits"]))
    return PolicyRegistry(LicenceRegistry(states, partners), rows, facts)
