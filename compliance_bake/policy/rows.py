"""Reading a limit row from a source's columns, for every source alike (so none reads its own).

A source (limits.json, the operator's `regulatory_limits` table) hands each row as a mapping of
the table's column names to values: `policy_key`, `status`, `state_code`, `sport_id`,
`market_id`, `node_id` (None: state-wide), `max_wager`, `min_wager` (numbers, None: no limit),
`allowed_bet_types` (a decoded JSON array of strings, None: any), `special_rules` (a decoded
JSON object, None: none), `effective_from`, `effective_to` (Unix seconds, `effective_to` None:
open). A database source decodes its TEXT columns with the strict parser first
(`inputs.jsonio.loads_strict`). Every refusal is a PolicyValueError naming the row and column.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from decimal import Decimal

from compliance_bake.policy.amounts import AmountError, format_amount, parse_amount
from compliance_bake.policy.model import LimitRow, PolicyValueError, SpecialRules

COLUMNS = (
    "policy_key",
    "status",
    "state_code",
    "sport_id",
    "market_id",
    "node_id",
    "max_wager",
    "min_wager",
    "allowed_bet_types",
    "special_rules",
    "effective_from",
    "effective_to",
)
SPECIAL_RULES = (
    "min_age",
    "require_identity_verification",
    "allowed_zip_prefixes",
    "max_daily_total",
    "max_weekly_total",
)
_KEY = re.compile(r"[a-z][a-z0-9_]*")  # a sport, a market (the wager type's two parts)
_STATE = re.compile(r"[A-Z]{2}")
_ZIP_PREFIX = re.compile(r"[0-9]{1,5}")
_UNIX_MAX = 2**63 - 1
# The metadata keys of `partner_profile_bindings.metadata_json` that say a partner is verified.
IDENTITY_KEYS = ("identity_verified", "identityVerified", "kyc_verified")


def limit_row_from_columns(index: int, columns: Mapping[str, object]) -> LimitRow:
    """The typed row of one source row; PolicyValueError(index, column, ...) when it cannot be."""

    def fail(column: str, problem: str, hint: str) -> PolicyValueError:
        return PolicyValueError(index, column, problem, hint)

    def text(column: str, pattern: re.Pattern[str] | None, hint: str) -> str:
        value = columns.get(column)
        if not isinstance(value, str) or not value:
            raise fail(column, f"{_shown(value)} is not a non-empty string", hint)
        if pattern is not None and not pattern.fullmatch(value):
            raise fail(column, f"{value!r} is not of the documented form", hint)
        return value

    status = text("status", None, 'write the row\'s status, e.g. "active"')
    state = text("state_code", _STATE, "use a two-letter US state code")
    sport = text("sport_id", _KEY, "use the registry's sport key, e.g. basketball")
    market = text("market_id", _KEY, "use the registry's market key, e.g. totals")
    partner = columns.get("node_id")
    if partner is not None and (not isinstance(partner, str) or not partner):
        raise fail(
            "node_id", f"{_shown(partner)} is not a node id", "use a partner's nodeId or null"
        )
    key = columns.get("policy_key")
    if key is not None and (not isinstance(key, str) or not key):
        raise fail("policy_key", f"{_shown(key)} is not a non-empty string", "name the row")
    max_wager = _amount(index, "max_wager", columns.get("max_wager"))
    min_wager = _amount(index, "min_wager", columns.get("min_wager"))
    if max_wager is not None and min_wager is not None and max_wager < min_wager:
        raise fail(
            "max_wager",
            f"the maximum {format_amount(max_wager)} is below the minimum "
            f"{format_amount(min_wager)}",
            "make max_wager at least min_wager",
        )
    start = _seconds(index, "effective_from", columns.get("effective_from"), required=True)
    end_value = columns.get("effective_to")
    end = None if end_value is None else _seconds(index, "effective_to", end_value, required=False)
    if end is not None and end <= start:
        raise fail(
            "effective_to",
            f"{end} is not after effective_from {start}",
            "end the window after it starts, or leave effective_to null (open)",
        )
    return LimitRow(
        policy_key=key if isinstance(key, str) else f"row {index}",
        status=status,
        state=state,
        sport=sport,
        market=market,
        partner=partner,
        max_wager=max_wager,
        min_wager=min_wager,
        allowed_bet_types=bet_types_from_json(index, columns.get("allowed_bet_types")),
        special_rules=special_rules_from_json(index, columns.get("special_rules")),
        effective_from=start,
        effective_to=end,
    )


def bet_types_from_json(index: int, value: object) -> tuple[str, ...] | None:
    """`allowed_bet_types`: None (any bet type) or a JSON array of distinct non-empty strings."""
    if value is None:
        return None
    if not isinstance(value, list):
        raise PolicyValueError(
            index,
            "allowed_bet_types",
            f"{_shown(value)} is not an array",
            'write a JSON array of bet types, e.g. ["straight", "parlay"], or null for any',
        )
    for position, item in enumerate(value):
        if not isinstance(item, str) or not item:
            raise PolicyValueError(
                index,
                f"allowed_bet_types[{position}]",
                f"{_shown(item)} is not a non-empty string",
                "list bet types as strings",
            )
    if len(set(value)) != len(value):
        raise PolicyValueError(
            index, "allowed_bet_types", "lists a bet type twice", "list each bet type once"
        )
    return tuple(value)


def special_rules_from_json(index: int, value: object) -> SpecialRules:
    """`special_rules`: None or a JSON object of the documented keys, each of its type."""
    if value is None:
        return SpecialRules()
    if not isinstance(value, dict):
        raise PolicyValueError(
            index,
            "special_rules",
            f"{_shown(value)} is not an object",
            'write a JSON object, e.g. {"min_age": 21}, or null',
        )
    for name in value:
        if name not in SPECIAL_RULES:
            raise PolicyValueError(
                index,
                f"special_rules.{name}",
                "is not a known rule",
                f"use one of {', '.join(SPECIAL_RULES)}",
            )
    min_age = value.get("min_age")
    if min_age is not None and (
        isinstance(min_age, bool) or not isinstance(min_age, int) or not 0 <= min_age <= 130
    ):
        raise PolicyValueError(
            index, "special_rules.min_age", f"{_shown(min_age)} is not an age", "use 18 to 130"
        )
    identity = value.get("require_identity_verification", False)
    if not isinstance(identity, bool):
        raise PolicyValueError(
            index,
            "special_rules.require_identity_verification",
            f"{_shown(identity)} is not a boolean",
            "use true or false",
        )
    return SpecialRules(
        min_age=min_age,
        require_identity_verification=identity,
        allowed_zip_prefixes=_prefixes(index, value.get("allowed_zip_prefixes")),
        max_daily_total=_amount(
            index, "special_rules.max_daily_total", value.get("max_daily_total")
        ),
        max_weekly_total=_amount(
            index, "special_rules.max_weekly_total", value.get("max_weekly_total")
        ),
    )


def identity_verified_from_metadata(value: object) -> bool:
    """A partner is identity-verified when its metadata object has one of IDENTITY_KEYS true."""
    return isinstance(value, dict) and any(value.get(key) is True for key in IDENTITY_KEYS)


def _prefixes(index: int, value: object) -> tuple[str, ...] | None:
    column = "special_rules.allowed_zip_prefixes"
    if value is None:
        return None
    if not isinstance(value, list) or not value:
        raise PolicyValueError(
            index,
            column,
            f"{_shown(value)} is not a non-empty array",
            'list ZIP prefixes as strings, e.g. ["070", "071"], or leave the key out for any ZIP',
        )
    for position, item in enumerate(value):
        if not isinstance(item, str) or not _ZIP_PREFIX.fullmatch(item):
            raise PolicyValueError(
                index,
                f"{column}[{position}]",
                f"{_shown(item)} is not a ZIP prefix",
                'write 1 to 5 digits in quotes, e.g. "070"',
            )
    return tuple(value)


def _amount(index: int, column: str, value: object) -> Decimal | None:
    if value is None:
        return None
    try:
        return parse_amount(value)
    except AmountError as exc:
        raise PolicyValueError(
            index, column, str(exc), "write an amount of whole cents, e.g. 5000 or 0.5"
        ) from None


def _seconds(index: int, column: str, value: object, *, required: bool) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= _UNIX_MAX:
        raise PolicyValueError(
            index,
            column,
            f"{_shown(value)} is not a time in Unix seconds",
            "write whole Unix seconds, e.g. 1767225600"
            + ("" if required else ", or null for an open window"),
        )
    return value


def _shown(value: object) -> str:
    """A value for a message: short, one line."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
