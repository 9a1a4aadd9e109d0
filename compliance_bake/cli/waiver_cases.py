"""The waivers suite of a bake's outcome: a case per waiver, in the file's order.

A waiver applied is a skipped case (its items waived: not passed, never a failure), an expired
one that matched items is a failed case naming the day it expired (its items fail again), an
unused one a passing case that says it matched nothing (a warning, the exit unchanged).
"""

from __future__ import annotations

from pathlib import Path

from compliance_bake.cli.outcome import ITEMS_KEPT, Case, Item
from compliance_bake.waivers.apply import APPLIED, EXPIRED, UNUSED, Applied, Matched


def waiver_name(matched: Matched) -> str:
    return f"waiver line {matched.waiver.line}: {matched.waiver.words()}"


def waiver_said(matched: Matched) -> str:
    """`waived 2 items until 2026-12-31: <justification> (approved by <who>)`, or why not."""
    waiver = matched.waiver
    why = f"{waiver.justification} (approved by {waiver.approved_by})"
    n = len(matched.items)
    items = f"{n} item{'s' if n != 1 else ''}"
    if matched.status == APPLIED:
        return f"waived {items} until {waiver.expires.isoformat()}: {why}"
    if matched.status == EXPIRED:
        return f"expired on {waiver.expires.isoformat()}, waives nothing ({items} fail): {why}"
    return f"unused: matches no failing item: {why}"


def waiver_cases(applied: Applied) -> list[Case]:
    cases = []
    for matched in applied.matched:
        items = tuple(Item(item.words()) for item in matched.items[:ITEMS_KEPT])
        more = max(0, len(matched.items) - ITEMS_KEPT)
        ok = matched.status != EXPIRED or not matched.items
        skipped = matched.status == APPLIED
        name, said = waiver_name(matched), waiver_said(matched)
        cases.append(Case(name, ok, said, items, more, skipped=skipped))
    return cases


def unused_warnings(applied: Applied, file: Path | None) -> list[str]:
    """`warning: FILE:LINE: the waiver NJ node-x matches no failing item`, for each unused one;
    the exit code is unchanged."""
    return [
        f"warning: {file}:{m.waiver.line}: the waiver {m.waiver.words()} matches no failing "
        "item (unused: drop it, or fix its state, partner, kind or question fields)"
        for m in applied.of(UNUSED)
    ]
