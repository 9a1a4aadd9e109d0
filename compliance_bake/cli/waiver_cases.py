"""A waiver in words, as the bake's terminal, its waivers suite (cli/outcome.py) and the unused
warnings say it: its line and pair, what it waived until when, or why it waived nothing.
"""

from __future__ import annotations

from pathlib import Path

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


def unused_warnings(applied: Applied, file: Path | None) -> list[str]:
    """`warning: FILE:LINE: the waiver NJ node-x matches no failing item`, for each unused one;
    the exit code is unchanged."""
    return [
        f"warning: {file}:{m.waiver.line}: the waiver {m.waiver.words()} matches no failing "
        "item (unused: drop it, or fix its state, partner, kind or question fields)"
        for m in applied.of(UNUSED)
    ]
