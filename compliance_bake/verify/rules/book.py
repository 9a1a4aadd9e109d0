"""The rule book: a rule is an id, a one-line message and a check over the snapshot.

The checks live in board.py and shadow.py, registered here by `@rule`; the package's
`check_rules` runs them all.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from compliance_bake.verify.columns import ShadowColumns

LICENCE_STATUSES = ("active", None)
WINDOW_DAYS = 90
SECRET_NAME = "REPORT_SIGNING_SECRET"
MAX_PLACES = 5  # places listed per broken rule; the count says how many more


@dataclass(frozen=True, slots=True)
class Rule:
    id: str
    message: str


@dataclass(frozen=True, slots=True)
class RuleContext:
    """What a rule may need beyond the snapshot."""

    # The shadow proof carries a well-formed HMAC. Whether it holds with the secret is the
    # authentic verdict's (HMAC findings): a wrong secret breaks no rule of the content.
    hmac_ok: bool
    secret_value: str | None = None
    files: tuple[tuple[str, bytes], ...] = ()  # (name, bytes) of every file read
    # signing.shadow_digest(snap["shadow"]), when the verifier has computed it (signing/proofs.py)
    shadow_digest: str | None = None
    columns: ShadowColumns | None = None  # the shadow rows as columns (check_rules reads them)
    # The file of `files` whose bytes are exactly `dumps_pretty` of the snapshot, and those that
    # are exactly `dumps_pretty` of one of its blocks (the registry copies, as baked).
    rendering: str | None = None
    block_renderings: frozenset[str] = frozenset()


Check = Callable[[dict[str, Any], RuleContext], list[str]]
RULES: list[tuple[Rule, Check]] = []


def rule(rule_id: str, message: str) -> Callable[[Check], Check]:
    def register(check: Check) -> Check:
        RULES.append((Rule(rule_id, message), check))
        return check

    return register


def health_states(snap: dict[str, Any]) -> list[str]:
    rows = [r for r in snap["enhancements"]["rows"] if r["feature"] == "health.states"]
    return list(rows[0]["expectedState"]["states"]) if rows else []
