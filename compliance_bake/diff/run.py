"""The diff, end to end: both sides read, authenticated and compared.

Each side's authentication runs beside the rest (parallel.py): the old one's beside reading the
new one, the new one's beside the comparison. Both verdicts are in before anything is
reported, and a side that is not authentic is refused (exit 2) unless the caller allowed it.
"""

from __future__ import annotations

from compliance_bake.diff.compare import compare
from compliance_bake.diff.model import (
    DEFAULT_FAIL_ON,
    Change,
    ChangeClass,
    DiffResult,
    SideInfo,
)
from compliance_bake.diff.parallel import FORK_MIN_ROWS, Verdict, authenticate_beside
from compliance_bake.diff.sides import Side, read_side, refuse_unless
from compliance_bake.errors import BakeError
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
    secret: Secret | None,
    allow_unauthenticated: bool = False,
    fail_on: tuple[ChangeClass, ...] = DEFAULT_FAIL_ON,
    fork_min_rows: int = FORK_MIN_ROWS,
) -> DiffResult:
    verdicts: list[Verdict] = []
    changes: list[Change] = []
    problem: BakeError | None = None
    with gc_paused():
        try:
            old_source, old_doc = read_side(old, "OLD")
            verdicts.append(authenticate_beside(old_doc, secret, fork_min_rows))
            new_source, new_doc = read_side(new, "NEW")
            verdicts.append(authenticate_beside(new_doc, secret, fork_min_rows))
            try:  # while the children authenticate; nothing is reported before their verdicts
                changes = compare(old_doc, new_doc)
            except BakeError as error:
                problem = error
        finally:
            found = [verdict() for verdict in verdicts]  # always reap the children
        old_side = refuse_unless(Side("OLD", old_source, old_doc, found[0]), allow_unauthenticated)
        new_side = refuse_unless(Side("NEW", new_source, new_doc, found[1]), allow_unauthenticated)
        if problem is not None:
            raise problem
        return DiffResult(side_info(old_side), side_info(new_side), changes, fail_on)
