"""Reading a limit row from a source's columns (compliance_bake/policy/rows.py): what is refused,
with its column and fix, and what each column becomes."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from compliance_bake.policy.amounts import AmountError, amount_json, parse_amount
from compliance_bake.policy.model import PolicyValueError
from compliance_bake.policy.rows import identity_verified_from_metadata, limit_row_from_columns

GOOD: dict[str, Any] = {
    "policy_key": "nj-soccer",
    "status": "active",
    "state_code": "NJ",
    "sport_id": "soccer",
    "market_id": "moneyline",
    "node_id": "node-shore-02",
    "max_wager": 4000.0,
    "min_wager": 0.5,
    "allowed_bet_types": ["straight"],
    "special_rules": {
        "min_age": 21,
        "require_identity_verification": True,
        "allowed_zip_prefixes": ["070", "071"],
        "max_daily_total": 20000,
        "max_weekly_total": 50000.5,
    },
    "effective_from": 1_700_000_000,
    "effective_to": 1_800_000_000,
}


def test_a_good_row_reads_exactly() -> None:
    row = limit_row_from_columns(3, GOOD)
    assert row.max_wager == Decimal("4000") and row.min_wager == Decimal("0.5")
    assert str(row.min_wager) == "0.50"  # held to cents
    assert row.partner == "node-shore-02" and row.wager_type == "soccer.moneyline"
    assert row.allowed_bet_types == ("straight",)
    assert row.special_rules.allowed_zip_prefixes == ("070", "071")
    assert row.special_rules.max_weekly_total == Decimal("50000.5")
    assert row.effective_to == 1_800_000_000


@pytest.mark.parametrize(
    ("column", "value", "field", "problem"),
    [
        ("max_wager", 0.25, "max_wager", "the maximum 0.25 is below the minimum 0.5"),
        ("min_wager", 0.125, "min_wager", "0.125 is not a whole number of cents"),
        ("min_wager", -1, "min_wager", "-1 is negative"),
        ("max_wager", True, "max_wager", "is a boolean, not an amount"),
        ("max_wager", float("nan"), "max_wager", "is not a finite number"),
        ("allowed_bet_types", "straight", "allowed_bet_types", "'straight' is not an array"),
        ("allowed_bet_types", ["straight", 1], "allowed_bet_types[1]", "1 is not a non-empty"),
        ("allowed_bet_types", ["a", "a"], "allowed_bet_types", "lists a bet type twice"),
        ("special_rules", "{min_age: 21", "special_rules", "is not an object"),
        ("special_rules", {"min_age": "21"}, "special_rules.min_age", "'21' is not an age"),
        ("special_rules", {"minAge": 21}, "special_rules.minAge", "is not a known rule"),
        (
            "special_rules",
            {"require_identity_verification": "yes"},
            "special_rules.require_identity_verification",
            "is not a boolean",
        ),
        (
            "special_rules",
            {"allowed_zip_prefixes": "070"},
            "special_rules.allowed_zip_prefixes",
            "is not a non-empty array",
        ),
        (
            "special_rules",
            {"allowed_zip_prefixes": [70]},
            "special_rules.allowed_zip_prefixes[0]",
            "is not a ZIP prefix",
        ),
        ("effective_to", 1_700_000_000, "effective_to", "is not after effective_from"),
        ("effective_from", None, "effective_from", "is not a time in Unix seconds"),
        ("effective_from", 1.5, "effective_from", "is not a time in Unix seconds"),
        ("state_code", "nj", "state_code", "is not of the documented form"),
        ("sport_id", "", "sport_id", "is not a non-empty string"),
        ("node_id", 7, "node_id", "is not a node id"),
    ],
)
def test_a_bad_column_is_refused_naming_it(
    column: str, value: Any, field: str, problem: str
) -> None:
    with pytest.raises(PolicyValueError) as caught:
        limit_row_from_columns(4, {**GOOD, column: value})
    assert caught.value.row == 4
    assert caught.value.field == field
    assert problem in caught.value.problem
    assert caught.value.hint


def test_null_limits_and_lists_mean_none_and_any() -> None:
    row = limit_row_from_columns(
        0,
        {
            **GOOD,
            "max_wager": None,
            "min_wager": None,
            "allowed_bet_types": None,
            "special_rules": None,
            "effective_to": None,
        },
    )
    assert row.max_wager is None and row.min_wager is None
    assert row.allowed_bet_types is None and row.effective_to is None


def test_max_equal_to_min_is_a_row() -> None:
    assert limit_row_from_columns(0, {**GOOD, "max_wager": 0.5}).max_wager == Decimal("0.5")


@pytest.mark.parametrize(
    ("value", "exact"),
    [(0.49, "0.49"), (0.1 + 0.2 - 0.3 + 0.3, None), (5000, "5000"), ("12.50", "12.5")],
)
def test_amounts_are_exact_cents_or_refused(value: Any, exact: str | None) -> None:
    if exact is None:  # 0.30000000000000004: not a whole number of cents, never rounded
        with pytest.raises(AmountError):
            parse_amount(value)
        return
    assert parse_amount(value) == Decimal(exact)


def test_amounts_go_out_as_their_shortest_json_number() -> None:
    assert amount_json(Decimal("5000.00")) == 5000 and isinstance(amount_json(Decimal(5)), int)
    assert repr(amount_json(Decimal("0.49"))) == "0.49"
    assert repr(amount_json(Decimal("4000.01"))) == "4000.01"


@pytest.mark.parametrize(
    ("metadata", "verified"),
    [
        ({"identity_verified": True}, True),
        ({"identityVerified": True}, True),
        ({"kyc_verified": True}, True),
        ({"kyc_verified": "true"}, False),
        ({"identity_verified": False}, False),
        ([], False),
        (None, False),
    ],
)
def test_identity_from_binding_metadata(metadata: Any, verified: bool) -> None:
    assert identity_verified_from_metadata(metadata) is verified
