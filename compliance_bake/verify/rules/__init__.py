"""The specification's rules (2.1-2.8, 8, 9) that follow from a snapshot's own content.

`book.py` holds what a rule is and its registry (`@rule`); the rules live in `board.py` (the top
level and the board) and `shadow.py` (the shadow matrix, geo, deepAudit, integrity, secrecy),
registered when this package imports them. Each rule has an id and a one-line message;
`check_rules`, here, runs every rule and returns a finding per rule, naming the places where it
does not hold (compliance_bake/findings.py, kind RULE). A
rule never trusts the document's shape: a rule that cannot run on a malformed document is
reported as broken ("could not run"), never as holding.

These rules are about meaning, not about results: a snapshot that honestly records a failed
check (a board row with `match: false`, a shadow mismatch) still satisfies every rule; what it
records is judged by the *compliant* verdict's recorded checks (verifier.py).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from compliance_bake.findings import FAIL, INFO, RULE, Finding
from compliance_bake.verify.columns import shadow_columns
from compliance_bake.verify.rules import board, shadow
from compliance_bake.verify.rules.book import MAX_PLACES, RULES, Rule, RuleContext

# Importing the rule modules registers their rules, in this order.
RULE_MODULES = (board, shadow)
__all__ = ["RULES", "Rule", "RuleContext", "check_rules"]


def check_rules(snap: dict[str, Any], ctx: RuleContext, file: str = "") -> list[Finding]:
    """A finding about `file` per rule, FAIL with its places where the rule does not hold."""
    if ctx.columns is None:
        ctx = replace(ctx, columns=shadow_columns(snap))
    results = []
    for spec_rule, check in RULES:
        try:
            places = check(snap, ctx)
        except (KeyError, TypeError, IndexError, AttributeError, ValueError, RecursionError) as exc:
            places = [f"could not run on this document ({type(exc).__name__})"]
        if len(places) > MAX_PLACES:
            places = [*places[:MAX_PLACES], f"... {len(places) - MAX_PLACES} more"]
        what = f"rule {spec_rule.id}: {spec_rule.message}"
        what += ": " + "; ".join(places) if places else ""
        results.append(Finding(file, FAIL if places else INFO, what, RULE, spec_rule.id))
    return results
