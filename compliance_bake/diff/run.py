"""The diff, end to end: both sides loaded and authenticated, then compared."""

from __future__ import annotations

from compliance_bake.diff.compare import compare
from compliance_bake.diff.model import DEFAULT_FAIL_ON, ChangeClass, DiffResult, SideInfo
from compliance_bake.diff.sides import Side, load_side
from compliance_bake.memory import gc_paused
from compliance_bake.signing.secret import Secret


def side_info(side: Side) -> SideInfo:
    rows = side.snapshot["shadow"]["rows"]
    return SideInfo(
        source=side.source,
        generated_at=side.snapshot["generatedAt"],
        authentic=side.authenticity.authentic,
        checked=side.authenticity.checked,
        pairs=len(rows),
    )


def run_diff(
    old: str,
    new: str,
    *,
    secret: Secret | None,
    allow_unauthenticated: bool = False,
    fail_on: tuple[ChangeClass, ...] = DEFAULT_FAIL_ON,
) -> DiffResult:
    with gc_paused():
        old_side = load_side(old, "OLD", secret, allow_unauthenticated)
        new_side = load_side(new, "NEW", secret, allow_unauthenticated)
        changes = compare(old_side.snapshot, new_side.snapshot)
        return DiffResult(side_info(old_side), side_info(new_side), changes, fail_on)
