"""The shadow matrix (spec 2.3): every regulated state x every partner.

The real decision is whatever the target answers. The shadow decision is computed here, straight
from the licence registry, without the engine: the control of a control-vs-candidate experiment.
Each pair is checked with the state's first permitted wager type (docs/fixtures.md). A target
that answers fewer or more decisions than asked is a target failure.

Speed (50 states x 10,000 partners is 500,000 rows): the requests are a `CheckMatrix` (the
in-process target maps its engine's `check` over each column, no request object per check); the
rows are built state by state, one list comprehension per state from one column of shadow
decisions, the counts taken at C speed.
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import attrgetter, is_not

from compliance_bake.errors import TargetError
from compliance_bake.inputs.models import LICENCE_ACTIVE, LicenceRegistry
from compliance_bake.progress import NoProgress, ProgressSink
from compliance_bake.report.models import ShadowRow, ShadowSummary
from compliance_bake.targets.interface import CheckMatrix, Target

_ALLOWED = attrgetter("allowed")


def matrix_size(registry: LicenceRegistry) -> int:
    return len(registry.states) * len(registry.partners)


def run_shadow(
    target: Target, registry: LicenceRegistry, progress: ProgressSink | None = None
) -> tuple[list[ShadowRow], ShadowSummary]:
    """The rows (states outer, partners inner) and the summary; the caller adds timestamps,
    base and proof. The shadow decision of a pair is: the partner's licence in the state is
    `active` (the wager type, the state's first, is permitted by construction)."""
    sink = progress or NoProgress()
    states, partners = registry.states, registry.partners
    node_ids = tuple(partner.node_id for partner in partners)
    width = len(node_ids)
    requests = CheckMatrix(tuple((rules.code, rules.wager_types[0]) for rules in states), node_ids)
    total = matrix_size(registry)
    sink.begin("shadow matrix", total)
    rows: list[ShadowRow] = []
    allow = mismatches = 0
    active = _active_licences(registry)
    real_allowed = list(map(_ALLOWED, target.check_many(requests, sink.advance)))
    if len(real_allowed) != total:
        raise TargetError(
            f"{target.base}: answered {len(real_allowed)} of {total} checks",
            "check the target's health and retry",
        )
    for index, rules in enumerate(states):
        state = rules.code
        # spec 2.3 and 3: `active`, else null (a suspended, revoked or expired licence is
        # no active licence; the documented set has no other value).
        shadows = list(map(active[state].__contains__, node_ids))
        reals = real_allowed[index * width : (index + 1) * width]
        allow += sum(reals)
        mismatches += sum(map(is_not, reals, shadows))
        rows.extend(_column(state, node_ids, shadows, reals))
    sink.end()
    return rows, ShadowSummary(allow=allow, block=len(rows) - allow, mismatches=mismatches)


def _active_licences(registry: LicenceRegistry) -> dict[str, set[str]]:
    """For each state, the partners holding an `active` licence there, from the registry."""
    active: dict[str, set[str]] = {rules.code: set() for rules in registry.states}
    for partner in registry.partners:
        for state, status in partner.licences.items():
            if status == LICENCE_ACTIVE and state in active:
                active[state].add(partner.node_id)
    return active


def _column(
    state: str, node_ids: Sequence[str], shadows: list[bool], reals: list[bool]
) -> list[ShadowRow]:
    """One state's rows, in one list comprehension; a blocked row carries the reason."""
    reason = f"Partner not licensed in {state}"
    return [
        ShadowRow(
            state,
            node_id,
            LICENCE_ACTIVE if shadow else None,
            real,
            shadow,
            real is shadow,
            None if real else reason,
        )
        for node_id, shadow, real in zip(node_ids, shadows, reals, strict=True)
    ]
