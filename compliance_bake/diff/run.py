"""The diff, end to end: both sides read, authenticated and compared.

Each side's schema validation and authentication run beside the rest (parallel.py): the old
one's beside reading the new one, the new one's beside the comparison. Both outcomes are in
before anything is reported: a side that is not a snapshot is refused (exit 2), and so is one
that is not authentic unless the caller allowed it.
"""

from __future__ import annotations

from collections.abc import Sequence

from compliance_bake.diff.compare import compare
from compliance_bake.diff.model import (
    DEFAULT_FAIL_ON,
    Change,
    ChangeClass,
    DiffResult,
    SideInfo,
)
from compliance_bake.diff.parallel import FORK_MIN_BYTES, Pending, check_beside
from compliance_bake.diff.sides import Authenticity, Keys, Side, read_side, refuse_unless
from compliance_bake.errors import InputError
from compliance_bake.memory import gc_paused
from compliance_bake.signing.secret import Secret


def side_info(side: Side) -> SideInfo:
    return SideInfo(
        source=side.source,
        generated_at=side.snapshot["generatedAt"],
        authentic=side.authenticity.authentic,
        checked=side.authenticity.checked,
        pairs=len(side.snapshot["shadow"]["rows"]),
    )


def run_diff(
    old: str,
    new: str,
    *,
    secret: Secret | None = None,
    public_keys: Sequence[bytes] = (),
    allow_unauthenticated: bool = False,
    fail_on: tuple[ChangeClass, ...] = DEFAULT_FAIL_ON,
    fork_min_bytes: int = FORK_MIN_BYTES,
) -> DiffResult:
    keys = Keys(secret, tuple(public_keys))
    pending: list[Pending] = []
    changes: list[Change] = []
    problem: Exception | None = None
    with gc_paused():
        try:
            old_from, old_doc = read_side(old, "OLD")
            pending.append(check_beside(old_doc, old_from, keys, fork_min_bytes))
            new_from, new_doc = read_side(new, "NEW")
            pending.append(check_beside(new_doc, new_from, keys, fork_min_bytes))
            try:  # while the children check; nothing is reported before their outcomes
                changes = compare(old_doc, new_doc)
            except Exception as error:  # noqa: BLE001 - raised below, after the outcomes
                problem = error
        finally:
            found = [outcome() for outcome in pending]  # always reap the children
        authenticity: list[Authenticity] = []
        for outcome in found:
            if isinstance(outcome, InputError):
                raise outcome  # not a snapshot: said before anything else
            authenticity.append(outcome)
        old_side = Side("OLD", old_from.source, old_doc, authenticity[0])
        new_side = Side("NEW", new_from.source, new_doc, authenticity[1])
        refuse_unless(old_side, allow_unauthenticated)
        refuse_unless(new_side, allow_unauthenticated)
        if problem is not None:
            raise problem
        return DiffResult(side_info(old_side), side_info(new_side), changes, fail_on)
