"""The diff, end to end: both sides read as `verify` reads a snapshot, then compared.

OLD then NEW are read, parsed, validated and authenticated in this process (diff/sides.py); a
side that is not a snapshot is refused first (exit 2), then one that is not authentic unless the
caller allowed it, and only then are they compared.
"""

from __future__ import annotations

from collections.abc import Sequence

from compliance_bake.diff.compare import compare
from compliance_bake.diff.model import DEFAULT_FAIL_ON, ChangeClass, DiffResult, SideInfo
from compliance_bake.diff.sides import Keys, Side, load_side, refuse_unless
from compliance_bake.signing.secret import Secret
from compliance_bake.targets.routes import DEFAULT_TIMEOUT


def side_info(side: Side) -> SideInfo:
    return SideInfo(
        side.source, side.snapshot.generated_at, side.authenticity, len(side.snapshot.shadow.rows)
    )


def run_diff(
    old: str,
    new: str,
    *,
    secret: Secret | None = None,
    public_keys: Sequence[bytes] = (),
    allow_unauthenticated: bool = False,
    fail_on: tuple[ChangeClass, ...] = DEFAULT_FAIL_ON,
    timeout: float = DEFAULT_TIMEOUT,
) -> DiffResult:
    keys = Keys(secret, tuple(public_keys))
    old_side = load_side(old, "OLD", keys, timeout)
    new_side = load_side(new, "NEW", keys, timeout)
    refuse_unless(old_side, allow_unauthenticated)
    refuse_unless(new_side, allow_unauthenticated)
    changes = compare(old_side.snapshot, new_side.snapshot, old_side.policy, new_side.policy)
    return DiffResult(side_info(old_side), side_info(new_side), changes, fail_on)
